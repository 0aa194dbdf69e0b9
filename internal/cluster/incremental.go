package cluster

import (
	"context"

	"go.uber.org/zap"
)

// Incremental reads. Every commit of grants or ends wakes every loop of
// every instance; re-reading all running rows at each wake-up made the
// database's work grow with the rows running times the wake-ups. Instead
// the executor reads the grants written for its instance since its last
// read, and the leader the ends reported since its last, each from a
// cursor; a full read every Heartbeat catches what a cursor cannot show (a
// grant taken back, a row gone).

// ReadCursor is a position in a backend's stream of grants or ends; the
// zero ReadCursor is the start (everything). Only the backend that
// returned it interprets its fields.
type ReadCursor struct {
	// Pos: what was read before it is not read again.
	Pos uint64
	// Seen: the row versions at or after Pos read already, read again by
	// the next call and dropped.
	Seen map[RowVersion]bool
}

// RowVersion names one write of a row: its sequence and the transaction.
type RowVersion struct{ Seq, Xid uint64 }

// IncrementalReads is the part of Backend that reads what changed.
type IncrementalReads interface {
	// GrantsSince returns the grants of instance written since c — new
	// ones, and running ones the leader asked to stop (Cancelled) — each
	// once, with the cursor to read from next. A grant taken back is not
	// among them (Granted shows it gone), nor one handed to its executor
	// in process (Grant.Handed) until it is asked to stop.
	GrantsSince(ctx context.Context, instance string, c ReadCursor) ([]Grant, ReadCursor, error)
	// EndsSince returns the rows whose end an executor reported since c,
	// each once, with the cursor to read from next.
	EndsSince(ctx context.Context, c ReadCursor) ([]Row, ReadCursor, error)
}

// endsSince answers the outstanding attempts whose end was reported since
// the leader's last read, and reports whether it could read them (if not,
// the caller reads every outstanding row). A row that does not match its
// attempt's grant is left to the next full read (readEnds), which decides
// what a grant taken back or a row gone means.
func (l *leader) endsSince(ctx context.Context, outstanding func(seq uint64) *wait, ended func(*wait, End)) bool {
	rows, next, err := l.n.b.EndsSince(ctx, l.endCursor)
	if err != nil {
		l.n.log.Warn("reading ends failed", zap.Error(err))
		return false
	}
	l.endCursor = next
	for _, r := range rows {
		w := outstanding(r.Seq)
		if w == nil || !w.written || w.attempt == -1 {
			continue
		}
		if r.Ended && r.End.Instance == w.instance && r.End.Attempt == w.attempt {
			ended(w, r.End)
		}
	}
	return true
}
