package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckPolicy: -check-policy says a valid file is valid (exit 0) and
// shows an invalid one's error at its file:line:column (exit 2), running
// nothing.
func TestCheckPolicy(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("max_concurrency: 4\ntiers:\n  8: {min_share: 0.5, burst_share: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	code := run([]string{"-check-policy", "../../policyfile/testdata/tiers.yaml", bad}, &out, &errs)
	got := []any{code, out.String(), strings.SplitN(errs.String(), " = ", 2)[0]}
	want := []any{2,
		"../../policyfile/testdata/tiers.yaml: valid: version \"tiers-2026-11-28\", 3 tiers, 3 types, 1 rate limits, 2 workloads\n",
		"fairsim: " + bad + ":3:6: tiers.8: fairsched: invalid config: Tier[8].BurstShare"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exit status, stdout, stderr's start (-want +got):\n%s", diff)
	}
}
