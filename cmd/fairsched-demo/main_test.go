package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/internal/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemoPlaysAllScenariosCleanly(t *testing.T) {
	var out bytes.Buffer
	if err := play(&out, 0); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "SCENARIO "); n != len(scenario.All()) {
		t.Errorf("played %d scenarios; want %d", n, len(scenario.All()))
	}
	if strings.Contains(text, "FAIL") {
		t.Errorf("the demo reports a broken promise:\n%s", text)
	}
	if !strings.Contains(text, "ok   sync-clone(r99) arrived at T=3 and started at T=3") {
		t.Errorf("scenario 1's verdict is missing:\n%s", text)
	}
}
