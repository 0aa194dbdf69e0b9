// Package benchratio lets a benchmark report its time as a ratio to a
// baseline measured earlier in the same run (`go test -bench -count N`), so
// that a comparison survives a noisy machine: both sides see the same noise.
package benchratio

import (
	"slices"
	"testing"
	"time"
)

// Book keeps ns/op per named benchmark across -count repetitions. It is for
// benchmarks, which run one at a time.
type Book struct {
	// MinElapsed leaves out the short runs a benchmark makes while b.N
	// ramps up.
	MinElapsed time.Duration
	ns         map[string][]float64
}

// Record returns b's ns/op so far and, when name is not empty and the run
// was long enough, keeps it under name.
func (bk *Book) Record(b *testing.B, name string) float64 {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if name != "" && b.Elapsed() >= bk.MinElapsed {
		if bk.ns == nil {
			bk.ns = map[string][]float64{}
		}
		bk.ns[name] = append(bk.ns[name], ns)
	}
	return ns
}

// Median returns the median ns/op kept under name, or 0 when there is none.
func (bk *Book) Median(name string) float64 {
	v := slices.Clone(bk.ns[name])
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
