package fairsched

import (
	"fmt"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Cluster mode: several instances of a service share one scheduler over
// one database (package pgstore's Store is the backend). See package
// cluster and docs/cluster.md.

// ClusterConfig is one instance's part in a cluster: its domain, its name,
// how many durable jobs it runs at once, and the lease's timings.
//
// Fields, from cluster.Config:
//
//	// Domain names the cluster: instances of one domain share its jobs
//	// and one leader. Domain and Instance are required names: valid UTF-8
//	// without NUL, at most 1 024 bytes (policy.MaxNameLen), else
//	// ErrInvalidConfig.
//	Domain string
//
//	// Instance names this instance: unique among the instances running
//	// at once, and best stable across restarts (a Kubernetes pod's name,
//	// a host's name), so that logs and snapshots read well. Each process
//	// joins as an incarnation of its own (a Snapshot's
//	// Cluster.Incarnation: the name, "#" and a random suffix), and the
//	// database knows it by that: a process restarted under the same name
//	// takes nothing of the one before it. It waits out that one's lease
//	// like any other instance's (LeaseTTL), never runs its grants, and
//	// that one's jobs end with ErrWorkerLost once the leader declares it
//	// lost (LostAfter after its last heartbeat) — only then are they
//	// granted again. Valid UTF-8, no NUL, at most policy.MaxNameLen
//	// bytes, as Domain.
//	Instance string
//
//	// Slots is how many durable jobs this instance runs at once (default
//	// 16; RunSync and Submit functions run on their own instance and take
//	// none).
//	Slots int
//
//	// LeaseTTL is how long a lease lasts unrenewed (default 10 s);
//	// Heartbeat how often instances beat and the leader renews (default
//	// LeaseTTL/3); LostAfter how long an instance may stay silent before
//	// the leader declares it lost (default LeaseTTL + 2 Heartbeats, at
//	// least 3 Heartbeats). An instance whose beats fail for LostAfter
//	// less 2 Heartbeats stops its jobs and starts none until a beat
//	// succeeds, so that none runs on beside its retry.
//	LeaseTTL, Heartbeat, LostAfter time.Duration
//
//	// Poll is how often the loops read the database without a wake-up
//	// (default 200 ms; LISTEN wakes them at once when it works);
//	// ReportEvery how often an executor retries a report of ends that
//	// failed, and how long the leader gathers events into one publication
//	// (default 25 ms). Ends are reported as soon as they come: those that
//	// come while a report is written go into the next.
//	Poll, ReportEvery time.Duration
//
//	// LeaderFirst places each durable job on the leader's own instance
//	// while it has a free slot, on the others only beyond (among the
//	// instances as specialised for the job's type). A job there is handed
//	// over in process: no read of its grant, no report of its end through
//	// the database — a transaction and two reads a job fewer, and a
//	// shorter way from one job's end to the next one's start, which is
//	// what bounds a global cap's throughput (its size over that way's
//	// time). For short jobs, where that way is most of a job's time; the
//	// leader's instance then runs most of the work beside its
//	// scheduling. The leader's own setting applies. Default: among the
//	// instances as specialised, the one with the most free slots (ties:
//	// the leader's own, then by name), the work spread.
//	LeaderFirst bool
//
//	// Logger receives the instance's logs (lease, heartbeats, lost
//	// instances). WithCluster gives it the scheduler's logger when nil.
//	Logger *zap.Logger
type ClusterConfig = cluster.Config

// ClusterBackend is the database a cluster stands on: *pgstore.Store is
// one, and internal/cluster/memback's Backend an in-memory one for tests.
type ClusterBackend interface {
	// ClusterBackend returns the protocol the scheduler speaks through
	// the database (the lease, the change feed, heartbeats and grants).
	// WithCluster calls it; a program has no need to.
	ClusterBackend() cluster.Backend
}

// ClusterSnapshot is an instance's view of its cluster in a Snapshot.
//
// Fields, from core.ClusterSnapshot:
//
//	Domain string
//
//	Instance string
//
//	// Incarnation is this process's identity in the domain: Instance,
//	// "#" and a random suffix, new at each start.
//	Incarnation string
//
//	// Leader names the instance that holds the domain's lease under Epoch
//	// ("" when unknown), LeaderIncarnation which incarnation of it;
//	// Leading says whether it is this one. Only the leader's snapshot
//	// lists jobs and Instances: it is the one that decides.
//	Leader string
//
//	LeaderIncarnation string
//
//	Epoch int64
//
//	Leading bool
//
//	// Instances are the instances the leader counts, by incarnation.
//	Instances []InstanceSnapshot
type ClusterSnapshot = core.ClusterSnapshot

// InstanceSnapshot is one instance as the leader counts it.
//
// Fields, from core.InstanceSnapshot:
//
//	// ID is its configured name, Incarnation its process's identity: a
//	// name restarted shows twice until the leader has declared its
//	// earlier incarnation lost.
//	ID string
//
//	Incarnation string
//
//	// Slots is how many durable jobs it runs at once, Types the types it
//	// has handlers for, Running the durable jobs granted to it running.
//	Slots int
//
//	Types []string
//
//	Running int
//
//	// Subscribed: it has subscribers to the domain's events (the leader
//	// publishes them only while some instance has).
//	Subscribed bool
type InstanceSnapshot = core.InstanceSnapshot

// WithCluster makes the scheduler one instance of a cluster over b: the
// instance holding the domain's lease decides for every instance with the
// limits this scheduler is given (give every instance the same options and
// types); every instance runs the durable jobs it is granted, and the
// RunSync and Submit functions it made. Enqueue, RunSync and Submit work
// as in one process; caps, conflicts, tenant limits, rate limits and
// fairness hold across the cluster. WithStore does not combine with it:
// the cluster's database keeps everything.
func WithCluster(b ClusterBackend, cfg ClusterConfig) Option {
	return optionFunc(func(o *options) {
		if b == nil {
			o.fail(fmt.Errorf("%w: WithCluster: nil backend", ErrInvalidConfig))
			return
		}
		be := b.ClusterBackend()
		if be == nil {
			o.fail(fmt.Errorf("%w: WithCluster: nil backend", ErrInvalidConfig))
			return
		}
		o.cluster, o.clusterCfg = be, cfg
	})
}

// startCluster joins o's cluster: the leader's scheduler, whenever this
// instance leads, is built from o.
func startCluster(o *options) (*cluster.Node, error) {
	cfg := o.clusterCfg
	if cfg.Logger == nil {
		cfg.Logger = o.logger
	}
	n, err := cluster.Start(o.cluster, cfg, func(st machine.JobStore, recs []core.JobRecord) (*machine.Machine, error) {
		c := o.newCore()
		state, err := machine.SafeLoad(st)
		if err != nil {
			return nil, err
		}
		c.RestoreEstimates(o.clock.Now(), state.Estimates)
		c.RestoreKeyCosts(o.clock.Now(), state.KeyCosts)
		return machine.New(c, machine.Config{Clock: o.clock, Logger: o.logger, Tick: o.limits.KeyTTL / 4, Rand: o.rand,
			Store: st, State: state, Jobs: recs, Retention: o.retention, GrantRecordsAttempt: true, OwnerCommits: true}), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: WithCluster: %w", ErrInvalidConfig, err)
	}
	return n, nil
}
