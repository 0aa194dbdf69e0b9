package workers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched/policy"
)

func types(ts ...string) []policy.JobType {
	out := make([]policy.JobType, len(ts))
	for i, t := range ts {
		out[i] = policy.JobType(t)
	}
	return out
}

func name(s *Slot) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%s/%d", s.Worker, s.Index)
}

// TestSpecialistChoice is spec 3's example: a PDF job goes to the slot
// that takes only PDF, leaving the versatile slots for Excel and Index.
func TestSpecialistChoice(t *testing.T) {
	p := New()
	if _, err := p.Add("versatile", [][]policy.JobType{types("pdf", "excel", "index"), types("pdf", "excel")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Add("specialist", [][]policy.JobType{types("pdf")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, t := range types("pdf", "index", "pdf", "excel", "pdf") {
		got = append(got, string(t)+"→"+name(p.Acquire(t, nil)))
	}
	want := []string{"pdf→specialist/0", "index→versatile/0", "pdf→versatile/1", "excel→none", "pdf→none"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
}

// TestTiesGoToEarliestRegistered: among slots that take as many types,
// the earliest registered is chosen, whatever order they freed in.
func TestTiesGoToEarliestRegistered(t *testing.T) {
	p := New()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := p.Add(id, [][]policy.JobType{types("x", "y")}); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := p.Acquire("x", 1), p.Acquire("y", 2), p.Acquire("x", 3)
	if got := []string{name(a), name(b), name(c)}; !cmp.Equal(got, []string{"a/0", "b/0", "c/0"}) {
		t.Fatalf("acquired %v", got)
	}
	p.Release(c)
	p.Release(a)
	p.Release(b)
	if got := name(p.Acquire("y", 4)); got != "a/0" {
		t.Errorf("after releases in order c, a, b: got %s, want a/0", got)
	}
}

// TestCountsPerType follows Free and Total through acquisitions, releases
// and a worker's removal.
func TestCountsPerType(t *testing.T) {
	p := New()
	p.Add("w1", [][]policy.JobType{types("x"), types("x", "y")})
	p.Add("w2", [][]policy.JobType{types("y")})
	type counts struct{ FreeX, FreeY, TotalX, TotalY int }
	at := func() counts { return counts{p.Free("x"), p.Free("y"), p.Total("x"), p.Total("y")} }
	var got []counts
	got = append(got, at())
	s := p.Acquire("y", "job") // the specialist w2/0
	got = append(got, at())
	s2 := p.Acquire("y", "job2") // then w1/1, which takes x too
	got = append(got, at())
	p.Release(s)
	got = append(got, at())
	p.Remove("w1") // w1/1 is busy: lost
	got = append(got, at())
	if !s2.Lost() || s.Lost() {
		t.Errorf("Lost: removed busy slot %v, other %v", s2.Lost(), s.Lost())
	}
	if p.Release(s2) {
		t.Error("Release of a lost slot reported true")
	}
	got = append(got, at())
	want := []counts{{2, 2, 2, 2}, {2, 1, 2, 2}, {1, 0, 2, 2}, {1, 1, 2, 2}, {0, 1, 0, 1}, {0, 1, 0, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestAddRefusesBadSpecs(t *testing.T) {
	p := New()
	if _, err := p.Add("w", [][]policy.JobType{types("x")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		slots [][]policy.JobType
		want  error
		msg   string
	}{
		{"w", [][]policy.JobType{types("x")}, ErrDuplicateWorker, `fairsched: worker already registered: "w"`},
		{"", [][]policy.JobType{types("x")}, policy.ErrInvalidConfig, `fairsched: invalid config: WorkerSpec.ID = "": must not be empty`},
		{"v", nil, policy.ErrInvalidConfig, `fairsched: invalid config: WorkerSpec{ID: "v"}.Slots = []: must hold at least one slot`},
		{"v", [][]policy.JobType{types("x"), {}}, policy.ErrInvalidConfig, `fairsched: invalid config: WorkerSpec{ID: "v"}.Slots[1].Types = []: must name at least one job type`},
		{"v", [][]policy.JobType{types("x", "y", "x")}, policy.ErrInvalidConfig, `fairsched: invalid config: WorkerSpec{ID: "v"}.Slots[0].Types = x: is listed twice`},
	} {
		_, err := p.Add(tc.id, tc.slots)
		if !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("Add(%q, %v) = %v, want %q", tc.id, tc.slots, err, tc.msg)
		}
	}
	if p.Len() != 1 || p.Total("x") != 1 {
		t.Errorf("a refused Add changed the pool: %d workers, %d slots for x", p.Len(), p.Total("x"))
	}
	if _, err := p.Remove("nobody"); !errors.Is(err, ErrUnknownWorker) {
		t.Errorf("Remove(nobody) = %v, want ErrUnknownWorker", err)
	}
}

// BenchmarkAcquireRelease measures choosing a slot among 1,000 over 50
// types, each slot taking 1 to 3 types.
func BenchmarkAcquireRelease(b *testing.B) {
	p := New()
	for w := range 250 {
		var slots [][]policy.JobType
		for s := range 4 {
			n := 1 + (w+s)%3
			var ts []policy.JobType
			for k := range n {
				ts = append(ts, policy.JobType(fmt.Sprint("t", (w*4+s+k*17)%50)))
			}
			slots = append(slots, ts)
		}
		p.Add(fmt.Sprint("w", w), slots)
	}
	names := make([]policy.JobType, 50)
	for i := range names {
		names[i] = policy.JobType(fmt.Sprint("t", i))
	}
	b.ResetTimer()
	for i := range b.N {
		s := p.Acquire(names[i%50], i)
		p.Release(s)
	}
}
