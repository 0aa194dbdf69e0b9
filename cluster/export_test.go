package cluster

import (
	"encoding/json"
	"testing"

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
	if other, err := decodeEvents(domain+"-other", payload); err != nil || len(other) != 0 {
		t.Fatalf("another domain's instance read %v, %v", other, err)
	}
	out, err := decodeEvents(domain, payload)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// NameOf is the configured name of an instance's incarnation.
func NameOf(id string) string { return nameOf(id) }
