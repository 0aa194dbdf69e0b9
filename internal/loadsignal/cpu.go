// Package loadsignal reads the process's CPU utilisation from the files
// Linux exposes: the cgroup v2 cpu.stat of the process's cgroup when cgroup
// v2 is mounted at /sys/fs/cgroup, else /proc/self/stat against /proc/stat
// (a hybrid host's unified hierarchy, elsewhere, is not read: there the
// process usually sits in its root, whose usage is the whole machine's). Each file's text is
// untrusted: a reader that cannot make sense of it returns an error (the
// scheduler then skips the reading), never a made-up value.
package loadsignal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrUnreadable: a file the reading needs is missing or its text is not
// what the kernel writes. Errors wrap it with the file and the fault.
var ErrUnreadable = errors.New("loadsignal: unreadable")

// ErrNoBaseline: a utilisation is a difference of two samples, and this
// is the first good one (or the counters went backwards): the next reading
// has one to compare with.
var ErrNoBaseline = errors.New("loadsignal: no earlier sample to compare with")

// maxFile bounds what is read of one file: the kernel's are a few hundred
// bytes; anything past this is not theirs.
const maxFile = 64 << 10

// sample is one reading of the counters: used CPU and the capacity it is
// measured against, in one unit.
type sample struct {
	used, capacity float64
}

// CPU is the process's CPU utilisation in [0, 1]: the CPU time it used
// between two readings over what was available to it. Not safe for
// concurrent use (the scheduler's owner goroutine calls it).
type CPU struct {
	fsys fs.FS
	// now, for cgroup readings, is the wall clock the capacity is taken
	// over (the /proc fallback counts capacity in the kernel's ticks).
	now    func() time.Time
	ncpu   int
	cgroup string // the cgroup v2 directory under fsys; "" for /proc
	last   sample
	lastAt time.Time
	have   bool
}

// NewCPU returns a CPU reader over fsys — os.DirFS("/") in production —
// with now as its wall clock and ncpu the processors when no cgroup quota
// says otherwise (runtime.NumCPU() when 0). It takes a first sample, so the
// first Load already has one to compare with; if that fails, the first
// Load takes it instead.
func NewCPU(fsys fs.FS, now func() time.Time, ncpu int) *CPU {
	if ncpu <= 0 {
		ncpu = runtime.NumCPU()
	}
	c := &CPU{fsys: fsys, now: now, ncpu: ncpu}
	c.cgroup = cgroupDir(fsys)
	_, _ = c.Load() // the baseline; its error is the first Load's to tell
	return c
}

// Source says what the reader reads: "cgroup v2" or "/proc".
func (c *CPU) Source() string {
	if c.cgroup != "" {
		return "cgroup v2"
	}
	return "/proc"
}

// Load returns the utilisation since the last good sample.
func (c *CPU) Load() (float64, error) {
	at := c.now()
	s, err := c.sample(at)
	if err != nil {
		return 0, err
	}
	prev, prevAt, had := c.last, c.lastAt, c.have
	c.last, c.lastAt, c.have = s, at, true
	if !had {
		return 0, ErrNoBaseline
	}
	used, capacity := s.used-prev.used, s.capacity-prev.capacity
	if c.cgroup != "" {
		capacity = at.Sub(prevAt).Seconds() * s.capacity // s.capacity: CPUs
	}
	switch {
	case used < 0 || capacity < 0:
		return 0, ErrNoBaseline // a counter went backwards (a new cgroup?)
	case capacity == 0:
		return 0, fmt.Errorf("%w: no time passed between two samples", ErrNoBaseline)
	}
	return min(1, used/capacity), nil
}

// sample reads the counters: from the cgroup, used CPU in seconds and
// capacity in CPUs; from /proc, both in clock ticks.
func (c *CPU) sample(at time.Time) (sample, error) {
	if c.cgroup != "" {
		used, err := cgroupUsage(c.fsys, c.cgroup)
		if err != nil {
			return sample{}, err
		}
		return sample{used: used, capacity: cgroupCPUs(c.fsys, c.cgroup, c.ncpu)}, nil
	}
	used, err := procSelfTicks(c.fsys)
	if err != nil {
		return sample{}, err
	}
	total, err := procTotalTicks(c.fsys)
	if err != nil {
		return sample{}, err
	}
	return sample{used: used, capacity: total}, nil
}

// readFile reads a file of at most maxFile bytes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreadable, name, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(f, maxFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreadable, name, err)
	case n > maxFile:
		return nil, fmt.Errorf("%w: %s: longer than %d bytes", ErrUnreadable, name, maxFile)
	}
	return buf.Bytes(), nil
}

// cgroupDir returns the process's cgroup v2 directory under fsys when its
// cpu.stat can be read, else "". /proc/self/cgroup's v2 line is "0::PATH".
func cgroupDir(fsys fs.FS) string {
	b, err := readFile(fsys, "proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		p, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "0::")
		if !ok || !strings.HasPrefix(p, "/") {
			continue
		}
		dir := path.Join("sys/fs/cgroup", path.Clean(p)) // Clean: no ".." climbs out
		if !fs.ValidPath(dir) {
			return ""
		}
		if _, err := cgroupUsage(fsys, dir); err == nil {
			return dir
		}
		if _, err := cgroupUsage(fsys, "sys/fs/cgroup"); err == nil {
			return "sys/fs/cgroup" // a namespaced cgroup: its root is the process's
		}
		return ""
	}
	return ""
}

// cgroupUsage returns cpu.stat's usage_usec, in seconds.
func cgroupUsage(fsys fs.FS, dir string) (float64, error) {
	name := path.Join(dir, "cpu.stat")
	b, err := readFile(fsys, name)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "usage_usec" {
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: %s: usage_usec %q: %v", ErrUnreadable, name, f[1], err)
			}
			return float64(n) / 1e6, nil
		}
	}
	return 0, fmt.Errorf("%w: %s: no usage_usec line", ErrUnreadable, name)
}

// cgroupCPUs returns the CPUs the cgroup may use: cpu.max's quota over its
// period ("max PERIOD" or a missing or unreadable file: ncpu), at most ncpu.
func cgroupCPUs(fsys fs.FS, dir string, ncpu int) float64 {
	b, err := readFile(fsys, path.Join(dir, "cpu.max"))
	if err != nil {
		return float64(ncpu)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return float64(ncpu)
	}
	quota, err1 := strconv.ParseUint(f[0], 10, 64)
	period, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || quota == 0 || period == 0 {
		return float64(ncpu)
	}
	return min(float64(ncpu), float64(quota)/float64(period))
}

// procSelfTicks returns utime + stime of /proc/self/stat, in clock ticks.
// The second field, the command, is in parentheses and may hold spaces and
// parentheses itself: the fields are counted from the last ')'.
func procSelfTicks(fsys fs.FS) (float64, error) {
	const name = "proc/self/stat"
	b, err := readFile(fsys, name)
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: %s: no command field", ErrUnreadable, name)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the command: state (field 3) … utime (14), stime (15).
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("%w: %s: %d fields after the command, want at least %d", ErrUnreadable, name, len(f), stime+1)
	}
	u, err1 := strconv.ParseUint(f[utime], 10, 64)
	s, err2 := strconv.ParseUint(f[stime], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("%w: %s: utime or stime: %v", ErrUnreadable, name, err)
	}
	return float64(u) + float64(s), nil
}

// procTotalTicks returns the sum of /proc/stat's "cpu" line: every CPU's
// time, busy or idle, in clock ticks. Only the first eight columns (user to
// steal) count: guest time, after them, is already in user and nice.
func procTotalTicks(fsys fs.FS) (float64, error) {
	const name = "proc/stat"
	b, err := readFile(fsys, name)
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, fmt.Errorf("%w: %s: the first line is not the \"cpu\" total", ErrUnreadable, name)
	}
	total := 0.0
	for _, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: cpu field %q: %v", ErrUnreadable, name, v, err)
		}
		total += float64(n)
	}
	if math.IsInf(total, 0) {
		return 0, fmt.Errorf("%w: %s: cpu total out of range", ErrUnreadable, name)
	}
	return total, nil
}
