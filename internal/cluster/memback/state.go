package memback

import (
	"cmp"
	"slices"
	"time"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/internal/cluster"
)

// state is what the owner goroutine holds: the database.
type state struct {
	now       func() time.Time
	faults    faults
	version   uint64 // the last commit's number (a transaction id)
	nextSeq   uint64
	jobs      map[uint64]*row
	leases    map[string]*lease
	insts     map[string]map[string]*inst // domain → id
	commands  map[int64]*command
	nextCmd   int64
	settings  map[string]map[string][]byte
	doc       []byte // the scheduler's state document (Save)
	wakes     []*waker
	events    []chan []byte
	successes []chan []cluster.End
}

type row struct {
	rec      core.JobRecord
	running  bool
	instance string
	attempt  int
	key      string
	worker   string
	slot     int
	cancel   bool
	preempt  bool // cancelled for a preemption
	ended    bool
	end      cluster.End
	recVer   uint64 // the commit that wrote the record
	grantVer uint64 // the commit that granted or cancelled it
	endVer   uint64 // the commit that reported its end
}

type lease struct {
	holder  string
	epoch   int64
	expires time.Time
	// overload is the verdict the epoch overloadEpoch wrote (SetOverload).
	overload      cluster.Overload
	overloadEpoch int64
}

type inst struct {
	in   cluster.Instance
	beat time.Time
}

type command struct {
	domain string
	c      cluster.Command
	reply  []byte
}

type waker struct {
	r        cluster.Reader
	instance string
	ch       chan struct{}
}

func newState(now func() time.Time) *state {
	return &state{
		now:      now,
		faults:   faults{fail: map[string][]failN{}, stall: map[string]chan struct{}{}, waiting: map[string]int{}},
		jobs:     map[uint64]*row{},
		leases:   map[string]*lease{},
		insts:    map[string]map[string]*inst{},
		commands: map[int64]*command{},
		settings: map[string]map[string][]byte{},
	}
}

// commit numbers a write.
func (st *state) commit() uint64 { st.version++; return st.version }

// wake signals the wakers of r: of instance, for ExecutorReads and
// OwnerReads ("" wakes every one).
func (st *state) wake(r cluster.Reader, instance string) {
	named := r == cluster.ExecutorReads || r == cluster.OwnerReads
	for _, w := range st.wakes {
		if w.r != r || named && instance != "" && w.instance != instance {
			continue
		}
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// closeSubscribers closes every Wake, Events and Successes channel, as a lost
// listening connection does, and forgets them.
func (st *state) closeSubscribers() {
	for _, c := range st.events {
		close(c)
	}
	for _, w := range st.wakes {
		close(w.ch)
	}
	for _, c := range st.successes {
		close(c)
	}
	st.events = nil
	st.wakes = nil
	st.successes = nil
}

// pendingDuplicate reports whether another pending job has rec's (type,
// id): the rule of one unfinished durable job per (type, id). RunSync and
// Submit jobs (a record with an owner) may share an id, as in one process.
func (st *state) pendingDuplicate(rec *core.JobRecord) bool {
	if !uniquePending(rec) {
		return false
	}
	for _, r := range st.jobs {
		if r.rec.Seq != rec.Seq && uniquePending(&r.rec) && r.rec.Type == rec.Type && r.rec.ID == rec.ID {
			return true
		}
	}
	return false
}

// uniquePending reports whether rec counts in the rule of one unfinished
// job per (type, id) (pgstore's index fairsched_jobs_unfinished): a
// pending durable job, no RunSync's or Submit's.
func uniquePending(rec *core.JobRecord) bool {
	return rec.State == core.RecordPending && rec.Owner == ""
}

func (st *state) sortedSeqs() []uint64 {
	seqs := make([]uint64, 0, len(st.jobs))
	for s := range st.jobs {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	return seqs
}

// record returns r's record as a reader sees it: the attempt column
// counted, Granted left to the caller.
func (r *row) record() core.JobRecord {
	rec := cloneRecord(r.rec)
	rec.Attempt = max(rec.Attempt, r.attempt)
	return rec
}

func (r *row) asRow() cluster.Row {
	out := cluster.Row{Seq: r.rec.Seq, Running: r.running, Instance: r.instance, Attempt: r.attempt, Ended: r.ended, End: r.end}
	out.End.Seq = r.rec.Seq
	return out
}

func (r *row) grant() cluster.Grant {
	rec := r.record()
	return cluster.Grant{Seq: r.rec.Seq, Instance: r.instance, Attempt: r.attempt, ConflictKey: r.key,
		Worker: r.worker, Slot: r.slot, Record: &rec, Cancelled: r.cancel, Preempted: r.preempt}
}

func sortGrants(gs []cluster.Grant) {
	slices.SortFunc(gs, func(a, b cluster.Grant) int { return cmp.Compare(a.Seq, b.Seq) })
}
