package backendtest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairsched/fairsched/internal/cluster"
)

// overloadVerdicts: a verdict is the live lease's epoch's; a deposed
// epoch's write is fenced, and a new epoch starts with none.
func overloadVerdicts(t *testing.T, b cluster.Backend) {
	type read struct {
		V  cluster.Overload
		OK bool
	}
	get := func(what string) read {
		t.Helper()
		v, ok, err := b.Overload(bg, Domain)
		if err != nil {
			t.Fatalf("%s: Overload: %v", what, err)
		}
		return read{v, ok}
	}
	diff(t, "no lease", get("no lease"), read{})
	e1 := lead(t, b, "a")
	diff(t, "a leader that wrote none", get("none written"), read{})
	over := cluster.Overload{Overloaded: true, At: time.Unix(100, 0).UTC()}
	if err := b.SetOverload(bg, Domain, e1, over); err != nil {
		t.Fatal(err)
	}
	diff(t, "the verdict written", get("written"), read{over, true})
	if err := b.Release(bg, Domain, "a", e1); err != nil {
		t.Fatal(err)
	}
	diff(t, "no live lease", get("released"), read{})
	e2 := lead(t, b, "b")
	diff(t, "the new epoch's, before it writes one", get("new epoch"), read{})
	if err := b.SetOverload(bg, Domain, e1, over); !errors.Is(err, cluster.ErrFenced) {
		t.Errorf("SetOverload under a deposed epoch: %v, want ErrFenced", err)
	}
	calm := cluster.Overload{At: time.Unix(200, 0).UTC()}
	if err := b.SetOverload(bg, Domain, e2, calm); err != nil {
		t.Fatal(err)
	}
	diff(t, "the new epoch's verdict", get("new verdict"), read{calm, true})
}
