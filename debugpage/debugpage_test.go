package debugpage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/boltstore"
	"github.com/fairsched/fairsched/debugpage"
	"github.com/fairsched/fairsched/fairschedtest"
)

// get serves one request and returns the response and its body.
func get(t *testing.T, h http.Handler, method, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

// TestJSONIsTheSnapshot: snapshot.json and ?format=json decode to exactly
// what Scheduler.Snapshot returns (the mock clock holds time still).
func TestJSONIsTheSnapshot(t *testing.T) {
	f := newFixture(t)
	want := f.snapshot(t)
	checkFixture(t, want)
	h := debugpage.Handler(f.s)
	for _, target := range []string{"/snapshot.json", "/?format=json"} {
		res, body := get(t, h, http.MethodGet, target)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", target, res.Status, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q, want application/json", target, ct)
		}
		var got fairsched.Snapshot
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("GET %s: %v\n%s", target, err, body)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s: the JSON differs from Snapshot (-want +got):\n%s", target, diff)
		}
	}
}

// rowText returns the text a reader sees in each row of the table with the
// given id: tags dropped, entities decoded, spaces collapsed.
func rowText(t *testing.T, page, id string) []string {
	t.Helper()
	start := strings.Index(page, `<table id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no table %q in the page:\n%s", id, page)
	}
	table := page[start:]
	table = table[:strings.Index(table, "</table>")]
	body := table[strings.Index(table, "<tbody>"):]
	var rows []string
	for _, tr := range strings.Split(body, "<tr")[1:] {
		rows = append(rows, visible(tr))
	}
	return rows
}

var (
	tags   = regexp.MustCompile(`<[^>]*>`)
	spaces = regexp.MustCompile(`\s+`)
)

// visible is the text of an HTML fragment as a reader sees it.
func visible(fragment string) string {
	fragment = strings.TrimPrefix(fragment, ">") // the rest of a split <tr>
	return strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(tags.ReplaceAllString(fragment, " ")), " "))
}

// TestPageShowsWhyJobsWait: the page lists the pending jobs in dispatch
// order, each next to its reason and the reason's explanation, and shows the
// running jobs, groups, keys and worker slots.
func TestPageShowsWhyJobsWait(t *testing.T) {
	f := newFixture(t)
	checkFixture(t, f.snapshot(t))
	res, page := get(t, debugpage.Handler(f.s), http.MethodGet, "/")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %s: %s", res.Status, page)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	for _, s := range []string{
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`<meta http-equiv="refresh" content="2">`,
	} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<link") {
		t.Error("the page loads a script or an external asset")
	}

	header := visible(page[strings.Index(page, "<header>"):strings.Index(page, "</header>")])
	for _, s := range []string{"2 running", "4 pending", "global cap 16", "2026-11-22 09:01:30 UTC"} {
		if !strings.Contains(header, s) {
			t.Errorf("header %q lacks %q", header, s)
		}
	}

	rows := rowText(t, page, "pending")
	if len(rows) != len(want) {
		t.Fatalf("%d pending rows, want %d:\n%s", len(rows), len(want), strings.Join(rows, "\n"))
	}
	waited := map[string]string{"git.git": "1m", scriptID: "30s", "report-2": "30s", "linux": "1m"}
	for i, w := range want {
		row := rows[i]
		prefix := fmt.Sprintf("%d %s %s %s", i+1, w.typ, w.id, w.reason)
		if !strings.HasPrefix(row, prefix) {
			t.Errorf("pending row %d = %q, want it to start with %q", i+1, row, prefix)
		}
		for _, r := range w.also { // the other rules, as badges after the headline's sentence
			if !strings.Contains(row, "also held by "+string(r)) {
				t.Errorf("pending row %d = %q, want it to show also held by %s", i+1, row, r)
			}
		}
		if len(w.also) == 0 && strings.Contains(row, "also held by") {
			t.Errorf("pending row %d = %q lists other rules; none holds it", i+1, row)
		}
		if !strings.HasSuffix(row, " "+waited[w.id]) {
			t.Errorf("pending row %d = %q, want it to end with the wait %s", i+1, row, waited[w.id])
		}
	}
	for i, why := range []string{
		"its type already runs MaxConcurrency jobs",
		"its type already runs MaxConcurrency jobs",
		"every worker slot that takes its type is busy",
		"a job of its conflict group runs on this id (or an exclusive one waits for it first)",
	} {
		if !strings.Contains(rows[i], why) {
			t.Errorf("pending row %d = %q lacks the explanation %q", i+1, rows[i], why)
		}
	}
	if !strings.Contains(rows[0], "10.0.0.9 tenants 8 ") || !strings.Contains(rows[3], "(background) batch 4 ") {
		t.Errorf("pending rows lack key, group and priority:\n%s", strings.Join(rows, "\n"))
	}

	running := rowText(t, page, "running")
	for i, w := range []string{
		"clone linux 10.0.0.7 tenants 8 09:00:00 1m30s 10s —",
		"render report-1 (background) (none) 5 09:00:00 1m30s 5s render-1 #0",
	} {
		if i >= len(running) || running[i] != w {
			t.Errorf("running rows:\n%s\nwant row %d = %q", strings.Join(running, "\n"), i+1, w)
		}
	}

	for _, c := range []struct{ table, row string }{
		{"groups", "batch 1 — — 1 0 1 active"},
		{"groups", "tenants 3 — — 3 1 2 active"},
		{"keys", "10.0.0.9 10s 2 0 1"},
		{"workers", "render-1 0 render render report-1"},
		{"tiers", "8 1 2 8 — — clone"},
		{"types", "repack 4 0 2 1 git (exclusive) 20s no"},
	} {
		rows := rowText(t, page, c.table)
		if !containsRow(rows, c.row) {
			t.Errorf("table %s lacks the row %q:\n%s", c.table, c.row, strings.Join(rows, "\n"))
		}
	}

	why := visible(page[strings.Index(page, `<section id="why">`):strings.Index(page, `<section id="pending-jobs">`)])
	for _, s := range []string{"2× type_limit", "1× conflict", "1× worker_busy"} { // headlines only
		if !strings.Contains(why, s) {
			t.Errorf("the summary %q lacks %q", why, s)
		}
	}
}

func containsRow(rows []string, row string) bool {
	for _, r := range rows {
		if r == row {
			return true
		}
	}
	return false
}

// TestEscaping: a job id and a title holding markup reach the page as text.
func TestEscaping(t *testing.T) {
	f := newFixture(t)
	_, page := get(t, debugpage.Handler(f.s, debugpage.WithTitle(`<b>ops</b> & "co"`)), http.MethodGet, "/")
	for _, raw := range []string{scriptID, "<script", "<b>ops</b>"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	for _, escaped := range []string{
		"<code>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</code>",
		"<h1>&lt;b&gt;ops&lt;/b&gt; &amp; &#34;co&#34;</h1>",
	} {
		if !strings.Contains(page, escaped) {
			t.Errorf("the page lacks %s", escaped)
		}
	}
}

// TestStatusCodes: unknown paths are 404, methods other than GET and HEAD
// 405, an unknown format 400, and a closed scheduler 503 with a message.
func TestStatusCodes(t *testing.T) {
	s, _, _ := newScheduler(t)
	h := debugpage.Handler(s)
	for _, c := range []struct {
		method, target string
		code           int
	}{
		{http.MethodGet, "/", 200},
		{http.MethodGet, "/?format=html", 200},
		{http.MethodGet, "/snapshot.json", 200},
		{http.MethodGet, "/nope", 404},
		{http.MethodGet, "/index.html", 404},
		{http.MethodGet, "/snapshot.json/x", 404},
		{http.MethodGet, "/debug/fairsched/", 404}, // mounted without StripPrefix
		{http.MethodPost, "/nope", 404},
		{http.MethodPost, "/", 405},
		{http.MethodPut, "/snapshot.json", 405},
		{http.MethodDelete, "/?format=json", 405},
		{http.MethodGet, "/?format=xml", 400},
	} {
		res, body := get(t, h, c.method, c.target)
		if res.StatusCode != c.code {
			t.Errorf("%s %s: %s, want %d: %s", c.method, c.target, res.Status, c.code, body)
		}
		if c.code == 405 && res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow = %q", c.method, c.target, res.Header.Get("Allow"))
		}
	}

	res, body := get(t, h, http.MethodHead, "/")
	if res.StatusCode != 200 || body != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("HEAD /: %s, Content-Type %q, body %q", res.Status, res.Header.Get("Content-Type"), body)
	}

	// Through a mux, as the package doc mounts it.
	mux := http.NewServeMux()
	mux.Handle("/debug/fairsched/", http.StripPrefix("/debug/fairsched", h))
	for target, code := range map[string]int{
		"/debug/fairsched/":              200,
		"/debug/fairsched/snapshot.json": 200,
		"/debug/fairsched/x":             404,
	} {
		if res, body := get(t, mux, http.MethodGet, target); res.StatusCode != code {
			t.Errorf("mux: GET %s: %s, want %d: %s", target, res.Status, code, body)
		}
	}

	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/", "/snapshot.json"} {
		res, body := get(t, h, http.MethodGet, target)
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "the scheduler is closed") {
			t.Errorf("GET %s after Close: %s %q, want 503 saying the scheduler is closed", target, res.Status, body)
		}
	}
}

// TestRefresh: WithRefresh rounds up to whole seconds, and 0 drops the meta
// refresh.
func TestRefresh(t *testing.T) {
	s, _, _ := newScheduler(t)
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Millisecond, `<meta http-equiv="refresh" content="2">`},
		{10 * time.Second, `<meta http-equiv="refresh" content="10">`},
		{0, ""},
		{-time.Second, ""},
	} {
		_, page := get(t, debugpage.Handler(s, debugpage.WithRefresh(c.d)), http.MethodGet, "/")
		got := regexp.MustCompile(`<meta http-equiv="refresh"[^>]*>`).FindString(page)
		if got != c.want {
			t.Errorf("WithRefresh(%v): %q, want %q", c.d, got, c.want)
		}
	}
}

// TestTruncation: a long pending list shows its first rows (100 by
// default, WithMaxRows, ?rows=) and counts the others, in the page and in
// the JSON; the scheduler copies only those (the JSON lists what the
// snapshot holds, and the Snapshot's own default is 1000 rows). The
// summary of reasons and the pending counts of tiers, types and keys say
// they count the listed jobs, and the keys left out are counted too.
func TestTruncation(t *testing.T) {
	const total, keys = 1503, 1200
	s, _, block := newScheduler(t)
	if err := s.RegisterType("sync", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.PauseGroup("held"); err != nil {
		t.Fatal(err)
	}
	for i := range total {
		if err := s.Submit("sync", fmt.Sprintf("job-%04d", i), block, fairsched.InGroup("held"), fairsched.WithFairnessKey(fmt.Sprintf("k%04d", i%keys))); err != nil {
			t.Fatal(err)
		}
	}
	const nbsp = "\u202f" // between groups of digits
	for _, c := range []struct {
		opts  []debugpage.Option
		query string
		rows  int
		more  string // the +N line under the pending jobs, "" for none
		keys  string // the +N line under the keys
	}{
		{nil, "", 100, "+1" + nbsp + "403 more pending jobs not shown", "+1" + nbsp + "100 more keys not shown"},
		{[]debugpage.Option{debugpage.WithMaxRows(2)}, "", 2, "+1" + nbsp + "501 more pending jobs not shown", "+1" + nbsp + "198 more keys not shown"},
		{[]debugpage.Option{debugpage.WithMaxRows(0)}, "", total, "", ""},
		{nil, "?rows=all", total, "", ""},
		{nil, "?rows=1200", 1200, "+303 more pending jobs not shown", ""},
		{[]debugpage.Option{debugpage.WithMaxRows(2)}, "?rows=5", 5, "+1" + nbsp + "498 more pending jobs not shown", "+1" + nbsp + "195 more keys not shown"},
	} {
		name := fmt.Sprintf("%d option(s), %q", len(c.opts), c.query)
		h := debugpage.Handler(s, c.opts...)
		_, page := get(t, h, http.MethodGet, "/"+c.query)
		var doc struct {
			Total  int   `json:"pending_total"`
			Listed int   `json:"pending_listed"`
			More   int   `json:"pending_more"`
			Rows   []any `json:"pending"`
		}
		sep := "?"
		if c.query != "" {
			sep = "&"
		}
		if _, body := get(t, h, http.MethodGet, "/"+c.query+sep+"format=json"); json.Unmarshal([]byte(body), &doc) != nil ||
			doc.Total != total || doc.Listed != c.rows || len(doc.Rows) != c.rows || doc.More != total-c.rows {
			t.Errorf("%s: JSON lists %d of %d (%d rows), %d more; want %d of %d, %d more", name, doc.Listed, doc.Total, len(doc.Rows), doc.More, c.rows, total, total-c.rows)
		}
		rows := rowText(t, page, "pending")
		if len(rows) != c.rows {
			t.Errorf("%s: %d rows, want %d", name, len(rows), c.rows)
		}
		if len(rows) > 0 && !strings.HasPrefix(rows[0], "1 sync job-0000 paused its group is paused") {
			t.Errorf("%s: first row %q", name, rows[0])
		}
		for _, l := range []struct{ line, want string }{{"more pending jobs not shown", c.more}, {"more keys not shown", c.keys}} {
			got := regexp.MustCompile(`\+[^<>]* ` + l.line).FindString(page)
			if got != l.want {
				t.Errorf("%s: the line %q, want %q", name, got, l.want)
			}
		}
		header := visible(page[strings.Index(page, "<header>"):strings.Index(page, "</header>")])
		if !strings.Contains(header, "1"+nbsp+"503 pending") {
			t.Errorf("%s: header %q lacks 1 503 pending", name, header)
		}

		// What counts the listed jobs says so when they are not all.
		partial := c.rows < total
		why := visible(page[strings.Index(page, `<section id="why">`):strings.Index(page, `<section id="pending-jobs">`)])
		note := fmt.Sprintf("among the first %s pending jobs, of 1%s503", grouped(c.rows), nbsp)
		if strings.Contains(why, note) != partial || !strings.Contains(why, grouped(c.rows)+"× paused") {
			t.Errorf("%s: the summary reads %q; want %d× paused, with the note %q: %v", name, why, c.rows, note, partial)
		}
		types := visible(page[strings.Index(page, `<table id="types"`):strings.Index(page, `<section id="keys-section">`)])
		head := "Pending of the first " + grouped(c.rows)
		if strings.Contains(types, head) != partial || !strings.Contains(types, " sync 1 0 — "+grouped(c.rows)+" ") {
			t.Errorf("%s: the types table reads %q; want sync with %d pending, the header %q: %v", name, types, c.rows, head, partial)
		}
	}
	for _, bad := range []string{"?rows=0", "?rows=-1", "?rows=many"} {
		if res, _ := get(t, debugpage.Handler(s), http.MethodGet, "/"+bad); res.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /%s: %s; want 400", bad, res.Status)
		}
	}
}

// grouped writes n as the page does: 1 503, with a narrow no-break space.
func grouped(n int) string {
	s := strconv.Itoa(n)
	if len(s) > 3 {
		s = s[:len(s)-3] + "\u202f" + s[len(s)-3:]
	}
	return s
}

// TestJSONDurationsAsText: every duration of the JSON — each duration
// field of the Snapshot's types, the pending jobs' waits and the running
// jobs' times — has a "_text" sibling right after it that writes it as Go
// does (time.Duration.String), maps of durations included, and every
// "_text" field has its number before it.
func TestJSONDurationsAsText(t *testing.T) {
	s := newRichScheduler(t)
	_, body := get(t, debugpage.Handler(s), http.MethodGet, "/snapshot.json")
	doc := decodeOrdered(t, body)
	texts := map[string]int{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case *ordered:
			for i, k := range v.Keys {
				if base, isText := strings.CutSuffix(k, "_text"); isText && base != "" {
					texts[base]++
					if i == 0 || v.Keys[i-1] != base {
						t.Errorf("%s.%s does not follow %s (keys %q)", path, k, base, v.Keys)
					}
					checkText(t, path+"."+k, v.Vals[base], v.Vals[k])
				}
				walk(path+"."+k, v.Vals[k])
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", doc)
	names := append(durationFields(reflect.TypeFor[fairsched.Snapshot]()), "waited", "running_for")
	for _, name := range names {
		if texts[name] == 0 {
			t.Errorf("no %s_text in the JSON (have %v)", name, texts)
		}
	}
	// The additions: a pending job's wait and a running job's time, from the
	// snapshot's time (70 s after the start).
	pending := doc.(*ordered).Vals["pending"].([]any)
	running := doc.(*ordered).Vals["running"].([]any)
	for _, c := range []struct {
		row       any
		id, field string
		want      string
	}{
		{pending[0], "fetch-2", "waited", "1m0s"},
		{running[0], "fetch-1", "running_for", "1m0s"},
	} {
		row := c.row.(*ordered)
		if row.Vals["id"] != c.id || row.Vals[c.field+"_text"] != c.want {
			t.Errorf("%s %v: %s_text = %v, want %s", row.Vals["type"], row.Vals["id"], c.field, row.Vals[c.field+"_text"], c.want)
		}
	}
	if !strings.Contains(body, `"waited": 60000000000,`+"\n"+`      "waited_text": "1m0s",`) {
		t.Errorf("the JSON lacks a pending job's wait as the package doc shows it:\n%s", body)
	}
}

// durationFields returns the JSON names of the time.Duration fields (and
// maps of them) among t's fields and those of the types it holds.
func durationFields(t reflect.Type) []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			if t.PkgPath() == "time" {
				return
			}
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" {
					name = f.Name
				}
				if f.Type == reflect.TypeFor[time.Duration]() ||
					f.Type.Kind() == reflect.Map && f.Type.Elem() == reflect.TypeFor[time.Duration]() {
					names = append(names, name)
				}
				walk(f.Type)
			}
		}
	}
	walk(t)
	return names
}

// checkText: text is the duration of ns (a number), or a map of them.
func checkText(t *testing.T, path string, ns, text any) {
	t.Helper()
	switch ns := ns.(type) {
	case json.Number:
		n, err := ns.Int64()
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if want := time.Duration(n).String(); text != want {
			t.Errorf("%s = %v; want %q", path, text, want)
		}
	case *ordered:
		m, _ := text.(*ordered)
		if m == nil || len(m.Keys) != len(ns.Keys) {
			t.Errorf("%s = %v; want a string for each of %q", path, text, ns.Keys)
			return
		}
		for _, k := range ns.Keys {
			checkText(t, path+"."+k, ns.Vals[k], m.Vals[k])
		}
	default:
		t.Errorf("%s has no number before it (%T)", path, ns)
	}
}

// TestJSONIsTheSnapshotsJSON: without its additions (the "_text"
// siblings, waited, running_for, pending_listed and pending_more), the
// page's JSON is byte for byte what encoding/json writes for the Snapshot:
// the same fields in the same order, the same omissions (omitempty,
// omitzero), the same values.
func TestJSONIsTheSnapshotsJSON(t *testing.T) {
	for name, s := range map[string]*fairsched.Scheduler{
		"fixture": newFixture(t).s,
		"rich":    newRichScheduler(t),
	} {
		snap, err := s.Snapshot(context.Background(), fairsched.SnapshotRows(debugpage.DefaultMaxRows))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		want := decodeOrdered(t, string(b))
		_, body := get(t, debugpage.Handler(s), http.MethodGet, "/snapshot.json")
		got := decodeOrdered(t, body)
		strip(got, 0)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the JSON without its additions differs from the Snapshot's (-want +got):\n%s", name, diff)
		}
	}
}

// strip removes the page's additions from a decoded JSON document.
func strip(v any, depth int) {
	switch v := v.(type) {
	case *ordered:
		keys := v.Keys[:0]
		for _, k := range v.Keys {
			switch {
			case strings.HasSuffix(k, "_text"),
				depth == 0 && (k == "pending_listed" || k == "pending_more" || k == "dead_jobs"),
				depth == 2 && (k == "waited" || k == "running_for"): // in pending[i] and running[i]
				delete(v.Vals, k)
				continue
			}
			keys = append(keys, k)
			strip(v.Vals[k], depth+1)
		}
		v.Keys = keys
	case []any:
		for _, x := range v {
			strip(x, depth+1)
		}
	}
}

// ordered is a decoded JSON object that keeps the order of its keys.
type ordered struct {
	Keys []string
	Vals map[string]any
}

// decodeOrdered decodes a JSON document into *ordered objects, []any
// arrays, json.Number numbers, strings, booleans and nils.
func decodeOrdered(t *testing.T, body string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var value func() any
	value = func() any {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decoding the JSON: %v\n%s", err, body)
		}
		switch tok {
		case json.Delim('{'):
			o := &ordered{Vals: map[string]any{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatalf("decoding the JSON: %v", err)
				}
				o.Keys = append(o.Keys, k.(string))
				o.Vals[k.(string)] = value()
			}
			_, _ = dec.Token() // }
			return o
		case json.Delim('['):
			a := []any{}
			for dec.More() {
				a = append(a, value())
			}
			_, _ = dec.Token() // ]
			return a
		}
		return tok
	}
	return value()
}

// TestScoringTiersAdaptive: the page shows scores with WithScoring, tier
// shares with WithTier, and the adaptive limit.
func TestScoringTiersAdaptive(t *testing.T) {
	s, mock, block := newScheduler(t,
		fairsched.WithScoring(fairsched.ScoreConfig{}),
		fairsched.WithAdaptiveLimit(fairsched.AdaptiveLimitConfig{Min: 1, Max: 4}),
		fairsched.WithTier(2, fairsched.TierConfig{MinShare: 0.25, BurstShare: 0.5, LendIdle: true}),
	)
	if err := s.RegisterType("batch", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Submit("batch", fmt.Sprint("b", i), block); err != nil {
			t.Fatal(err)
		}
	}
	mock.Add(10 * time.Second)
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pending) != 1 || snap.Pending[0].Score == 0 {
		t.Fatalf("pending = %+v, want one scored job", snap.Pending)
	}
	_, page := get(t, debugpage.Handler(s), http.MethodGet, "/")
	header := visible(page[strings.Index(page, "<header>"):strings.Index(page, "</header>")])
	if !strings.Contains(header, "adaptive limit 4 now, between 1 and 4") {
		t.Errorf("header %q lacks the adaptive limit", header)
	}
	rows := rowText(t, page, "pending")
	score := fmt.Sprintf("%.1f", snap.Pending[0].Score)
	if len(rows) != 1 || !strings.Contains(rows[0], "tier_limit") || !strings.HasSuffix(rows[0], score+" 10s") {
		t.Errorf("pending rows %q, want b2 waiting for tier_limit with score %s", rows, score)
	}
	if tiers := rowText(t, page, "tiers"); !containsRow(tiers, "2 2 1 2 (50% of 4) 1 (25%) yes batch") {
		t.Errorf("tiers:\n%s", strings.Join(tiers, "\n"))
	}
}

// TestDeadJobsShown: a durable job that failed for good is listed with its
// attempts and last error, in the page and in the JSON.
func TestDeadJobsShown(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	// The store closes last, once the scheduler's writer is done with it:
	// cleanups run last registered first, and the scheduler's Close, with a
	// context that lets it wait for the final save, comes before
	// fairschedtest's (whose ended context does not wait: the store closed
	// under the writer, a data race under -race).
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	s := fairschedtest.New(t, fairsched.WithStore(st))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.RegisterType("mail", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterHandler("mail", func(context.Context, fairsched.Job) error {
		return fairsched.Permanent(errors.New("no such mailbox"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(context.Background(), "mail", "welcome/ada", nil); err != nil {
		t.Fatal(err)
	}
	fairschedtest.WaitIdle(t, s)
	_, page := get(t, debugpage.Handler(s), http.MethodGet, "/")
	rows := rowText(t, page, "dead")
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "mail welcome/ada 1 ") || !strings.HasSuffix(rows[0], "no such mailbox") {
		t.Errorf("dead rows %q", rows)
	}
	_, body := get(t, debugpage.Handler(s), http.MethodGet, "/snapshot.json")
	var doc struct {
		Dead []struct {
			ID        string `json:"ID"`
			LastError string `json:"LastError"`
		} `json:"dead_jobs"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || len(doc.Dead) != 1 || doc.Dead[0].ID != "welcome/ada" {
		t.Errorf("JSON dead_jobs %+v (%v)", doc.Dead, err)
	}
}
