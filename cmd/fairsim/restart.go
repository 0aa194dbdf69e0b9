package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
)

// restartDemo shows durable jobs surviving a restart: a scheduler on a
// bbolt file takes five mails from two tenants, sends two, and stops
// abruptly while the third is being sent; a new scheduler on the same
// file restores the rest — the interrupted one with its attempt counted —
// and sends them once its handler is registered. One slot, so the order
// is the scheduler's, the same every run.
func restartDemo(w io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "fairsim-restart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mail.db")
	ctx := context.Background()
	start := func() (*fairsched.Scheduler, *boltstore.Store, error) {
		st, err := boltstore.Open(path)
		if err != nil {
			return nil, nil, err
		}
		s, err := fairsched.New(fairsched.WithStore(st), fairsched.WithMaxConcurrency(1))
		if err == nil {
			err = s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})
		}
		if err != nil {
			st.Close()
			return nil, nil, err
		}
		return s, st, nil
	}

	fmt.Fprintln(w, "Durable jobs across a restart (one slot, tenants alice and bob):")
	s, st, err := start()
	if err != nil {
		return err
	}
	for i, key := range []string{"alice", "alice", "alice", "bob", "bob"} {
		if err := s.Enqueue(ctx, "mail", fmt.Sprintf("mail-%d", i+1), nil, fairsched.WithFairnessKey(key)); err != nil {
			return err
		}
	}
	// All five are durable; the handler comes now, so the order is the
	// scheduler's: the tenants take turns.
	third := make(chan struct{})
	sent := 0
	if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
		if sent == 2 { // the third: the process stops while it is being sent
			fmt.Fprintf(w, "  before: sending %s for %s (attempt %d) when the process stops\n", j.ID, j.FairnessKey, j.Attempt)
			close(third)
			<-ctx.Done()
			return ctx.Err()
		}
		sent++
		fmt.Fprintf(w, "  before: sent %s for %s (attempt %d)\n", j.ID, j.FairnessKey, j.Attempt)
		return nil
	}); err != nil {
		return err
	}
	<-third
	stop, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Close(stop); !errors.Is(err, context.Canceled) {
		return fmt.Errorf("an abrupt Close returned %v", err)
	}
	_ = s.Close(ctx) // wait until it has stopped
	if err := st.Close(); err != nil {
		return err
	}

	s, st, err = start()
	if err != nil {
		return err
	}
	defer st.Close()
	defer s.Close(ctx)
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  restart: %d mails restored, waiting for their handler (reason %s)\n", snap.PendingTotal, snap.Pending[0].Reason)
	done := make(chan struct{}, snap.PendingTotal)
	if err := s.RegisterHandler("mail", func(ctx context.Context, j fairsched.Job) error {
		fmt.Fprintf(w, "  after:  sent %s for %s (attempt %d)\n", j.ID, j.FairnessKey, j.Attempt)
		done <- struct{}{}
		return nil
	}); err != nil {
		return err
	}
	for range snap.PendingTotal {
		<-done
	}
	if err := s.Close(ctx); err != nil {
		return err
	}
	left := 0
	if err := st.LoadJobs(func(fairsched.JobRecord) error { left++; return nil }); err != nil {
		return err
	}
	fmt.Fprintf(w, "  every mail sent once, the interrupted one twice; %d records left in the store\n", left)
	return nil
}
