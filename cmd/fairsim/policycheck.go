package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policyfile"
)

// checkPolicies checks policy files without running them: each is read
// (package policyfile) and a scheduler started with it alone, then closed,
// so that what only New checks is checked too. It prints a line per file
// and returns 2 if any is invalid.
func checkPolicies(files []string, stdout, stderr io.Writer) int {
	if len(files) == 0 {
		fmt.Fprintln(stderr, "fairsim: -check-policy needs a policy file")
		return 2
	}
	status := 0
	for _, file := range files {
		p, err := policyfile.Load(file)
		if err == nil {
			err = startWith(p)
		}
		if err != nil {
			fmt.Fprintln(stderr, "fairsim:", err)
			status = 2
			continue
		}
		fmt.Fprintf(stdout, "%s: valid: version %q, %d tiers, %d types, %d rate limits, %d workloads\n",
			file, p.Version, len(p.Tiers), len(p.Types), len(p.RateLimits), len(p.Workloads))
	}
	return status
}

func startWith(p fairsched.Policy) error {
	s, err := fairsched.New(fairsched.WithPolicy(p))
	if err != nil {
		return err
	}
	return s.Close(context.Background())
}
