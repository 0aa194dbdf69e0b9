package invariant_test

import (
	"flag"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/fairsched/fairsched/internal/invariant"
)

var (
	replay = flag.Uint64("invariant.replay", 0, "TestReplay: play this seed, logging every action and snapshot")
	shrink = flag.Uint64("invariant.shrink", 0, "TestShrink: reduce this chaos seed to the calls that keep its violation")
	match  = flag.String("invariant.match", "", "TestShrink: the violation to keep (a substring; default: the first one)")
)

// TestModes: each workload family exercises the checks it exists for,
// without violations.
func TestModes(t *testing.T) {
	for _, seed := range []uint64{3, 4, 8, 9, 13, 14} {
		mode := invariant.ModeFor(seed)
		res := invariant.Play(t, invariant.Options{Seed: seed, Mode: mode})
		switch {
		case len(res.Violations) > 0:
			t.Errorf("seed %d (%s): %s", seed, mode, strings.Join(res.Violations, "\n"))
		case mode == invariant.Fairness && (res.FairChecks == 0 || res.MaxDrift == 0):
			t.Errorf("seed %d: fairness mode compared %d snapshots, largest gap %v", seed, res.FairChecks, res.MaxDrift)
		case mode == invariant.Aging && (res.AgingChecks == 0 || res.LongestWait == 0):
			t.Errorf("seed %d: aging mode checked %d starts, longest wait %v", seed, res.AgingChecks, res.LongestWait)
		}
		t.Logf("seed %d (%s): %d jobs, %d attempts; weighted gap %v of %v; longest low-priority wait %v of %v",
			seed, mode, res.Jobs, res.Starts, res.MaxDrift, res.DriftBound, res.LongestWait, res.WaitBound)
	}
}

// TestDeterministic: a seed replays the same run.
func TestDeterministic(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		a := invariant.Play(t, invariant.Options{Seed: seed, Mode: invariant.ModeFor(seed)})
		b := invariant.Play(t, invariant.Options{Seed: seed, Mode: invariant.ModeFor(seed)})
		if a.Jobs != b.Jobs || a.Starts != b.Starts || a.Steps != b.Steps || a.Virtual != b.Virtual {
			t.Errorf("seed %d: %d jobs, %d attempts, %d steps, %v; then %d, %d, %d, %v",
				seed, a.Jobs, a.Starts, a.Steps, a.Virtual, b.Jobs, b.Starts, b.Steps, b.Virtual)
		}
	}
}

// TestReplay plays -invariant.replay=SEED and logs every action and every
// snapshot checked, then the violations.
func TestReplay(t *testing.T) {
	if *replay == 0 {
		t.Skip("a tool, not a check: -invariant.replay=SEED replays that seed with a trace")
	}
	synctest.Test(t, func(t *testing.T) {
		res := invariant.Run(invariant.Options{Seed: *replay, Mode: invariant.ModeFor(*replay), Log: func(s string) { t.Log(s) }})
		t.Logf("configuration: %s", res.Config)
		for _, p := range res.Plan {
			t.Log("plan: " + p)
		}
		for _, v := range res.Violations {
			t.Error(v)
		}
	})
}

// TestShrink removes jobs and operations from a failing chaos seed, one at
// a time, while the violation (-invariant.match)
// remains, and logs the calls left.
func TestShrink(t *testing.T) {
	if *shrink == 0 {
		t.Skip("a tool, not a check: -invariant.shrink=SEED shrinks a failing seed to a minimal workload")
	}
	drop, dropOp := map[int]bool{}, map[int]bool{}
	play := func() invariant.Result {
		return invariant.Play(t, invariant.Options{Seed: *shrink, Mode: invariant.ModeFor(*shrink),
			Keep: func(i int) bool { return !drop[i] }, KeepOp: func(i int) bool { return !dropOp[i] }})
	}
	fails := func(r invariant.Result) bool {
		for _, v := range r.Violations {
			if strings.Contains(v, *match) {
				return true
			}
		}
		return false
	}
	first := play()
	if !fails(first) {
		t.Fatalf("seed %d does not break %q", *shrink, *match)
	}
	for changed := true; changed; {
		changed = false
		for _, m := range []map[int]bool{drop, dropOp} {
			for i := range first.Jobs + 64 {
				if m[i] {
					continue
				}
				m[i] = true
				if fails(play()) {
					changed = true
				} else {
					delete(m, i)
				}
			}
		}
	}
	res := play()
	t.Logf("configuration: %s", res.Config)
	for _, p := range res.Plan {
		t.Log(p)
	}
	for _, v := range res.Violations {
		t.Log(v)
	}
}

// TestHierarchyFairness: fairness mode's seeds with tenants (a tenant
// spread over several keys beside a tenant on one) keep every backlogged
// key within one job's charge of the others, as the seeds without do.
func TestHierarchyFairness(t *testing.T) {
	tenants := 0
	for seed := uint64(1); seed <= 40; seed++ {
		if invariant.ModeFor(seed) != invariant.Fairness {
			continue
		}
		res := invariant.Play(t, invariant.Options{Seed: seed, Mode: invariant.Fairness})
		if len(res.Violations) > 0 {
			t.Errorf("seed %d: %s", seed, strings.Join(res.Violations, "\n"))
		}
		if strings.Contains(res.Config, "tenants by key path") {
			tenants++
			if res.FairChecks == 0 {
				t.Errorf("seed %d: no snapshot compared the keys", seed)
			}
			t.Logf("seed %d: weighted gap %v of %v", seed, res.MaxDrift, res.DriftBound)
		}
	}
	if tenants < 3 {
		t.Errorf("%d seeds with tenants; want at least 3", tenants)
	}
}
