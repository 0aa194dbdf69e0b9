package cluster

import (
	"context"
	"encoding/json"
	"testing"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/messages"
)

// RoundTripEvents encodes evs as the leader publishes them and decodes
// them as an instance of domain reads them.
func RoundTripEvents(t *testing.T, domain string, evs []messages.Event) []messages.Event {
	t.Helper()
	var b wireBatch
	b.Domain = domain
	for _, e := range evs {
		w, err := encodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Events = append(b.Events, w)
	}
	payload, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if other, _, err := decodeEvents(domain+"-other", payload); err != nil || len(other) != 0 {
		t.Fatalf("another domain's instance read %v, %v", other, err)
	}
	out, _, err := decodeEvents(domain, payload)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// MaxPayload bounds a published batch of events.
const MaxPayload = maxPayload

// EncodedSize is the size of e alone in a published batch.
func EncodedSize(t *testing.T, e messages.Event) int {
	t.Helper()
	w, err := encodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(wireBatch{Domain: "d", Events: []wireEvent{w}})
	if err != nil {
		t.Fatal(err)
	}
	return len(payload)
}

// GrantApart is the leader's write of a turn the backend refused as one
// (grantApart): the grants that took, why each refused one fails (by
// index), how many grants it dealt with, and what stopped it.
func GrantApart(ctx context.Context, b Backend, log *zap.Logger, domain string, epoch int64, succeeded []End, grants []Grant, refusal error) (took []uint64, refused map[int]error, dealt int, err error) {
	p := grantApart(ctx, b, log, domain, epoch, succeeded, grants, refusal)
	return p.took, p.refused, p.n, p.err
}

// ReportApart is an executor's report of ends the backend refused as one
// (reportApart, refusal).
var ReportApart = reportApart

// EscapedLen is the size a text takes in a payload of events.
var EscapedLen = escapedLen

// NameOf is the configured name of an instance's incarnation.
func NameOf(id string) string { return nameOf(id) }

// EventsPayload is evs as the leader of domain publishes them.
func EventsPayload(t *testing.T, domain string, evs ...messages.Event) []byte {
	t.Helper()
	b := wireBatch{Domain: domain}
	for _, e := range evs {
		w, err := encodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Events = append(b.Events, w)
	}
	payload, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return payload
}
