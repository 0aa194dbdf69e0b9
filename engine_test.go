package fairsched_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// settingCalls are run-time settings, valid and not, each as an API call.
var settingCalls = []struct {
	name string
	call func(*fairsched.Scheduler) error
}{
	{"key weight", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", 2) }},
	{"key weight default", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", 0) }},
	{"key weight negative", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", -1) }},
	{"key weight infinite", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", math.Inf(1)) }},
	{"key weight NaN", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", math.NaN()) }},
	{"key weight too large", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k", 1e12) }},
	{"key weight bad key", func(s *fairsched.Scheduler) error { return s.SetKeyWeight("k\x00", 1) }},
	{"group weight", func(s *fairsched.Scheduler) error { return s.SetGroupWeight("a", 3) }},
	{"group weight negative", func(s *fairsched.Scheduler) error { return s.SetGroupWeight("a", -1) }},
	{"group weight bad name", func(s *fairsched.Scheduler) error { return s.SetGroupWeight("\xff", 2) }},
	{"reset group weights", func(s *fairsched.Scheduler) error { return s.ResetGroupWeights() }},
	{"pause", func(s *fairsched.Scheduler) error { return s.PauseGroup("a") }},
	{"pause no name", func(s *fairsched.Scheduler) error { return s.PauseGroup("") }},
	{"resume", func(s *fairsched.Scheduler) error { return s.ResumeGroup("a") }},
	{"resume bad name", func(s *fairsched.Scheduler) error { return s.ResumeGroup("a\x00") }},
}

// settingErrors runs every settingCalls on s and returns their errors'
// texts ("" for nil).
func settingErrors(s *fairsched.Scheduler) map[string]string {
	out := map[string]string{}
	for _, c := range settingCalls {
		if err := c.call(s); err != nil {
			out[c.name] = err.Error()
		}
	}
	return out
}

// TestClusterSettingsChecked: a cluster instance checks the run-time
// settings (key and group weights, pauses) as one process does, with the
// same errors — with and without groups configured —, and refuses them
// with ErrClosed once closed.
func TestClusterSettingsChecked(t *testing.T) {
	grouped := []fairsched.Option{fairsched.WithMaxConcurrency(4), fairsched.WithGroupWeight("a", 2), fairsched.WithGroupLimit("a", 2)}
	for _, tc := range []struct {
		name string
		opts []fairsched.Option
	}{{"no groups", nil}, {"groups", grouped}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			local, err := fairsched.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			st, err := pgstore.Open(ctx, pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			node, err := fairsched.New(append(tc.opts, fairsched.WithCluster(st, fairsched.ClusterConfig{Domain: "settings", Instance: "one", Slots: 1}))...)
			if err != nil {
				t.Fatal(err)
			}
			want := settingErrors(local)
			if len(want) == 0 {
				t.Fatal("no call failed in one process: the table checks nothing")
			}
			if diff := cmp.Diff(want, settingErrors(node)); diff != "" {
				t.Errorf("cluster errors differ from one process's (-local +cluster):\n%s", diff)
			}
			for _, s := range []*fairsched.Scheduler{local, node} {
				if err := s.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range settingCalls {
				if err := c.call(node); !errors.Is(err, fairsched.ErrClosed) {
					t.Errorf("%s after Close: %v, want ErrClosed", c.name, err)
				}
			}
		})
	}
}
