package fairsched_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// ExampleOverloadRefuse: a load signal at or above its threshold (0.9 by
// default) makes every new call return a *RefusalError matching
// ErrOverloaded, with nothing queued, until a reading falls below it. The
// signal here is your own (LoadFunc); CPUSignal, QueueLengthSignal and
// WorkerUtilisationSignal are built in. In cluster mode the leader reads
// its signal for the domain and every instance refuses on the leader's
// last published verdict.
func ExampleOverloadRefuse() {
	read := make(chan float64, 1)
	signal := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
		const cpu = 0.95 // e.g. the host's CPU, from your monitoring
		select {
		case read <- cpu: // tell the example the first reading was taken
		default:
		}
		return cpu, nil
	})
	s, _ := fairsched.New(fairsched.WithLoadSignal(fairsched.LoadConfig{
		Signal: signal, Every: 10 * time.Millisecond, Action: fairsched.OverloadRefuse,
	}))
	defer s.Close(context.Background())
	_ = s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1})

	fmt.Println("reading:", <-read)
	snap, _ := s.Snapshot(context.Background()) // the owner has applied the reading
	fmt.Println("overloaded:", snap.Load.Overloaded)

	err := s.Submit("render", "r1", func(context.Context) error { return nil })
	var refusal *fairsched.RefusalError
	if errors.As(err, &refusal) {
		fmt.Println("refused:", errors.Is(err, fairsched.ErrOverloaded), refusal.Reason)
	}
	// Output:
	// reading: 0.95
	// overloaded: true
	// refused: true overloaded
}
