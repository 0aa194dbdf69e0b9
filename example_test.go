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

// Worker slots: PDF jobs run only on a worker slot that takes them, one
// job per slot, on the free slot that supports the fewest types — here
// the PDF-only slot, keeping the versatile one for the rarer work.
func ExampleScheduler_RegisterWorker() {
	s, _ := fairsched.New()
	defer s.Close(context.Background())
	s.RegisterType("pdf", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, RequiresWorker: true})
	s.RegisterType("index", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4, RequiresWorker: true})
	s.RegisterWorker(fairsched.WorkerSpec{ID: "versatile", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"pdf", "index"}}}})
	s.RegisterWorker(fairsched.WorkerSpec{ID: "renderer", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{"pdf"}}}})

	err := s.RunSync(context.Background(), "pdf", "report.pdf", "alice", func(ctx context.Context) error {
		worker, slot, _ := fairsched.SlotFromContext(ctx)
		fmt.Printf("report.pdf runs on %s slot %d\n", worker, slot)
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// report.pdf runs on renderer slot 0
	// error: <nil>
}

// Linear scoring: when does a waiting job overtake fresh work of another
// kind? With the default weights a priority gap of 5 takes 320s of
// waiting, and a fresh on-demand (RunSync) job's bonus 256s.
func ExampleScoreConfig_Crossover() {
	cfg := fairsched.ScoreConfig{} // the defaults: 1024 per priority, 16 per second, …
	low, high := fairsched.JobClass{Priority: 0}, fairsched.JobClass{Priority: 5}
	after, _ := cfg.Crossover(low, high)
	fmt.Println("priority 0 passes a fresh priority 5 after", after)
	after, _ = cfg.Crossover(low, fairsched.JobClass{Priority: 0, OnDemand: true})
	fmt.Println("a queued job passes a fresh on-demand one after", after)
	// Output:
	// priority 0 passes a fresh priority 5 after 5m20s
	// a queued job passes a fresh on-demand one after 4m16s
}
