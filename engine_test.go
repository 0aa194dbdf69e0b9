package fairsched_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster/memback"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/google/go-cmp/cmp"
)

func noop(context.Context) error { return nil }

func noopHandler(context.Context, fairsched.Job) error { return nil }

// registrationCalls are registrations and job calls, valid and not, in
// order (each sees the registrations before it), each with the sentinel
// its error matches (nil: it succeeds).
var registrationCalls = []struct {
	name string
	call func(*fairsched.Scheduler) error
	want error
}{
	{"type", func(s *fairsched.Scheduler) error {
		return s.RegisterType("a", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond})
	}, nil},
	{"duplicate type", func(s *fairsched.Scheduler) error {
		return s.RegisterType("a", fairsched.JobTypeConfig{Priority: 2, DefaultCost: time.Second})
	}, fairsched.ErrDuplicateType},
	{"type without cost", func(s *fairsched.Scheduler) error {
		return s.RegisterType("b", fairsched.JobTypeConfig{Priority: 1})
	}, fairsched.ErrInvalidConfig},
	{"type bad name", func(s *fairsched.Scheduler) error {
		return s.RegisterType("b\x00", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond})
	}, fairsched.ErrInvalidConfig},
	{"worker type", func(s *fairsched.Scheduler) error {
		return s.RegisterType("w", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond, RequiresWorker: true})
	}, nil},
	{"run unknown type", func(s *fairsched.Scheduler) error {
		return s.RunSync(context.Background(), "nope", "1", "k", noop)
	}, fairsched.ErrUnknownJobType},
	{"submit unknown type", func(s *fairsched.Scheduler) error { return s.Submit("nope", "1", noop) }, fairsched.ErrUnknownJobType},
	{"submit no id", func(s *fairsched.Scheduler) error { return s.Submit("a", "", noop) }, fairsched.ErrInvalidJob},
	{"submit no function", func(s *fairsched.Scheduler) error { return s.Submit("a", "1", nil) }, fairsched.ErrInvalidJob},
	{"enqueue unknown type", func(s *fairsched.Scheduler) error {
		return s.Enqueue(context.Background(), "nope", "1", nil)
	}, fairsched.ErrUnknownJobType},
	{"cancel unknown type", func(s *fairsched.Scheduler) error {
		_, err := s.Cancel(context.Background(), "nope", "1")
		return err
	}, fairsched.ErrUnknownJobType},
	{"handler unknown type", func(s *fairsched.Scheduler) error { return s.RegisterHandler("nope", noopHandler) }, fairsched.ErrUnknownJobType},
	{"worker of unknown type", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"nope"}}}})
	}, fairsched.ErrUnknownJobType},
	{"worker of a type that needs none", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"a"}}}})
	}, fairsched.ErrInvalidConfig},
	{"worker without slots", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1"})
	}, fairsched.ErrInvalidConfig},
	{"worker without id", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
	}, fairsched.ErrInvalidConfig},
	{"worker type twice", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w", "w"}}}})
	}, fairsched.ErrInvalidConfig},
	{"worker", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
	}, nil},
	{"duplicate worker", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w1", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
	}, fairsched.ErrDuplicateWorker},
	{"unregister unknown worker", func(s *fairsched.Scheduler) error { return s.UnregisterWorker("w2") }, fairsched.ErrUnknownWorker},
	{"unregister worker", func(s *fairsched.Scheduler) error { return s.UnregisterWorker("w1") }, nil},
	{"unregister worker again", func(s *fairsched.Scheduler) error { return s.UnregisterWorker("w1") }, fairsched.ErrUnknownWorker},
}

// afterClose are calls that meet a closed scheduler.
var afterClose = []struct {
	name string
	call func(*fairsched.Scheduler) error
}{
	{"type", func(s *fairsched.Scheduler) error {
		return s.RegisterType("c", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Millisecond})
	}},
	{"submit", func(s *fairsched.Scheduler) error { return s.Submit("a", "2", noop) }},
	{"run", func(s *fairsched.Scheduler) error { return s.RunSync(context.Background(), "a", "2", "k", noop) }},
	{"handler", func(s *fairsched.Scheduler) error { return s.RegisterHandler("a", noopHandler) }},
	{"worker", func(s *fairsched.Scheduler) error {
		return s.RegisterWorker(fairsched.WorkerSpec{ID: "w3", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"w"}}}})
	}},
}

// checkedCalls runs registrationCalls then, once s is closed, afterClose
// on s, and returns each call's error: its text and the sentinel it
// matches.
func checkedCalls(t *testing.T, s *fairsched.Scheduler) (texts, sentinels []string) {
	for _, c := range registrationCalls {
		err := c.call(s)
		texts = append(texts, c.name+": "+errString(err))
		sentinels = append(sentinels, c.name+": "+matches(err, c.want))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range afterClose {
		err := c.call(s)
		texts = append(texts, "closed "+c.name+": "+errString(err))
		sentinels = append(sentinels, "closed "+c.name+": "+matches(err, fairsched.ErrClosed))
	}
	return texts, sentinels
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// matches says whether err matches want ("ok"), or what it is instead.
func matches(err, want error) string {
	if err == want || want != nil && errors.Is(err, want) {
		return "ok"
	}
	return "got " + errString(err)
}

// actorsInBubble counts the goroutines of the calling goroutine's
// synctest bubble that run a scheduler's actor's code, once every other
// one is blocked.
func actorsInBubble() int {
	synctest.Wait() // none is between its start and its first wait
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	stacks := strings.Split(string(buf), "\n\n")
	header, _, _ := strings.Cut(stacks[0], "\n") // the caller's: "goroutine N [running, synctest bubble B]:"
	_, bubble, ok := strings.Cut(header, "synctest bubble ")
	if !ok {
		panic("actorsInBubble outside a bubble")
	}
	bubble = strings.TrimSuffix(bubble, "]:")
	n := 0
	for _, s := range stacks {
		h, _, _ := strings.Cut(s, "\n")
		if strings.HasSuffix(h, "synctest bubble "+bubble+"]:") && strings.Contains(s, "fairsched/actor.") {
			n++
		}
	}
	return n
}

// TestCallsCheckedAlike: registrations and job calls, valid and not, are
// refused with the same typed errors — same texts — by a scheduler in one
// process and by an instance of a cluster (on the in-memory backend, in
// virtual time), and both refuse calls with ErrClosed once closed. The
// cluster's instance here does not lead (another holds the lease), and no
// goroutine of it runs an actor: its checks are pure functions over its
// node's registry.
func TestCallsCheckedAlike(t *testing.T) {
	var local, cluster [2][]string
	var localActors, clusterActors int
	synctest.Test(t, func(t *testing.T) {
		s, err := fairsched.New()
		if err != nil {
			t.Fatal(err)
		}
		localActors = actorsInBubble()
		local[0], local[1] = checkedCalls(t, s)
	})
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		if _, ok, err := b.Acquire(context.Background(), "checks", "elsewhere", time.Hour); !ok || err != nil {
			t.Fatalf("Acquire: %v, %v", ok, err)
		}
		s, err := fairsched.New(fairsched.WithCluster(b, fairsched.ClusterConfig{Domain: "checks", Instance: "one", Slots: 1}))
		if err != nil {
			t.Fatal(err)
		}
		_, cancel := s.Subscribe(1)
		defer cancel()
		clusterActors = actorsInBubble()
		cluster[0], cluster[1] = checkedCalls(t, s)
	})
	var want []string
	for _, c := range registrationCalls {
		want = append(want, c.name+": ok")
	}
	for _, c := range afterClose {
		want = append(want, "closed "+c.name+": ok")
	}
	if diff := cmp.Diff(want, local[1]); diff != "" {
		t.Errorf("one process's errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(local[0], cluster[0]); diff != "" {
		t.Errorf("the cluster's errors differ from one process's (-local +cluster):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, false}, []bool{localActors > 0, clusterActors > 0}); diff != "" {
		t.Errorf("goroutines running an actor, one process then the cluster's instance (-want +got):\n%s", diff)
	}
}

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
	t.Parallel()
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
