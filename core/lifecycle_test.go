package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
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

// TestNextStepInterrupted: an interrupted attempt of a durable job (its
// worker, instance or grant lost; a stopping scheduler's ended context)
// runs again whatever the retry policy — at once, or after the restart
// when the scheduler stops — until MaxInterruptions are used up; then it
// fails. A failure, a panic, a Permanent error, a Cancel and the same
// errors of an in-memory job follow the retry policy; a start that was not
// written is admitted again without counting.
func TestNextStepInterrupted(t *testing.T) {
	none := policy.RetryPolicy{}
	three := policy.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Second, MaxBackoff: 10 * time.Second}
	one := policy.RetryPolicy{MaxAttempts: 1, MaxInterruptions: 1}
	lost := fmt.Errorf("%w: instance a went silent", workers.ErrWorkerLost)
	boom := errors.New("boom")
	type row struct {
		name string
		end  AttemptEnd
	}
	rows := []row{
		{"lost, default policy", AttemptEnd{Err: lost, Runs: 1, Retry: none, Durable: true}},
		{"lost, third interruption", AttemptEnd{Err: lost, Runs: 1, Retry: none, Durable: true, Interruptions: 2}},
		{"lost, fourth interruption", AttemptEnd{Err: lost, Runs: 1, Retry: none, Durable: true, Interruptions: 3}},
		{"lost, MaxInterruptions 1, second", AttemptEnd{Err: lost, Runs: 1, Retry: one, Durable: true, Interruptions: 1}},
		{"lost, attempts used up", AttemptEnd{Err: lost, Runs: 3, Retry: three, Durable: true}},
		{"lost, in memory", AttemptEnd{Err: lost, Runs: 1, Retry: none}},
		{"lost, in memory, retries", AttemptEnd{Err: lost, Runs: 1, Retry: three}},
		{"lost, Permanent", AttemptEnd{Err: policy.Permanent(lost), Runs: 1, Retry: three, Durable: true}},
		{"lost, panicked", AttemptEnd{Err: lost, Panicked: true, Runs: 1, Retry: three, Durable: true}},
		{"lost, cancelled", AttemptEnd{Err: lost, Runs: 1, Retry: three, Durable: true, Unwanted: true}},
		{"lost while stopping", AttemptEnd{Err: lost, Runs: 1, Retry: none, Durable: true, Stopping: true}},
		{"canceled while stopping", AttemptEnd{Err: context.Canceled, Runs: 1, Retry: none, Durable: true, Stopping: true}},
		{"canceled while stopping, past the limit", AttemptEnd{Err: context.Canceled, Runs: 1, Retry: none, Durable: true, Stopping: true, Interruptions: 3}},
		{"canceled, not stopping", AttemptEnd{Err: context.Canceled, Runs: 1, Retry: none, Durable: true}},
		{"canceled while stopping, in memory", AttemptEnd{Err: context.Canceled, Runs: 1, Retry: three, Stopping: true}},
		{"failed, default policy", AttemptEnd{Err: boom, Runs: 1, Retry: none, Durable: true}},
		{"failed, retries", AttemptEnd{Err: boom, Runs: 1, Retry: three, Durable: true, Interruptions: 3}},
		{"start unwritten", AttemptEnd{Err: boom, Runs: 1, Retry: none, Durable: true, Unstarted: true, Interruptions: 3}},
		{"start unwritten while stopping", AttemptEnd{Err: boom, Runs: 1, Retry: none, Durable: true, Unstarted: true, Stopping: true}},
		{"succeeded", AttemptEnd{Runs: 1, Retry: none, Durable: true, Interruptions: 9}},
	}
	names := map[Step]string{StepDone: "done", StepRetry: "retry", StepFail: "fail", StepRerun: "rerun", StepKeep: "keep", StepRequeue: "requeue"}
	var got []string
	for _, r := range rows {
		step, d := NextStep(r.end)
		got = append(got, fmt.Sprintf("%s: %s %v interrupted=%v", r.name, names[step], d, r.end.Interrupted()))
	}
	want := []string{
		"lost, default policy: rerun 0s interrupted=true",
		"lost, third interruption: rerun 0s interrupted=true",
		"lost, fourth interruption: fail 0s interrupted=true",
		"lost, MaxInterruptions 1, second: fail 0s interrupted=true",
		"lost, attempts used up: rerun 0s interrupted=true",
		"lost, in memory: fail 0s interrupted=false",
		"lost, in memory, retries: retry 1s interrupted=false",
		"lost, Permanent: fail 0s interrupted=false",
		"lost, panicked: fail 0s interrupted=false",
		"lost, cancelled: fail 0s interrupted=false",
		"lost while stopping: keep 0s interrupted=true",
		"canceled while stopping: keep 0s interrupted=true",
		"canceled while stopping, past the limit: fail 0s interrupted=true",
		"canceled, not stopping: fail 0s interrupted=false",
		"canceled while stopping, in memory: retry 1s interrupted=false",
		"failed, default policy: fail 0s interrupted=false",
		"failed, retries: retry 1s interrupted=false",
		"start unwritten: requeue 100ms interrupted=false",
		"start unwritten while stopping: keep 0s interrupted=false",
		"succeeded: done 0s interrupted=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	err := InterruptedError(4, lost)
	if !errors.Is(err, workers.ErrWorkerLost) || !policy.IsPermanent(err) || !strings.Contains(err.Error(), "interrupted 4 times") {
		t.Errorf("InterruptedError = %v: want a Permanent error matching ErrWorkerLost that counts the interruptions", err)
	}
}

// TestRestored: a pending record read back whose last attempt started and
// never ended (Attempt > EndedAttempt) was interrupted: the interruption is
// counted and the attempt marked ended, and past MaxInterruptions the job
// fails. A record whose attempts all ended, a granted one (running on an
// instance) and a finished one are left alone.
func TestRestored(t *testing.T) {
	none := policy.RetryPolicy{}
	five := policy.RetryPolicy{MaxAttempts: 1, MaxInterruptions: 5}
	type out struct {
		Interrupted       bool
		Step              Step
		Interruptions, At int
	}
	for _, c := range []struct {
		name  string
		rec   JobRecord
		retry policy.RetryPolicy
		want  out
	}{
		{"never started", JobRecord{}, none, out{}},
		{"first attempt interrupted", JobRecord{Attempt: 1}, none, out{true, StepRerun, 1, 1}},
		{"retry decided, not started", JobRecord{Attempt: 2, EndedAttempt: 2}, none, out{false, StepDone, 0, 2}},
		{"third interruption", JobRecord{Attempt: 5, EndedAttempt: 4, Interruptions: 2}, none, out{true, StepRerun, 3, 5}},
		{"fourth interruption", JobRecord{Attempt: 5, EndedAttempt: 4, Interruptions: 3}, none, out{true, StepFail, 4, 5}},
		{"fourth interruption, MaxInterruptions 5", JobRecord{Attempt: 5, EndedAttempt: 4, Interruptions: 3}, five, out{true, StepRerun, 4, 5}},
		{"sixth interruption, MaxInterruptions 5", JobRecord{Attempt: 9, EndedAttempt: 8, Interruptions: 5}, five, out{true, StepFail, 6, 9}},
		{"granted, running", JobRecord{Attempt: 1, Granted: "a"}, none, out{false, StepDone, 0, 0}},
		{"dead", JobRecord{Attempt: 1, State: RecordDead}, none, out{false, StepDone, 0, 0}},
	} {
		rec := c.rec
		interrupted, step := Restored(&rec, c.retry)
		got := out{interrupted, step, rec.Interruptions, rec.EndedAttempt}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
