package peers

import (
	"time"

	"github.com/panjf2000/ants/v2"
)

// Ants is a github.com/panjf2000/ants/v2 goroutine pool of a fixed size:
// Go blocks while every worker is busy. It schedules nothing: it is the
// bar for raw throughput.
type Ants struct{ p *ants.Pool }

// NewAnts makes a pool of size workers.
func NewAnts(size int) (*Ants, error) {
	p, err := ants.NewPool(size)
	if err != nil {
		return nil, err
	}
	return &Ants{p: p}, nil
}

// Go runs fn on a free worker, waiting for one.
func (a *Ants) Go(fn func()) error { return a.p.Submit(fn) }

// Close releases the pool's workers and waits for them.
func (a *Ants) Close() { _ = a.p.ReleaseTimeout(10 * time.Second) }
