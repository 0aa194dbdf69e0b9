package policyfile_test

import (
	"context"
	"fmt"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policyfile"
)

// A policy file read, then applied to a running scheduler; a file with a
// mistake says where it is and what would be valid.
func ExampleParse() {
	p, err := policyfile.Parse("policy.yaml", []byte(`
version: day
max_concurrency: 10
tiers:
  10: {min_share: 0.4, burst_share: 0.7}
  1:  {min_share: 0.2, burst_share: 0.3}
workloads:
  - name: incidents
    match_labels: {class: incident}
    priority: 10
    fairness_label_key: tenant
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := fairsched.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(context.Background())
	fmt.Println(s.ApplyPolicy(context.Background(), p))

	_, err = policyfile.Parse("night.yaml", []byte("tiers:\n  10: {min_share: 0.4, burst_cap: 0.7}\n"))
	fmt.Println(err)
	// Output:
	// <nil>
	// night.yaml:2:24: tiers.10.burst_cap: fairsched: invalid config: unknown field "burst_cap"; valid here: min_share, burst_share, max_running, lend_idle
}
