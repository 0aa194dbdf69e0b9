package memback

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// Insert writes a new pending job (cluster.Backend).
func (b *Backend) Insert(ctx context.Context, rec *core.JobRecord) error {
	errs, err := b.InsertMany(ctx, []*core.JobRecord{rec})
	if err != nil {
		return err
	}
	return errs[0]
}

// InsertMany writes recs in one commit (cluster.BulkInserter).
func (b *Backend) InsertMany(ctx context.Context, recs []*core.JobRecord) ([]error, error) {
	for _, rec := range recs {
		rec.State, rec.Seq = core.RecordPending, 1 // a stand-in: the store numbers it
		err := checkRecord(rec)
		rec.Seq = 0
		if err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(recs))
	err := b.call(ctx, "InsertMany", func(st *state) error {
		ver := st.commit()
		for i, rec := range recs {
			if st.pendingDuplicate(rec) {
				errs[i] = duplicate(rec)
				continue
			}
			st.nextSeq++
			rec.Seq = st.nextSeq
			st.jobs[rec.Seq] = &row{rec: cloneRecord(*rec), recVer: ver}
		}
		st.wake(cluster.LeaderReads, "")
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// Acquire takes domain's lease (cluster.Backend).
func (b *Backend) Acquire(ctx context.Context, domain, holder string, ttl time.Duration) (epoch int64, ok bool, err error) {
	err = b.call(ctx, "Acquire", func(st *state) error {
		now := st.now()
		l := st.leases[domain]
		if l == nil {
			l = &lease{}
			st.leases[domain] = l
		} else if l.expires.After(now) && l.holder != holder {
			return nil
		}
		l.holder, l.epoch, l.expires = holder, l.epoch+1, now.Add(ttl)
		epoch, ok = l.epoch, true
		return nil
	})
	return epoch, ok, err
}

// Renew extends the lease (cluster.Backend).
func (b *Backend) Renew(ctx context.Context, domain, holder string, epoch int64, ttl time.Duration) (ok bool, err error) {
	err = b.call(ctx, "Renew", func(st *state) error {
		l := st.leases[domain]
		now := st.now()
		if l != nil && l.holder == holder && l.epoch == epoch && l.expires.After(now) {
			l.expires, ok = now.Add(ttl), true
		}
		return nil
	})
	return ok, err
}

// Release ends the lease at once (cluster.Backend).
func (b *Backend) Release(ctx context.Context, domain, holder string, epoch int64) error {
	return b.call(ctx, "Release", func(st *state) error {
		l := st.leases[domain]
		now := st.now()
		if l != nil && l.holder == holder && l.epoch == epoch && l.expires.After(now) {
			l.expires = now
		}
		return nil
	})
}

// Leader reads the lease (cluster.Backend).
func (b *Backend) Leader(ctx context.Context, domain string) (holder string, epoch int64, live bool, err error) {
	err = b.call(ctx, "Leader", func(st *state) error {
		if l := st.leases[domain]; l != nil {
			holder, epoch, live = l.holder, l.epoch, l.expires.After(st.now())
		}
		return nil
	})
	return holder, epoch, live, err
}

// Heartbeat records in (cluster.Backend).
func (b *Backend) Heartbeat(ctx context.Context, domain string, in cluster.Instance) (listed bool, err error) {
	in.Silent = 0
	in = cloneInstance(in)
	err = b.call(ctx, "Heartbeat", func(st *state) error {
		if st.insts[domain] == nil {
			st.insts[domain] = map[string]*inst{}
		}
		old := st.insts[domain][in.ID]
		listed = old == nil
		if listed || !reflect.DeepEqual(old.in, in) {
			st.wake(cluster.InstanceReads, "")
		}
		st.insts[domain][in.ID] = &inst{in: in, beat: st.now()}
		return nil
	})
	return listed, err
}

// cloneInstance copies in's slices and maps: the backend keeps what was
// beaten, whatever the caller does with its own afterwards.
func cloneInstance(in cluster.Instance) cluster.Instance {
	in.Types = slices.Clone(in.Types)
	if in.Workers != nil {
		ws := make(map[string][][]string, len(in.Workers))
		for id, slots := range in.Workers {
			for _, types := range slots {
				ws[id] = append(ws[id], slices.Clone(types))
			}
		}
		in.Workers = ws
	}
	return in
}

// Instances lists domain's instances by id (cluster.Backend).
func (b *Backend) Instances(ctx context.Context, domain string) (out []cluster.Instance, err error) {
	err = b.call(ctx, "Instances", func(st *state) error {
		now := st.now()
		for _, i := range st.insts[domain] {
			in := cloneInstance(i.in)
			in.Silent = now.Sub(i.beat)
			out = append(out, in)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b cluster.Instance) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// Lost removes the instances silent past deadline and returns them, with
// those removed before whose grants stand (cluster.Backend).
func (b *Backend) Lost(ctx context.Context, domain string, epoch int64, deadline time.Duration) (lost []string, err error) {
	err = b.call(ctx, "Lost", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		cut := st.now().Add(-deadline)
		for id, i := range st.insts[domain] {
			if i.beat.Before(cut) {
				delete(st.insts[domain], id)
				lost = append(lost, id)
			}
		}
		for _, r := range st.jobs {
			if r.running && r.instance != "" && !st.listed(r.instance) && !slices.Contains(lost, r.instance) {
				lost = append(lost, r.instance)
			}
		}
		return nil
	})
	slices.Sort(lost)
	return lost, err
}

// listed reports whether instance is an instance of any domain.
func (st *state) listed(instance string) bool {
	for _, m := range st.insts {
		if m[instance] != nil {
			return true
		}
	}
	return false
}

// Revoke takes back instance's grants (cluster.Backend).
func (b *Backend) Revoke(ctx context.Context, domain string, epoch int64, instance string) (seqs []uint64, err error) {
	err = b.call(ctx, "Revoke", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		for _, seq := range st.sortedSeqs() {
			r := st.jobs[seq]
			if r.running && r.instance == instance {
				r.running, r.key, r.instance, r.cancel, r.preempt = false, "", "", false, false
				seqs = append(seqs, seq)
			}
		}
		return nil
	})
	return seqs, err
}

// Domain opens the leader's view from one snapshot (cluster.Backend): every
// record, the feed's backlog empty.
func (b *Backend) Domain(ctx context.Context, domain string, epoch int64) (machine.JobStore, []core.JobRecord, cluster.Feed, error) {
	var recs []core.JobRecord
	var cur uint64
	err := b.call(ctx, "Domain", func(st *state) error {
		cur = st.version
		for _, seq := range st.sortedSeqs() {
			r := st.jobs[seq]
			rec := r.record()
			switch {
			case r.running:
				rec.Granted = r.instance
			case r.rec.State == core.RecordPending && r.ended && r.end.Attempt > r.rec.EndedAttempt:
				rec.Granted = r.end.Instance
			}
			recs = append(recs, rec)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &jobStore{b: b, domain: domain, epoch: epoch}, recs, &feed{b: b, cur: cur}, nil
}

// Grant writes one turn (cluster.Backend): the successes' deletes, then the
// grants, all or nothing.
func (b *Backend) Grant(ctx context.Context, domain string, epoch int64, ops []machine.JobOp, succeeded []cluster.End, grants []cluster.Grant) (gone, took []uint64, err error) {
	if len(ops)+len(succeeded)+len(grants) == 0 {
		return nil, nil, nil
	}
	for _, op := range ops {
		if op.Put != nil && !op.Put.Valid() {
			return nil, nil, fmt.Errorf("%w: %w: memback: record %d is not valid", fairsched.ErrStore, machine.ErrRecordRefused, op.Put.Seq)
		}
	}
	err = b.call(ctx, "Grant", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		undo := st.saveRows(ops)
		if len(ops) > 0 {
			if err := st.apply(ops); err != nil {
				return err
			}
		}
		var e error
		if gone, took, e = st.grant(succeeded, grants); e != nil {
			undo() // one transaction: the records' writes go with it
		}
		return e
	})
	if err != nil {
		return nil, nil, err
	}
	return gone, took, nil
}

func (st *state) grant(succeeded []cluster.End, grants []cluster.Grant) (gone, took []uint64, err error) {
	ends := slices.Clone(succeeded)
	slices.SortFunc(ends, func(a, b cluster.End) int { return cmp.Compare(a.Seq, b.Seq) })
	deleted, freed := map[uint64]bool{}, map[uint64]bool{}
	for _, e := range ends {
		r := st.jobs[e.Seq]
		switch {
		case r == nil || deleted[e.Seq] || freed[e.Seq]:
		case r.rec.State == core.RecordPending && (r.running && r.instance == e.Instance && r.attempt == e.Attempt ||
			!r.running && r.ended && r.end.Instance == e.Instance && r.end.Attempt == e.Attempt && r.end.Kind == cluster.EndOK):
			deleted[e.Seq] = true
			gone = append(gone, e.Seq)
		case r.rec.State != core.RecordPending && r.running && r.instance == e.Instance && r.attempt == e.Attempt:
			freed[e.Seq] = true
			gone = append(gone, e.Seq)
		}
	}
	// The exclusive keys held once the deletes are done: a second
	// running grant of one refuses the whole transaction.
	held := map[string]bool{}
	for seq, r := range st.jobs {
		if r.running && r.key != "" && !deleted[seq] && !freed[seq] {
			held[r.key] = true
		}
	}
	gs := slices.Clone(grants)
	sortGrants(gs)
	taking := map[uint64]bool{}
	for _, g := range gs {
		r := st.jobs[g.Seq]
		if r == nil || deleted[g.Seq] || r.running && !freed[g.Seq] || taking[g.Seq] || r.rec.State != core.RecordPending || r.attempt >= g.Attempt {
			continue
		}
		if g.ConflictKey != "" {
			if held[g.ConflictKey] {
				return nil, nil, cluster.ErrDoubleAdmission
			}
			held[g.ConflictKey] = true
		}
		taking[g.Seq] = true
		took = append(took, g.Seq)
	}
	ver := st.commit()
	owners := map[string]bool{}
	for seq := range deleted {
		if o := st.jobs[seq].rec.Owner; o != "" {
			owners[o] = true
		}
		delete(st.jobs, seq)
	}
	for seq := range freed {
		r := st.jobs[seq]
		r.running, r.key, r.cancel, r.preempt = false, "", false, false
	}
	for _, g := range gs {
		if !taking[g.Seq] {
			continue
		}
		delete(taking, g.Seq)
		r := st.jobs[g.Seq]
		r.running, r.instance, r.attempt, r.key, r.worker, r.slot, r.cancel, r.preempt, r.grantVer =
			true, g.Instance, g.Attempt, g.ConflictKey, g.Worker, g.Slot, false, false, ver
		if g.Handed {
			r.grantVer = 0 // its executor has it: not one of its incremental reads (GrantsSince)
		} else {
			st.wake(cluster.ExecutorReads, g.Instance)
		}
	}
	for o := range owners { // the callers waiting for these ends
		st.wake(cluster.OwnerReads, o)
	}
	return gone, took, nil
}

// Rows returns the grant state of the jobs of seqs (cluster.Backend).
func (b *Backend) Rows(ctx context.Context, seqs []uint64) (out []cluster.Row, err error) {
	err = b.call(ctx, "Rows", func(st *state) error {
		for _, seq := range uniq(seqs) {
			if r := st.jobs[seq]; r != nil {
				out = append(out, r.asRow())
			}
		}
		return nil
	})
	return out, err
}

func uniq(seqs []uint64) []uint64 {
	s := slices.Clone(seqs)
	slices.Sort(s)
	return slices.Compact(s)
}

// Granted returns the jobs running on instance (cluster.Backend).
func (b *Backend) Granted(ctx context.Context, instance string) (out []cluster.Grant, err error) {
	err = b.call(ctx, "Granted", func(st *state) error {
		for _, seq := range st.sortedSeqs() {
			if r := st.jobs[seq]; r.running && r.instance == instance {
				out = append(out, r.grant())
			}
		}
		return nil
	})
	return out, err
}

// ReportEnds ends the grants still matching (cluster.Backend).
func (b *Backend) ReportEnds(ctx context.Context, ends []cluster.End) (n int, err error) {
	err = b.call(ctx, "ReportEnds", func(st *state) error {
		ver := st.commit()
		for _, e := range ends {
			r := st.jobs[e.Seq]
			if r == nil || !r.running || r.instance != e.Instance || r.attempt != e.Attempt {
				continue
			}
			r.running, r.key, r.cancel, r.preempt, r.ended, r.end, r.endVer = false, "", false, false, true, e, ver
			n++
		}
		st.wake(cluster.EndReads, "")
		return nil
	})
	return n, err
}

// Finals returns the jobs of seqs finished or gone (cluster.Backend).
func (b *Backend) Finals(ctx context.Context, seqs []uint64) (out []cluster.Final, err error) {
	err = b.call(ctx, "Finals", func(st *state) error {
		for _, seq := range seqs {
			r := st.jobs[seq]
			switch {
			case r == nil:
				out = append(out, cluster.Final{Seq: seq, Gone: true})
			case r.rec.State != core.RecordPending:
				out = append(out, cluster.Final{Seq: seq, State: r.rec.State, LastError: r.rec.LastError})
			}
		}
		return nil
	})
	return out, err
}

// Forget deletes the finished jobs of seqs (cluster.Backend).
func (b *Backend) Forget(ctx context.Context, seqs []uint64) error {
	return b.call(ctx, "Forget", func(st *state) error {
		for _, seq := range seqs {
			if r := st.jobs[seq]; r != nil && r.rec.State != core.RecordPending {
				delete(st.jobs, seq)
			}
		}
		return nil
	})
}

// Command inserts a command for domain's leader (cluster.Backend).
func (b *Backend) Command(ctx context.Context, domain string, c cluster.Command) (id int64, err error) {
	c.Args = slices.Clone(c.Args)
	err = b.call(ctx, "Command", func(st *state) error {
		st.nextCmd++
		id, c.ID = st.nextCmd, st.nextCmd
		st.commands[id] = &command{domain: domain, c: c}
		st.wake(cluster.LeaderReads, "")
		return nil
	})
	return id, err
}

// Reply returns command id's reply once written, and deletes it
// (cluster.Backend).
func (b *Backend) Reply(ctx context.Context, id int64) (reply []byte, ok bool, err error) {
	err = b.call(ctx, "Reply", func(st *state) error {
		if c := st.commands[id]; c != nil && c.reply != nil {
			reply, ok = c.reply, true
			delete(st.commands, id)
		}
		return nil
	})
	return reply, ok, err
}

// Commands returns domain's open commands by id (cluster.Backend).
func (b *Backend) Commands(ctx context.Context, domain string) (out []cluster.Command, err error) {
	err = b.call(ctx, "Commands", func(st *state) error {
		for _, c := range st.commands {
			if c.domain == domain && c.reply == nil {
				cc := c.c
				cc.Args = slices.Clone(cc.Args)
				out = append(out, cc)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b cluster.Command) int { return cmp.Compare(a.ID, b.ID) })
	return out, err
}

// Answer writes command id's reply and the settings it changed, fenced
// (cluster.Backend).
func (b *Backend) Answer(ctx context.Context, domain string, epoch, id int64, reply []byte, reset string, settings map[string][]byte) error {
	reply = slices.Clone(reply)
	if reply == nil {
		reply = []byte{}
	}
	return b.call(ctx, "Answer", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		m := st.domainSettings(domain)
		if reset != "" {
			for name := range m {
				if strings.HasPrefix(name, reset) {
					delete(m, name)
				}
			}
		}
		for name, v := range settings {
			if v == nil {
				delete(m, name)
			} else {
				m[name] = slices.Clone(v)
			}
		}
		if c := st.commands[id]; c != nil {
			c.reply = reply
		}
		return nil
	})
}

func (st *state) domainSettings(domain string) map[string][]byte {
	if st.settings[domain] == nil {
		st.settings[domain] = map[string][]byte{}
	}
	return st.settings[domain]
}

// Settings returns domain's settings (cluster.Backend).
func (b *Backend) Settings(ctx context.Context, domain string) (out map[string][]byte, err error) {
	err = b.call(ctx, "Settings", func(st *state) error {
		out = map[string][]byte{}
		for name, v := range st.settings[domain] {
			out[name] = slices.Clone(v)
		}
		return nil
	})
	return out, err
}

// DefineTypes writes settings, unfenced (cluster.Backend).
func (b *Backend) DefineTypes(ctx context.Context, domain string, settings map[string][]byte) error {
	return b.call(ctx, "DefineTypes", func(st *state) error {
		m := st.domainSettings(domain)
		for name, v := range settings {
			m[name] = slices.Clone(v)
		}
		return nil
	})
}

// RevokeJob asks the executor of running job seq to stop it, fenced
// (cluster.Backend).
func (b *Backend) RevokeJob(ctx context.Context, domain string, epoch int64, seq uint64, why cluster.RevokeCause) error {
	return b.call(ctx, "RevokeJob", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		if r := st.jobs[seq]; r != nil && r.running {
			if !r.cancel { // the first revoke's cause is the attempt's
				r.preempt = why == cluster.RevokePreempt
			}
			r.cancel, r.grantVer = true, st.commit()
			st.wake(cluster.ExecutorReads, r.instance)
		}
		return nil
	})
}

// ClaimSlot claims a periodic schedule's slot (cluster.Backend).
func (b *Backend) ClaimSlot(ctx context.Context, domain, name string, slot int64) (ok bool, err error) {
	err = b.call(ctx, "ClaimSlot", func(st *state) error {
		m, key := st.domainSettings(domain), "periodic/"+name // apart from the settings of types and weights
		if v, there := m[key]; !there || claimed(v, slot) {
			m[key], ok = []byte(strconv.FormatInt(slot, 10)), true
		}
		return nil
	})
	return ok, err
}

// ForgetOrphans deletes the finished jobs of owners not live, finished
// longer than after ago, fenced (cluster.Backend).
func (b *Backend) ForgetOrphans(ctx context.Context, domain string, epoch int64, live []string, after time.Duration) (n int, err error) {
	err = b.call(ctx, "ForgetOrphans", func(st *state) error {
		if err := st.fence(domain, epoch); err != nil {
			return err
		}
		cut := st.now().Add(-after)
		for seq, r := range st.jobs {
			if r.rec.State != core.RecordPending && r.rec.Owner != "" && !slices.Contains(live, r.rec.Owner) && r.rec.FinishedAt.Before(cut) {
				delete(st.jobs, seq)
				n++
			}
		}
		return nil
	})
	return n, err
}

// Wake returns a channel woken after the commits r reads (cluster.Backend).
func (b *Backend) Wake(ctx context.Context, r cluster.Reader, instance string) (<-chan struct{}, func()) {
	w := &waker{r: r, instance: instance, ch: make(chan struct{}, 1)}
	if b.do(func(st *state) { st.wakes = append(st.wakes, w) }) != nil {
		return nil, func() {}
	}
	return w.ch, func() {
		_ = b.do(func(st *state) {
			st.wakes = slices.DeleteFunc(st.wakes, func(x *waker) bool { return x == w })
		})
	}
}

// eventBuffer is how many payloads a slow Events reader may fall behind
// before payloads are dropped for it (at most once).
const eventBuffer = 256

// Publish sends payload to every Events listener (cluster.Backend).
func (b *Backend) Publish(ctx context.Context, payload []byte) error {
	return b.call(ctx, "Publish", func(st *state) error {
		send(st.events, slices.Clone(payload))
		return nil
	})
}

// Events returns the payloads published from now on (cluster.Backend).
func (b *Backend) Events(ctx context.Context) (<-chan []byte, func()) {
	return subscribe(b, func(st *state) *[]chan []byte { return &st.events })
}

// TellSucceeded tells the Successes listeners of ends (cluster.Backend); a
// listener eventBuffer batches behind misses them (at most once).
func (b *Backend) TellSucceeded(ctx context.Context, ends []cluster.End) error {
	return b.call(ctx, "TellSucceeded", func(st *state) error {
		send(st.successes, slices.Clone(ends))
		return nil
	})
}

// Successes returns the successes told from now on (cluster.Backend).
func (b *Backend) Successes(ctx context.Context) (<-chan []cluster.End, func()) {
	return subscribe(b, func(st *state) *[]chan []cluster.End { return &st.successes })
}

// send gives v to every listener with room for it; the others miss it.
// Listeners share v: none writes to it.
func send[T any](listeners []chan T, v T) {
	for _, c := range listeners {
		select {
		case c <- v:
		default:
		}
	}
}

// subscribe adds a listener of eventBuffer to the list of listeners,
// and returns it with the function that removes and closes it.
func subscribe[T any](b *Backend, list func(*state) *[]chan T) (<-chan T, func()) {
	c := make(chan T, eventBuffer)
	if b.do(func(st *state) { l := list(st); *l = append(*l, c) }) != nil {
		return nil, func() {}
	}
	return c, func() {
		_ = b.do(func(st *state) {
			l := list(st)
			if i := slices.Index(*l, c); i >= 0 {
				*l = slices.Delete(*l, i, i+1)
				close(c)
			}
		})
	}
}

// GrantsSince returns instance's grants written since c
// (cluster.IncrementalReads).
func (b *Backend) GrantsSince(ctx context.Context, instance string, c cluster.ReadCursor) (out []cluster.Grant, next cluster.ReadCursor, err error) {
	err = b.call(ctx, "GrantsSince", func(st *state) error {
		for _, seq := range st.sortedSeqs() {
			if r := st.jobs[seq]; r.running && r.instance == instance && r.grantVer > c.Pos {
				out = append(out, r.grant())
			}
		}
		next = cluster.ReadCursor{Pos: st.version}
		return nil
	})
	return out, next, err
}

// EndsSince returns the rows whose end was reported since c
// (cluster.IncrementalReads).
func (b *Backend) EndsSince(ctx context.Context, c cluster.ReadCursor) (out []cluster.Row, next cluster.ReadCursor, err error) {
	err = b.call(ctx, "EndsSince", func(st *state) error {
		for _, seq := range st.sortedSeqs() {
			if r := st.jobs[seq]; r.ended && r.endVer > c.Pos {
				out = append(out, r.asRow())
			}
		}
		next = cluster.ReadCursor{Pos: st.version}
		return nil
	})
	return out, next, err
}

// feed is Domain's feed: its backlog is empty (Domain returns every
// record); Next reads the pending records written since its cursor.
type feed struct {
	b   *Backend
	cur uint64
}

func (f *feed) Backlog(context.Context) ([]core.JobRecord, bool, error) { return nil, false, nil }
func (f *feed) Close()                                                  {}

func (f *feed) Next(ctx context.Context) (out []core.JobRecord, err error) {
	err = f.b.call(ctx, "Next", func(st *state) error {
		for _, seq := range st.sortedSeqs() {
			if r := st.jobs[seq]; r.recVer > f.cur && r.rec.State == core.RecordPending {
				out = append(out, r.record())
			}
		}
		f.cur = st.version
		return nil
	})
	return out, err
}

// jobStore is the leader's JobStore: its writes are fenced.
type jobStore struct {
	b      *Backend
	domain string
	epoch  int64
}

func (j *jobStore) Load() (s core.State, err error) {
	err = j.b.call(context.Background(), "Load", func(st *state) error {
		if st.doc == nil {
			return nil
		}
		return json.Unmarshal(st.doc, &s)
	})
	return s, err
}

func (j *jobStore) Save(s core.State) error {
	doc, err := encodeState(s)
	if err != nil {
		return fmt.Errorf("%w: memback: %w", fairsched.ErrStore, err)
	}
	return j.b.call(context.Background(), "Save", func(st *state) error {
		if err := st.fence(j.domain, j.epoch); err != nil {
			return err
		}
		st.doc = doc
		return nil
	})
}

func (j *jobStore) LoadJobs(fn func(core.JobRecord) error) error {
	var recs []core.JobRecord
	err := j.b.call(context.Background(), "LoadJobs", func(st *state) error {
		for _, seq := range st.sortedSeqs() {
			recs = append(recs, st.jobs[seq].record())
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// ApplyJobs commits ops, fenced, all or none.
func (j *jobStore) ApplyJobs(ops []machine.JobOp) error {
	for _, op := range ops {
		if op.Put != nil && !op.Put.Valid() {
			return fmt.Errorf("%w: %w: memback: record %d is not valid", fairsched.ErrStore, machine.ErrRecordRefused, op.Put.Seq)
		}
	}
	return j.b.call(context.Background(), "ApplyJobs", func(st *state) error {
		if err := st.fence(j.domain, j.epoch); err != nil {
			return err
		}
		return st.apply(ops)
	})
}

func (st *state) apply(ops []machine.JobOp) error {
	// Checked on the outcome, as a unique index at commit: a put and a
	// delete of one batch both count.
	after := map[uint64]*core.JobRecord{}
	for _, op := range ops {
		if op.Put != nil {
			rec := cloneRecord(*op.Put)
			after[rec.Seq] = &rec
		} else {
			after[op.Delete] = nil
		}
	}
	for _, rec := range after {
		if rec != nil && rec.State == core.RecordPending && st.duplicateAfter(rec, after) {
			return duplicate(rec)
		}
	}
	ver := st.commit()
	for seq, rec := range after {
		switch r := st.jobs[seq]; {
		case rec == nil:
			delete(st.jobs, seq)
		case r == nil:
			st.jobs[seq] = &row{rec: *rec, recVer: ver}
			st.nextSeq = max(st.nextSeq, seq)
		default:
			r.rec, r.recVer = *rec, ver
		}
	}
	st.wake(cluster.OwnerReads, "")
	return nil
}

// saveRows returns what undoes the writes of ops (apply): the rows they
// touch, as they are now, put back.
func (st *state) saveRows(ops []machine.JobOp) func() {
	if len(ops) == 0 {
		return func() {}
	}
	was := map[uint64]*row{}
	for _, op := range ops {
		seq := op.Delete
		if op.Put != nil {
			seq = op.Put.Seq
		}
		if _, seen := was[seq]; seen {
			continue
		}
		if r := st.jobs[seq]; r != nil {
			c := *r
			was[seq] = &c
		} else {
			was[seq] = nil
		}
	}
	return func() {
		for seq, r := range was {
			if r == nil {
				delete(st.jobs, seq)
			} else {
				st.jobs[seq] = r
			}
		}
	}
}

func (st *state) duplicateAfter(rec *core.JobRecord, after map[uint64]*core.JobRecord) bool {
	if !uniquePending(rec) {
		return false
	}
	for seq, o := range after {
		if seq != rec.Seq && o != nil && uniquePending(o) && o.Type == rec.Type && o.ID == rec.ID {
			return true
		}
	}
	for seq, r := range st.jobs {
		if _, over := after[seq]; !over && seq != rec.Seq && uniquePending(&r.rec) && r.rec.Type == rec.Type && r.rec.ID == rec.ID {
			return true
		}
	}
	return false
}
