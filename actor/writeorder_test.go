package actor_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched/actor"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
	"github.com/fairsched/fairsched/workers"
)

// heldStore is a JobStore whose every commit waits for the test: it
// tells the commit's ops on commits, then returns once release receives.
type heldStore struct {
	commits chan []string
	release chan struct{}
}

func (s *heldStore) Load() (core.State, error)                 { return core.State{}, nil }
func (s *heldStore) Save(core.State) error                     { return nil }
func (s *heldStore) LoadJobs(func(core.JobRecord) error) error { return nil }
func (s *heldStore) ApplyJobs(ops []machine.JobOp) error {
	s.commits <- opsText(ops, func(r *core.JobRecord) string {
		return fmt.Sprintf("put %d interruptions %d", r.Seq, r.Interruptions)
	})
	<-s.release
	return nil
}

// TestNoStartBeforeItsWrites: with GrantRecordsAttempt (cluster mode's
// leader, where the grant's write is another writer's than the owner's),
// an attempt does not start while a write of its job's record is under
// way — here the record of the interrupted attempt before it. Started
// at once, its success's delete (the leader's) could commit before that
// write, which would then bring the finished job back.
func TestNoStartBeforeItsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &heldStore{commits: make(chan []string), release: make(chan struct{})}
		a := actor.Start(core.New(policy.DefaultLimits()), machine.Config{Clock: clock.NewMock(), Logger: zap.NewNop(), Tick: time.Minute,
			Store: st, GrantRecordsAttempt: true})
		defer func() {
			go func() { // the final writes, if any
				for range st.commits {
					st.release <- struct{}{}
				}
			}()
			a.Close(context.Background())
			close(st.commits)
		}()
		if err := a.Register(work, policy.JobTypeConfig{DefaultCost: time.Second, Priority: 10}); err != nil {
			t.Fatal(err)
		}
		attempts := make(chan int, 4)
		if err := a.RegisterHandlers(map[policy.JobType]messages.Handler{work: func(_ context.Context, j messages.DurableJob) error {
			attempts <- j.Attempt
			if j.Attempt == 1 {
				return fmt.Errorf("%w: its instance went silent", workers.ErrWorkerLost)
			}
			return machine.EndWritten
		}}); err != nil {
			t.Fatal(err)
		}
		enqueued := make(chan error, 1)
		go func() { enqueued <- a.Enqueue(context.Background(), messages.NewJob(work, "j", "", nil)) }()
		var got []string
		commit := func() {
			c := <-st.commits
			got = append(got, fmt.Sprint("commit ", c))
		}
		commit() // the job's record
		st.release <- struct{}{}
		if err := <-enqueued; err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint("attempt ", <-attempts))
		commit() // the interruption, held
		synctest.Wait()
		early := false
		select {
		case n := <-attempts:
			got = append(got, fmt.Sprint("attempt ", n, " while the write was held"))
			early = true
		default:
		}
		st.release <- struct{}{}
		if !early {
			got = append(got, fmt.Sprint("attempt ", <-attempts))
		}
		want := []string{"commit [put 1 interruptions 0]", "attempt 1", "commit [put 1 interruptions 1]", "attempt 2"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}
