// Command testsum reads `go test -json` on its standard input and prints
// what `go test` prints without -v — a line per package, the output of
// failed tests — plus one line per skipped test with its reason, which
// plain `go test` hides: a test that cannot run here (no Chromium, no
// PostgreSQL) says so in `make test`'s output. It exits 1 if anything
// failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	output := map[string][]string{} // package/test → its output lines
	var skips []string
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // not JSON: a build error, say
			continue
		}
		key := e.Package + "/" + e.Test
		switch e.Action {
		case "output":
			if e.Test == "" {
				if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") ||
					strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "panic") {
					fmt.Fprint(out, e.Output)
				} else {
					output[key] = append(output[key], e.Output)
				}
				continue
			}
			output[key] = append(output[key], e.Output)
		case "skip":
			if e.Test != "" {
				skips = append(skips, fmt.Sprintf("SKIP %s %s: %s", e.Package, e.Test, reason(output[key])))
			}
			delete(output, key)
		case "fail":
			failed = true
			for _, l := range output[key] {
				fmt.Fprint(out, l)
			}
			delete(output, key)
		case "pass":
			delete(output, key)
		}
	}
	for _, s := range skips {
		fmt.Fprintln(out, s)
	}
	if failed {
		return 1
	}
	return 0
}

// reason returns what a skipped test said, without go test's framing.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ".go:"); ok { // file.go:12: message
			if _, msg, ok = strings.Cut(msg, ": "); ok {
				l = msg
			}
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
