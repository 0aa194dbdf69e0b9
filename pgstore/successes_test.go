package pgstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/internal/cluster"
)

// TestParseSuccessesRefusesStrangers: a payload on the successes' channel
// that is not one of successPayloads' — any client may notify it — is
// ignored whole, not half read.
func TestParseSuccessesRefusesStrangers(t *testing.T) {
	for _, p := range []string{
		"", "x", "{}", `{"i":"","e":[[1,1]]}`, `{"i":"a","e":[[0,1]]}`, `{"i":"a","e":[[1,0]]}`,
		`{"i":"a","e":[[1,1],[-2,1]]}`, `{"i":"a","e":[[1,3000000000]]}`, `{"i":"a","e":[[1]]}`, `{"i":"a","e":[[1,1,1]]}`,
		`{"i":"a","e":[[1.5,1]]}`, `{"i":7,"e":[]}`, `{"i":"a","e":[[1,1]]`,
	} {
		if got := parseSuccesses(p); got != nil {
			t.Errorf("parseSuccesses(%q) = %v, want nil", p, got)
		}
	}
}

// FuzzSuccessPayloads: any batch of successes (attempts as the rows keep
// them, 32 bits) goes in payloads under
// PostgreSQL's bound that decode back to it, in order.
func FuzzSuccessPayloads(f *testing.F) {
	f.Add("i", "j", uint64(1), 1, 300)
	f.Add("", "\x00\n\"", uint64(1<<62), 1<<31-1, 2000)
	f.Fuzz(func(t *testing.T, a, b string, seq uint64, attempt, n int) {
		if a == "" || b == "" || seq == 0 || seq > 1<<62 || attempt <= 0 || attempt > 1<<31-1 || n < 0 || n > 3000 {
			return
		}
		var ends []cluster.End
		for i := range n {
			in := a
			if i%7 == 3 {
				in = b
			}
			ends = append(ends, cluster.End{Seq: seq + uint64(i), Instance: in, Attempt: attempt, Kind: cluster.EndOK})
		}
		var got []cluster.End
		for _, p := range successPayloads(ends) {
			if len(p) > maxPayload {
				t.Fatalf("a payload of %d bytes", len(p))
			}
			dec := parseSuccesses(p)
			if dec == nil {
				t.Fatalf("payload %q does not decode", p)
			}
			got = append(got, dec...)
		}
		// JSON carries text as UTF-8: an instance name that is not
		// decodes with U+FFFD, and the leader matches it to no grant.
		for i := range ends {
			if i < len(got) {
				ends[i].Instance = got[i].Instance
			}
		}
		if diff := cmp.Diff(ends, got); diff != "" {
			t.Errorf("(-told +decoded)\n%s", diff)
		}
	})
}
