package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/pgstore"
	"github.com/fairsched/fairsched/workers"
)

// childEnv, when set, makes the test binary a cluster instance of the
// multi-process tests instead of running tests: its value is the
// instance's name. The other variables say where and how it runs.
const childEnv = "FAIRSCHED_CLUSTER_CHILD"

const (
	childURLEnv   = "FAIRSCHED_CLUSTER_URL"   // the database
	childLogEnv   = "FAIRSCHED_CLUSTER_LOG"   // the start/end log, appended to
	childSlotsEnv = "FAIRSCHED_CLUSTER_SLOTS" // Slots
	childCapEnv   = "FAIRSCHED_CLUSTER_CAP"   // WithMaxConcurrency
	childWorkEnv  = "FAIRSCHED_CLUSTER_WORK"  // how long each job sleeps
	childIncEnv   = "FAIRSCHED_CLUSTER_INC"   // where it writes its incarnation once joined
	childPrevEnv  = "FAIRSCHED_CLUSTER_PREV"  // "1": each start says how the job's last attempt ended (prev)
	childRetryEnv = "FAIRSCHED_CLUSTER_RETRY" // "none": the types' default retry policy
	// childCalmEnv "1": the lease's timings of calm (a lease of 3 s,
	// beats every 500 ms, lost after 2 s) instead of fast's: a machine
	// loaded by the whole suite under -race stalls statements for longer
	// than fast's 200 ms beat, and instances then stop their jobs and
	// are declared lost without any kill.
	childCalmEnv = "FAIRSCHED_CLUSTER_CALM"
	childDomain  = "failover" // the children's domain
	childGroup   = fairsched.ConflictGroup("repo")
)

// childTypes are the types every child registers: two types in one
// exclusive conflict group, so that build/x and deploy/x never run at
// once; both retry failed attempts, unless retries is false (childRetryEnv
// "none": the default policy, no retries). An attempt a killed instance
// interrupted runs again either way.
func childTypes(retries bool) map[fairsched.JobType]fairsched.JobTypeConfig {
	cfg := fairsched.JobTypeConfig{ConflictGroup: childGroup, Priority: 8, DefaultCost: 20 * time.Millisecond}
	if retries {
		cfg.Retry = fairsched.RetryPolicy{MaxAttempts: 10, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	}
	return map[fairsched.JobType]fairsched.JobTypeConfig{"build": cfg, "deploy": cfg}
}

// childMain runs this process as one instance of the children's cluster
// until it is killed or its stdin closes (then it leaves gracefully). Its
// handler appends "start <type/id> <instance> <unix-nanos> <attempt>
// <incarnation> <prev>" when a job starts and "end …" when it returns, one
// write per line, to the log; an end's last field is "lost" when the
// executor stopped the attempt (its context's cause ErrWorkerLost), else
// "-". A start's prev is "-" unless asked for (childPrevEnv):
// then what the database says as the attempt starts — how the job's record
// says its last attempt ended ("none", "lost": ErrWorkerLost, or "other"),
// which attempt that was, and how many names have two incarnations
// listed (a restarted one whose earlier incarnation is not declared lost
// yet; an incarnation is its name, "#" and 12 hex digits): "lost@1/0".
func childMain() int {
	name := os.Getenv(childEnv)
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", name, err)
		return 1
	}
	slots, err := strconv.Atoi(os.Getenv(childSlotsEnv))
	if err != nil {
		return fail(err)
	}
	maxConc, err := strconv.Atoi(os.Getenv(childCapEnv))
	if err != nil {
		return fail(err)
	}
	work, err := time.ParseDuration(os.Getenv(childWorkEnv))
	if err != nil {
		return fail(err)
	}
	logf, err := os.OpenFile(os.Getenv(childLogEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	var incarnation string
	line := func(kind, id string, attempt int, prev string) {
		// One write per line: with O_APPEND, lines of several processes
		// never interleave.
		if _, err := logf.WriteString(fmt.Sprintf("%s %s %s %d %d %s %s\n", kind, id, name, time.Now().UnixNano(), attempt, incarnation, prev)); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: writing the log: %v\n", name, err)
		}
	}
	logger, err := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel))
	if err != nil {
		return fail(err)
	}
	defer func() { _ = logger.Sync() }()

	ctx := context.Background()
	st, err := pgstore.Open(ctx, os.Getenv(childURLEnv))
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	prev := func(fairsched.Job) string { return "-" }
	if os.Getenv(childPrevEnv) == "1" {
		pool, err := pgxpool.New(ctx, os.Getenv(childURLEnv))
		if err != nil {
			return fail(err)
		}
		defer pool.Close()
		prev = func(j fairsched.Job) string {
			var last string
			var ended, others int
			err := pool.QueryRow(ctx, `SELECT coalesce(record->>'last_error', ''), coalesce((record->>'ended_attempt')::int, 0),
					(SELECT count(*) FROM (SELECT left(instance, -13) FROM fairsched_instances GROUP BY 1 HAVING count(*) > 1) twice)
				FROM fairsched_jobs WHERE type = $1 AND id = $2 AND state = 0`, string(j.Type), j.ID).Scan(&last, &ended, &others)
			kind := "other"
			switch {
			case err != nil:
				return "unread"
			case last == "":
				kind = "none"
			case strings.Contains(last, workers.ErrWorkerLost.Error()):
				kind = "lost"
			}
			return fmt.Sprintf("%s@%d/%d", kind, ended, others)
		}
	}
	cfg := fast(childDomain, name, slots)
	if os.Getenv(childCalmEnv) == "1" {
		cfg.LeaseTTL, cfg.Heartbeat, cfg.LostAfter = 3*time.Second, 500*time.Millisecond, 2*time.Second
	}
	cfg.Logger = logger
	s, err := fairsched.New(fairsched.WithCluster(st, cfg), fairsched.WithMaxConcurrency(maxConc))
	if err != nil {
		return fail(err)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return fail(err)
	}
	incarnation = snap.Cluster.Incarnation
	if p := os.Getenv(childIncEnv); p != "" { // whole or not at all: written aside, then renamed
		if err := os.WriteFile(p+".tmp", []byte(snap.Cluster.Incarnation), 0o644); err != nil {
			return fail(err)
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			return fail(err)
		}
	}
	for t, c := range childTypes(os.Getenv(childRetryEnv) != "none") {
		if err := s.RegisterType(t, c); err != nil {
			return fail(err)
		}
		if err := s.RegisterHandler(t, func(ctx context.Context, j fairsched.Job) error {
			id := string(j.Type) + "/" + j.ID
			line("start", id, j.Attempt, prev(j))
			defer func() {
				// How the attempt ended, as far as this process can tell:
				// "lost" when its executor stopped it (heartbeats failing,
				// its grant revoked) — an interruption, run again.
				how := "-"
				switch cause := context.Cause(ctx); {
				case cause == nil:
				case errors.Is(cause, workers.ErrWorkerLost):
					how = "lost"
				case errors.Is(cause, fairsched.ErrClosed):
					how = "closed"
				case errors.Is(cause, fairsched.ErrCancelled):
					how = "cancelled"
				default:
					how = "cut"
				}
				line("end", id, j.Attempt, how)
			}()
			select {
			case <-time.After(work): // the job's work
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(os.Stderr, "child %s: joined\n", name)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin (or dies)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Close(cctx); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "child %s: left\n", name)
	return 0
}
