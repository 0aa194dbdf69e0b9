package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const work fairsched.JobType = "work"

var workCfg = fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}

// TestRestart: a scheduler closed and started again on the same store keeps
// its learned estimates, and a periodic job that ran 3 seconds before the
// restart waits out the rest of its 10-second interval instead of running
// at once.
func TestRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		t0 := mock.Now()
		var sweeps []time.Duration
		sweep := func(context.Context) error { sweeps = append(sweeps, mock.Now().Sub(t0)); return nil }

		// First run: learn an estimate, run the periodic job once.
		st := open(t, path)
		s := start(t, mock, st)
		err := s.RunSync(context.Background(), work, "repo", "user", func(context.Context) error {
			mock.Add(4 * time.Second) // the job takes 4s
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SubmitPeriodic(work, "sweep", 10*time.Second, sweep); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		learned := estimates(t, s)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}

		// Restart 3s later.
		mock.Add(3 * time.Second)
		st = open(t, path)
		defer st.Close()
		s = start(t, mock, st)
		defer s.Close(context.Background())
		if diff := cmp.Diff(learned, estimates(t, s)); diff != "" || len(learned) == 0 {
			t.Errorf("estimates after restart (-before +after):\n%s", diff)
		}
		if _, err := s.SubmitPeriodic(work, "sweep", 10*time.Second, sweep); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mock.Add(10 * time.Second) // t0+17s: the sweep came due at t0+14s (4s + 10s)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{4 * time.Second, 14 * time.Second}, sweeps); diff != "" {
			t.Errorf("sweeps (-want +got):\n%s", diff)
		}
	})
}

// TestUnreadableStore: a file that is not a store, or a store whose state
// does not decode, is a clear error, and the file is left as it was.
func TestUnreadableStore(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(garbage)
	if _, err := boltstore.Open(garbage); err == nil {
		t.Error("Open of a file that is not a store succeeded")
	}
	if after, _ := os.ReadFile(garbage); !bytes.Equal(before, after) {
		t.Error("a failed Open changed the file")
	}

	bad := filepath.Join(dir, "bad.db")
	db, err := bolt.Open(bad, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("fairsched"))
		if err != nil {
			return err
		}
		return b.Put([]byte("state"), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ = os.ReadFile(bad)
	st := open(t, bad)
	s, err := fairsched.New(fairsched.WithStore(st))
	if !errors.Is(err, fairsched.ErrStore) || s != nil {
		t.Errorf("New on an undecodable store = %v, %v; want ErrStore", s, err)
	}
	st.Close()
	if after, _ := os.ReadFile(bad); !bytes.Equal(before, after) {
		t.Error("a failed New changed the store")
	}
}

func open(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func start(t *testing.T, c clock.Clock, st fairsched.Store) *fairsched.Scheduler {
	t.Helper()
	s, err := fairsched.New(fairsched.WithClock(c), fairsched.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterType(work, workCfg); err != nil {
		t.Fatal(err)
	}
	return s
}

func estimates(t *testing.T, s *fairsched.Scheduler) []fairsched.CostEstimate {
	t.Helper()
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap.CostEstimates
}
