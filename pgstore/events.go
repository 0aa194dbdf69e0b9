package pgstore

import (
	"context"
)

// Events across a cluster (cluster.Backend): the leader publishes its
// scheduler's events in batches as notifications on channel
// fairsched_events, and every instance listens. Nothing is stored: an
// instance gets what is published while it listens.

const eventsChannel = "fairsched_events"

// Publish sends payload to the listeners of Events.
func (s clusterBackend) Publish(ctx context.Context, payload []byte) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify('`+eventsChannel+`', $1)`, string(payload)); err != nil {
		return clusterWriteError("publishing events", err) // a payload too long is refused
	}
	return nil
}

// Events returns the payloads published from now on, until the function
// it returns is called (any number of times); nil when it cannot listen.
func (s clusterBackend) Events(ctx context.Context) (<-chan []byte, func()) {
	c := make(chan []byte, 64)
	l, err := s.listen(ctx, eventsChannel, func(lctx context.Context, p string) {
		select {
		case c <- []byte(p):
		case <-lctx.Done():
		}
	}, func() { close(c) })
	if err != nil {
		return nil, func() {}
	}
	return c, func() { _ = l.stop() } // idempotent
}
