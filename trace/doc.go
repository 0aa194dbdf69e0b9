// Package trace records the job runs of a fairsched.Scheduler to a file,
// so that `fairsim -replay` can play real traffic again in virtual time
// against a policy and check each tenant's share and wait before the
// policy changes in production (docs/traffic-checks.md).
//
//	f, err := os.Create("jobs.trace")
//	...
//	rec, err := trace.NewRecorder(s, f, trace.WithTenant(tenantOf))
//	...
//	defer rec.Close(ctx) // then close f
//
// # Format
//
// A trace is JSON lines. The first line is the header {"fairsched_trace":1}
// (Version); each other line is a Record, one run of one job, written when
// the run ends:
//
//	{"type":"render","id":"r1","key":"acme/u1","tenant":"acme","arrival":"2026-11-28T10:00:00.25Z","wait_ns":5000000,"run_ns":120000000,"cost_ns":110000000}
//
// type and id name the job; key is its fairness key (absent for a
// background job without one), tenant the key's tenant when WithTenant
// names one other than the key, group its group; arrival is when it
// entered the queue (RFC 3339), wait_ns how long it waited to be admitted,
// run_ns how long its function ran, cost_ns what admission charged its key,
// all in nanoseconds; failed is true when the function returned an error.
// A retried job has a line per attempt, arriving when it was queued again.
// Jobs that never ran (cancelled, expired, refused, denied) have no line.
// Read accepts exactly this: any other line is an error naming its line
// number and field.
//
// # Cost
//
// The recorder is a subscriber (fairsched.Scheduler.Subscribe): the
// scheduler's owner goroutine never waits for it. It turns events into
// lines in a goroutine of its own and hands them to a second goroutine that
// calls the writer, one Write per batch of the lines gathered while the
// previous Write ran. When the writer is slow, lines wait up to
// WithMaxPendingBytes and beyond that are dropped and counted
// (Stats.Dropped); a failed Write drops its batch and counts the error.
// Events the subscription could not hold are counted by the scheduler
// (Snapshot.EventsLost), and the runs they belonged to in Stats.Dropped.
//
// In cluster mode the events are the leader's, so a recorder on any one
// instance records the runs of the whole cluster; record on one instance.
package trace
