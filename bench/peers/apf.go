package peers

import (
	"context"
	"errors"
	"fmt"

	fq "k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing"
	"k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/eventclock"
	"k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset"
	"k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	"k8s.io/apiserver/pkg/util/flowcontrol/request"
	"k8s.io/utils/clock"
)

// APF is one priority level of Kubernetes API Priority and Fairness: its
// queue set (fair queuing over shuffle-sharded queues), with the real
// clock. Each flow is one flow distinguisher, hashed to its hand of queues.
type APF struct {
	qs      fq.QueueSet
	hashes  []uint64
	names   []string
	workEst request.WorkEstimate
}

// errRejected: the queue set turned a request away (its queues are full).
var errRejected = errors.New("peers: APF rejected the request")

// NewAPF makes a queue set of the given concurrency for flows flows: 64
// queues, hands of 8, queues long enough that nothing is rejected.
func NewAPF(concurrency, flows int) (*APF, error) {
	metrics.Register()
	clk := eventclock.Real{}
	cfg := fq.QueuingConfig{Name: "bench", DesiredNumQueues: 64, QueueLengthLimit: 1 << 20, HandSize: 8}
	qsc, err := queueset.NewQueueSetFactory(clk).BeginConstruction(cfg,
		metrics.RatioedGaugeVecPhasedElementPair(metrics.PriorityLevelConcurrencyGaugeVec, 1, 1, []string{"bench"}),
		metrics.PriorityLevelExecutionSeatsGaugeVec.NewForLabelValuesSafe(0, 1, []string{"bench"}),
		fq.NewNamedIntegrator(clock.RealClock{}, "bench"))
	if err != nil {
		return nil, err
	}
	a := &APF{qs: qsc.Complete(fq.DispatchingConfig{ConcurrencyLimit: concurrency}),
		workEst: request.WorkEstimate{InitialSeats: 1}}
	for f := range flows {
		a.names = append(a.names, fmt.Sprint("flow-", f))
		a.hashes = append(a.hashes, hash(uint64(f)))
	}
	return a, nil
}

// hash spreads flow numbers over the 64-bit space the shuffle sharding
// deals from (splitmix64's finaliser), as a hash of a user name would.
func hash(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Do starts the request in flow's queues and runs fn once it is dispatched.
func (a *APF) Do(ctx context.Context, flow int, fn func()) error {
	req, _ := a.qs.StartRequest(ctx, &a.workEst, a.hashes[flow], a.names[flow], "bench", nil, nil, nil)
	if req == nil {
		return errRejected
	}
	req.Finish(fn)
	return nil
}

// Close does nothing: a queue set holds no goroutine of its own.
func (a *APF) Close() {}
