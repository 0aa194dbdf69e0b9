package cluster

import (
	"context"
	"errors"
	"hash/fnv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
)

// Periodic jobs across a cluster. Every instance that submits a schedule
// fires it at the same slots — multiples of its period since the Unix
// epoch, each moved by a jitter every instance derives alike from the
// schedule and the slot — and the first to claim a slot in the database
// (ClaimSlot) submits that occurrence as a job of its own, under the
// leader's limits. So a schedule registered on every replica runs once per
// slot, and keeps running while any of them lives; an occurrence is
// skipped while the previous one is still pending or running (its
// (type, id) is taken).

// SubmitPeriodic fires rec's occurrences every period, with fn, until the
// returned stop is called or the node closes.
func (n *Node) SubmitPeriodic(rec func() *core.JobRecord, every, jitter time.Duration, fn func(context.Context) error) (stop func()) {
	first := rec()
	name := string(first.Type) + "/" + first.ID
	done := make(chan struct{})
	go func() {
		for {
			slot := core.NextSlot(time.Unix(0, 0), every, time.Now())
			t := time.NewTimer(time.Until(slot.Add(slotJitter(name, slot, jitter))))
			select {
			case <-t.C:
			case <-done:
				t.Stop()
				return
			case <-n.stopped:
				t.Stop()
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
			claimed, err := n.b.ClaimSlot(ctx, n.cfg.Domain, name, slot.UnixNano())
			cancel()
			if err != nil {
				n.log.Warn("claiming a periodic occurrence failed", zap.String("schedule", name), zap.Error(err))
				continue
			}
			if !claimed {
				continue // another instance runs this one
			}
			err = n.Submit(context.Background(), rec(), fn)
			if err != nil && !errors.Is(err, machine.ErrDuplicateJob) && !errors.Is(err, machine.ErrClosed) {
				n.log.Warn("submitting a periodic occurrence failed", zap.String("schedule", name), zap.Error(err))
			}
		}
	}()
	var stopped atomic.Bool
	return func() {
		if stopped.CompareAndSwap(false, true) {
			close(done)
		}
	}
}

// slotJitter is the jitter of schedule name's occurrence at slot, in
// [0, jitter): the same on every instance.
func slotJitter(name string, slot time.Time, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte(slot.UTC().Format(time.RFC3339Nano)))
	return time.Duration(h.Sum64() % uint64(jitter))
}
