// Package memback is a cluster.Backend held in memory: the semantics of
// package pgstore's Store (epochs and lease fencing, the unique pending
// (type, id), the exclusive conflict keys, grants, ends, commands,
// settings, slots, events and wake-ups) without a database, so that the
// cluster runs in tests in virtual time (testing/synctest). One owner
// goroutine holds the state; every method hands it a request over a
// channel. Faults are injected by method name (Fail, Stall), and a lost
// listening connection by Deafen.
package memback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
)

// ErrClosed: a call after Close.
var ErrClosed = errors.New("memback: closed")

// ErrInjected is the transient error Fail injects unless told another.
var ErrInjected = errors.New("memback: injected fault")

// Option configures New.
type Option func(*Backend)

// WithClock makes now the backend's clock (the database's clock: leases,
// heartbeats, finished jobs' ages). The default is time.Now, which under
// testing/synctest is the bubble's virtual clock.
func WithClock(now func() time.Time) Option { return func(b *Backend) { b.now = now } }

// Backend is the in-memory cluster.Backend. Its zero value is not usable:
// New starts its owner goroutine, Close stops it.
type Backend struct {
	now  func() time.Time
	reqs chan func(*state)
	done chan struct{}
}

var _ cluster.Backend = (*Backend)(nil)

// ClusterBackend returns b itself: fairsched.WithCluster takes a Backend
// as it takes a *pgstore.Store.
func (b *Backend) ClusterBackend() cluster.Backend { return b }

// New starts a backend; call Close when done (the owner goroutine ends).
func New(opts ...Option) *Backend {
	b := &Backend{now: time.Now, reqs: make(chan func(*state)), done: make(chan struct{})}
	for _, o := range opts {
		o(b)
	}
	st := newState(b.now)
	go b.serve(st)
	return b
}

func (b *Backend) serve(st *state) {
	for {
		select {
		case f := <-b.reqs:
			f(st)
		case <-b.done:
			st.closeSubscribers()
			return
		}
	}
}

// Close stops the owner goroutine; later calls return ErrClosed.
func (b *Backend) Close() {
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}

// do runs f on the owner goroutine and waits for it.
func (b *Backend) do(f func(*state)) error {
	fin := make(chan struct{})
	select {
	case b.reqs <- func(st *state) { f(st); close(fin) }:
	case <-b.done:
		return ErrClosed
	}
	<-fin
	return nil
}

// call is every method's entry: the faults injected for method, then f
// on the owner goroutine.
func (b *Backend) call(ctx context.Context, method string, f func(*state) error) error {
	var fault error
	var stall chan struct{}
	if err := b.do(func(st *state) { fault, stall = st.faults.take(method) }); err != nil {
		return err
	}
	if stall != nil {
		_ = b.do(func(st *state) { st.faults.waiting[method]++ })
		defer func() { _ = b.do(func(st *state) { st.faults.waiting[method]-- }) }()
		select {
		case <-stall:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return ErrClosed
		}
	}
	if fault != nil {
		return fmt.Errorf("%w: memback: %s: %w", fairsched.ErrStore, method, fault)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if e := b.do(func(st *state) { err = f(st) }); e != nil {
		return e
	}
	return err
}

// Fail makes the next n calls of method (a Backend method's name, or
// "ApplyJobs" and "Save" of Domain's JobStore) fail with err, nil meaning
// ErrInjected (transient); pass machine.ErrRecordRefused for a refusal.
// Nothing is written by a failed call.
func (b *Backend) Fail(method string, n int, err error) {
	if err == nil {
		err = ErrInjected
	}
	_ = b.do(func(st *state) { st.faults.fail[method] = append(st.faults.fail[method], failN{n, err}) })
}

// Stall makes calls of method wait, before they do anything, until the
// returned release is called (once).
func (b *Backend) Stall(method string) (release func()) {
	ch := make(chan struct{})
	_ = b.do(func(st *state) { st.faults.stall[method] = ch })
	released := false
	return func() {
		if released {
			return
		}
		released = true
		_ = b.do(func(st *state) {
			if st.faults.stall[method] == ch {
				delete(st.faults.stall, method)
			}
		})
		close(ch)
	}
}

// Deafen makes the backend stop listening, as when the connections that
// listen are lost: every Wake and Events channel open is closed (a reader
// then polls, or listens again). Later calls of Wake and Events listen
// anew.
func (b *Backend) Deafen() {
	_ = b.do(func(st *state) { st.closeSubscribers() })
}

// Waiting returns how many calls of method wait at its Stall now: a test
// knows the call it stalled was made.
func (b *Backend) Waiting(method string) (n int) {
	_ = b.do(func(st *state) { n = st.faults.waiting[method] })
	return n
}

type failN struct {
	n   int
	err error
}

type faults struct {
	fail    map[string][]failN
	stall   map[string]chan struct{}
	waiting map[string]int // calls waiting at a stall, by method
}

func (f *faults) take(method string) (error, chan struct{}) {
	q := f.fail[method]
	if len(q) == 0 {
		return nil, f.stall[method]
	}
	err := q[0].err
	if q[0].n--; q[0].n <= 0 {
		f.fail[method] = q[1:]
	}
	return err, f.stall[method]
}

// fence returns cluster.ErrFenced unless epoch is domain's current,
// unexpired lease.
func (st *state) fence(domain string, epoch int64) error {
	l, ok := st.leases[domain]
	if !ok || l.epoch != epoch || !l.expires.After(st.now()) {
		return cluster.ErrFenced
	}
	return nil
}

func cloneRecord(r core.JobRecord) core.JobRecord {
	r.Payload = slices.Clone(r.Payload)
	r.Granted = ""
	return r
}

func checkRecord(rec *core.JobRecord) error {
	if !rec.Valid() {
		return fmt.Errorf("%w: memback: record %s/%s is not valid", fairsched.ErrInvalidJob, rec.Type, rec.ID)
	}
	return nil
}

func duplicate(rec *core.JobRecord) error {
	return fmt.Errorf("%w: %s/%s is pending or running", machine.ErrDuplicateJob, rec.Type, rec.ID)
}

// claimed reports whether slot is after the slot stored in value.
func claimed(value []byte, slot int64) bool {
	if value == nil {
		return true
	}
	prev, err := strconv.ParseInt(strings.TrimSpace(string(value)), 10, 64)
	return err == nil && prev < slot
}

func encodeState(s core.State) ([]byte, error) { return json.Marshal(s) }
