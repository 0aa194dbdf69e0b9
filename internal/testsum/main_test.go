package main

import (
	"strings"
	"testing"
	"time"

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
	if code := run(strings.NewReader(in), &out, 0); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	want := "    b_test.go:3: want 1, got 2\nFAIL\tp\t0.1s\nok  \tq\t0.1s\nSKIP p TestA: no Chromium on PATH\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestVetComplaintsAreShown: what go vet (go test -vet) or the compiler
// says of a package is printed as it comes, and fails the run.
func TestVetComplaintsAreShown(t *testing.T) {
	in := `{"ImportPath":"p [p.test]","Action":"build-output","Output":"# p\n"}
{"ImportPath":"p [p.test]","Action":"build-output","Output":"p/a.go:5:2: unreachable code\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}
{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
{"Action":"fail","Package":"p","FailedBuild":"p [p.test]"}
`
	var out strings.Builder
	if code := run(strings.NewReader(in), &out, 0); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	want := "# p\np/a.go:5:2: unreachable code\nFAIL\tp [build failed]\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestUnfinishedTestsAreShown: a test binary that times out or panics
// ends its package with a fail while its running test never ends: that
// test's output (the panic, the goroutine dump) is printed.
func TestUnfinishedTestsAreShown(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"goroutine 7 [select]:\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t600.1s\n"}
{"Action":"fail","Package":"p"}
`
	var out strings.Builder
	if code := run(strings.NewReader(in), &out, 0); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	want := "FAIL\tp\t600.1s\npanic: test timed out after 10m0s\ngoroutine 7 [select]:\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestProgressFillsTheSilence: after 15 s without a line printed, and
// every 15 s of silence after that, a progress line says how long the run
// has taken and which packages are done and running; a package line
// resets the silence.
func TestProgressFillsTheSilence(t *testing.T) {
	lines, ticks := make(chan []byte), make(chan time.Time)
	var out strings.Builder
	done := make(chan int)
	go func() { done <- watch(lines, ticks, &out, 0) }()
	start := time.Unix(0, 0)
	tick := func(s int) { ticks <- start.Add(time.Duration(s) * time.Second) }
	for s := 0; s <= 16; s++ {
		tick(s)
	}
	lines <- []byte(`{"Action":"start","Package":"github.com/fairsched/fairsched/a"}`)
	lines <- []byte(`{"Action":"start","Package":"github.com/fairsched/fairsched/b"}`)
	lines <- []byte(`{"Action":"output","Package":"github.com/fairsched/fairsched/a","Output":"ok  \ta\t1s\n"}`)
	lines <- []byte(`{"Action":"pass","Package":"github.com/fairsched/fairsched/a"}`)
	for s := 17; s <= 47; s++ {
		tick(s)
	}
	close(lines)
	if code := <-done; code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	want := "… test 15s: compiling (a fresh clone builds every dependency first)\n" +
		"ok  \ta\t1s\n" +
		"… test 32s: 1 packages done; running b\n" +
		"… test 47s: 1 packages done; running b\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestSlowestAreListed: with -slowest N, the run ends with the N packages
// and the N top-level tests that took longest, the longest first; a
// subtest's time is its parent's already, and a skip took no time worth
// listing.
func TestSlowestAreListed(t *testing.T) {
	in := `{"Action":"pass","Package":"github.com/fairsched/fairsched/cluster","Test":"TestA","Elapsed":2.5}
{"Action":"pass","Package":"github.com/fairsched/fairsched/cluster","Test":"TestB/sub","Elapsed":9}
{"Action":"pass","Package":"github.com/fairsched/fairsched/cluster","Test":"TestB","Elapsed":9.25}
{"Action":"skip","Package":"github.com/fairsched/fairsched/cluster","Test":"TestS","Elapsed":50}
{"Action":"output","Package":"github.com/fairsched/fairsched/cluster","Output":"ok  \tcluster\t12s\n"}
{"Action":"pass","Package":"github.com/fairsched/fairsched/cluster","Elapsed":12}
{"Action":"pass","Package":"github.com/fairsched/fairsched","Test":"TestC","Elapsed":2.5}
{"Action":"pass","Package":"github.com/fairsched/fairsched","Test":"TestD","Elapsed":0.5}
{"Action":"pass","Package":"github.com/fairsched/fairsched","Elapsed":20}
{"Action":"pass","Package":"github.com/fairsched/fairsched/core","Elapsed":3}
`
	var out strings.Builder
	if code := run(strings.NewReader(in), &out, 2); code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	want := "ok  \tcluster\t12s\n" +
		"SKIP github.com/fairsched/fairsched/cluster TestS: (no reason given)\n" +
		"slowest packages:\n" +
		"    20.0s .\n" +
		"    12.0s cluster\n" +
		"slowest tests:\n" +
		"     9.2s cluster TestB\n" +
		"     2.5s . TestC\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
