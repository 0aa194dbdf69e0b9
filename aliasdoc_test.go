package fairsched_test

import (
	"sort"
	"testing"

	"github.com/fairsched/fairsched/internal/aliasdoc"
)

// TestAliasDocs: every alias of a type of another package shows its
// target in its doc comment — a struct's fields, an interface's methods, a
// string's or a number's declaration, as go generate last wrote them; a
// func's signature, as its doc spells it — so that go doc and pkg.go.dev
// show them where users read. A field added or changed without go
// generate fails here.
func TestAliasDocs(t *testing.T) {
	stale, err := aliasdoc.Render(".", "github.com/fairsched/fairsched")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range stale {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Errorf("%s: alias docs out of date: run go generate in the repository's root", name)
	}
}
