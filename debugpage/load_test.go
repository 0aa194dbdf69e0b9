package debugpage_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/debugpage"
)

// TestLoadShown: the page's header shows the load signal's last reading
// and that it is overloaded; the held job says why it waits.
func TestLoadShown(t *testing.T) {
	read := make(chan struct{}, 1)
	var clear atomic.Bool
	signal := fairsched.LoadFunc(func(fairsched.LoadState) (float64, error) {
		select {
		case read <- struct{}{}:
		default:
		}
		if clear.Load() {
			return 0.1, nil
		}
		return 0.95, nil
	})
	s, mock, block := newScheduler(t, fairsched.WithMaxConcurrency(2),
		fairsched.WithLoadSignal(fairsched.LoadConfig{Signal: signal, Every: time.Second}))
	if err := s.RegisterType("batch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
		t.Fatal(err)
	}
	mock.Add(time.Second) // the first reading: overloaded, admissions held
	<-read
	if err := s.Submit("batch", "b0", block); err != nil {
		t.Fatal(err)
	}
	_, page := get(t, debugpage.Handler(s), http.MethodGet, "/")
	header := visible(page[strings.Index(page, "<header>"):strings.Index(page, "</header>")])
	if !strings.Contains(header, "load 95 % (overloaded at 90 %, defer) · overloaded") {
		t.Errorf("header %q lacks the load", header)
	}
	if rows := rowText(t, page, "pending"); len(rows) != 1 || !strings.Contains(rows[0], "overloaded") {
		t.Errorf("pending rows %q, want b0 waiting for overloaded", rows)
	}
	clear.Store(true) // b0 runs, and Close (which waits for it) returns
	mock.Add(time.Second)
	<-read
}
