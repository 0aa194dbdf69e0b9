package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fairsched/fairsched"
)

// Wake-ups. Every commit of job rows notifies a channel, in its own
// transaction, so the notification arrives only if the rows were
// committed. A listener turns notifications into wake-ups — "read the
// change feed now" — which carry no data: the feed (Changes) is the truth,
// and a reader behind a pooler in transaction mode, where LISTEN does not
// work, polls it instead.
//
// Five channels, so that nobody is woken by writes that are not for it,
// and each reader reads only what changed: fairsched_jobs for new jobs
// and commands, which a scheduler (a cluster's leader) reads;
// fairsched_ends for the executors' reports of ends, which the leader
// reads; fairsched_grants for grants and cancellations, which the
// executors read; fairsched_finals for the leader's writes of job
// records, where an instance reads how its RunSync and Submit jobs ended;
// fairsched_instance_changes for heartbeats that change the instances a
// leader places jobs on (one joins, or its handlers change).
// (fairsched_successes and fairsched_events carry data, not wake-ups:
// successes.go, events.go.)
//
// A grant's notification names the instances granted to (grantsPayload),
// and an executor is woken only by those naming its own: with twenty
// instances, a batch of grants to one wakes one reader, not twenty. An
// empty payload (a cancellation, a batch to too many instances to name)
// wakes every executor. Likewise the delete of successes names the
// instances whose RunSync and Submit jobs it ended (their owners), so
// that a caller waiting for its job's end is woken by it; the leader's
// other writes of records wake every owner.

const (
	notifyChannel = "fairsched_jobs"
	endsChannel   = "fairsched_ends"
	grantsChannel = "fairsched_grants"
	finalsChannel = "fairsched_finals"
	// instancesChannel: heartbeats that list an instance anew or change
	// what it says of itself, which a leader reads (cluster.InstanceReads).
	instancesChannel = "fairsched_instance_changes"
)

// listener delivers a wake-up after commits of job rows.
type listener struct {
	C <-chan struct{} // a wake-up; several commits may share one
	*listening
}

// listening is a connection's LISTEN, held by its goroutine until stop.
type listening struct {
	cancel  context.CancelFunc
	stopped chan struct{} // closed once the goroutine has returned
	err     error         // why it had stopped (nil when cancelled); read once stopped is closed
}

// stop ends the listening and returns why it had stopped, if it had. It
// may be called any number of times, from any goroutine: each call
// returns the same answer once the goroutine has returned.
func (l *listening) stop() error {
	l.cancel()
	<-l.stopped // WaitForNotification returns at once on cancellation
	return l.err
}

// Listen holds a connection listening for commits of job rows until Stop.
// Each wake-up means at least one commit since the previous one was taken;
// the channel has room for one, so a slow reader loses nothing but
// repeats.
func (s clusterBackend) Listen(ctx context.Context) (*listener, error) {
	return s.listenFor(ctx, notifyChannel, func(string) bool { return true })
}

// listenFor is Listen on channel, for the notifications whose payload
// wanted accepts.
func (s *Store) listenFor(ctx context.Context, channel string, wanted func(payload string) bool) (*listener, error) {
	c := make(chan struct{}, 1)
	l := &listener{C: c}
	var err error
	l.listening, err = s.listen(ctx, channel, func(_ context.Context, payload string) {
		if !wanted(payload) {
			return
		}
		select {
		case c <- struct{}{}:
		default: // one is pending already
		}
	}, func() { close(c) })
	if err != nil {
		return nil, err
	}
	return l, nil
}

// listen holds a connection listening on channel, calling note with each
// notification's payload (and the listener's context, for a note that
// waits), and closed once it stops (the connection lost, or stop called).
func (s *Store) listen(ctx context.Context, channel string, note func(context.Context, string), closed func()) (*listening, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: pgstore: listening: %w", fairsched.ErrStore, err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Release()
		return nil, fmt.Errorf("%w: pgstore: listening: %w", fairsched.ErrStore, err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &listening{cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(l.stopped)
		defer conn.Release()
		for {
			n, err := conn.Conn().WaitForNotification(lctx)
			if err != nil {
				if lctx.Err() != nil {
					err = nil // stopped
					// The connection was interrupted mid-wait: do not
					// hand it back to the pool in that state.
					_ = conn.Conn().Close(context.Background())
				}
				l.err = err
				closed()
				return
			}
			note(lctx, n.Payload)
		}
	}()
	return l, nil
}

// Stop ends the listener and returns why it had stopped, if it had (the
// connection was lost: the caller polls or listens again). Calling it
// again returns the same.
func (l *listener) Stop() error { return l.stop() }

// maxPayload bounds a notification's payload below PostgreSQL's 8 000
// bytes; past it a grant's notification names nobody (wakes everyone).
const maxPayload = 7000

// maxPayloadSQL is maxPayload in a statement's text.
const maxPayloadSQL = "7000"

// grantsPayload is the payload of the notification of grants to
// instances: their names, one a line, each once; "" (everyone) when they
// do not fit.
func grantsPayload(instances []string) string {
	names := slices.Clone(instances)
	slices.Sort(names)
	names = slices.Compact(names)
	p := strings.Join(names, "\n")
	if len(p) > maxPayload || strings.Count(p, "\n") != len(names)-1 { // too long, or a name of several lines
		return ""
	}
	return p
}

// grantsFor reports whether the grants notified with payload may be for
// instance: it is named, or nobody is.
func grantsFor(payload, instance string) bool {
	if payload == "" {
		return true
	}
	for name := range strings.Lines(payload) {
		if strings.TrimSuffix(name, "\n") == instance {
			return true
		}
	}
	return false
}
