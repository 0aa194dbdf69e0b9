package fairsched_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/internal/testkit"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestReasonsNameTheNarrowRule: with the global cap full, jobs held by a
// conflict, their type's cap, their tenant's limit, their group's limit, a
// paused group and the admission policy each headline their own rule, and
// list every rule that holds them — the global cap last. Group limits turn
// on group shares, so the ungrouped jobs' group "" holds its share of the
// cap (5 of 6: g is allocated 1) and group_limit holds them too, after
// their own rule.
func TestReasonsNameTheNarrowRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			edit   fairsched.JobType = "edit"   // conflict group doc
			lock   fairsched.JobType = "lock"   // conflict group doc too
			render fairsched.JobType = "render" // one at a time
			mail   fairsched.JobType = "mail"   // no rule of its own
		)
		mock := clock.NewMock()
		later := func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "later" && info.Attempt == 0 {
				return fairsched.Defer(time.Minute)
			}
			return fairsched.Admit()
		}
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			edit:   {DefaultCost: time.Second, Priority: 8, ConflictGroup: "doc"},
			lock:   {DefaultCost: time.Second, Priority: 8, ConflictGroup: "doc"},
			render: {DefaultCost: time.Second, Priority: 8, MaxConcurrency: 1},
			mail:   {DefaultCost: time.Second, Priority: 8},
		}, fairsched.WithClock(mock), fairsched.WithMaxConcurrency(6),
			fairsched.WithGroupLimit("g", 1), fairsched.WithKeyLimits("noisy", fairsched.TenantLimits{MaxRunning: 1}),
			fairsched.WithAdmissionPolicy(later))
		var jobs []*testkit.Gate
		t.Cleanup(func() {
			for _, b := range jobs {
				b.Release(nil)
			}
			if err := s.ResumeGroup("p"); err != nil {
				t.Error(err)
			}
			synctest.Wait()
			mock.Add(time.Minute) // "later" is asked again, and runs
		})
		add := func(typ fairsched.JobType, id string, opts ...fairsched.JobOption) {
			b := testkit.NewGate()
			jobs = append(jobs, b)
			if err := s.Submit(typ, id, b.Run, opts...); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if err := s.PauseGroup("p"); err != nil {
			t.Fatal(err)
		}
		// Six run: the global cap is full. "later" was deferred on its turn.
		add(edit, "a")
		add(render, "r1")
		add(mail, "n1", fairsched.WithFairnessKey("noisy"))
		add(mail, "g1", fairsched.InGroup("g"))
		add(mail, "later")
		add(mail, "f1")
		add(mail, "f2")
		// Each of these waits on a rule of its own besides the cap.
		add(lock, "a")
		add(render, "r2")
		add(mail, "n2", fairsched.WithFairnessKey("noisy"))
		add(mail, "g2", fairsched.InGroup("g"))
		add(mail, "p1", fairsched.InGroup("p"))
		add(mail, "q") // only the cap

		type row struct {
			Job     string
			Reason  fairsched.Reason
			Reasons []fairsched.Reason
		}
		snap := snapshot(t, s)
		if snap.RunningByType[mail]+snap.RunningByType[edit]+snap.RunningByType[render] != 6 {
			t.Fatalf("running %v; want the global cap of 6 full", snap.RunningByType)
		}
		got := map[string]row{}
		for _, p := range snap.Pending {
			got[string(p.Type)+"/"+p.ID] = row{string(p.Type) + "/" + p.ID, p.Reason, p.Reasons}
		}
		r := func(job string, reasons ...fairsched.Reason) row { return row{job, reasons[0], reasons} }
		const global = fairsched.ReasonGlobalLimit
		const share = fairsched.ReasonGroupLimit
		want := map[string]row{
			"mail/later": r("mail/later", fairsched.ReasonDeferred, share, global),
			"lock/a":     r("lock/a", fairsched.ReasonConflict, share, global),
			"render/r2":  r("render/r2", fairsched.ReasonTypeLimit, share, global),
			"mail/n2":    r("mail/n2", fairsched.ReasonTenantLimit, share, global),
			"mail/g2":    r("mail/g2", fairsched.ReasonGroupLimit, global),
			"mail/p1":    r("mail/p1", fairsched.ReasonPaused, global),
			"mail/q":     r("mail/q", share, global),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pending jobs' reasons (-want +got):\n%s", diff)
		}
	})
}

// TestDecisionRecords: every scheduling decision is logged once, in order,
// as a record in spec 5's shape — tenant, tier, queue_depth, inflight,
// decision, reason_code, retry_delay_sec where a delay applies, attempt. A
// job that starts to wait on tenant_limit, rate_limited or no_workers gets
// one defer record when it starts to wait, not one per dispatch pass.
func TestDecisionRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			render fairsched.JobType = "render" // needs a worker; none registers
			mail   fairsched.JobType = "mail"   // one a second
		)
		mock := clock.NewMock()
		logs, records := observer.New(zap.DebugLevel)
		policy := func(info fairsched.JobInfo) fairsched.Decision {
			if info.ID == "later" && info.Attempt == 0 {
				return fairsched.Defer(time.Minute)
			}
			return fairsched.Admit()
		}
		s := startScheduler(t, map[fairsched.JobType]fairsched.JobTypeConfig{
			work:   workCfg,
			render: {DefaultCost: time.Second, Priority: 5, RequiresWorker: true},
			mail:   {DefaultCost: time.Second, Priority: 3},
		}, fairsched.WithClock(mock), fairsched.WithLogger(zap.New(logs)), fairsched.WithMaxConcurrency(8),
			fairsched.WithKeyLimits("acme", fairsched.TenantLimits{MaxRunning: 1}),
			fairsched.WithRateLimit(fairsched.RateForType(mail), 1, 1), fairsched.WithAdmissionPolicy(policy))
		jobs := map[string]*testkit.Gate{}
		t.Cleanup(func() {
			for _, b := range jobs {
				b.Release(nil)
			}
			if err := s.RegisterWorker(fairsched.WorkerSpec{ID: "w", Slots: []fairsched.SlotSpec{{Types: []fairsched.JobType{render}}}}); err != nil {
				t.Error(err)
			}
			for range 3 { // "later", m2 and m3 run
				synctest.Wait()
				mock.Add(time.Minute)
			}
		})
		add := func(typ fairsched.JobType, id, key string) {
			b := testkit.NewGate()
			jobs[id] = b
			if err := s.Submit(typ, id, b.Run, fairsched.WithFairnessKey(key)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		add(work, "a1", "acme")  // admitted
		add(work, "a2", "acme")  // acme runs its 1: waits on tenant_limit
		add(work, "b1", "other") // admitted; a2 is not recorded again
		add(render, "r1", "")    // no worker takes render
		add(mail, "m1", "")      // takes the bucket's one token
		add(mail, "m2", "")      // the bucket refills in 1s
		add(mail, "m3", "")      // waits with m2's scope: no record of its own yet
		add(work, "later", "")   // the policy defers it a minute
		add(work, "b2", "other") // one more pass: nothing waiting is recorded again
		finish(t, jobs["a1"])    // a2 runs

		type rec struct {
			Msg, Decision, Tenant, ID, Reason string
			Tier, QueueDepth, Inflight        int64
			Attempt                           int64
			RetryDelaySec                     float64
		}
		var got []rec
		for _, e := range records.All() {
			f := e.ContextMap()
			if _, ok := f["decision"]; !ok {
				continue
			}
			r := rec{Msg: e.Message, Decision: f["decision"].(string), Tenant: f["tenant"].(string), ID: f["id"].(string),
				Reason: f["reason_code"].(string), Tier: f["tier"].(int64), QueueDepth: f["queue_depth"].(int64),
				Inflight: f["inflight"].(int64), Attempt: f["attempt"].(int64)}
			if d, ok := f["retry_delay_sec"]; ok {
				r.RetryDelaySec = d.(float64)
			}
			got = append(got, r)
		}
		want := []rec{
			{Msg: "admit", Decision: "admit", Tenant: "acme", ID: "a1", Tier: 8, QueueDepth: 0, Inflight: 1},
			{Msg: "job deferred", Decision: "defer", Tenant: "acme", ID: "a2", Reason: "tenant_limit", Tier: 8, QueueDepth: 1, Inflight: 1},
			{Msg: "admit", Decision: "admit", Tenant: "other", ID: "b1", Tier: 8, QueueDepth: 1, Inflight: 2},
			{Msg: "job deferred", Decision: "defer", ID: "r1", Reason: "no_workers", Tier: 5, QueueDepth: 2, Inflight: 2},
			{Msg: "admit", Decision: "admit", ID: "m1", Tier: 3, QueueDepth: 2, Inflight: 3},
			{Msg: "job deferred", Decision: "defer", ID: "m2", Reason: "rate_limited", Tier: 3, QueueDepth: 3, Inflight: 3, RetryDelaySec: 1},
			{Msg: "job deferred", Decision: "defer", ID: "later", Reason: "deferred", Tier: 8, QueueDepth: 5, Inflight: 3, Attempt: 1, RetryDelaySec: 60},
			{Msg: "admit", Decision: "admit", Tenant: "other", ID: "b2", Tier: 8, QueueDepth: 5, Inflight: 4},
			{Msg: "admit", Decision: "admit", Tenant: "acme", ID: "a2", Tier: 8, QueueDepth: 4, Inflight: 4},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decision records (-want +got):\n%s", diff)
		}
	})
}
