package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Events across the cluster. The leader's scheduler is the one that
// decides, so its events are the domain's: the leader subscribes to them
// and publishes them in batches (every ReportEvery, or sooner when a batch
// fills a notification) through the database; every instance listens and
// hands them to its own subscribers (Subscribe works alike on every
// instance). Only while some instance has subscribers, as its heartbeats
// say (sent at once when they come or go): encoding and notifying every
// event for nobody cost the leader a sixth of its time. Delivery is at
// most once: the events of a leader that dies before publishing them,
// those of the moments before the leader reads an instance's first
// subscription (at most a Heartbeat), and those published while an
// instance is not listening are lost, as a full subscriber's are.

// maxPayload bounds one notification's payload (PostgreSQL's limit is
// 8000 bytes).
const maxPayload = 7000

// wireEvent is one event on the wire: its kind, its JSON, and its error's
// message (the events' own JSON drops or flattens it).
type wireEvent struct {
	Kind  string          `json:"k"`
	Event json.RawMessage `json:"v"`
	Err   string          `json:"err,omitempty"`
}

type wireBatch struct {
	Domain string      `json:"d"`
	Events []wireEvent `json:"e"`
}

// The kinds of events on the wire, by name and by type.
var (
	eventDecoders = map[string]func(json.RawMessage) (messages.Event, error){}
	eventNames    = map[reflect.Type]string{}
)

func init() {
	kind[messages.JobQueued]("queued")
	kind[messages.JobJoined]("joined")
	kind[messages.JobCancelled]("cancelled")
	kind[messages.JobAdmitted]("admitted")
	kind[messages.JobCompleted]("completed")
	kind[messages.JobFailed]("failed")
	kind[messages.JobAged]("aged")
	kind[messages.GroupAllocationChanged]("allocation")
	kind[messages.JobDenied]("denied")
	kind[messages.JobRefused]("refused")
	kind[messages.JobExpired]("expired")
	kind[messages.JobDropped]("dropped")
	kind[messages.JobSuperseded]("superseded")
	kind[messages.JobPreempted]("preempted")
}

// kind names event type T on the wire.
func kind[T messages.Event](name string) {
	var zero T
	eventNames[reflect.TypeOf(zero)] = name
	eventDecoders[name] = func(raw json.RawMessage) (messages.Event, error) {
		var v T
		err := json.Unmarshal(raw, &v)
		return v, err
	}
}

// eventError and withError read and set the error of the events that
// carry one.
func eventError(e messages.Event) error {
	switch v := e.(type) {
	case messages.JobCancelled:
		return v.Err
	case messages.JobFailed:
		return v.Err
	case messages.JobDenied:
		return v.Err
	}
	return nil
}

func withError(e messages.Event, err error) messages.Event {
	switch v := e.(type) {
	case messages.JobCancelled:
		v.Err = err
		return v
	case messages.JobFailed:
		v.Err = err
		return v
	case messages.JobDenied:
		v.Err = err
		return v
	}
	return e
}

// encodeEvent returns e on the wire.
// The error's text travels once, beside the event, cleaned: a handler's
// error may hold any bytes and be of any length, and a notification's
// payload is text of at most 8 000 bytes.
func encodeEvent(e messages.Event) (wireEvent, error) {
	ee := eventError(e)
	if ee != nil {
		e = withError(e, nil)
	}
	raw, err := json.Marshal(e)
	w := wireEvent{Kind: eventNames[reflect.TypeOf(e)], Event: raw}
	if ee != nil {
		w.Err = policy.CleanText(ee.Error())
	}
	return w, err
}

// decodeEvents returns the events of payload if it is domain's.
func decodeEvents(domain string, payload []byte) ([]messages.Event, error) {
	var b wireBatch
	if err := json.Unmarshal(payload, &b); err != nil {
		return nil, err
	}
	if b.Domain != domain {
		return nil, nil
	}
	out := make([]messages.Event, 0, len(b.Events))
	for _, w := range b.Events {
		decode := eventDecoders[w.Kind]
		if decode == nil {
			continue // a newer version's kind
		}
		e, err := decode(w.Event)
		if err != nil {
			return nil, err
		}
		out = append(out, withError(e, wireError(w.Err)))
	}
	return out, nil
}

// wireError is an error from its message: matching (errors.Is) the
// sentinel it names, if any.
func wireError(text string) error {
	if text == "" {
		return nil
	}
	for _, s := range append(sentinels, context.Canceled, context.DeadlineExceeded) {
		if strings.Contains(text, s.Error()) {
			return &remoteError{text: text, err: s}
		}
	}
	return errors.New(text)
}

// maxUnpublished bounds the payloads the publisher keeps while publishing
// fails (about 450 KB): past it the oldest are dropped, and said so.
const maxUnpublished = 64

// publish is the leader's publisher: it owns the batch of events read from
// evs, its scheduler's subscription, and publishes them until evs closes
// (the scheduler stopped), then closes done. A payload that fails to
// publish (the database slow or out of reach) is kept and published again
// at the next tick, in order, ahead of newer ones: a subscriber sees every
// event the leader's scheduler made while its instance listens.
func (l *leader) publish(evs <-chan messages.Event, done chan<- struct{}) {
	defer close(done)
	cfg := l.n.cfg
	tick := time.NewTicker(cfg.ReportEvery)
	defer tick.Stop()
	var batch []wireEvent
	var unpublished [][]byte // oldest first
	size := 0
	failing := false // since the last publish that went through
	flush := func() {
		if len(batch) > 0 {
			payload, err := json.Marshal(wireBatch{Domain: cfg.Domain, Events: batch})
			batch, size = batch[:0], 0
			if err != nil {
				l.n.log.Warn("events do not encode; they are lost", zap.Error(err))
			} else {
				unpublished = append(unpublished, payload)
			}
		}
		if n := len(unpublished) - maxUnpublished; n > 0 {
			l.n.log.Warn("publishing events has failed for too long; the oldest are lost", zap.Int("payloads", n))
			unpublished = append(unpublished[:0], unpublished[n:]...)
		}
		for len(unpublished) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.Heartbeat)
			err := l.n.b.Publish(ctx, unpublished[0])
			cancel()
			if isRefused(err) {
				// Refused for what it holds (too long, once its texts are
				// escaped): published in halves, down to the event at
				// fault (splitPayload).
				unpublished = slices.Replace(unpublished, 0, 1, l.splitPayload(unpublished[0], err)...)
				continue
			}
			if err != nil {
				if !failing {
					l.n.log.Warn("publishing events failed; retrying", zap.Error(err))
				}
				failing = true
				return
			}
			if failing {
				l.n.log.Info("publishing events again")
			}
			failing = false
			unpublished[0] = nil
			unpublished = unpublished[1:]
		}
	}
	for {
		select {
		case e, ok := <-evs:
			if !ok {
				flush()
				if len(unpublished) > 0 {
					l.n.log.Warn("the leader stops with events unpublished; they are lost", zap.Int("payloads", len(unpublished)))
				}
				return
			}
			if !l.subscribed.Load() && !l.n.sink.Subscribed() {
				continue // nobody listens: not even encoded
			}
			w, err := encodeEvent(e)
			if err != nil {
				l.n.log.Warn("an event does not encode", zap.Error(err))
				continue
			}
			n := len(w.Event) + escapedLen(w.Err) + len(w.Kind) + 24
			if ee := eventError(e); n > maxPayload-len(cfg.Domain)-16 && ee != nil {
				// An error's long text (in the event's JSON too) is cut
				// rather than the event lost.
				cut := withError(e, errors.New(policy.CleanTextN(ee.Error(), maxRefusalText)))
				if cw, err := encodeEvent(cut); err == nil {
					w, n = cw, len(cw.Event)+escapedLen(cw.Err)+len(cw.Kind)+24
				}
			}
			if size+n > maxPayload-len(cfg.Domain)-16 {
				flush()
			}
			if n > maxPayload-len(cfg.Domain)-16 {
				l.n.log.Warn("an event is too large to publish", zap.String("kind", w.Kind))
				continue
			}
			batch, size = append(batch, w), size+n
		case <-tick.C:
			flush()
		}
	}
}

// escapedLen is the length of s as a JSON string's contents: a
// payload's size counts the escapes, or a batch of texts full of them
// would pass the bound and be refused.
func escapedLen(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029', r == utf8.RuneError: // an invalid byte: \ufffd
			n += 6 // \u00XX (at most)
		case r == '"', r == '\\':
			n += 2
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// relay is this instance's side of the domain's events: its subscribers
// live in the goroutine that listens for the events (relayEvents), which
// hands each event to those with room for it, as a scheduler's owner does
// with its own events.
type relay struct {
	subscribe   chan subscription
	unsubscribe chan subscription
	subscribed  atomic.Bool   // it has subscribers (the owner writes it)
	lost        atomic.Uint64 // events dropped for full channels (the owner writes it)
	done        chan struct{} // closed once the owner has closed every channel
}

type subscription struct {
	ch    chan messages.Event
	reply chan struct{}
}

func newRelay() *relay {
	return &relay{subscribe: make(chan subscription), unsubscribe: make(chan subscription), done: make(chan struct{})}
}

// Subscribed reports whether the instance has subscribers now: the events
// published while it has none are not even decoded.
func (r *relay) Subscribed() bool { return r.subscribed.Load() }

// add registers a channel of the given buffer and returns it; once the
// relay has stopped, the channel comes back closed.
func (r *relay) add(buffer int) (chan messages.Event, bool) {
	s := subscription{make(chan messages.Event, max(buffer, 0)), make(chan struct{}, 1)}
	select {
	case r.subscribe <- s:
		<-s.reply
		return s.ch, true
	case <-r.done:
		close(s.ch)
		return s.ch, false
	}
}

// remove forgets ch and returns once it is closed: by the owner now, or by
// its last step if it is stopping.
func (r *relay) remove(ch chan messages.Event) {
	s := subscription{ch, make(chan struct{}, 1)}
	select {
	case r.unsubscribe <- s:
		<-s.reply
	case <-r.done:
	}
}

// Subscribe registers a channel of the given buffer (at least 0) for the
// domain's events and returns it with the function that cancels it, as a
// scheduler's Subscribe does: once Subscribe returns, every event this
// instance reads is offered to the channel, and lost for it (counted) when
// the channel is full. The channel is closed by cancel, which returns
// once it is, and when the node closes; after that Subscribe returns a
// closed channel.
func (n *Node) Subscribe(buffer int) (<-chan messages.Event, func()) {
	ch, ok := n.sink.add(buffer)
	if !ok {
		return ch, func() {}
	}
	n.SubscriptionsChanged()
	return ch, func() { n.sink.remove(ch); n.SubscriptionsChanged() }
}

// EventsLost counts the domain's events dropped for this instance's
// subscribers whose channel was full, once per subscriber that missed one.
func (n *Node) EventsLost() uint64 { return n.sink.lost.Load() }

// relayEvents owns the relay's subscribers: it listens for the domain's
// events and hands them to them, listening again a beat after the
// listener is lost, until quit closes; then it closes every subscriber's
// channel and done.
func (n *Node) relayEvents(quit <-chan struct{}) {
	r := n.sink
	var subs messages.Subscribers
	defer func() {
		subs.Close()
		r.subscribed.Store(false)
		close(r.done)
	}()
	ch, stop := n.b.Events(context.Background())
	var again <-chan time.Time // listening again after a beat
	for {
		if ch == nil && again == nil {
			stop()
			again = time.After(n.cfg.Heartbeat)
		}
		select {
		case p, ok := <-ch:
			if !ok {
				ch = nil
				continue
			}
			if len(subs) > 0 { // decoding costs more than publishing: not for nobody
				r.lost.Add(n.deliver(subs, p))
			}
		case <-again:
			again = nil
			ch, stop = n.b.Events(context.Background())
		case s := <-r.subscribe:
			subs = append(subs, s.ch)
			r.subscribed.Store(true)
			s.reply <- struct{}{}
		case s := <-r.unsubscribe:
			subs = subs.Remove(s.ch)
			r.subscribed.Store(len(subs) > 0)
			s.reply <- struct{}{}
		case <-quit:
			if again == nil {
				stop()
			}
			return
		}
	}
}

// deliver hands the events of payload p to subs and returns how many
// deliveries were lost.
func (n *Node) deliver(subs messages.Subscribers, p []byte) (lost uint64) {
	evs, err := decodeEvents(n.cfg.Domain, p)
	if err != nil {
		n.log.Warn("events do not decode", zap.Error(err))
		return 0
	}
	for _, e := range evs {
		lost += subs.Deliver(e)
	}
	return lost
}
