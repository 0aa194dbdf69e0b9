package fairsched_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// minGo is the lowest Go the module needs: testing/synctest.Test, which
// fairschedtest uses, came in Go 1.25. go vet's stdversion check holds the
// code to it; this test holds go.mod and the README to it, so that a
// dependency bump (go mod tidy raises the line to the highest of the
// dependencies') cannot force every importer's go line up unnoticed.
const minGo = "1.25.0"

func TestGoLineIsTheMinimum(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil || string(m[1]) != minGo {
		t.Errorf("go.mod's go line is %q; want %s (a dependency that needs more must be pinned lower)", m, minGo)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go " + strings.TrimSuffix(minGo, ".0"); !strings.Contains(string(readme), want) {
		t.Errorf("the README does not say it needs %s", want)
	}
}
