package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/cluster"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// TestIncrementalReadsMissNothing: a grant whose transaction began before
// another's but commits after it, read after the other, is read on the
// next call; and with grants and ends written in batches while readers
// read from their cursors, every grant and every end is read exactly once.
func TestIncrementalReadsMissNothing(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	st := open(t, url)
	defer st.Close()
	ctx := context.Background()
	const n = 400
	var ops []fairsched.JobOp
	for seq := uint64(1); seq <= n; seq++ {
		ops = append(ops, fairsched.JobOp{Put: &fairsched.JobRecord{Seq: seq, Type: "t", ID: fmt.Sprint("j", seq), EnqueuedAt: time.Unix(0, 0).UTC()}})
	}
	if err := st.ApplyJobs(ops); err != nil {
		t.Fatal(err)
	}
	epoch, ok, err := st.Acquire(ctx, "d", "leader", time.Minute)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}

	// The late commit: job 1's grant takes its transaction first and
	// commits last.
	tx := openTx(t, url)
	if _, err := tx.Exec(ctx, `UPDATE fairsched_jobs SET running = true, instance = 'i1', attempt = 1, grant_xid = pg_current_xact_id() WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GrantJobs(ctx, "d", epoch, []pgstore.Grant{{Seq: 2, Instance: "i1", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	var cur cluster.ReadCursor
	gs, cur, err := st.GrantsSince(ctx, "i1", cur)
	if err != nil || len(gs) != 1 || gs[0].Seq != 2 {
		t.Fatalf("first read: %+v %v, want job 2", gs, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	gs, cur, err = st.GrantsSince(ctx, "i1", cur)
	if err != nil || len(gs) != 1 || gs[0].Seq != 1 {
		t.Fatalf("after the late commit: %+v %v, want job 1 alone", gs, err)
	}
	if gs, _, err = st.GrantsSince(ctx, "i1", cur); err != nil || len(gs) != 0 {
		t.Fatalf("read again: %+v %v, want nothing", gs, err)
	}

	// Grants in batches by several writers, ends reported in batches, while
	// a reader of each reads from its cursor.
	seqs := rand.Perm(n - 2)
	var writers, readers sync.WaitGroup
	var mu sync.Mutex
	granted := map[uint64]int{1: 1, 2: 1}
	ended := map[uint64]int{}
	for w := range 3 {
		writers.Go(func() {
			for i := w; i < len(seqs); {
				var batch []pgstore.Grant
				for k := rand.IntN(8) + 1; k > 0 && i < len(seqs); k-- {
					batch = append(batch, pgstore.Grant{Seq: uint64(seqs[i] + 3), Instance: "i1", Attempt: 1})
					i += 3
				}
				if _, err := st.GrantJobs(ctx, "d", epoch, batch); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for w := range 3 { // the ends, while grants are written
		writers.Go(func() {
			for i := w; i < len(seqs); {
				var ends []pgstore.End
				for k := rand.IntN(8) + 1; k > 0 && i < len(seqs); k-- {
					ends = append(ends, pgstore.End{Seq: uint64(seqs[i] + 3), Instance: "i1", Attempt: 1})
					i += 3
				}
				for {
					// Reported once its grant is there (it may not be yet).
					n, err := st.ReportEnds(ctx, ends)
					if err != nil {
						t.Error(err)
						return
					}
					if n == len(ends) {
						break
					}
					// The next round trip is the wait.
					ends = slices.DeleteFunc(ends, func(e pgstore.End) bool {
						rows, err := st.Rows(ctx, []uint64{e.Seq})
						return err == nil && len(rows) == 1 && rows[0].Ended
					})
				}
			}
		})
	}
	stop := make(chan struct{})
	read := func(f func() (int, error)) {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					if _, err := f(); err != nil { // the last, after every commit
						t.Error(err)
					}
					return
				default:
				}
				if _, err := f(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	read(func() (int, error) {
		var gs []pgstore.Grant
		var err error
		gs, cur, err = st.GrantsSince(ctx, "i1", cur)
		mu.Lock()
		defer mu.Unlock()
		for _, g := range gs {
			granted[g.Seq]++
		}
		return len(gs), err
	})
	var endCur cluster.ReadCursor
	read(func() (int, error) {
		rows, next, err := st.EndsSince(ctx, endCur)
		endCur = next
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rows {
			if r.Running || !r.Ended || r.End.Attempt != 1 || r.End.Instance != "i1" {
				return 0, fmt.Errorf("end of job %d read as %+v", r.Seq, r)
			}
			ended[r.Seq]++
		}
		return len(rows), err
	})
	writers.Wait()
	close(stop)
	readers.Wait()
	// A grant may have ended before the reader saw it (its row no longer
	// running: its executor would not run it), never read twice; every
	// end is read once.
	for seq := uint64(3); seq <= n; seq++ {
		if ended[seq] != 1 {
			t.Errorf("job %d: its end read %d times, want 1", seq, ended[seq])
		}
		if granted[seq] > 1 {
			t.Errorf("job %d: its grant read %d times, want at most 1", seq, granted[seq])
		}
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if granted[seq] != 1 {
			t.Errorf("job %d: its grant read %d times, want 1", seq, granted[seq])
		}
	}
}
