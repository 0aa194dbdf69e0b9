// Package debugpage serves a page that shows why a fairsched.Scheduler's jobs
// wait: its running jobs, its pending jobs in priority and fair-share order
// (the order dispatch considers them; it skips those a rule holds), each
// with the narrowest rule that holds it and every other one, its groups,
// tiers, tenants (with hierarchical fair share: each one's weight, fair
// share, keys with work, running and pending jobs), fairness keys and
// worker slots.
// Mount it like net/http/pprof:
//
//	http.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched", debugpage.Handler(s)))
//
// GET /debug/fairsched/ is then the HTML page and
// GET /debug/fairsched/snapshot.json (or /debug/fairsched/?format=json) the
// scheduler's Snapshot as JSON, every duration both in nanoseconds and as
// text (see The JSON below). Both list the first 100 pending jobs
// (?rows=N, ?rows=all, WithMaxRows) and count the rest. The page is one
// self-contained document — embedded CSS, no script, no external asset —
// that refreshes itself every two seconds and reads on a phone as well as
// on a desktop.
//
// In cluster mode (fairsched.WithCluster) the page shows the cluster too:
// its domain, the leader and its epoch, whether this instance leads, and —
// on the leader, which decides for every instance and so alone lists the
// jobs — the instances with their slots, handlers and running jobs, and
// the instance each running job runs on. A follower's page names the
// leader whose page to read.
//
// The page shows what the scheduler's state says, including job ids and
// fairness keys (client addresses, tenants): mount it where only operators
// reach it, as one would pprof.
//
// # The JSON
//
// The JSON is the Snapshot's own encoding — its fields, names, order and
// omissions, so that it decodes into a fairsched.Snapshot — with additions
// for the people who read it. Every duration is there twice: as a number
// of nanoseconds (a time.Duration, under the Snapshot's field name:
// default_cost, estimated_cost, grace_period, MinBackoff, …) and right
// after it as Go writes it (time.Duration.String), under the same name
// with a "_text" suffix. A map of durations has a sibling map of strings.
// Each pending job also has waited, the time since it was submitted, and
// each running job running_for, the time since it started, both at the
// snapshot's time; pending_listed and pending_more follow pending_total;
// and dead_jobs, at the end, lists the dead durable jobs if there are any:
//
//	"pending": [
//	  {
//	    "type": "clone",
//	    "id": "git.git",
//	    …
//	    "submitted": "2026-11-22T09:00:30Z",
//	    "waited": 1500000000,
//	    "waited_text": "1.5s",
//	    "reasons": ["type_limit"],
//	    "reason": "type_limit"
//	  },
//	  …
//	],
//	"accumulated_cost": {"10.0.0.7": 10000000000, "10.0.0.9": 90000000000},
//	"accumulated_cost_text": {"10.0.0.7": "10s", "10.0.0.9": "1m30s"},
//	…
//	"pending_total": 12445,
//	"pending_listed": 100,
//	"pending_more": 12345,
package debugpage

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/fairsched/fairsched"
)

// DefaultRefresh is the page's auto-refresh interval unless WithRefresh
// changes it.
const DefaultRefresh = 2 * time.Second

// DefaultMaxRows is how many rows of a long list (pending and running jobs,
// fairness keys) the page shows unless WithMaxRows or the query parameter
// rows changes it; a "+N more" line counts the rest. The scheduler copies
// only the pending jobs shown (Snapshot with SnapshotRows), and the JSON
// lists the same ones, with pending_total, pending_listed and
// pending_more. When they are not all, the page's summary of reasons and
// the pending counts of its tiers, types and keys count the listed ones,
// and say so.
const DefaultMaxRows = 100

// Option configures Handler.
type Option interface{ apply(*config) }

type config struct {
	refresh time.Duration
	title   string
	maxRows int
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRefresh sets the page's auto-refresh interval (a meta refresh, no
// script), rounded up to whole seconds; 0 or less disables it. Default 2s.
func WithRefresh(d time.Duration) Option {
	return optionFunc(func(c *config) { c.refresh = d })
}

// WithTitle sets the page's title and heading. Default "fairsched".
func WithTitle(t string) Option {
	return optionFunc(func(c *config) { c.title = t })
}

// WithMaxRows sets how many rows of each long list (pending jobs, running
// jobs, fairness keys) the page and its JSON show before a "+N more" line;
// 0 or less shows every row (at a million pending jobs, a copy of all of
// them on every refresh). A request's ?rows=N or ?rows=all overrides it.
// Default 100.
func WithMaxRows(n int) Option {
	return optionFunc(func(c *config) { c.maxRows = n })
}

// Handler returns a handler for s, mountable like /debug/pprof with
// http.StripPrefix: GET <prefix>/ is an HTML page, GET
// <prefix>/snapshot.json (or <prefix>/?format=json) the Snapshot as JSON.
// HEAD is answered as GET without a body; other methods get 405, other paths
// 404, and a snapshot the scheduler cannot give (it is closed) 503. It
// panics if s is nil.
func Handler(s *fairsched.Scheduler, opts ...Option) http.Handler {
	if s == nil {
		panic("debugpage: Handler(nil)")
	}
	c := config{refresh: DefaultRefresh, title: "fairsched", maxRows: DefaultMaxRows}
	for _, o := range opts {
		o.apply(&c)
	}
	return &handler{s: s, cfg: c}
}

type handler struct {
	s   *fairsched.Scheduler
	cfg config
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var asJSON bool
	switch r.URL.Path {
	case "/", "":
		switch f := r.URL.Query().Get("format"); f {
		case "", "html":
		case "json":
			asJSON = true
		default:
			http.Error(w, "debugpage: unknown format "+quote(f)+": use format=json or format=html", http.StatusBadRequest)
			return
		}
	case "/snapshot.json":
		asJSON = true
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "debugpage: method "+quote(r.Method)+" not allowed: use GET", http.StatusMethodNotAllowed)
		return
	}
	cfg := h.cfg
	switch q := r.URL.Query().Get("rows"); {
	case q == "":
	case q == "all":
		cfg.maxRows = 0
	default:
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			http.Error(w, "debugpage: rows="+quote(q)+": want a positive number or all", http.StatusBadRequest)
			return
		}
		cfg.maxRows = n
	}
	rows := fairsched.SnapshotAll()
	if cfg.maxRows > 0 {
		rows = fairsched.SnapshotRows(cfg.maxRows)
	}
	snap, err := h.s.Snapshot(r.Context(), rows)
	if err != nil {
		msg := "debugpage: the scheduler gave no snapshot: " + err.Error()
		if errors.Is(err, fairsched.ErrClosed) {
			msg = "debugpage: the scheduler is closed: no snapshot to show (" + err.Error() + ")"
		}
		w.Header().Set("Retry-After", "5")
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	// Dead durable jobs, when the scheduler keeps any (no JobStore: none).
	dead, derr := h.s.DeadJobs(r.Context(), cfg.maxRows)
	if derr != nil {
		dead = nil
	}
	var (
		body []byte
		ct   string
	)
	if asJSON {
		body, err = json.MarshalIndent(jsonView(snap, dead), "", "  ")
		body = append(body, '\n')
		ct = "application/json"
	} else {
		var buf bytes.Buffer
		v := newView(snap, cfg)
		v.addDead(dead, cfg)
		err = page.Execute(&buf, v)
		body, ct = buf.Bytes(), "text/html; charset=utf-8"
	}
	if err != nil {
		http.Error(w, "debugpage: rendering: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// quote bounds and quotes a client's string for a plain-text error.
func quote(s string) string {
	const limit = 40
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
