package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/policy"
)

// TestRegistryAsCore: the registry's pure checks of a type's and a
// worker's registration give what a scheduler's core gives when it makes
// them — nil or the same error, in the same order of checks — over one
// sequence of registrations, the earlier ones counted by the later.
func TestRegistryAsCore(t *testing.T) {
	good := policy.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond}
	worker := policy.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond, RequiresWorker: true}
	types := []struct {
		t   policy.JobType
		cfg policy.JobTypeConfig
	}{
		{"a", good}, {"a", good}, {"w", worker}, {"v", worker}, {"", good}, {"bad\x00", good},
		{"nocost", policy.JobTypeConfig{Priority: 1}}, {"w", policy.JobTypeConfig{}},
	}
	type slots = [][]policy.JobType
	workers := []struct {
		id    string
		slots slots
	}{
		{"w1", slots{{"w"}}}, {"w1", slots{{"w"}}}, {"w1", slots{{"nope"}}}, {"w2", slots{{"a"}}},
		{"", slots{{"w"}}}, {"w2", nil}, {"w2", slots{{}}}, {"w2", slots{{"w", "w"}}}, {"\xff", slots{{"w"}}},
		{"w1", slots{{"w", "w"}}}, {"", nil}, {"w2", slots{{"v"}, {"w", "v"}}}, {"w3", slots{{"nope"}, {}}},
	}
	c := core.New(policy.DefaultLimits())
	var reg *policy.Registry
	ids := map[string]bool{}
	var fromCore, fromCheck []string
	for _, r := range types {
		fromCore = append(fromCore, errText(c.RegisterType(r.t, r.cfg)))
		err := r.cfg.ValidateFor(r.t, policy.DefaultLimits())
		if err == nil {
			err = reg.CheckNewType(r.t)
		}
		if err == nil {
			reg = reg.With(r.t, r.cfg)
		}
		fromCheck = append(fromCheck, errText(err))
	}
	now := time.Unix(0, 0)
	for _, w := range workers {
		fromCore = append(fromCore, errText(c.RegisterWorker(now, w.id, w.slots)))
		err := reg.CheckWorker(w.id, w.slots, func(id string) bool { return ids[id] })
		if err == nil {
			ids[w.id] = true
		}
		fromCheck = append(fromCheck, errText(err))
	}
	if diff := cmp.Diff(fromCore, fromCheck); diff != "" {
		t.Errorf("the registry's checks differ from the core's (-core +check):\n%s", diff)
	}
}

// TestRegistryCheckJob: a job's call is checked for its names and
// function, then for its type being registered; a handler for its type.
func TestRegistryCheckJob(t *testing.T) {
	reg := (*policy.Registry)(nil).With("a", policy.JobTypeConfig{Priority: 1, DefaultCost: 1})
	cases := []struct {
		t     policy.JobType
		id    string
		hasFn bool
		want  error
	}{
		{"a", "1", true, nil},
		{"b", "1", true, policy.ErrUnknownJobType},
		{"a", "", true, policy.ErrInvalidJob},
		{"a", "1", false, policy.ErrInvalidJob},
		{"b\x00", "1", true, policy.ErrInvalidJob},
		{"b", "1\xff", true, policy.ErrInvalidJob},
	}
	var got, want []string
	for _, c := range cases {
		got = append(got, sentinel(reg.CheckJob(c.t, c.id, c.hasFn)))
		want = append(want, sentinel(c.want))
	}
	for _, c := range []struct {
		t    policy.JobType
		want error
	}{{"a", nil}, {"b", policy.ErrUnknownJobType}, {"b\x00", policy.ErrInvalidJob}} {
		got = append(got, sentinel(reg.CheckHandler(c.t)))
		want = append(want, sentinel(c.want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if _, ok := (*policy.Registry)(nil).Type("a"); ok {
		t.Error("the empty registry has type a")
	}
	if _, ok := reg.With("b", policy.JobTypeConfig{}).Type("b"); !ok {
		t.Error("With did not register b")
	}
	if _, ok := reg.Type("b"); ok {
		t.Error("With changed the registry it was called on")
	}
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// sentinel names the sentinel err matches.
func sentinel(err error) string {
	for _, s := range []error{policy.ErrInvalidJob, policy.ErrUnknownJobType, policy.ErrInvalidConfig, policy.ErrDuplicateType} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return errText(err)
}
