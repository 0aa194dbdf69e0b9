package metrics_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/metrics"
)

// A scheduler's metrics served on /metrics.
func Example() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(context.Background())

	reg := prometheus.NewRegistry()
	c, err := metrics.New(s)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // before s.Close: deferred calls run last first
	reg.MustRegister(c)
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	// ... register job types, serve requests:
	// log.Fatal(http.ListenAndServe(":9090", nil))
}

// Counting a few jobs under a namespace of one's own. Closing the scheduler
// ends its event stream after the last event, and closing the collector then
// waits until every event is recorded.
func ExampleNew() {
	s, err := fairsched.New()
	if err != nil {
		log.Fatal(err)
	}
	if err := s.RegisterType("clone", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
		log.Fatal(err)
	}
	c, err := metrics.New(s, metrics.WithNamespace("git_proxy"), metrics.WithBuckets([]float64{0.1, 1, 10}))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, repo := range []string{"linux", "git", "go"} {
		err := s.RunSync(ctx, "clone", repo, "10.0.0.1", func(context.Context) error { return nil })
		if err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		log.Fatal(err)
	}
	c.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "git_proxy_admitted_total", "git_proxy_completed_total":
			for _, m := range mf.GetMetric() {
				fmt.Printf("%s{type=%q} %v\n", mf.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
			}
		case "git_proxy_queue_wait_seconds":
			for _, m := range mf.GetMetric() {
				fmt.Printf("%s_count %d\n", mf.GetName(), m.GetHistogram().GetSampleCount())
			}
		}
	}
	// Output:
	// git_proxy_admitted_total{type="clone"} 3
	// git_proxy_completed_total{type="clone"} 3
	// git_proxy_queue_wait_seconds_count 3
}
