package clusterbench

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
)

// event is a line of the executors' log.
type event struct {
	ts    int64
	num   int32
	inst  int16
	start bool
}

// collector tails the executors' log file and keeps what the figures need:
// every event, each job's first start, its number of starts and whether
// it ended, and the jobs each instance has started and not ended. It is
// the run's goroutine's alone (poll, openOn, intervals and the figures are
// called there), but for nEnded, a counter the run's background goroutines
// read through ends.
type collector struct {
	path       string
	off        int64
	partial    []byte
	insts      map[string]int16
	names      []string
	events     []event
	firstStart []int64
	starts     []int32
	ended      []bool
	nEnded     atomic.Int64 // jobs with an end line
	open       map[int16]map[int32]int
}

func newCollector(path string) *collector {
	return &collector{path: path, insts: map[string]int16{}, open: map[int16]map[int32]int{}}
}

func (c *collector) grow(n int) {
	if n < len(c.ended) {
		return
	}
	size := max(n+1, 2*len(c.ended))
	c.firstStart = append(c.firstStart, make([]int64, size-len(c.firstStart))...)
	c.starts = append(c.starts, make([]int32, size-len(c.starts))...)
	c.ended = append(c.ended, make([]bool, size-len(c.ended))...)
}

// poll reads what was appended since the last poll.
func (c *collector) poll() error {
	f, err := os.Open(c.path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	c.off += int64(len(b))
	b = append(c.partial, b...)
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		c.partial = b
		return nil
	}
	c.partial = append([]byte(nil), b[i+1:]...)
	for _, line := range bytes.Split(b[:i], []byte{'\n'}) {
		c.line(line)
	}
	return nil
}

func (c *collector) line(line []byte) {
	f := bytes.Fields(line)
	if len(f) != 4 {
		return
	}
	num, err1 := strconv.Atoi(string(f[1]))
	ts, err2 := strconv.ParseInt(string(f[3]), 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	inst, ok := c.insts[string(f[2])]
	if !ok {
		inst = int16(len(c.names))
		c.insts[string(f[2])] = inst
		c.names = append(c.names, string(f[2]))
		c.open[inst] = map[int32]int{}
	}
	c.grow(num)
	start := f[0][0] == 's'
	c.events = append(c.events, event{ts: ts, num: int32(num), inst: inst, start: start})
	if start {
		if c.starts[num] == 0 || ts < c.firstStart[num] {
			c.firstStart[num] = ts
		}
		c.starts[num]++
		c.open[inst][int32(num)]++
	} else {
		if !c.ended[num] {
			c.ended[num] = true
			c.nEnded.Add(1)
		}
		if c.open[inst][int32(num)]--; c.open[inst][int32(num)] <= 0 {
			delete(c.open[inst], int32(num))
		}
	}
}

// ends is the number of jobs with an end line; any goroutine may call it.
func (c *collector) ends() int { return int(c.nEnded.Load()) }

// openOn returns the jobs started and not ended on instance name.
func (c *collector) openOn(name string) []int32 {
	i, ok := c.insts[name]
	if !ok {
		return nil
	}
	out := make([]int32, 0, len(c.open[i]))
	for n := range c.open[i] {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// interval is one attempt: from its start line to its end line, or to the
// reaping of its killed process.
type interval struct {
	num        int32
	inst       int16
	start, end int64
}

// intervals pairs the events into attempts; an attempt left open on a
// process killed (reaped at cut[name]) ends there, one left open elsewhere
// ends at the end of time.
func (c *collector) intervals(cut map[string]int64) []interval {
	type key struct {
		inst int16
		num  int32
	}
	opened := map[key][]int64{}
	var out []interval
	for _, e := range c.events {
		k := key{e.inst, e.num}
		if e.start {
			opened[k] = append(opened[k], e.ts)
			continue
		}
		if s := opened[k]; len(s) > 0 {
			out = append(out, interval{e.num, e.inst, s[0], e.ts})
			opened[k] = s[1:]
		}
	}
	for k, ss := range opened {
		end := int64(1<<62 - 1)
		if t, ok := cut[c.names[k.inst]]; ok {
			end = t
		}
		for _, s := range ss {
			out = append(out, interval{k.num, k.inst, s, end})
		}
	}
	return out
}

// peakAndOverlaps replays the attempts in time order (an end before a
// start at one instant): the most running at once, and the starts of a
// job while another of the same resource (res(num)) ran, when res is set.
func peakAndOverlaps(ivs []interval, res func(int32) int) (peak, overlaps int) {
	type point struct {
		ts    int64
		delta int
		num   int32
	}
	pts := make([]point, 0, 2*len(ivs))
	for _, iv := range ivs {
		pts = append(pts, point{iv.start, 1, iv.num}, point{iv.end, -1, iv.num})
	}
	slices.SortFunc(pts, func(a, b point) int {
		if a.ts != b.ts {
			if a.ts < b.ts {
				return -1
			}
			return 1
		}
		return a.delta - b.delta
	})
	running := 0
	byRes := map[int]int{}
	for _, p := range pts {
		running += p.delta
		peak = max(peak, running)
		if res == nil {
			continue
		}
		r := res(p.num)
		if p.delta > 0 && byRes[r] > 0 {
			overlaps++
		}
		byRes[r] += p.delta
	}
	return peak, overlaps
}
