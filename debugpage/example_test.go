package debugpage_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/debugpage"
)

// Mount the page beside net/http/pprof: /debug/fairsched/ shows why jobs
// wait, /debug/fairsched/snapshot.json gives the snapshot as JSON.
func ExampleHandler() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(8))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(context.Background())

	http.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched", debugpage.Handler(s)))

	// Or with options, on a mux of its own:
	mux := http.NewServeMux()
	mux.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched",
		debugpage.Handler(s, debugpage.WithTitle("git proxy scheduler"), debugpage.WithRefresh(5*time.Second))))
	_ = mux // http.ListenAndServe("localhost:6060", mux)
}
