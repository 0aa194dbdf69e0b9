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
//
// A subscription is in force once the leader has read it: the first
// Subscribe of an instance returns once the leader acknowledges it (a
// payload naming the instances whose subscriptions it has read, at most a
// Heartbeat and a ReportEvery later), so that its subscribers see every
// event of the jobs submitted after it returns. An instance that closes
// reads the domain's events until those published before its Close have
// reached it (a marker it publishes comes back: notifications arrive in
// commit order).

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
	// Acks names the instances whose subscriptions the leader had read
	// when it published the batch; Sync is a closing instance's marker.
	Acks []string `json:"a,omitempty"`
	Sync string   `json:"s,omitempty"`
}

// ackWait bounds how long a first Subscribe waits for the leader's
// acknowledgement: a leader lost meanwhile is replaced within a lease.
func (c Config) ackWait() time.Duration { return c.LeaseTTL + c.Heartbeat }

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

// decodeEvents returns the events of payload, with its acknowledgements
// and marker, if it is domain's.
func decodeEvents(domain string, payload []byte) ([]messages.Event, wireBatch, error) {
	var b wireBatch
	if err := json.Unmarshal(payload, &b); err != nil {
		return nil, wireBatch{}, err
	}
	if b.Domain != domain {
		return nil, wireBatch{}, nil
	}
	out := make([]messages.Event, 0, len(b.Events))
	for _, w := range b.Events {
		decode := eventDecoders[w.Kind]
		if decode == nil {
			continue // a newer version's kind
		}
		e, err := decode(w.Event)
		if err != nil {
			return nil, wireBatch{}, err
		}
		out = append(out, withError(e, wireError(w.Err)))
	}
	return out, b, nil
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
	var acks acker
	flush := func() {
		ack := acks.due(l)
		if len(batch) > 0 || ack != nil {
			payload, err := json.Marshal(wireBatch{Domain: cfg.Domain, Events: batch, Acks: ack})
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

// acker is the publisher's record of the subscriptions it acknowledged.
type acker struct {
	read *[]string // the subscribed instances of the loop's read acknowledged last
	own  bool      // whether this instance had subscribers then
}

// due returns the instances to acknowledge now — nil if none, or none new:
// after each read of the instances that finds some subscribed (so a
// subscription that came and went and came again is acknowledged at the
// next read), and when this instance's own subscribers come.
func (a *acker) due(l *leader) []string {
	read, own := l.subscribers.Load(), l.n.sink.Subscribed()
	fresh := (read != a.read && read != nil && len(*read) > 0) || (own && !a.own)
	a.read, a.own = read, own
	if !fresh {
		return nil
	}
	var ids []string
	if read != nil {
		ids = slices.Clone(*read)
	}
	if own && !slices.Contains(ids, l.n.id) {
		ids = append(ids, l.n.id)
	}
	return ids
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
	drain       chan string   // a closing instance's marker: read until it comes back
	subscribed  atomic.Bool   // it has subscribers (the owner writes it)
	lost        atomic.Uint64 // events dropped for full channels (the owner writes it)
	done        chan struct{} // closed once the owner has closed every channel
}

type subscription struct {
	ch    chan messages.Event
	reply chan struct{}
}

func newRelay() *relay {
	return &relay{subscribe: make(chan subscription), unsubscribe: make(chan subscription), drain: make(chan string),
		done: make(chan struct{})}
}

// Subscribed reports whether the instance has subscribers now: the events
// published while it has none are not even decoded.
func (r *relay) Subscribed() bool { return r.subscribed.Load() }

// add registers a channel of the given buffer and returns it once the
// leader has acknowledged the instance's subscription, or after wait (the
// channel takes events from the start); once the relay has stopped, the
// channel comes back closed. changed is called once it is registered.
func (r *relay) add(buffer int, wait time.Duration, changed func()) (chan messages.Event, bool) {
	s := subscription{make(chan messages.Event, max(buffer, 0)), make(chan struct{}, 1)}
	select {
	case r.subscribe <- s:
		changed()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-s.reply:
		case <-t.C:
		case <-r.done:
		}
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
// the channel is full; the leader has read the instance's subscription,
// so the events of the jobs submitted from then on are published. The
// first subscription of an instance waits for that (about a Heartbeat on
// a follower; at most a lease and a Heartbeat, when no leader answers).
// The channel is closed by cancel, which returns once it is, and when the
// node closes; after that Subscribe returns a closed channel.
func (n *Node) Subscribe(buffer int) (<-chan messages.Event, func()) {
	ch, ok := n.sink.add(buffer, n.cfg.ackWait(), n.SubscriptionsChanged)
	if !ok {
		return ch, func() {}
	}
	return ch, func() { n.sink.remove(ch); n.SubscriptionsChanged() }
}

// EventsLost counts the domain's events dropped for this instance's
// subscribers whose channel was full, once per subscriber that missed one.
func (n *Node) EventsLost() uint64 { return n.sink.lost.Load() }

// relayEvents owns the relay's subscribers: it listens for the domain's
// events and hands them to them, listening again a beat after the
// listener is lost, until quit closes — or, once a closing instance's
// marker came on drain, until the marker comes back (within a beat); then
// it closes every subscriber's channel and done.
func (n *Node) relayEvents(quit <-chan struct{}) {
	r := n.sink
	o := relayOwner{n: n}
	defer func() {
		o.subs.Close()
		r.subscribed.Store(false)
		close(r.done)
	}()
	ch, stop := n.b.Events(context.Background())
	var again <-chan time.Time   // listening again after a beat
	var drainBy <-chan time.Time // the marker waited for no longer
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
			if o.take(p) {
				stop()
				return
			}
		case <-again:
			again = nil
			ch, stop = n.b.Events(context.Background())
		case s := <-r.subscribe:
			o.add(s)
		case s := <-r.unsubscribe:
			o.remove(s)
		case o.marker = <-r.drain:
			if len(o.subs) == 0 || ch == nil { // nobody to hand the last events to, or deaf
				stop()
				return
			}
			quit, drainBy = nil, time.After(n.cfg.Heartbeat)
		case <-drainBy:
			stop()
			return
		case <-quit:
			if again == nil {
				stop()
			}
			return
		}
	}
}

// relayOwner is the state relayEvents owns: the subscribers, and those
// waiting for the leader to acknowledge the instance's subscription.
type relayOwner struct {
	n        *Node
	subs     messages.Subscribers
	acked    bool            // the leader acknowledged the subscription since subs were last empty
	awaiting []chan struct{} // the replies of the subscriptions waiting for that
	marker   string          // the closing instance's marker, awaited
}

func (o *relayOwner) add(s subscription) {
	o.subs = append(o.subs, s.ch)
	o.n.sink.subscribed.Store(true)
	if o.acked {
		s.reply <- struct{}{}
		return
	}
	o.awaiting = append(o.awaiting, s.reply)
}

func (o *relayOwner) remove(s subscription) {
	o.subs = o.subs.Remove(s.ch)
	if len(o.subs) == 0 {
		o.acked = false // the leader reads the next subscription anew
	}
	o.n.sink.subscribed.Store(len(o.subs) > 0)
	s.reply <- struct{}{}
}

// take hands the events of payload p to the subscribers, answers those
// waiting for an acknowledgement it carries, and reports whether it is the
// marker awaited.
func (o *relayOwner) take(p []byte) (marker bool) {
	if len(o.subs) == 0 && len(o.awaiting) == 0 {
		return false // decoding costs more than publishing: not for nobody
	}
	evs, b, err := decodeEvents(o.n.cfg.Domain, p)
	if err != nil {
		o.n.log.Warn("events do not decode", zap.Error(err))
		return false
	}
	for _, e := range evs {
		o.n.sink.lost.Add(o.subs.Deliver(e))
	}
	if len(o.subs) > 0 && slices.Contains(b.Acks, o.n.id) {
		o.acked = true
		for _, reply := range o.awaiting {
			reply <- struct{}{}
		}
		o.awaiting = nil
	}
	return o.marker != "" && b.Sync == o.marker
}

// closeRelay stops relayEvents once the events published before now have
// reached this instance's subscribers: it publishes a marker and the
// relay reads on until the marker comes back (within a beat).
func (n *Node) closeRelay(quit chan<- struct{}) {
	defer func() { close(quit); <-n.sink.done }()
	select {
	case n.sink.drain <- n.id:
	case <-n.sink.done:
		return
	}
	payload, err := json.Marshal(wireBatch{Domain: n.cfg.Domain, Sync: n.id})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
	defer cancel()
	_ = n.b.Publish(ctx, payload) // not published: the relay stops a beat later
}
