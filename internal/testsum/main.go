// Command testsum reads `go test -json` on its standard input and prints
// what `go test` prints without -v — a line per package, the output of
// failed tests, the compiler's and vet's complaints — plus one line per skipped test with its reason, which
// plain `go test` hides: a test that cannot run here (no Chromium, no
// PostgreSQL) says so in `make test`'s output. It exits 1 if anything
// failed. While nothing has been printed for 15 s it prints a progress
// line (how long, which packages are done and running), so a cold build
// is not mistaken for a hang. With -slowest N it ends with the N
// packages and the N tests (top-level, their subtests included) that took
// longest: where a run's time goes.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's or a package's end
}

// quiet is how long testsum stays silent before it prints a progress line.
const quiet = 15 * time.Second

func main() {
	slowest := flag.Int("slowest", 0, "end with the `N` slowest packages and tests")
	flag.Parse()
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			lines <- slices.Clone(sc.Bytes())
		}
	}()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	os.Exit(watch(lines, ticker.C, os.Stdout, *slowest))
}

// watch prints the summary of lines, and a progress line at each tick
// that comes quiet or more after the last line printed.
func watch(lines <-chan []byte, ticks <-chan time.Time, out io.Writer, slowest int) int {
	var begin, last time.Time
	w := &flagWriter{w: out}
	s := newSummary(w, slowest)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return s.finish()
			}
			s.line(l)
		case now := <-ticks:
			if begin.IsZero() {
				begin, last = now, now
			}
			if w.wrote {
				last, w.wrote = now, false
			} else if now.Sub(last) >= quiet {
				fmt.Fprintf(w, "… test %v: %s\n", now.Sub(begin).Round(time.Second), s.progress())
				last, w.wrote = now, false
			}
		}
	}
}

// flagWriter is w, noting that something was written since the last tick.
type flagWriter struct {
	w     io.Writer
	wrote bool
}

func (f *flagWriter) Write(p []byte) (int, error) {
	f.wrote = true
	return f.w.Write(p)
}

// summary folds go test's JSON events into what testsum prints.
type summary struct {
	out     io.Writer
	output  map[string][]string // package/test → its output lines
	skips   []string
	failed  bool
	running map[string]bool // packages started and not ended
	done    int
	slowest int      // how many of the slowest packages and tests finish lists
	times   []timing // every package's and top-level test's, when slowest > 0
}

// timing is how long a package or a top-level test took.
type timing struct {
	pkg, test string
	elapsed   float64
}

func newSummary(out io.Writer, slowest int) *summary {
	return &summary{out: out, output: map[string][]string{}, running: map[string]bool{}, slowest: slowest}
}

// run summarises all of in at once.
func run(in io.Reader, out io.Writer, slowest int) int {
	s := newSummary(out, slowest)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		s.line(sc.Bytes())
	}
	return s.finish()
}

// progress says how far the run is: the packages done and running.
func (s *summary) progress() string {
	if len(s.running) == 0 && s.done == 0 {
		return "compiling (a fresh clone builds every dependency first)"
	}
	names := make([]string, 0, len(s.running))
	for p := range s.running {
		names = append(names, shortName(p))
	}
	slices.Sort(names)
	if len(names) > 4 {
		names = append(names[:4], "…")
	}
	return fmt.Sprintf("%d packages done; running %s", s.done, strings.Join(names, ", "))
}

func (s *summary) line(b []byte) {
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		fmt.Fprintf(s.out, "%s\n", b) // not JSON: a build error, say
		return
	}
	key := e.Package + "/" + e.Test
	if s.slowest > 0 && (e.Action == "pass" || e.Action == "fail") && !strings.Contains(e.Test, "/") {
		s.times = append(s.times, timing{shortName(e.Package), e.Test, e.Elapsed})
	}
	if e.Test == "" {
		s.packageEvent(e)
		if e.Action == "fail" {
			s.unfinished(e.Package)
		}
	}
	switch e.Action {
	case "build-output": // a compile or vet error, as go build prints it
		fmt.Fprint(s.out, e.Output)
	case "build-fail":
		s.failed = true
	case "output":
		if e.Test == "" && (strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") ||
			strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "panic")) {
			fmt.Fprint(s.out, e.Output)
			return
		}
		s.output[key] = append(s.output[key], e.Output)
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, fmt.Sprintf("SKIP %s %s: %s", e.Package, e.Test, reason(s.output[key])))
		}
		delete(s.output, key)
	case "fail":
		s.failed = true
		for _, l := range s.output[key] {
			fmt.Fprint(s.out, l)
		}
		delete(s.output, key)
	case "pass":
		delete(s.output, key)
	}
}

// unfinished prints the output of pkg's tests that never ended — a test
// binary that timed out or panicked, its goroutine dump included — after
// the package's FAIL line.
func (s *summary) unfinished(pkg string) {
	var keys []string
	for k := range s.output {
		if strings.HasPrefix(k, pkg+"/") && k != pkg+"/" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, l := range s.output[k] {
			fmt.Fprint(s.out, l)
		}
		delete(s.output, k)
	}
}

// packageEvent keeps count of the packages started and ended.
func (s *summary) packageEvent(e event) {
	switch e.Action {
	case "start":
		s.running[e.Package] = true
	case "pass", "fail", "skip":
		if s.running[e.Package] {
			delete(s.running, e.Package)
		}
		s.done++
	}
}

func (s *summary) finish() int {
	for _, l := range s.skips {
		fmt.Fprintln(s.out, l)
	}
	s.printSlowest()
	if s.failed {
		return 1
	}
	return 0
}

// reason returns what a skipped test said, without go test's framing.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ".go:"); ok { // file.go:12: message
			if _, msg, ok = strings.Cut(msg, ": "); ok {
				l = msg
			}
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// shortName is a package's path within the module ("." for its root).
func shortName(pkg string) string {
	const module = "github.com/fairsched/fairsched"
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// printSlowest lists the slowest packages, then the slowest tests, the
// longest first (ties by name, so that a run prints one order).
func (s *summary) printSlowest() {
	if s.slowest <= 0 {
		return
	}
	slices.SortFunc(s.times, func(a, b timing) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.test, b.test))
	})
	for _, kind := range []string{"packages", "tests"} {
		fmt.Fprintf(s.out, "slowest %s:\n", kind)
		n := 0
		for _, t := range s.times {
			if n < s.slowest && (t.test == "") == (kind == "packages") {
				fmt.Fprintf(s.out, "%8.1fs %s\n", t.elapsed, strings.TrimSpace(t.pkg+" "+t.test))
				n++
			}
		}
	}
}
