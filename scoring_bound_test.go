package fairsched_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fairsched/fairsched"
)

// TestHugeScoreWeightsStayFinite: a weight past MaxScoreWeight is refused
// with ErrInvalidConfig (1e300 gave +Inf scores and a snapshot that was no
// longer JSON); at the bound, with the largest priority and a long wait, the
// snapshot's scores are finite and it encodes.
func TestHugeScoreWeightsStayFinite(t *testing.T) {
	if _, err := fairsched.New(fairsched.WithScoring(fairsched.ScoreConfig{PriorityWeight: 1e300})); !errors.Is(err, fairsched.ErrInvalidConfig) {
		t.Errorf("New with PriorityWeight 1e300 = %v; want ErrInvalidConfig", err)
	}
	synctest.Test(t, func(t *testing.T) {
		max := fairsched.MaxScoreWeight
		s, err := fairsched.New(fairsched.WithMaxConcurrency(1), fairsched.WithIdleExpiry(200*365*24*time.Hour), fairsched.WithScoring(fairsched.ScoreConfig{
			PriorityWeight: max, AgeWeight: max, RarityBonus: max, OnDemandBonus: max, OnDemandAgeWeight: max}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		if err := s.RegisterType("t", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: math.MaxInt32}); err != nil {
			t.Fatal(err)
		}
		hold := newBlocker()
		if err := s.Submit("t", "hold", hold.fn); err != nil {
			t.Fatal(err)
		}
		if err := s.Submit("t", "waits", func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * 365 * 24 * time.Hour) // a century
		snap := snapshot(t, s)
		if len(snap.Pending) != 1 || math.IsInf(snap.Pending[0].Score, 0) || math.IsNaN(snap.Pending[0].Score) {
			t.Fatalf("pending %+v; want one job with a finite score", snap.Pending)
		}
		if _, err := json.Marshal(snap); err != nil {
			t.Errorf("snapshot does not encode: %v", err)
		}
		hold.release <- nil
	})
}
