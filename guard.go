package fairsched

import (
	"context"
	"errors"
	"fmt"
)

// ErrNilScheduler is returned by every method called on a nil *Scheduler or
// on one not made by New (the zero value): there is no scheduler to ask.
var ErrNilScheduler = errors.New("fairsched: nil Scheduler (make one with New)")

// MaxSubscribeBuffer bounds the buffer Subscribe gives a channel: a larger
// request is cut to it.
const MaxSubscribeBuffer = 1 << 20

// check reports whether s can be called at all. Every method calls it
// first, before it looks at anything else.
func (s *Scheduler) check() error {
	if s == nil || s.eng == nil {
		return ErrNilScheduler
	}
	return nil
}

// checkCtx is check for the methods that take a context: a nil one is bad
// input, wrapped in kind, refused before anything is done.
func (s *Scheduler) checkCtx(ctx context.Context, kind error, method string) error {
	if err := s.check(); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context (use context.Background())", kind, method)
	}
	return nil
}
