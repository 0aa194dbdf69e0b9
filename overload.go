package fairsched

import (
	"os"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/loadsignal"
	"github.com/fairsched/fairsched/policy"
)

// LoadSignal tells how loaded the service is, as a value in [0, 1] (see
// WithLoadSignal). The built-ins are CPUSignal, QueueLengthSignal and
// WorkerUtilisationSignal; LoadFunc adapts a function.
//
// Methods, from policy.LoadSignal:
//
//	// Load returns the load in [0, 1]: 0 idle, 1 saturated. Values outside
//	// are clamped. An error, a NaN or a panic skips the reading: the last
//	// good reading stays in force.
//	Load(LoadState) (float64, error)
type LoadSignal = policy.LoadSignal

// LoadState is what the scheduler tells a LoadSignal of its own load.
//
// Fields, from policy.LoadState:
//
//	Now time.Time
//
//	Pending int // jobs waiting
//
//	Running int // jobs running
//
//	// Limit is the global cap (the adaptive limit's current value); 0 when
//	// unlimited.
//	Limit int
//
//	// WorkerSlots are the registered worker slots, WorkersBusy those of
//	// them that run a job.
//	WorkerSlots, WorkersBusy int
type LoadState = policy.LoadState

// LoadFunc adapts a func(LoadState) (float64, error) to LoadSignal: its
// Load calls the function.
type LoadFunc = policy.LoadFunc

// LoadConfig is the load signal's settings (WithLoadSignal).
//
// Fields, from policy.LoadConfig:
//
//	Signal LoadSignal
//
//	// Every is the period of the readings; default 1 s, at least 1 ms.
//	Every time.Duration
//
//	// Threshold: a reading at or above it is overloaded; in (0, 1],
//	// default 0.9.
//	Threshold float64
//
//	// Action is what an overloaded reading does to new work.
//	Action OverloadAction
type LoadConfig = policy.LoadConfig

// LoadSnapshot is the load signal's state in a Snapshot (Snapshot.Load).
//
// Fields, from core.LoadSnapshot:
//
//	// Value is the last good reading, in [0, 1]; 0 before the first.
//	Value float64
//
//	// Overloaded: Value is at or above Threshold.
//	Overloaded bool
//
//	Threshold float64
//
//	Action policy.OverloadAction
//
//	// Readings counts the good readings, Skipped those skipped (an error,
//	// a NaN, a panic of the signal).
//	Readings uint64
//
//	Skipped uint64
type LoadSnapshot = core.LoadSnapshot

// OverloadAction says what an overloaded reading does to new work.
//
// Declared, in policy.OverloadAction, as:
//
//	type OverloadAction uint8
type OverloadAction = policy.OverloadAction

// The overload actions.
const (
	// OverloadDefer, the default: no pending job is admitted (reason
	// overloaded) until a reading falls below the threshold; running jobs
	// go on.
	OverloadDefer = policy.OverloadDefer
	// OverloadRefuse: Submit, RunSync and the other submissions refuse new
	// jobs with a *RefusalError matching ErrOverloaded (reason overloaded);
	// queued jobs run as usual.
	OverloadRefuse = policy.OverloadRefuse
	// OverloadObserve: nothing is held back; the reading drives the
	// adaptive limit (AdaptiveLimitConfig.LoadTarget), the snapshot and
	// the metrics.
	OverloadObserve = policy.OverloadObserve
)

// ReasonOverloaded: the load signal reads overloaded; the job waits
// (OverloadDefer) or, refused, was never queued (OverloadRefuse).
const ReasonOverloaded = policy.ReasonOverloaded

// WithLoadSignal reads cfg.Signal every cfg.Every (default 1 s) on the
// scheduler's owner goroutine. A reading at or above cfg.Threshold (default
// 0.9) is overloaded: new work is deferred, refused or only observed, as
// cfg.Action says, until a reading falls below it. An adaptive limit with a
// LoadTarget follows the readings instead of latency (WithAdaptiveLimit).
// The snapshot's Load shows the last reading. Close waits for the jobs an
// overload holds as for any pending job: until a reading clears it, or
// Close's context ends and drops them.
//
// In cluster mode the leader decides for every instance, with its own
// signal: CPUSignal is then the leader's process, while QueueLengthSignal
// and WorkerUtilisationSignal see the whole domain's queue and slots.
// With OverloadRefuse the leader publishes its verdict at each heartbeat
// and every instance refuses from the last verdict it read: a verdict is
// at most Every plus two heartbeats old; without a live leader, or before
// its first reading, instances accept.
func WithLoadSignal(cfg LoadConfig) Option {
	return optionFunc(func(o *options) {
		l := cfg.WithDefaults()
		o.limits.Load = &l
	})
}

// QueueLengthSignal reads the queue's length: pending jobs over bound,
// capped at 1 (bound jobs waiting saturate it). bound must be at least 1.
func QueueLengthSignal(bound int) LoadSignal { return policy.QueueLength(bound) }

// WorkerUtilisationSignal reads the slots in use: busy worker slots over
// registered ones (RegisterWorker), else running jobs over the global limit
// (0 while unlimited). With the default threshold a worker pool is
// overloaded at 90 % of its slots busy.
func WorkerUtilisationSignal() LoadSignal { return policy.WorkerUtilisation() }

// CPUSignal reads the process's CPU utilisation between two readings, on
// the wall clock (not WithClock's): from its cgroup v2 cpu.stat, over the
// CPUs its cpu.max quota allows, when the process has one; else from
// /proc/self/stat over /proc/stat's total, the machine's every CPU. Where
// neither can be read (not Linux, a corrupt file) the reading is skipped
// and logged. Each call returns a new reader, its first sample taken now;
// a reader keeps its last sample, so give each scheduler its own.
func CPUSignal() LoadSignal {
	cpu := loadsignal.NewCPU(os.DirFS("/"), time.Now, 0)
	return LoadFunc(func(LoadState) (float64, error) { return cpu.Load() })
}

// loadInCluster readies OverloadRefuse for cluster mode and reports
// whether it is on: the leader takes a job in only after the call that
// made it has returned, so its scheduler must not refuse it — it only
// observes the signal, and publishes its verdict; every instance refuses
// the calls made on it from the last verdict it read (cluster.Node).
func loadInCluster(o *options) bool {
	l := o.limits.Load
	if o.cluster == nil || l == nil || l.Action != OverloadRefuse {
		return false
	}
	observe := *l
	observe.Action = OverloadObserve
	o.limits.Load = &observe
	return true
}

// MaxLoadSignal reads several signals and takes the highest: the service
// is overloaded when any of them is — say, 90 % of the worker slots busy
// or 90 % of the CPU. A signal that fails is left out of the reading; the
// reading fails only when all of them do.
func MaxLoadSignal(signals ...LoadSignal) LoadSignal { return policy.MaxOf(signals...) }
