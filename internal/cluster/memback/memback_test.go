package memback_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/cluster/backendtest"
	"github.com/fairsched/fairsched/internal/cluster/memback"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func job(id string) *core.JobRecord {
	return &core.JobRecord{Type: "t", ID: id, EnqueuedAt: time.Unix(1, 0)}
}

// TestLeaseFencesInVirtualTime: a lease expires by the bubble's clock and
// a write under it is then fenced.
func TestLeaseFencesInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		ctx := context.Background()
		e1, ok, err := b.Acquire(ctx, "d", "a", time.Second)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if _, ok, _ := b.Acquire(ctx, "d", "b", time.Second); ok {
			t.Fatal("b took a live lease")
		}
		time.Sleep(2 * time.Second) // the bubble's virtual time: the lease expires
		if _, err := b.Revoke(ctx, "d", e1, "x"); !errors.Is(err, cluster.ErrFenced) {
			t.Fatalf("expired lease: %v, want ErrFenced", err)
		}
		e2, ok, _ := b.Acquire(ctx, "d", "b", time.Second)
		if !ok || e2 != e1+1 {
			t.Fatalf("epoch %d, want %d", e2, e1+1)
		}
	})
}

// TestGrantGuards: a duplicate pending (type, id) is refused, and a
// second running grant of an exclusive key refuses the whole turn.
func TestGrantGuards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memback.New()
		defer b.Close()
		ctx := context.Background()
		j1, j2 := job("1"), job("2")
		if err := b.Insert(ctx, j1); err != nil {
			t.Fatal(err)
		}
		if err := b.Insert(ctx, job("1")); !errors.Is(err, machine.ErrDuplicateJob) {
			t.Fatalf("duplicate: %v", err)
		}
		_ = b.Insert(ctx, j2)
		e, _, _ := b.Acquire(ctx, "d", "a", time.Minute)
		_, _, err := b.Grant(ctx, "d", e, nil, nil, []cluster.Grant{{Seq: j1.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"},
			{Seq: j2.Seq, Instance: "i", Attempt: 1, ConflictKey: "g/k"}})
		if !errors.Is(err, cluster.ErrDoubleAdmission) {
			t.Fatalf("double admission: %v", err)
		}
		if g, _ := b.Granted(ctx, "i"); len(g) != 0 {
			t.Fatalf("a refused turn wrote %d grants", len(g))
		}
		b.Fail("Granted", 1, machine.ErrRecordRefused)
		if _, err := b.Granted(ctx, "i"); !errors.Is(err, machine.ErrRecordRefused) {
			t.Fatalf("injected: %v", err)
		}
	})
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) cluster.Backend {
		b := memback.New()
		t.Cleanup(b.Close)
		return b
	}, backendtest.Deafen(func(_ *testing.T, b cluster.Backend) { b.(*memback.Backend).Deafen() }))
}
