package backendtest

import (
	"testing"
	"time"

	"github.com/fairsched/fairsched/internal/cluster"
)

// instancesWake: a heartbeat that lists an instance anew, or changes what
// it says of it (slots, types, workers, subscribers), wakes InstanceReads,
// so that a leader places jobs on an instance as it joins; one that
// changes nothing does not — instances beat all the time.
func instancesWake(t *testing.T, b cluster.Backend) {
	ch, stop := b.Wake(bg, cluster.InstanceReads, "")
	if ch == nil {
		t.Fatal("Wake(InstanceReads): nil channel, the backend cannot listen")
	}
	defer stop()
	jobs, stopJobs := b.Wake(bg, cluster.LeaderReads, "")
	if jobs == nil {
		t.Fatal("Wake(LeaderReads): nil channel, the backend cannot listen")
	}
	defer stopJobs()
	beat := func(in cluster.Instance) {
		t.Helper()
		if _, err := b.Heartbeat(bg, Domain, in); err != nil {
			t.Fatal(err)
		}
	}
	woken := func(c <-chan struct{}, step string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(waitBound):
			t.Fatalf("%s: InstanceReads not woken", step)
		}
	}
	in := cluster.Instance{ID: "i", Slots: 2, Types: []string{"t"}}
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"its first beat", func() {}},
		{"a type more", func() { in.Types = []string{"t", "u"} }},
		{"more slots", func() { in.Slots = 3 }},
		{"a worker registered", func() { in.Workers = map[string][][]string{"w": {{"t"}}} }},
		{"subscribers", func() { in.Subscribed = true }},
	} {
		step.change()
		beat(in)
		woken(ch, step.name)
	}
	beat(in) // the same again
	insert(t, b, "barrier")
	woken(jobs, "the insert after the beat that changed nothing")
	select {
	case <-ch:
		t.Error("a heartbeat that changed nothing woke InstanceReads")
	default:
	}
}
