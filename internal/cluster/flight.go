package cluster

import (
	"context"
	"time"

	"github.com/fairsched/fairsched/core/machine"
)

// A turn's write is in flight while the loop goes on: the loop launches
// it (grantLoop.grant), and takes the ends, new jobs and decisions that
// come meanwhile; the write's result comes back on the flight's channel
// and the loop lands it (grantLoop.land) — then the next turn's write
// goes, carrying what gathered. One write is in flight at a time, so the
// writes commit in the loop's order: a slot a success frees is still taken
// in the database only by a write that also ends that success.
//
// Nothing the flight carries is touched until it lands: its waits
// (wait.flying) are answered by no end (none can be reported before the
// grant commits; an end read of one lands the flight first), and the
// successes it deletes are the first flight.ends of grantLoop.finished,
// which only grows meanwhile. A step that writes or asks the machine
// something it may answer only after a write (a command, a revoke, the
// instances' read, a type, a call in the loop's turn, stopping) lands the
// flight first (settle): it waits for the write, as a turn did before
// writes were in flight.
type flight struct {
	batch   []*wait // the grants written, in order
	gs      []Grant
	records bool // it carries the machine's batch of records (TakeBatch)
	ends    int  // the successes it deletes: grantLoop.finished[:ends]
	// launched: when its write began; its grants commit after it (the
	// executor it hands grants to judges a late handoff by it).
	launched time.Time
	done     chan flightResult
}

type flightResult struct {
	took []uint64
	err  error
}

// launch writes the turn — the machine's records ops, the successes
// finished[:ends] deleted, gs granted — in a goroutine of its own, which
// ends once it has sent the result (buffer 1: it never waits for the
// loop).
func (g *grantLoop) launch(f *flight, ops []machine.JobOp) {
	for _, w := range f.batch {
		w.flying = true
	}
	g.flying = f
	f.launched = time.Now()
	b, domain, epoch, timeout := g.l.n.b, g.cfg.Domain, g.l.epoch, g.cfg.Heartbeat
	succeeded := g.finished[:f.ends:f.ends] // later successes are appended past it
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, took, err := b.Grant(ctx, domain, epoch, ops, succeeded, f.gs)
		f.done <- flightResult{took: took, err: err}
	}()
}

// flightC is the channel the write in flight answers on; nil (never
// ready) with none.
func (g *grantLoop) flightC() <-chan flightResult {
	if g.flying == nil {
		return nil
	}
	return g.flying.done
}

// current is the attempt outstanding of job seq, the write in flight
// landed first if it carries it: an end read or told of it means its
// grant committed (the write's result is on its way), and a revoke must
// know whether it was granted.
func (g *grantLoop) current(seq uint64) *wait {
	if w := g.outstanding[seq]; w != nil && w.flying {
		g.settle()
	}
	return g.outstanding[seq]
}

// settle lands the write in flight, if one is, waiting for it.
func (g *grantLoop) settle() {
	if g.flying != nil {
		g.land(<-g.flying.done)
	}
}
