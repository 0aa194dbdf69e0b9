package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// Application-level names: the scheduler gives them no meaning.
const (
	JobTypeSyncClone fairsched.JobType       = "sync-clone"
	JobTypeRepack    fairsched.JobType       = "repack"
	ConflictGroupGit fairsched.ConflictGroup = "git"
)

func Example() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
	if err != nil {
		panic(err)
	}
	defer s.Close(context.Background())

	// Foreground clones: up to 8 at once, dispatched before background work.
	_ = s.RegisterType(JobTypeSyncClone, fairsched.JobTypeConfig{
		DefaultCost: 10 * time.Second, MaxConcurrency: 8, ConflictGroup: ConflictGroupGit, Priority: 8,
	})
	// Background repacks: never more than 4 background jobs, 3 repacks, and
	// never at the same time as a clone of the same repository.
	_ = s.RegisterType(JobTypeRepack, fairsched.JobTypeConfig{
		DefaultCost: 20 * time.Second, MaxConcurrency: 3, ConflictGroup: ConflictGroupGit, Priority: 4,
	})

	// A request handler: blocks until the clone has run; the client's address
	// is its fairness key.
	err = s.RunSync(context.Background(), JobTypeSyncClone, "github.com/torvalds/linux", "10.0.0.7",
		func(ctx context.Context) error {
			fmt.Println("cloning linux")
			return nil
		})
	fmt.Println("clone:", err)

	// Maintenance: returns at once, runs when admitted.
	_ = s.Submit(JobTypeRepack, "github.com/torvalds/linux", func(ctx context.Context) error {
		return nil
	})
	// Output:
	// cloning linux
	// clone: <nil>
}

func ExampleScheduler_Snapshot() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	_ = s.RegisterType(JobTypeSyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, Priority: 8})

	release := make(chan struct{})
	started := make(chan struct{})
	_ = s.Submit(JobTypeSyncClone, "big", func(context.Context) error {
		close(started)
		<-release
		return nil
	})
	<-started
	_ = s.Submit(JobTypeSyncClone, "small", func(context.Context) error { return nil })

	snap, _ := s.Snapshot(context.Background())
	for _, p := range snap.Pending {
		fmt.Printf("%s/%s waits: %s\n", p.Type, p.ID, p.Reason)
	}
	close(release)
	// Output:
	// sync-clone/small waits: global_limit
}

func ExampleScheduler_RunSync_panic() {
	s, _ := fairsched.New()
	defer s.Close(context.Background())
	_ = s.RegisterType(JobTypeSyncClone, fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})

	err := s.RunSync(context.Background(), JobTypeSyncClone, "repo", "client", func(context.Context) error {
		panic("corrupt pack")
	})
	var pe *fairsched.PanicError
	fmt.Println(errors.As(err, &pe), pe.Value)
	// Output:
	// true corrupt pack
}

func ExampleInheritPriority() {
	s, _ := fairsched.New(fairsched.WithMaxConcurrency(1))
	defer s.Close(context.Background())
	_ = s.RegisterType(JobTypeSyncClone, fairsched.JobTypeConfig{DefaultCost: 10 * time.Second, Priority: 8})
	_ = s.RegisterType(JobTypeRepack, fairsched.JobTypeConfig{DefaultCost: 20 * time.Second, Priority: 4})

	// A clone that needs a repack first: the repack it spawns competes at
	// the clone's priority, not at the repack tier's.
	_ = s.RunSync(context.Background(), JobTypeSyncClone, "repo", "client", func(ctx context.Context) error {
		_ = s.Submit(JobTypeRepack, "repo", func(context.Context) error { return nil },
			fairsched.InheritPriority(ctx))
		snap, _ := s.Snapshot(ctx)
		p := snap.Pending[0]
		fmt.Printf("%s/%s: base %d, inherited %d, effective %d\n",
			p.Type, p.ID, p.Priority, *p.InheritedPriority, p.EffectivePriority)
		return nil
	})
	// Output:
	// repack/repo: base 4, inherited 8, effective 8
}
