package cluster

import "context"

// listener is a loop's subscription to what a backend delivers as it is
// committed — a Reader's wake-ups, or the successes told —, listened to
// again once its connection is lost: at the loop's next heartbeat, not
// never, so that a loop does not poll for good after the database
// restarts. Only its loop touches it.
type listener[T any] struct {
	C      <-chan T // nil while not listening: the loop polls
	stop   func()
	listen func() (<-chan T, func())
}

func newListener[T any](listen func(context.Context) (<-chan T, func())) *listener[T] {
	l := &listener[T]{listen: func() (<-chan T, func()) { return listen(context.Background()) }}
	l.C, l.stop = l.listen()
	return l
}

// wakeUps listens for r's wake-ups on b.
func wakeUps(b Backend, r Reader, instance string) *listener[struct{}] {
	return newListener(func(ctx context.Context) (<-chan struct{}, func()) { return b.Wake(ctx, r, instance) })
}

// lost notes that C was closed: its connection is gone.
func (l *listener[T]) lost() {
	l.stop()
	l.C = nil
}

// again listens anew if it is not listening, and reports whether it now
// is: what was committed meanwhile was not delivered, and is read.
func (l *listener[T]) again() bool {
	if l.C != nil {
		return false
	}
	l.stop()
	l.C, l.stop = l.listen()
	return l.C != nil
}

// close stops listening.
func (l *listener[T]) close() { l.stop() }

// relistened reports whether any of the listeners listened again (again,
// each called).
func relistened(again ...bool) bool {
	for _, a := range again {
		if a {
			return true
		}
	}
	return false
}
