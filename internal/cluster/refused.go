package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/bisect"
	"github.com/fairsched/fairsched/policy"
)

// Records the database refuses. A write the backend refuses for the data
// it carries (machine.ErrRecordRefused: a byte its encoding rejects, a key
// too long for its index) fails again however often it is sent; retried
// as a lost connection is, it would hold back every record behind it for
// ever. Each loop that writes a batch — the leader's turns, the
// executors' end reports, the events, the commands' answers — splits a
// refused batch in halves, in order, down to the record at fault (at
// most 2·log2 n + 1 writes for one bad record among n): the others
// commit, and only that one gets its own treatment. Any other failure is
// retried as before.

// EndTextRefused is the error text an end is reported with when the
// database refused its own error's text even cleaned and cut.
const EndTextRefused = "fairsched/cluster: the end's error text was refused by the store"

// maxRefusalText bounds the texts a refusal writes: an end's cut error
// text, the store's reason in a refused grant's error.
const maxRefusalText = 512

// isRefused reports whether err is the backend's refusal of a record for
// its data, not for the state of a connection.
func isRefused(err error) bool { return errors.Is(err, machine.ErrRecordRefused) }

// inParts writes items with write, in order. When write says a part is
// refused (isRefused), the part is split in halves, each written in turn,
// down to the item at fault, which is handed to bad with its refusal. It
// returns how many items were dealt with (written, or handed to bad), all
// unless write or bad failed otherwise — a fenced write, the database out
// of reach —; err is that failure, and the items from the count on are to
// be written again.
func inParts[T any](items []T, write func([]T) error, bad func(T, error) error) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	n, _, err := bisect.Settle(items, write(items), write, isRefused, bad)
	return n, err
}

// split is inParts of items refused whole (refusal).
func split[T any](items []T, refusal error, write func([]T) error, bad func(T, error) error) (int, error) {
	n, _, err := bisect.Settle(items, refusal, write, isRefused, bad)
	return n, err
}

// grantParts is what grantApart wrote of a turn.
type grantParts struct {
	took    []uint64      // the grants that took
	ends    int           // the successes dealt with (deleted, or refused and dropped)
	n       int           // the grants dealt with (written, or refused)
	refused map[int]error // by index in the grants: why each refused one fails
	err     error         // what stopped it before the end (fenced, out of reach)
}

// grantApart writes a turn the backend refused whole (Backend.Grant) in
// parts: the successes' deletes first, on their own — freeing slots before
// any grant takes one keeps every cap —, then the grants, split down to
// each refused one. A refused grant's job fails for good (grantRefused); a
// refused delete of a success leaves its row to the next leader, which
// reads its end again.
//
// refusal is the turn's: when it had no success, it is the grants' own,
// and they are split at once.
func grantApart(ctx context.Context, b Backend, log *zap.Logger, domain string, epoch int64, succeeded []End, grants []Grant, refusal error) grantParts {
	var p grantParts
	p.ends, p.err = inParts(succeeded, func(part []End) error {
		_, _, err := b.Grant(ctx, domain, epoch, nil, part, nil)
		return err
	}, func(e End, err error) error {
		log.Error("the store refused the delete of a success; its row is left for the next leader", zap.Uint64("seq", e.Seq),
			zap.String("refusal", policy.CleanTextN(err.Error(), maxRefusalText)))
		return nil
	})
	if p.err != nil {
		return p
	}
	type indexed struct {
		i int
		g Grant
	}
	all := make([]indexed, len(grants))
	for i, g := range grants {
		all[i] = indexed{i, g}
	}
	p.refused = map[int]error{}
	write := func(part []indexed) error {
		gs := make([]Grant, len(part))
		for i, x := range part {
			gs[i] = x.g
		}
		_, took, err := b.Grant(ctx, domain, epoch, nil, nil, gs)
		if errors.Is(err, ErrDoubleAdmission) {
			// As for a whole turn (grantLoop.granted): its attempts fail.
			log.Error("the database refused a double admission; the attempts fail", zap.Error(err))
			for _, x := range part {
				p.refused[x.i] = err
			}
			return nil
		}
		p.took = append(p.took, took...)
		return err
	}
	bad := func(x indexed, err error) error {
		log.Error("the store refused a grant; the job fails", zap.Uint64("seq", x.g.Seq),
			zap.String("refusal", policy.CleanTextN(err.Error(), maxRefusalText)))
		p.refused[x.i] = grantRefused(err)
		return nil
	}
	if len(succeeded) == 0 && len(all) > 0 {
		p.n, p.err = split(all, refusal, write, bad)
	} else {
		p.n, p.err = inParts(all, write, bad)
	}
	return p
}

// grantRefused is the end of a job whose grant the store refused: for
// good (a retry would be refused alike), in words the store can keep.
func grantRefused(err error) error {
	return policy.Permanent(fmt.Errorf("%w: the job's grant could not be written (%s)", machine.ErrRecordRefused,
		policy.CleanTextN(err.Error(), maxRefusalText)))
}

// reportApart writes ends the backend refused as one report
// (Backend.ReportEnds, refusal) in parts, and returns how many it dealt
// with (as inParts). A refused end is reported again with its error text
// cleaned and cut, then, refused still, with EndTextRefused: it ends its
// attempt and frees its slot all the same. Only an end refused even so is
// dropped (said in the log): its grant stays until the instance is lost.
func reportApart(ctx context.Context, b Backend, log *zap.Logger, ends []End, refusal error) (int, error) {
	write := func(es []End) error {
		_, err := b.ReportEnds(ctx, es)
		return err
	}
	return split(ends, refusal, write, func(e End, err error) error {
		log := log.With(zap.Uint64("seq", e.Seq), zap.Int("attempt", e.Attempt))
		log.Error("the store refused an end's report; reporting it with its error text cut",
			zap.String("refusal", policy.CleanTextN(err.Error(), maxRefusalText)))
		for _, text := range []string{policy.CleanTextN(e.Error, maxRefusalText), EndTextRefused} {
			if text == e.Error {
				continue
			}
			e.Error = text
			if err = write([]End{e}); !isRefused(err) {
				return err
			}
		}
		log.Error("the store refused an end's report even without its text; it is dropped", zap.Error(err))
		return nil
	})
}

// splitPayload is a payload of events the backend refused (Publish): its
// halves, to be published in its place, in order — or, for a single event,
// the event with its error text cleaned and cut if that changes it. An
// event refused even so is dropped, said in the log: events are delivered
// at most once.
func (l *leader) splitPayload(payload []byte, refusal error) [][]byte {
	var b wireBatch
	if err := json.Unmarshal(payload, &b); err != nil {
		l.n.log.Error("events the store refused do not decode; they are lost", zap.Error(err))
		return nil
	}
	encode := func(evs []wireEvent) []byte {
		p, err := json.Marshal(wireBatch{Domain: b.Domain, Events: evs})
		if err != nil {
			l.n.log.Error("events do not encode; they are lost", zap.Error(err))
			return nil
		}
		return p
	}
	if len(b.Events) > 1 {
		mid := len(b.Events) / 2
		var out [][]byte
		for _, half := range [][]wireEvent{b.Events[:mid], b.Events[mid:]} {
			if p := encode(half); p != nil {
				out = append(out, p)
			}
		}
		return out
	}
	if len(b.Events) == 1 {
		w := b.Events[0]
		if cut := policy.CleanTextN(w.Err, maxRefusalText); cut != w.Err {
			w.Err = cut
			if p := encode([]wireEvent{w}); p != nil {
				return [][]byte{p}
			}
			return nil
		}
		l.n.log.Error("the store refused an event; it is lost", zap.String("kind", w.Kind),
			zap.String("refusal", policy.CleanTextN(refusal.Error(), maxRefusalText)))
	}
	return nil
}

// defineApart writes the types of regs, which the store refused as one
// (Backend.DefineTypes), in parts, and returns those written and how many
// it dealt with (as inParts). A type the store refuses is left out, said
// in the log: no leader could read it, so its jobs are never granted.
func (n *Node) defineApart(regs []typeReg) (written []typeReg, dealt int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	defer cancel()
	dealt, err = inParts(regs, func(part []typeReg) error {
		settings, err := typeSettings(part)
		if err == nil {
			err = n.b.DefineTypes(ctx, n.cfg.Domain, settings)
		}
		if err == nil {
			written = append(written, part...)
		}
		return err
	}, func(r typeReg, err error) error {
		n.log.Error("the store refused a job type; its jobs will not run", zap.String("type", policy.CleanText(string(r.t))),
			zap.String("refusal", policy.CleanTextN(err.Error(), maxRefusalText)))
		return nil
	})
	return written, dealt, err
}
