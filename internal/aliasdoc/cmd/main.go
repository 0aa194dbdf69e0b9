// Command aliasdoc rewrites the generated field lists of the root
// package's alias docs (see package aliasdoc). Run by go generate in the
// repository's root.
package main

import (
	"fmt"
	"os"

	"github.com/fairsched/fairsched/internal/aliasdoc"
)

func main() {
	files, err := aliasdoc.Render(".", "github.com/fairsched/fairsched")
	if err != nil {
		fmt.Fprintln(os.Stderr, "aliasdoc:", err)
		os.Exit(1)
	}
	for name, src := range files {
		if err := os.WriteFile(name, src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "aliasdoc:", err)
			os.Exit(1)
		}
		fmt.Println("aliasdoc: wrote", name)
	}
}
