package core

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/google/go-cmp/cmp"
)

// TestNextStep: success is done; a panic, a Permanent error, the last
// attempt or an unwanted job fail for good; any other failure retries
// after the policy's backoff.
func TestNextStep(t *testing.T) {
	three := policy.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: 10 * time.Second}
	boom := errors.New("boom")
	var got []string
	for _, e := range []AttemptEnd{
		{Runs: 1, Retry: three},
		{Err: boom, Runs: 1, Retry: three},
		{Err: boom, Runs: 2, Retry: three},
		{Err: boom, Runs: 3, Retry: three},
		{Err: boom, Panicked: true, Runs: 1, Retry: three},
		{Err: policy.Permanent(boom), Runs: 1, Retry: three},
		{Err: boom, Runs: 1, Retry: three, Unwanted: true},
		{Err: boom, Runs: 1},
	} {
		step, d := NextStep(e)
		got = append(got, fmt.Sprintf("%d %v", step, d))
	}
	want := []string{"0 0s", "1 1s", "1 2s", "2 0s", "2 0s", "2 0s", "2 0s", "2 0s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}
