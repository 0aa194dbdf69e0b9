package debugpage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/debugpage"
	"github.com/fairsched/fairsched/internal/pgtest"
	"github.com/fairsched/fairsched/pgstore"
)

// renderPage returns the page of snap.
func renderPage(t *testing.T, snap fairsched.Snapshot) string {
	t.Helper()
	var buf bytes.Buffer
	if err := debugpage.RenderSnapshot(&buf, snap); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// section returns the visible text of the section with the given id, ""
// if the page has none (as visible writes it: a tag is a space).
func section(page, id string) string {
	start := strings.Index(page, `<section id="`+id+`">`)
	if start < 0 {
		return ""
	}
	end := strings.Index(page[start:], "</section>")
	return visible(page[start : start+end])
}

// TestClusterShown: a cluster leader's page shows its domain, the leader
// and epoch, that this instance leads, the instances with their slots,
// handlers and running jobs, and each running job's instance; a
// follower's names the leader; a page outside cluster mode shows none of
// it.
func TestClusterShown(t *testing.T) {
	page := renderPage(t, debugpage.ClusterFixture())
	header := visible(page[strings.Index(page, "<header>"):strings.Index(page, "</header>")])
	for _, s := range []string{"3 running", "1 pending", "global cap 8", "instance api-1 , leader", "leader api-1 · epoch 7"} {
		if !strings.Contains(header, s) {
			t.Errorf("header %q lacks %q", header, s)
		}
	}
	if c := section(page, "cluster-section"); !strings.Contains(c, "Cluster domain git-proxy :") ||
		!strings.Contains(c, "This is instance api-1 , the leader (epoch 7): the jobs below are the whole domain's.") {
		t.Errorf("cluster section: %q", c)
	}
	if diff := cmp.Diff([]string{
		"api-1 8 0 clone, repack leader (this page)",
		"api-2 8 1 clone, repack follower",
		"api-3 4 1 repack follower",
	}, rowText(t, page, "instances")); diff != "" {
		t.Errorf("instances table (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		"clone linux 10.0.0.7 (none) 8 09:00:00 1m30s 10s — api-2",
		"repack git.git (background) (none) 4 09:01:00 30s 20s — api-3",
		"clone go.git 10.0.0.9 (none) 8 09:01:30 0s 10s — not placed yet",
	}, rowText(t, page, "running")); diff != "" {
		t.Errorf("running table (-want +got):\n%s", diff)
	}
	if !strings.Contains(page, `<th>Instance</th>`) || !strings.Contains(page, `data-label="Instance"`) {
		t.Error("the running table has no Instance column (or no label for it on a phone)")
	}

	follower := renderPage(t, debugpage.FollowerFixture())
	if c := section(follower, "cluster-section"); !strings.Contains(c,
		"This is instance api-2 , a follower: api-1 leads (epoch 7) and decides; its page lists the domain's jobs.") {
		t.Errorf("a follower's cluster section: %q", c)
	}
	if strings.Contains(follower, `<table id="instances"`) {
		t.Error("a follower's page has an instances table: only the leader counts instances")
	}
	header = visible(follower[strings.Index(follower, "<header>"):strings.Index(follower, "</header>")])
	if !strings.Contains(header, "instance api-2 leader api-1 · epoch 7") || strings.Contains(header, "api-2 , leader") {
		t.Errorf("a follower's header: %q", header)
	}
	orphan := debugpage.FollowerFixture()
	orphan.Cluster.Leader, orphan.Cluster.Epoch = "", 0
	if c := section(renderPage(t, orphan), "cluster-section"); !strings.Contains(c, "a follower: no instance holds the lease now.") {
		t.Errorf("with no leader: %q", c)
	}

	// Outside cluster mode: no cluster section, no Instance column.
	_, single := get(t, debugpage.Handler(newFixture(t).s), http.MethodGet, "/")
	if strings.Contains(single, "cluster-section") || strings.Contains(single, "<th>Instance</th>") || strings.Contains(single, "epoch") {
		t.Error("a page outside cluster mode shows cluster parts")
	}
}

// TestClusterJSON: the JSON of a cluster's snapshot is its Snapshot's
// (cluster and instances included) with the page's additions.
func TestClusterJSON(t *testing.T) {
	for name, snap := range map[string]fairsched.Snapshot{"leader": debugpage.ClusterFixture(), "follower": debugpage.FollowerFixture()} {
		body, err := debugpage.JSONView(snap)
		if err != nil {
			t.Fatal(err)
		}
		var got fairsched.Snapshot
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(snap, got); diff != "" {
			t.Errorf("%s: the JSON does not decode to the snapshot (-want +got):\n%s", name, diff)
		}
		b, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		doc := decodeOrdered(t, string(body))
		strip(doc, 0)
		if diff := cmp.Diff(decodeOrdered(t, string(b)), doc); diff != "" {
			t.Errorf("%s: the JSON without its additions differs from the Snapshot's (-want +got):\n%s", name, diff)
		}
	}
}

// TestClusterPageLive: on a real cluster of two instances over PostgreSQL
// (skipped without one), the leader's page lists both instances and the
// running job on the instance whose handler runs it, its JSON says the
// same, and the follower's page names the leader.
func TestClusterPageLive(t *testing.T) {
	url := pgtest.URL(t)
	type member struct {
		id string
		s  *fairsched.Scheduler
		// shown is how the page names it: its name and its incarnation's
		// suffix.
		shown string
	}
	running := make(chan string, 1) // the instance running the job
	release := make(chan struct{})
	var ms []member
	for _, id := range []string{"api-1", "api-2"} {
		st, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		s, err := fairsched.New(fairsched.WithMaxConcurrency(4), fairsched.WithCluster(st, fairsched.ClusterConfig{
			Domain: "git-proxy", Instance: id, Slots: 2, LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond,
			LostAfter: time.Second, Poll: 20 * time.Millisecond, ReportEvery: 5 * time.Millisecond}))
		if err != nil {
			st.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Close(ctx); err != nil {
				t.Errorf("closing %s: %v", id, err)
			}
			st.Close()
		})
		if err := s.RegisterType("clone", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 8}); err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterHandler("clone", func(ctx context.Context, j fairsched.Job) error {
			running <- id
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		inc, ok := strings.CutPrefix(snap.Cluster.Incarnation, id+"#")
		if !ok {
			t.Fatalf("%s's incarnation is %q", id, snap.Cluster.Incarnation)
		}
		ms = append(ms, member{id, s, id + " #" + inc})
	}
	t.Cleanup(func() { close(release) }) // before the Closes: cleanups run last first

	// The leader, once it counts both instances and their handlers.
	var leader, follower member
	pgtest.Eventually(t, "a leader counting both instances", func() bool {
		for i, m := range ms {
			snap, err := m.s.Snapshot(context.Background())
			if err == nil && snap.Cluster != nil && snap.Cluster.Leading && len(snap.Cluster.Instances) == 2 &&
				len(snap.Cluster.Instances[0].Types) == 1 && len(snap.Cluster.Instances[1].Types) == 1 {
				leader, follower = m, ms[1-i]
				return true
			}
		}
		return false
	})
	if err := follower.s.Enqueue(context.Background(), "clone", "linux", nil, fairsched.WithFairnessKey("10.0.0.7")); err != nil {
		t.Fatal(err)
	}
	var on string
	select {
	case on = <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start in 30 s")
	}

	h := debugpage.Handler(leader.s, debugpage.WithRefresh(0))
	var page string
	// The leader names the job's instance once it has placed it: a moment
	// after the handler may start.
	pgtest.Eventually(t, "the leader's page to show clone linux on "+on, func() bool {
		_, page = get(t, h, http.MethodGet, "/")
		rows := rowText(t, page, "running")
		return len(rows) == 1 && strings.HasSuffix(rows[0], " "+on)
	})
	instances := rowText(t, page, "instances")
	for _, m := range []member{leader, follower} {
		want := fmt.Sprintf("%s 2 %d clone ", m.shown, map[bool]int{true: 1, false: 0}[m.id == on])
		found := false
		for _, r := range instances {
			found = found || strings.HasPrefix(r, want)
		}
		if !found {
			t.Errorf("instances table %q lacks a row starting %q", instances, want)
		}
	}
	if c := section(page, "cluster-section"); !strings.Contains(c, "This is instance "+leader.shown+" , the leader (epoch 1)") {
		t.Errorf("leader's cluster section: %q", c)
	}

	_, body := get(t, h, http.MethodGet, "/snapshot.json")
	var snap fairsched.Snapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatal(err)
	}
	if c := snap.Cluster; c == nil || !c.Leading || c.Leader != leader.id || c.Epoch != 1 || c.Domain != "git-proxy" ||
		len(c.Instances) != 2 || len(snap.Running) != 1 || snap.Running[0].Instance != on {
		t.Errorf("the leader's JSON: cluster %+v, running %+v; want the job on %s", snap.Cluster, snap.Running, on)
	}

	_, fpage := get(t, debugpage.Handler(follower.s, debugpage.WithRefresh(0)), http.MethodGet, "/")
	if c := section(fpage, "cluster-section"); !strings.Contains(c,
		"This is instance "+follower.shown+" , a follower: "+leader.id+" leads (epoch 1)") {
		t.Errorf("the follower's cluster section: %q", c)
	}
}
