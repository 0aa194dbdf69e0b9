package fairsched_test

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/debugpage"
	"github.com/fairsched/fairsched/fairschedtest"
)

// The README shows this file's marked parts verbatim (TestREADMESnippets
// holds it to them): a git caching proxy's use of the scheduler and its
// tests, both ways.

// README:begin proxy

// Proxy is the scheduling of a git caching proxy: clones of one
// repository run together, a repack has its repository to itself, and
// clients share the clone slots fairly.
type Proxy struct {
	s             *fairsched.Scheduler
	clone, repack func(ctx context.Context, repo string) error
}

func NewProxy(s *fairsched.Scheduler, clone, repack func(context.Context, string) error) (*Proxy, error) {
	types := map[fairsched.JobType]fairsched.JobTypeConfig{
		// Foreground, tier 8: at most 8 clones run; clones of a repository
		// share it (like readers of a sync.RWMutex).
		"clone": {Priority: 8, DefaultCost: 10 * time.Second,
			ConflictGroup: "repo", ConflictMode: fairsched.ConflictShared},
		// Background, tier 2: a repack runs alone on its repository, and
		// clones that arrive while it waits queue behind it.
		"repack": {Priority: 2, DefaultCost: time.Minute, ConflictGroup: "repo"},
	}
	for t, cfg := range types {
		if err := s.RegisterType(t, cfg); err != nil {
			return nil, err
		}
	}
	return &Proxy{s: s, clone: clone, repack: repack}, nil
}

// Clone serves one client's clone of repo once the scheduler admits it.
// client is who asks — the authenticated user, else the host part of the
// address: never r.RemoteAddr with its port, which makes every connection
// a new client.
func (p *Proxy) Clone(ctx context.Context, client, repo string) error {
	return p.s.RunSync(ctx, "clone", repo, client, func(ctx context.Context) error {
		return p.clone(ctx, repo)
	})
}

// Repack queues maintenance of repo; a repack already waiting for it is
// replaced, not doubled.
func (p *Proxy) Repack(repo string) error {
	return p.s.Submit("repack", repo, func(ctx context.Context) error {
		return p.repack(ctx, repo)
	}, fairsched.Supersede())
}

// README:end

// README:begin main

// The proxy's server: one scheduler for all its work, the debug page
// beside it. (Compiled by go test, not run.)
func Example_server() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(16))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(context.Background()) // waits for running jobs, drops none
	git := func(args ...string) func(context.Context, string) error {
		return func(ctx context.Context, repo string) error {
			return exec.CommandContext(ctx, "git", append(args, repo)...).Run()
		}
	}
	p, err := NewProxy(s, git("fetch", "--all", "--git-dir"), git("repack", "-ad", "--git-dir"))
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/clone/{repo...}", func(w http.ResponseWriter, r *http.Request) {
		client := r.Header.Get("X-User") // your authenticated identity
		if client == "" {
			client, _, _ = net.SplitHostPort(r.RemoteAddr) // the host, not the port
		}
		err := p.Clone(r.Context(), client, r.PathValue("repo"))
		if errors.Is(err, fairsched.ErrOverloaded) {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		// ... serve the pack from the cache
	})
	// Why is my clone waiting? /debug/fairsched/ says.
	http.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched", debugpage.Handler(s)))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// README:end

// README:begin durable

// Mirror asks for a repository to be mirrored: promised work, which must
// happen even if the proxy restarts, so it is a durable job.
type Mirror struct{ URL string }

func RegisterMirrors(s *fairsched.Scheduler, fetch func(ctx context.Context, url string) error) error {
	err := s.RegisterType("mirror", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Minute,
		ConflictGroup: "repo", // never beside a repack of the same repository
		Retry:         fairsched.RetryPolicy{MaxAttempts: 5, MinBackoff: time.Second, MaxBackoff: time.Minute}})
	if err != nil {
		return err
	}
	return s.RegisterHandler("mirror", fairsched.HandleJSON(func(ctx context.Context, job fairsched.Job, m Mirror) error {
		return fetch(ctx, m.URL) // idempotent: after a crash it may run again
	}))
}

// ScheduleMirror returns once the request is on disk.
func ScheduleMirror(ctx context.Context, s *fairsched.Scheduler, repo, url string) error {
	return fairsched.EnqueueJSON(ctx, s, "mirror", repo, Mirror{URL: url})
}

// README:end

// TestMirrorSurvivesARestart: the README's durable example, through a
// restart: the mirror enqueued before the scheduler stopped runs after.
func TestMirrorSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.db")
	ctx := context.Background()
	var fetched []string
	for round := range 2 {
		synctest.Test(t, func(t *testing.T) {
			st, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() }) // after the scheduler's (cleanups run in reverse)
			s := fairschedtest.New(t, fairsched.WithStore(st))
			if round == 0 { // no handler yet: it stays pending, in the store
				if err := s.RegisterType("mirror", fairsched.JobTypeConfig{Priority: 1, DefaultCost: time.Minute}); err != nil {
					t.Fatal(err)
				}
				if err := ScheduleMirror(ctx, s, "linux", "https://git.kernel.org/linux.git"); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err := RegisterMirrors(s, func(ctx context.Context, url string) error { fetched = append(fetched, url); return nil }); err != nil {
				t.Fatal(err)
			}
			fairschedtest.WaitIdle(t, s)
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	if diff := cmp.Diff([]string{"https://git.kernel.org/linux.git"}, fetched); diff != "" {
		t.Errorf("fetched (-want +got):\n%s", diff)
	}
}

// README:begin test-mock

// A repack never runs beside a clone of its repository: it waits for the
// clone, however long, then runs. On a mock clock (fairschedtest.Run) time
// moves only when the test says.
func TestRepackWaitsForClone(t *testing.T) {
	fairschedtest.Run(t, func(t *testing.T, env *fairschedtest.Env) {
		cloning, repacking := fairschedtest.NewBlocker(), fairschedtest.NewBlocker()
		p, err := NewProxy(env.Scheduler,
			func(ctx context.Context, repo string) error { return cloning.Run(ctx) },
			func(ctx context.Context, repo string) error { return repacking.Run(ctx) })
		if err != nil {
			t.Fatal(err)
		}
		cloned := env.Go(func() error { return p.Clone(context.Background(), "alice", "linux") })
		cloning.WaitStarted(t)
		if err := p.Repack("linux"); err != nil {
			t.Fatal(err)
		}
		env.WaitPending(1) // the repack has arrived
		env.Advance(time.Hour)
		if repacking.Started() {
			t.Fatal("the repack ran beside a clone of linux")
		}
		cloning.Release(nil)
		if err := <-cloned; err != nil {
			t.Fatal(err)
		}
		repacking.WaitStarted(t)
		repacking.Release(nil)
		env.WaitIdle()
	})
}

// README:end

// README:begin test-synctest

// A client that asks for three clones at once does not make the next
// client wait for all three. In a synctest bubble the real clock is
// virtual: each clone's 10-second sleep takes no time, and the scheduler
// measures it as 10 seconds.
func TestBurstDoesNotStarveOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fairschedtest.New(t, fairsched.WithMaxConcurrency(1))
		p, err := NewProxy(s,
			func(ctx context.Context, repo string) error { time.Sleep(10 * time.Second); return nil },
			func(ctx context.Context, repo string) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		finished := make(chan string, 4)
		clone := func(client, repo string) {
			go func() {
				if err := p.Clone(context.Background(), client, repo); err != nil {
					t.Error(err)
				}
				finished <- client + " " + repo + " at " + time.Since(start).String()
			}()
		}
		for _, repo := range []string{"git", "linux", "go"} {
			clone("alice", repo)
			synctest.Wait() // one at a time: arrival order is the loop's
		}
		clone("bob", "hugo")
		var got []string
		for range 4 {
			got = append(got, <-finished)
		}
		want := []string{"alice git at 10s", "alice linux at 20s", "bob hugo at 30s", "alice go at 40s"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("clones (-want +got):\n%s", diff)
		}
	})
}

// README:end

// TestREADMESnippets: the README's Go blocks marked <!-- README:name -->
// are this file's parts of the same name, verbatim.
func TestREADMESnippets(t *testing.T) {
	var src []byte
	for _, name := range []string{"readme_test.go", "readme_cluster_test.go"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	// The README shows every part but the synctest way of testing, which
	// its page on testing shows.
	var readme []byte
	for _, name := range []string{"README.md", "docs/testing-your-code.md"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	parts := strings.Split(string(src), "\n// README:begin ")
	if len(parts) < 7 {
		t.Fatalf("%d marked parts; want 6", len(parts)-1)
	}
	for _, part := range parts[1:] {
		name, body, _ := strings.Cut(part, "\n")
		body, _, ok := strings.Cut(body, "\n// README:end")
		if !ok {
			t.Fatalf("part %s has no end", name)
		}
		want := "<!-- README:" + name + " -->\n```go\n" + strings.TrimSpace(body) + "\n```"
		if !strings.Contains(string(readme), want) {
			t.Errorf("neither README.md nor docs/testing-your-code.md shows part %q of readme_test.go verbatim; it should read:\n%s", name, want)
		}
	}
}
