// Command fairsched-demo plays the spec's five scenarios through the real
// scheduler in virtual time and prints what it decided, step by step.
//
//	go run ./cmd/fairsched-demo            # all five
//	go run ./cmd/fairsched-demo -only 3    # one of them
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/benbjohnson/clock"

	"github.com/fairsched/fairsched/internal/scenario"
)

func main() {
	only := flag.Int("only", 0, "play only scenario N")
	flag.Parse()
	if err := play(os.Stdout, *only); err != nil {
		fmt.Fprintln(os.Stderr, "fairsched-demo:", err)
		os.Exit(1)
	}
}

func play(w io.Writer, only int) error {
	for i, sc := range scenario.All() {
		if only != 0 && only != i+1 {
			continue
		}
		res, err := scenario.Run(sc, clock.NewMock(), scenario.Poll)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\nSCENARIO %s\n%s\n%s\n", strings.Repeat("=", 100), sc.Name, sc.Title, strings.Repeat("=", 100))
		for _, e := range res.Timeline {
			fmt.Fprintln(w, " ", e)
		}
		fmt.Fprintln(w, "\n  Accumulated cost per fairness key:")
		keys := make([]string, 0, len(res.AccumulatedCost))
		for k := range res.AccumulatedCost {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			return cmp.Or(cmp.Compare(res.AccumulatedCost[a], res.AccumulatedCost[b]), cmp.Compare(a, b))
		})
		for _, k := range keys {
			name := k
			if name == "" {
				name = "bg"
			}
			fmt.Fprintf(w, "    %-10s %v\n", name, res.AccumulatedCost[k])
		}
		for _, line := range scenario.Check(sc, res) {
			fmt.Fprintln(w, "  >>>", line)
		}
		fmt.Fprintln(w)
	}
	return nil
}
