package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSkipsAndFailuresAreShown: a skip prints its reason, a failure its
// output, a pass nothing but its package line.
func TestSkipsAndFailuresAreShown(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: no Chromium on PATH\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: want 1, got 2\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"chatter\n"}
{"Action":"pass","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"output","Package":"q","Output":"ok  \tq\t0.1s\n"}
`
	var out strings.Builder
	if code := run(strings.NewReader(in), &out); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	want := "    b_test.go:3: want 1, got 2\nFAIL\tp\t0.1s\nok  \tq\t0.1s\nSKIP p TestA: no Chromium on PATH\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
