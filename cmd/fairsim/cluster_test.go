package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fairsched/fairsched/internal/pgtest"
)

// TestClusterPlay: 02-two-client-burst played on three instances over
// PostgreSQL (skipped without one, failed under FAIRSCHED_REQUIRE_PG=1)
// prints a consistent summary: all 16 jobs ran, once each; the peak
// concurrency from the handlers' log is within the cap of 8 and each
// type's; every instance ran some and the per-instance counts add up; the
// leader is one of the instances, at epoch 1, and its snapshots named each
// running job's instance; every key's jobs all ran; every check passed.
func TestClusterPlay(t *testing.T) {
	url := pgtest.URL(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-cluster", "3", "-db", url, scenarioFile("02-two-client-burst.yaml")}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr.String(), out)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format+"\n%s", append(args, out)...)
	}

	m := regexp.MustCompile(`(?m)^  domain (\S+): leader (fairsim-[123]) at epoch (\d+) \(the followers agree\); 3 instances, 8 slots each, with handlers for repack, sync-clone$`).FindStringSubmatch(out)
	if m == nil || m[3] != "1" {
		fail("no leader line naming one of the three instances at epoch 1")
	}
	if !regexp.MustCompile(`(?m)^  16 of 16 jobs ran in [0-9.]+m?s; in one process they take 12 scenario seconds`).MatchString(out) {
		fail("not all 16 jobs ran")
	}

	// Per instance: each ran some, the counts add up to 16, one leads.
	rows := regexp.MustCompile(`(?m)^  (fairsim-[123]) +(\d+) +(\d+) +(\d+)( +yes)?$`).FindAllStringSubmatch(out, -1)
	if len(rows) != 3 {
		fail("%d rows in the instances table, want 3", len(rows))
	}
	total, leaders := 0, 0
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		if n == 0 || r[3] != "8" {
			fail("instance %s ran %s jobs with %s slots: want some, with 8", r[1], r[2], r[3])
		}
		total += n
		if r[5] != "" {
			leaders++
			if m != nil && r[1] != m[2] {
				fail("the table's leader %s is not the leader line's %s", r[1], m[2])
			}
		}
	}
	if total != 16 || leaders != 1 {
		fail("the instances ran %d jobs in all with %d leaders; want 16 and 1", total, leaders)
	}

	// Peak concurrency against the caps: 8 overall, 8 clones, 3 repacks.
	p := regexp.MustCompile(`(?m)^Peak concurrency, from the handlers' shared start/end log: (\d+) of the cap 8; per type sync-clone (\d+) of 8, repack (\d+) of 3$`).FindStringSubmatch(out)
	if p == nil {
		fail("no peak concurrency line")
	} else {
		peak, clones, repacks := atoi(p[1]), atoi(p[2]), atoi(p[3])
		if peak > 8 || clones > 8 || repacks > 3 || peak < 3 || peak > clones+repacks {
			fail("peak %d, clones %d, repacks %d: want the peak within the cap of 8 (and ≥ 3: the repacks start together), each type within its cap", peak, clones, repacks)
		}
	}

	// Per key: every job ran, against the in-process counts.
	for key, jobs := range map[string]int{"(background)": 4, "clientA": 10, "clientB": 2} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + fmt.Sprintf(` +%d +%d +[0-9.]+ +[0-9.]+ +[0-9.]+  \|  +\d+ +\d+ +\d+$`, jobs, jobs)).MatchString(out) {
			fail("key %s: want %d jobs, all run, with their waits beside the in-process ones", key, jobs)
		}
	}

	// The checks: five, all passed.
	checks := out[strings.Index(out, "\nchecks:\n"):]
	if strings.Contains(checks, "FAIL") || strings.Count(checks, "\n  ok   ") != 5 {
		fail("want five checks, all ok")
	}
	for _, want := range []string{
		"ok   every job ran exactly once: 16 of 16 ran",
		"ok   peak concurrency",
		"ok   every instance ran some: fairsim-1 ",
		"ok   the leader's snapshots named each running job's instance: ",
	} {
		if !strings.Contains(checks, want) {
			fail("the checks lack %q", want)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestClusterSkipsWithoutDatabase: without PostgreSQL the play prints one
// line saying it skipped and why, and exits 0.
func TestClusterSkipsWithoutDatabase(t *testing.T) {
	defer func(f func() (string, func(), error)) { startDB = f }(startDB)
	startDB = func() (string, func(), error) {
		return "", nil, fmt.Errorf("%w (initdb not found on PATH or under /usr/lib/postgresql): set FAIRSCHED_TEST_DATABASE_URL", pgtest.ErrUnavailable)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-cluster", "3", scenarioFile("02-two-client-burst.yaml")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "fairsim -cluster: skipped 02-two-client-burst: pgtest: no PostgreSQL (initdb not found on PATH or under /usr/lib/postgresql): set FAIRSCHED_TEST_DATABASE_URL\n"
	if stdout.String() != want || stderr.Len() > 0 {
		t.Errorf("stdout %q, stderr %q; want one line:\n%s", stdout.String(), stderr.String(), want)
	}
	// A database that fails otherwise is an error, not a skip.
	startDB = func() (string, func(), error) { return "", nil, errors.New("creating a database: permission denied") }
	stdout.Reset()
	if code := run([]string{"-cluster", "3", scenarioFile("02-two-client-burst.yaml")}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "permission denied") {
		t.Errorf("exit %d, stderr %q; want 1 and the error", code, stderr.String())
	}
}

// TestClusterMisuse: scenarios the cluster cannot play and bad flags exit
// 2 with a message, before any database is sought.
func TestClusterMisuse(t *testing.T) {
	defer func(f func() (string, func(), error)) { startDB = f }(startDB)
	startDB = func() (string, func(), error) { t.Fatal("a database was sought"); return "", nil, nil }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cluster", "3", scenarioFile("20-specialist-slots.yaml")}, "20-specialist-slots cannot play on a cluster: it registers workers"},
		{[]string{"-cluster", "0", "-db", "x", scenarioFile("02-two-client-burst.yaml")}, "-cluster 0: want 1 to 16 instances"},
		{[]string{"-cluster", "3", scenarioFile("02-two-client-burst.yaml"), scenarioFile("04-conflict-exclusion.yaml")}, "-cluster takes one scenario file"},
		{[]string{"-cluster", "3", "-summary", scenarioFile("02-two-client-burst.yaml")}, "-cluster plays one scenario on its own"},
		{[]string{"-cluster", "3", "-step", "-1s", scenarioFile("02-two-client-burst.yaml")}, "want a step of 1ms or more"},
		{[]string{"-cluster", "3", "-step", "1s", scenarioFile("02-two-client-burst.yaml")}, "give a shorter -step"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%q) = %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
