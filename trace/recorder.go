package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/fairsched/fairsched"
)

// Defaults of a Recorder.
const (
	// DefaultBuffer is the events the recorder's subscription holds.
	DefaultBuffer = 4096
	// DefaultMaxPendingBytes bounds the lines waiting for the writer.
	DefaultMaxPendingBytes = 1 << 20
	// maxOpen bounds the admitted jobs the recorder remembers until they end.
	maxOpen = 1 << 16
)

// ErrNilScheduler: NewRecorder was given a nil scheduler.
var ErrNilScheduler = errors.New("trace: nil scheduler")

// Option configures a Recorder.
type Option func(*config)

type config struct {
	tenant  func(key string) string
	buffer  int
	pending int
}

// WithTenant names the tenant of each fairness key in the trace (by
// default the key itself): the level fairsim checks shares at.
func WithTenant(f func(key string) string) Option { return func(c *config) { c.tenant = f } }

// WithBuffer sets the events the recorder's subscription holds (default
// DefaultBuffer, at most fairsched.MaxSubscribeBuffer); events beyond it
// are dropped by the scheduler and counted in Snapshot.EventsLost.
func WithBuffer(n int) Option { return func(c *config) { c.buffer = n } }

// WithMaxPendingBytes bounds the lines waiting for a slow writer (default
// DefaultMaxPendingBytes); a record beyond it is dropped and counted.
func WithMaxPendingBytes(n int) Option { return func(c *config) { c.pending = n } }

// Stats counts a recorder's records.
type Stats struct {
	// Written: records the writer accepted.
	Written uint64 `json:"written"`
	// Dropped: records lost because the writer was slow (the pending
	// bytes were full), failed (the batch it was writing), or the recorder
	// closed before writing them; and runs whose admission the recorder
	// did not see.
	Dropped uint64 `json:"dropped"`
	// WriteErrors: calls to the writer that returned an error.
	WriteErrors uint64 `json:"write_errors"`
}

// Recorder writes a scheduler's job runs to a trace (see the package doc).
type Recorder struct {
	cfg     config
	w       io.Writer
	events  <-chan fairsched.Event
	cancel  func()
	work    chan batch // to the writer goroutine; capacity 1
	idle    chan []byte
	stop    chan struct{} // closed when Close gives up waiting for the writer
	done    chan struct{} // closed when the writer goroutine has returned
	written atomic.Uint64
	dropped atomic.Uint64
	errs    atomic.Uint64
	firstEr atomic.Pointer[error]
	stopped atomic.Bool
}

type batch struct {
	buf []byte
	n   uint64
}

type openKey struct {
	t       fairsched.JobType
	id, key string
}

// NewRecorder starts recording s's job runs to w, from now on: a line per run
// that ends, written by a goroutine of its own in batches. The scheduler
// never waits for it: when w is slow, records wait in a bounded buffer and,
// beyond it, are dropped and counted (Stats). Close stops it; the
// scheduler's Close stops it too, after the last run's line.
func NewRecorder(s *fairsched.Scheduler, w io.Writer, opts ...Option) (*Recorder, error) {
	cfg := config{buffer: DefaultBuffer, pending: DefaultMaxPendingBytes, tenant: func(k string) string { return k }}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("trace: option %d is nil", i+1)
		}
		o(&cfg)
	}
	switch {
	case w == nil:
		return nil, errors.New("trace: nil writer")
	case cfg.tenant == nil || cfg.buffer < 1 || cfg.pending < 1:
		return nil, fmt.Errorf("trace: WithTenant needs a function, WithBuffer and WithMaxPendingBytes a positive size (%d, %d)", cfg.buffer, cfg.pending)
	case s == nil:
		return nil, ErrNilScheduler
	}
	events, cancel := s.Subscribe(min(cfg.buffer, fairsched.MaxSubscribeBuffer))
	r := &Recorder{cfg: cfg, w: w, events: events, cancel: cancel, work: make(chan batch, 1),
		idle: make(chan []byte, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.write()
	go r.collect()
	return r, nil
}

// Stats returns the recorder's counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Written: r.written.Load(), Dropped: r.dropped.Load(), WriteErrors: r.errs.Load()}
}

// Close ends the recording: the lines already taken are written, unless
// ctx ends first (they are then dropped and counted). It returns the
// writer's first error, or ctx's. Calling it again returns the same.
func (r *Recorder) Close(ctx context.Context) error {
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.stopped.CompareAndSwap(false, true) {
			close(r.stop)
		}
		return ctx.Err()
	}
	if p := r.firstEr.Load(); p != nil {
		return *p
	}
	return nil
}

// collect turns events into lines, in the recorder's own goroutine, and
// hands them to the writer whenever it is idle: one write per batch.
func (r *Recorder) collect() {
	open := map[openKey]Record{}
	var buf []byte
	n := uint64(0)
	busy := false
	for ev := range r.events {
		var rec Record
		var ok bool
		if rec, ok = r.take(open, ev); ok {
			if len(buf) >= r.cfg.pending {
				r.dropped.Add(1)
			} else {
				buf, n = appendRecord(buf, rec), n+1
			}
		}
		buf, n, busy = r.handOff(buf, n, busy)
	}
	r.finish(buf, n, busy)
}

// handOff gives the writer the lines gathered if it is idle; it never
// waits.
func (r *Recorder) handOff(buf []byte, n uint64, busy bool) ([]byte, uint64, bool) {
	if busy {
		select {
		case spare := <-r.idle:
			busy = false
			if len(buf) == 0 {
				return spare, 0, false
			}
		default:
			return buf, n, true
		}
	}
	if len(buf) == 0 {
		return buf, n, false
	}
	r.work <- batch{buf, n} // capacity 1 and the writer is idle: never blocks
	return nil, 0, true
}

// finish writes the last lines once the subscription has ended, unless
// Close gave up waiting.
func (r *Recorder) finish(buf []byte, n uint64, busy bool) {
	defer close(r.work)
	if busy {
		select {
		case <-r.idle:
		case <-r.stop:
			r.dropped.Add(n)
			return
		}
	}
	if len(buf) > 0 {
		r.work <- batch{buf, n}
	}
}

// write runs the writer's calls, one batch at a time.
func (r *Recorder) write() {
	defer close(r.done)
	headed := false // the header goes with the first batch written, so a failed write cannot lose it
	for b := range r.work {
		out := b.buf
		if !headed {
			out = append(appendHeader(nil), b.buf...)
		}
		if err := r.writeOut(out); err != nil {
			r.dropped.Add(b.n)
		} else {
			headed = true
			r.written.Add(b.n)
		}
		select {
		case r.idle <- b.buf[:0]:
		default:
		}
	}
	if !headed { // no run ended, or every write failed: the header alone
		_ = r.writeOut(appendHeader(nil))
	}
}

// writeOut calls the writer once, counting a failure.
func (r *Recorder) writeOut(b []byte) error {
	_, err := r.w.Write(b)
	if err != nil {
		r.errs.Add(1)
		r.firstEr.CompareAndSwap(nil, &err)
	}
	return err
}

// take follows one event: an admission opens a record, the end of the run
// completes it (ok), a preemption forgets it (the job waits again).
func (r *Recorder) take(open map[openKey]Record, ev fairsched.Event) (rec Record, ok bool) {
	switch e := ev.(type) {
	case fairsched.JobAdmitted:
		if len(open) >= maxOpen {
			r.dropped.Add(1)
			return Record{}, false
		}
		open[openKey{e.Type, e.ID, e.FairnessKey}] = Record{Type: string(e.Type), ID: e.ID, Key: e.FairnessKey,
			Tenant: r.cfg.tenant(e.FairnessKey), Group: e.Group, Arrival: e.Time.Add(-e.Waited), Wait: e.Waited, Cost: e.Cost}
	case fairsched.JobPreempted:
		delete(open, openKey{e.Type, e.ID, e.FairnessKey})
	case fairsched.JobCompleted:
		return r.end(open, openKey{e.Type, e.ID, e.FairnessKey}, e.Elapsed, false)
	case fairsched.JobFailed:
		return r.end(open, openKey{e.Type, e.ID, e.FairnessKey}, e.Elapsed, true)
	}
	return Record{}, false
}

func (r *Recorder) end(open map[openKey]Record, k openKey, elapsed time.Duration, failed bool) (Record, bool) {
	rec, ok := open[k]
	if !ok {
		r.dropped.Add(1) // its admission was lost or dropped
		return Record{}, false
	}
	delete(open, k)
	rec.Run, rec.Failed = elapsed, failed
	if rec.Tenant == rec.Key {
		rec.Tenant = ""
	}
	return rec, true
}
