package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/replay"
	"github.com/fairsched/fairsched/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// arrival is one job of a recorded workload.
type arrival struct {
	at       time.Duration
	id, key  string
	run      time.Duration
	tenantOf string
}

// workload: tenant acme spreads its jobs over many keys, bolt sends on one;
// they arrive over a minute, in bursts, on two slots.
func workload() []arrival {
	var out []arrival
	for i := range 60 {
		at := time.Duration(i/6)*3*time.Second + time.Duration(i)*time.Millisecond // bursts, in a known order
		if i%3 == 0 {
			out = append(out, arrival{at, fmt.Sprintf("b%d", i), "bolt/main", time.Duration(1+i%4) * time.Second, "bolt"})
		} else {
			out = append(out, arrival{at, fmt.Sprintf("a%d", i), fmt.Sprintf("acme/u%d", i%7), time.Duration(1+i%3) * 500 * time.Millisecond, "acme"})
		}
	}
	return out
}

func tenantOf(key string) string { return key[:4] }

var options = []fairsched.Option{fairsched.WithMaxConcurrency(2)}

// record plays jobs on a real scheduler in virtual time, recording them.
func record(t *testing.T, jobs []arrival) []trace.Record {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New(options...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterType("render", replay.DefaultType); err != nil {
			t.Fatal(err)
		}
		rec, err := trace.NewRecorder(s, &out, trace.WithTenant(tenantOf))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for _, j := range jobs {
			time.Sleep(time.Until(start.Add(j.at)))
			fn := func(context.Context) error { time.Sleep(j.run); return nil }
			if err := s.Submit("render", j.id, fn, fairsched.WithFairnessKey(j.key)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := rec.Stats(); st.Written != uint64(len(jobs)) || st.Dropped != 0 {
			t.Fatalf("recorder stats %+v, want %d written", st, len(jobs))
		}
	})
	recs, err := trace.Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestReplayMatchesRecording: a run recorded and replayed with the same
// options starts every job when it started: the shares and waits match.
func TestReplayMatchesRecording(t *testing.T) {
	recs := record(t, workload())
	runs, err := replay.Play(recs, options...)
	if err != nil {
		t.Fatal(err)
	}
	want := replay.Measure(replay.Recorded(recs))
	if diff := cmp.Diff(want, replay.Measure(runs)); diff != "" {
		t.Errorf("tenants (-recorded +replayed):\n%s", diff)
	}
	if diff := cmp.Diff(replay.Recorded(recs), runs); diff != "" {
		t.Errorf("runs (-recorded +replayed):\n%s", diff)
	}
	if len(want) != 2 || !want[0].Contended || want[0].Share <= 0 || want[1].Share <= 0 {
		t.Errorf("the workload is meant to contend, each tenant served part of it: %+v", want)
	}
}

// TestReplayAnotherPolicy: the same trace replayed with bolt weighted 3 to
// 1 gives bolt more of the contended service than the recording did.
func TestReplayAnotherPolicy(t *testing.T) {
	recs := record(t, workload())
	runs, err := replay.Play(recs, append(options, fairsched.WithKeyWeight("bolt/main", 3))...)
	if err != nil {
		t.Fatal(err)
	}
	before, after := replay.Measure(replay.Recorded(recs)), replay.Measure(runs)
	if after[1].Name != "bolt" || after[1].Share <= before[1].Share {
		t.Errorf("bolt's share with weight 3: %.3f, recorded %.3f; want more", after[1].Share, before[1].Share)
	}
}

// TestMeasure: the share counts only contended time, the p95 is the
// nearest rank.
func TestMeasure(t *testing.T) {
	s := time.Second
	runs := []replay.Run{
		{Tenant: "a", Arrival: 0, Start: 0, Run: 4 * s},     // alone until b arrives at 1
		{Tenant: "b", Arrival: 1 * s, Start: 4 * s, Run: s}, // waits 3: contended 1–4, a served 3
		{Tenant: "a", Arrival: 2 * s, Start: 5 * s, Run: s}, // waits 3: contended 4–5, b served 1
		{Tenant: "c", Arrival: 10 * s, Start: 10 * s, NotRun: true},
	}
	want := []replay.Tenant{
		{Name: "a", Jobs: 2, Share: 0.75, Contended: true, P95Wait: 3 * s, MaxWait: 3 * s},
		{Name: "b", Jobs: 1, Share: 0.25, Contended: true, P95Wait: 3 * s, MaxWait: 3 * s},
		{Name: "c", Jobs: 1, NotRun: 1, Contended: true},
	}
	if diff := cmp.Diff(want, replay.Measure(runs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
