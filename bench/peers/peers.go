// Package peers puts fairsched and the schedulers it is compared with behind
// two small interfaces, so that one benchmark drives each the same way:
// Sync runs a request in its caller once admitted (RunSync's shape), Async
// queues work and returns (Submit's shape).
package peers

import "context"

// Sync admits requests of flows under a concurrency limit and runs each in
// its caller.
type Sync interface {
	// Do waits for the request's turn, runs fn and returns; an error says
	// it was rejected.
	Do(ctx context.Context, flow int, fn func()) error
	Close()
}

// Async runs submitted work on its own goroutines under a limit.
type Async interface {
	// Go queues fn; it may wait for room.
	Go(fn func()) error
	Close()
}
