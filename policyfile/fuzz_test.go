package policyfile_test

import (
	"errors"
	"os"
	"testing"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/policyfile"
)

// FuzzParse: whatever the bytes, Parse returns a policy that validates or
// an error wrapping ErrInvalidConfig; it never panics.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("testdata/tiers.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{string(example), "", "tiers: {8: {min_share: 2}}", "workloads: [{name: a}]", "a: &x [*x]", "types: {\"\\0\": {}}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policyfile.Parse("f.yaml", data)
		if err != nil {
			if !errors.Is(err, fairsched.ErrInvalidConfig) {
				t.Fatalf("Parse error %v does not wrap ErrInvalidConfig", err)
			}
			return
		}
		if err := p.Validate(policy.DefaultLimits()); err != nil {
			t.Fatalf("Parse accepted a policy that does not validate: %v", err)
		}
	})
}
