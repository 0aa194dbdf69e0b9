package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const smallTrace = "testdata/small.trace"

// TestReplayGolden: the small trace replayed on one slot prints each
// tenant's share and p95 wait, recorded and replayed, and its bounds hold.
func TestReplayGolden(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-replay", smallTrace, "-max-concurrency", "1", "-min-share", "*=10%", "-max-p95", "*=7s"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	want, err := os.ReadFile("testdata/small.golden")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(stdout.String(), "\n")); diff != "" {
		t.Errorf("(-golden +replay):\n%s", diff)
	}
}

// TestReplayBoundFails: a bound the replay misses exits 1 and says which
// bound, for which tenant, by how much; the bounds that hold say so.
func TestReplayBoundFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-replay", smallTrace, "-max-concurrency", "1", "-min-share", "bolt=30%", "-max-p95", "acme=5s",
		"-max-share", "ghost=0.5", "-max-share", "acme=70%"}, &stdout, &stderr)
	lines := strings.Split(stdout.String(), "\n")
	got := lines[5:]
	want := []string{
		"share of the contended service, 0 to 100% (| a bound)",
		"  acme   ████████████████████████████|████········  83.1%",
		"  bolt   ███████·····|····························  16.9%",
		"p95 wait, 0 to 6.4s (| a bound)",
		"  acme   ████████████████████████████···|·········  4.5s",
		"  bolt   ████████████████████████████████████████·  6.4s",
		"ok   p95 wait of acme 4.5s ≤ 5s",
		"FAIL share of acme 83.1% > 70.0%: 13.1 points over",
		"FAIL max-share ghost: no such tenant in the trace",
		"FAIL share of bolt 16.9% < 30.0%: 13.1 points short",
		"3 of 4 checks failed",
		"",
	}
	if code != 1 || stderr.Len() > 0 {
		t.Errorf("exit %d, stderr %q; want 1 and nothing", code, stderr.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReplayBadInput: a corrupt trace line, a bad bound or a missing file
// exit 2 with a message naming what is wrong, and no panic.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.trace")
	data, err := os.ReadFile(smallTrace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[3] = `{"type":"render","id":"a2","arrival":"2026-11-28T10:00:00Z","run_ns":-5}`
	if err := os.WriteFile(corrupt, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-replay", corrupt}, `corrupt.trace: line 4: field "run_ns": trace: corrupt record: -5 is outside`},
		{[]string{"-replay", smallTrace, "-min-share", "bolt=1.5"}, "-min-share bolt=1.5: want a fraction in [0, 1]"},
		{[]string{"-replay", smallTrace, "-max-p95", "bolt"}, `"bolt": want NAME=VALUE`},
		{[]string{"-replay", filepath.Join(dir, "none.trace")}, "no such file"},
		{[]string{"-replay", smallTrace, "other.trace"}, "one trace file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestReplayPolicyFile: a policy file configures the replay as the flags
// do: one slot from the file replays as -max-concurrency 1 with the same
// key weight.
func TestReplayPolicyFile(t *testing.T) {
	var fromFile, fromFlags, stderr bytes.Buffer
	if code := run([]string{"-replay", smallTrace, "-policy", "testdata/one-slot.yaml"}, &fromFile, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"-replay", smallTrace, "-max-concurrency", "1", "-key-weight", "bolt/main=3"}, &fromFlags, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if diff := cmp.Diff(fromFlags.String(), fromFile.String()); diff != "" {
		t.Errorf("(-flags +policy file):\n%s", diff)
	}
	var bad bytes.Buffer
	if code := run([]string{"-replay", smallTrace, "-policy", "testdata/small.trace"}, &bytes.Buffer{}, &bad); code != 2 || !strings.Contains(bad.String(), "small.trace") {
		t.Errorf("a trace as the policy: exit %d, %q; want 2 and the file named", code, bad.String())
	}
}
