//go:build browser

// The browser test drives Chromium through chromedp, a large dependency:
// it is built only with -tags browser (make check's browser target), so
// that make test does not compile it.

package debugpage_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fairsched/fairsched/debugpage"
)

var (
	update = flag.Bool("update", false, "write the desktop screenshot of the browser test to testdata/debugpage.png")
	shots  = flag.String("shots", "", "also write the browser test's screenshots to `dir`/debugpage-desktop.png and debugpage-phone.png")
)

// browsers are the names the browser test looks for on PATH.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// chromium returns the browser to drive, or skips the test saying why and
// how to run it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range browsers {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skipf("chromium not found on PATH (looked for %s): install it (apt-get install chromium) to run the browser test; skipping it",
		strings.Join(browsers, ", "))
	return ""
}

// TestBrowser opens the page in a real headless Chromium, on a desktop and
// on a phone, and checks what a person sees there: the pending jobs next to
// the reasons they wait, a page that fits a phone's width, and a screenshot
// that is a real picture.
func TestBrowser(t *testing.T) {
	path := chromium(t)
	f := newFixture(t)
	checkFixture(t, f.snapshot(t))
	mux := http.NewServeMux()
	mux.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched", debugpage.Handler(f.s, debugpage.WithRefresh(0))))
	// A cluster leader's page, from a snapshot (a live cluster needs a
	// database).
	mux.HandleFunc("/cluster/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := debugpage.RenderSnapshot(w, debugpage.ClusterFixture()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/debug/fairsched/"

	// A hang fails the test instead of blocking it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)...)
	defer cancelAlloc() // kills what is left and waits for the process
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	proc := chromedp.FromContext(browserCtx).Browser.Process()

	t.Run("desktop", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(browserCtx)
		defer cancel()
		if err := chromedp.Do(tab,
			chromedp.Navigate(url),
			chromedp.WaitVisible(chromedp.CSS("table#pending")),
		); err != nil {
			t.Fatal(err)
		}
		table := run(t, tab, chromedp.Text(chromedp.CSS("table#pending")))
		for _, w := range want {
			if !strings.Contains(table, w.id) || !strings.Contains(table, string(w.reason)) {
				t.Errorf("the pending table does not show %s waiting for %s:\n%s", w.id, w.reason, table)
			}
		}
		// Row by row, as the rows are laid out: each job beside its reason.
		rows := run(t, tab, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("table#pending tbody tr"), tr => tr.innerText)`))
		if len(rows) != len(want) {
			t.Fatalf("%d rows in the pending table, want %d: %q", len(rows), len(want), rows)
		}
		for i, w := range want {
			cells := strings.Split(rows[i], "\t")
			if len(cells) < 3 || cells[1] != string(w.typ)+" "+w.id || !strings.HasPrefix(cells[2], string(w.reason)+" ") {
				t.Errorf("row %d reads %q, want %s %s beside %s", i+1, rows[i], w.typ, w.id, w.reason)
			}
			for _, r := range w.also { // on a line of its own below the explanation
				if len(cells) < 3 || !strings.Contains(cells[2], "\nalso held by "+string(r)) {
					t.Errorf("row %d reads %q, want \"also held by %s\" on a line of its own", i+1, rows[i], r)
				}
			}
		}
		body := run(t, tab, chromedp.Text(chromedp.CSS("body")))
		for _, s := range []string{
			"a job of its conflict group runs on this id (or an exclusive one waits for it first)",
			"every worker slot that takes its type is busy",
			"2\nrunning", "4\npending", "global cap 16",
			`<script>alert("x")</script>`, // shown as text, never run
		} {
			if !strings.Contains(body, s) && !strings.Contains(body, strings.ReplaceAll(s, "\n", " ")) {
				t.Errorf("the page does not show %q:\n%s", s, body)
			}
		}
		if n := run(t, tab, chromedp.Evaluate[int](`document.scripts.length`)); n != 0 {
			t.Errorf("the page has %d scripts", n)
		}
		// Each badge is drawn: visible, with a background of its own.
		badges := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table#pending .badge"),
			b => b.offsetWidth > 0 && b.offsetHeight > 0 ? getComputedStyle(b).backgroundColor : "hidden")`))
		for i, bg := range badges {
			if bg == "hidden" || bg == "rgba(0, 0, 0, 0)" {
				t.Errorf("badge %d: %s", i+1, bg)
			}
		}
		shot := screenshot(t, tab, 1000)
		if *update {
			write(t, filepath.Join("testdata", "debugpage.png"), shot)
		}
		if *shots != "" {
			write(t, filepath.Join(*shots, "debugpage-desktop.png"), shot)
		}
	})

	t.Run("phone", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(browserCtx)
		defer cancel()
		if err := chromedp.Do(tab,
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
			chromedp.Navigate(url),
			chromedp.WaitVisible(chromedp.CSS("table#pending")),
		); err != nil {
			t.Fatal(err)
		}
		// With mobile emulation the layout is 980 px wide unless the page's
		// viewport meta asks for the device's width.
		if w := run(t, tab, chromedp.Evaluate[int](`window.innerWidth`)); w != 390 {
			t.Errorf("window.innerWidth = %d, want 390 (viewport meta)", w)
		}
		if !run(t, tab, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)) {
			sw := run(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			t.Errorf("the page is %d px wide on a 390 px phone: it scrolls sideways", sw)
		}
		// Every table either stacks into cards or scrolls inside its own box.
		bad := run(t, tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("table")).filter(t =>
			getComputedStyle(t).display !== "block" && !["auto", "scroll"].includes(getComputedStyle(t.parentElement).overflowX)
		).map(t => t.id)`))
		if len(bad) > 0 {
			t.Errorf("tables wider than the phone, not in a scroll box: %q", bad)
		}
		// The pending jobs are cards: the reason is on the card, labelled.
		cards := run(t, tab, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("table#pending tbody tr"), tr => tr.innerText)`))
		if len(cards) != len(want) {
			t.Fatalf("%d pending cards, want %d", len(cards), len(want))
		}
		for i, w := range want {
			if !strings.Contains(cards[i], w.id) || !strings.Contains(cards[i], string(w.reason)) {
				t.Errorf("card %d reads %q, want %s and %s", i+1, cards[i], w.id, w.reason)
			}
		}
		if d := run(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("table#pending")).display`)); d != "block" {
			t.Errorf("the pending table displays as %q on a phone, want stacked (block)", d)
		}
		shot := screenshot(t, tab, 390*2)
		if *shots != "" {
			write(t, filepath.Join(*shots, "debugpage-phone.png"), shot)
		}
	})

	// A cluster's leader: the instances beside the jobs, on a desktop and
	// on a phone, each running job's instance on its row or card.
	t.Run("cluster", func(t *testing.T) {
		for _, phone := range []bool{false, true} {
			tab, cancel := chromedp.NewContext(browserCtx)
			actions := []chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + "/cluster/"), chromedp.WaitVisible(chromedp.CSS("table#instances"))}
			if phone {
				actions = append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2))}, actions...)
			}
			if err := chromedp.Do(tab, actions...); err != nil {
				cancel()
				t.Fatal(err)
			}
			instances := run(t, tab, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll("table#instances tbody tr"), tr => tr.innerText)`))
			if len(instances) != 3 || !strings.HasPrefix(instances[0], "api-1\t8\t0\tclone, repack\tleader") {
				t.Errorf("phone %v: instances rows %q", phone, instances)
			}
			running := run(t, tab, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll("table#running tbody tr"), tr => tr.innerText)`))
			if len(running) != 3 || !strings.HasSuffix(strings.TrimSpace(running[0]), "api-2") ||
				!strings.HasSuffix(strings.TrimSpace(running[2]), "not placed yet") {
				t.Errorf("phone %v: running rows %q, want each ending with its instance", phone, running)
			}
			header := run(t, tab, chromedp.Text(chromedp.CSS("header")))
			if !strings.Contains(header, "instance api-1, leader") || !strings.Contains(header, "leader api-1 · epoch 7") {
				t.Errorf("phone %v: header %q", phone, header)
			}
			if phone {
				if !run(t, tab, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)) {
					t.Error("the cluster page scrolls sideways on a 390 px phone")
				}
				// The card's labels are drawn before the cells (::before).
				label := run(t, tab, chromedp.Evaluate[string](
					`getComputedStyle(document.querySelector("table#running tbody td[data-label=Instance]"), "::before").content`))
				if label != `"Instance"` {
					t.Errorf("a running job's card labels its instance %s, want \"Instance\"", label)
				}
				shot := screenshot(t, tab, 390*2)
				if *shots != "" {
					write(t, filepath.Join(*shots, "debugpage-cluster-phone.png"), shot)
				}
			} else if *shots != "" {
				write(t, filepath.Join(*shots, "debugpage-cluster-desktop.png"), screenshot(t, tab, 1000))
			}
			cancel()
		}
	})

	cancelBrowser()
	cancelAlloc()
	if err := allocCtx.Err(); err == nil {
		t.Error("the allocator's context is still live")
	}
	// The allocator's cancel waited for Chromium; its state says it exited.
	if proc != nil {
		if err := proc.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("Chromium (pid %d) after the cancel: %v, want it reaped (%v)", proc.Pid, err, os.ErrProcessDone)
		}
	}
}

// run runs a browser action and fails the test on its error.
func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// screenshot takes a full-page PNG and checks that it decodes to a picture
// at least minWidth pixels wide and of some height.
func screenshot(t *testing.T, ctx context.Context, minWidth int) []byte {
	t.Helper()
	shot := run(t, ctx, chromedp.FullScreenshot(100)) // 100: PNG
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < minWidth || b.Dy() < 400 {
		t.Errorf("the screenshot is %dx%d, want at least %dx400", b.Dx(), b.Dy(), minWidth)
	}
	write(t, filepath.Join(t.TempDir(), "debugpage.png"), shot)
	return shot
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
