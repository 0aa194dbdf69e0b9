package fairsched_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
)

// rateTimeline submits jobs of type "export" (each returns at once) with
// the tokens given, in order, at T=0, under a rate limit of 1 token a
// second with the burst given, then lets virtual time run in steps of a
// second and returns when each job started.
func rateTimeline(t *testing.T, burst int, jobs []struct {
	ID     string
	Tokens time.Duration // 0: none stated
}, opts ...fairsched.Option) []start {
	t.Helper()
	var got []start
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		opts = append([]fairsched.Option{fairsched.WithClock(mock), fairsched.WithRateLimit(fairsched.RateForType("export"), 1, burst)}, opts...)
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			"export": {DefaultCost: time.Second, Priority: 4},
		}, opts...)
		events, cancel := s.Subscribe(64)
		noop := func(context.Context) error { return nil }
		for _, j := range jobs {
			var jo []fairsched.JobOption
			if j.Tokens > 0 {
				jo = append(jo, fairsched.WithTokens(j.Tokens))
			}
			if err := s.Submit("export", j.ID, noop, jo...); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		for range 30 {
			mock.Add(time.Second)
			synctest.Wait()
		}
		cancel()
		got = starts(collect(events), t0)
	})
	return got
}

type tokenJob = struct {
	ID     string
	Tokens time.Duration
}

// TestRateLimitCountsTokens: spec 4 — a job takes its tokens from each
// bucket that applies: WithTokens(4s) takes 4, so from a bucket of burst 4
// refilling 1 a second four such jobs start 4s apart, not all at once. A
// job that states none takes 1; a fraction of a second counts as a whole
// token (2.5s takes 3).
func TestRateLimitCountsTokens(t *testing.T) {
	got := rateTimeline(t, 4, []tokenJob{{"a", 4 * time.Second}, {"b", 4 * time.Second}, {"c", 4 * time.Second}, {"d", 4 * time.Second}})
	want := []start{{0, "a"}, {4 * time.Second, "b"}, {8 * time.Second, "c"}, {12 * time.Second, "d"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("four 4-token jobs, burst 4 (-want +got):\n%s", diff)
	}

	got = rateTimeline(t, 4, []tokenJob{{"one", 0}, {"two", 0}, {"frac", 2500 * time.Millisecond}, {"tiny", time.Nanosecond}, {"next", 0}})
	// one and two take 1 each (2 left), frac needs 3: it waits a second;
	// tiny rounds up to 1 token (at 2s), next at 3s.
	want = []start{{0, "one"}, {0, "two"}, {time.Second, "frac"}, {2 * time.Second, "tiny"}, {3 * time.Second, "next"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("1, 1, 2.5s, 1ns, 1 tokens, burst 4 (-want +got):\n%s", diff)
	}
}

// TestRateLimitJobLargerThanBurst: a job that needs more tokens than the
// bucket holds is neither refused nor starved: it waits for a full bucket
// and takes all of it; the tokens past the burst are not owed, so the next
// job waits only for its own from an empty bucket. Smaller jobs behind it
// in the queue do not pass it while it waits.
func TestRateLimitJobLargerThanBurst(t *testing.T) {
	got := rateTimeline(t, 4, []tokenJob{{"small", 0}, {"big", 10 * time.Second}, {"after", 0}, {"big2", time.Hour}, {"last", 2 * time.Second}})
	// small takes 1 (3 left); big waits for 4 (T=1s) and empties the
	// bucket; after waits for 1 (T=2s); big2 for a full bucket again
	// (T=6s); last for 2 (T=8s).
	want := []start{{0, "small"}, {time.Second, "big"}, {2 * time.Second, "after"}, {6 * time.Second, "big2"}, {8 * time.Second, "last"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs past the burst (-want +got):\n%s", diff)
	}
}

// TestRateLimitTinyRate: a bucket that refills once in ages still waits on
// one timer, with no overflow: the job behind an empty bucket is pending,
// rate limited, and nothing panics. (Close with an ended context then
// drops it: a graceful Close would wait for it.)
func TestRateLimitTinyRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		s, err := fairsched.New(fairsched.WithClock(mock), fairsched.WithRateLimit(fairsched.RateForType("export"), 1e-300, 2))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("export", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
			t.Fatal(err)
		}
		noop := func(context.Context) error { return nil }
		for _, id := range []string{"a", "b"} {
			if err := s.Submit("export", id, noop, fairsched.WithTokens(2*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		mock.Add(24 * time.Hour)
		synctest.Wait()
		snap := snapshot(t, s)
		if len(snap.Pending) != 1 || snap.Pending[0].ID != "b" || snap.Pending[0].Reason != fairsched.ReasonRateLimited {
			t.Errorf("pending %+v; want b, rate_limited", snap.Pending)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Close = %v; want context.Canceled", err)
		}
	})
}
