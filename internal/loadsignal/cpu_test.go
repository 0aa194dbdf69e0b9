package loadsignal

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a wall clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// step is one reading: the files as they are then, and the clock's advance
// before it.
type step struct {
	advance time.Duration
	files   map[string]string // nil value: the file is missing
}

type result struct {
	Value float64
	Err   string // the sentinel's text, "" for none
}

func run(t *testing.T, ncpu int, initial map[string]string, steps []step) (string, []result) {
	t.Helper()
	fsys := fstest.MapFS{}
	set := func(files map[string]string) {
		for name, text := range files {
			if text == missing {
				delete(fsys, name)
				continue
			}
			fsys[name] = &fstest.MapFile{Data: []byte(text)}
		}
	}
	set(initial)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := NewCPU(fsys, clk.now, ncpu)
	var out []result
	for _, s := range steps {
		clk.t = clk.t.Add(s.advance)
		set(s.files)
		v, err := c.Load()
		r := result{Value: v}
		switch {
		case errors.Is(err, ErrUnreadable):
			r.Err = "unreadable"
		case errors.Is(err, ErrNoBaseline):
			r.Err = "no baseline"
		case err != nil:
			r.Err = err.Error()
		}
		out = append(out, r)
	}
	return c.Source(), out
}

const missing = "\x00missing"

func procStat(utime, stime int) string {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	return "42 (a) b) (c d) S 1 42 42 0 -1 4194560 100 0 0 0 " + itoa(utime) + " " + itoa(stime) + " 0 0 20 0 8 0 100 0 0\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func cpuLine(total int) string {
	// user nice system idle iowait irq softirq steal guest guest_nice: the
	// guest columns (already in user) must not count.
	return "cpu  " + itoa(total/2) + " 0 0 " + itoa(total-total/2) + " 0 0 0 0 " + itoa(total) + " 7\ncpu0 1 2 3 4\n"
}

func TestCPUFromProc(t *testing.T) {
	// No cgroup file: /proc. The process used 25, then 100 of 200 ticks.
	src, got := run(t, 4, map[string]string{
		"proc/self/stat": procStat(100, 50),
		"proc/stat":      cpuLine(10000),
	}, []step{
		{time.Second, map[string]string{"proc/self/stat": procStat(120, 55), "proc/stat": cpuLine(10200)}},
		{time.Second, map[string]string{"proc/self/stat": procStat(200, 75), "proc/stat": cpuLine(10400)}},
	})
	want := []result{{Value: 0.125}, {Value: 0.5}}
	if diff := cmp.Diff(want, got); diff != "" || src != "/proc" {
		t.Errorf("source %q; readings (-want +got):\n%s", src, diff)
	}
}

func TestCPUFromCgroup(t *testing.T) {
	// The process's cgroup has a quota of 2 CPUs: 1 s of CPU in 1 s is half.
	files := map[string]string{
		"proc/self/cgroup":                     "0::/app.slice/svc\n",
		"sys/fs/cgroup/app.slice/svc/cpu.stat": "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\n",
		"sys/fs/cgroup/app.slice/svc/cpu.max":  "200000 100000\n",
	}
	src, got := run(t, 8, files, []step{
		{time.Second, map[string]string{"sys/fs/cgroup/app.slice/svc/cpu.stat": "usage_usec 6000000\n"}},
		{2 * time.Second, map[string]string{"sys/fs/cgroup/app.slice/svc/cpu.stat": "usage_usec 10000000\n"}},
		// No quota: 8 CPUs.
		{time.Second, map[string]string{"sys/fs/cgroup/app.slice/svc/cpu.stat": "usage_usec 12000000\n", "sys/fs/cgroup/app.slice/svc/cpu.max": "max 100000\n"}},
	})
	want := []result{{Value: 0.5}, {Value: 1}, {Value: 0.25}}
	if diff := cmp.Diff(want, got); diff != "" || src != "cgroup v2" {
		t.Errorf("source %q; readings (-want +got):\n%s", src, diff)
	}
}

func TestCPUNamespacedCgroup(t *testing.T) {
	// In a cgroup namespace the path names a directory not mounted under
	// the root: the root's cpu.stat is the process's.
	src, got := run(t, 1, map[string]string{
		"proc/self/cgroup":       "0::/kubepods/pod1\n",
		"sys/fs/cgroup/cpu.stat": "usage_usec 0\n",
	}, []step{{time.Second, map[string]string{"sys/fs/cgroup/cpu.stat": "usage_usec 300000\n"}}})
	if diff := cmp.Diff([]result{{Value: 0.3}}, got); diff != "" || src != "cgroup v2" {
		t.Errorf("source %q; readings (-want +got):\n%s", src, diff)
	}
}

// TestCPUCorruptFiles: whatever the files hold, a reading is a value in
// [0, 1] or an error, and a good sample after bad ones reads again.
func TestCPUCorruptFiles(t *testing.T) {
	good := map[string]string{"proc/self/stat": procStat(0, 0), "proc/stat": cpuLine(1000)}
	_, got := run(t, 1, good, []step{
		{time.Second, map[string]string{"proc/self/stat": "garbage"}},                         // no ')'
		{time.Second, map[string]string{"proc/self/stat": "1 (x) S 1 2"}},                     // too few fields
		{time.Second, map[string]string{"proc/self/stat": procStat(0, 0)[:40] + " -5 x 1 2"}}, // not numbers
		{time.Second, map[string]string{"proc/self/stat": missing}},
		{time.Second, map[string]string{"proc/self/stat": procStat(10, 0), "proc/stat": "intr 1 2 3\n"}},
		{time.Second, map[string]string{"proc/stat": "cpu 1 2 x 4 5\n"}},
		{time.Second, map[string]string{"proc/stat": strings.Repeat("9", maxFile+1)}},
		{time.Second, map[string]string{"proc/stat": cpuLine(1100)}}, // good: 10 of 100 ticks
		// Counters going backwards (a restarted container): no value.
		{time.Second, map[string]string{"proc/self/stat": procStat(5, 0), "proc/stat": cpuLine(1200)}},
		{time.Second, map[string]string{"proc/self/stat": procStat(5, 0), "proc/stat": cpuLine(1200)}}, // no time in ticks
		// More CPU than capacity (a bad file): capped at 1.
		{time.Second, map[string]string{"proc/self/stat": procStat(500, 0), "proc/stat": cpuLine(1300)}},
	})
	want := []result{
		{Err: "unreadable"}, {Err: "unreadable"}, {Err: "unreadable"}, {Err: "unreadable"},
		{Err: "unreadable"}, {Err: "unreadable"}, {Err: "unreadable"},
		{Value: 0.1}, {Err: "no baseline"}, {Err: "no baseline"}, {Value: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
}

func TestCPUCorruptCgroup(t *testing.T) {
	// A cgroup line that climbs out, a cpu.stat without usage, a bad cpu.max.
	src, got := run(t, 2, map[string]string{
		"proc/self/cgroup": "12:cpu:/x\n0::/../../etc\n",
		"proc/self/stat":   procStat(0, 0),
		"proc/stat":        cpuLine(100),
	}, []step{{time.Second, map[string]string{"proc/self/stat": procStat(50, 0), "proc/stat": cpuLine(200)}}})
	if diff := cmp.Diff([]result{{Value: 0.5}}, got); diff != "" || src != "/proc" {
		t.Errorf("source %q; readings (-want +got):\n%s", src, diff)
	}
	_, got = run(t, 2, map[string]string{
		"proc/self/cgroup":       "0::/\n",
		"sys/fs/cgroup/cpu.stat": "usage_usec 10\n",
		"sys/fs/cgroup/cpu.max":  "0 0\n", // nonsense: the CPUs
	}, []step{
		{time.Second, map[string]string{"sys/fs/cgroup/cpu.stat": "user_usec 5\n"}},
		{time.Second, map[string]string{"sys/fs/cgroup/cpu.stat": "usage_usec -1\n"}},
		{time.Second, map[string]string{"sys/fs/cgroup/cpu.stat": "usage_usec 1000010\n"}},
	})
	want := []result{{Err: "unreadable"}, {Err: "unreadable"}, {Value: 1.0 / 6}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
}

func TestCPUMissingEverything(t *testing.T) {
	_, got := run(t, 1, nil, []step{{time.Second, nil}})
	if diff := cmp.Diff([]result{{Err: "unreadable"}}, got); diff != "" {
		t.Errorf("readings (-want +got):\n%s", diff)
	}
}

// TestCPUOfThisProcess reads the real files of this machine: once some CPU
// has been used, a reading is a value in [0, 1] (Linux only).
func TestCPUOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the CPU signal reads Linux's /proc and cgroup files")
	}
	c := NewCPU(os.DirFS("/"), time.Now, 0)
	t.Logf("source: %s", c.Source())
	var errs []error
	for range 50 { // a reading needs the counters to move: ticks are 10 ms
		burn(20 * time.Millisecond)
		v, err := c.Load()
		if err == nil {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("reading %v, want a value in [0, 1]", v)
			}
			return
		}
		errs = append(errs, err)
	}
	t.Fatalf("no reading in 50 tries: %v", errors.Join(errs...))
}

// burn keeps the CPU busy for about d of wall time.
func burn(d time.Duration) {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := range 10_000 {
			x += i
		}
	}
	sink = x
}

var sink int
