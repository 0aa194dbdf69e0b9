package fairsched_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
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
		var jobs []*blocker
		t.Cleanup(func() {
			for _, b := range jobs {
				b.release <- nil
			}
			if err := s.ResumeGroup("p"); err != nil {
				t.Error(err)
			}
			synctest.Wait()
			mock.Add(time.Minute) // "later" is asked again, and runs
		})
		add := func(typ fairsched.JobType, id string, opts ...fairsched.JobOption) {
			b := newBlocker()
			jobs = append(jobs, b)
			if err := s.Submit(typ, id, b.fn, opts...); err != nil {
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
