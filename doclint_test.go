package fairsched_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// notInDocs is what a public doc never names: a source file (a reader of
// go doc has no such file before them, and it moves), an issue, a spec or
// a change by number (history, which git log keeps) — a line break
// between the word and the number included.
var notInDocs = regexp.MustCompile(`\b[\w./-]+\.go\b|\b[Ii]ssues?\s+#?\d+|\b[Ss]pec(?:s|'s)?\s+[A-Z]?\d|\b[Cc]hanges?\s+\d+|#\d{2,}\b`)

// TestPublicDocs: the package doc and every exported identifier's doc
// (fields included) of every package outside internal/ name no file,
// issue, spec or change.
func TestPublicDocs(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "internal" || name == "testdata" || name == "bench") {
			return filepath.SkipDir
		}
		for _, bad := range docFindings(t, path) {
			t.Errorf("%s: %s", path, bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// docFindings lists the docs of the package in dir that name what
// notInDocs forbids.
func docFindings(t *testing.T, dir string) []string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	check := func(what, text string) {
		if m := notInDocs.FindAllString(text, -1); m != nil {
			found = append(found, what+" names "+strings.Join(m, ", "))
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			check(strings.Join(v.Names, ", "), v.Doc)
		}
	}
	// The examples, which go doc and pkg.go.dev show with their comments.
	tests, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tests {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
					continue
				}
				for _, cg := range f.Comments {
					if cg == fn.Doc || (cg.Pos() > fn.Pos() && cg.End() < fn.End()) {
						check(fn.Name.Name, cg.Text())
					}
				}
			}
		}
	}
	for _, p := range pkgs {
		dp := doc.New(p, dir, 0) // exported identifiers only
		check("the package doc", dp.Doc)
		values(dp.Consts)
		values(dp.Vars)
		for _, f := range dp.Funcs {
			check(f.Name, f.Doc)
		}
		for _, ty := range dp.Types {
			check(ty.Name, ty.Doc)
			values(ty.Consts)
			values(ty.Vars)
			for _, f := range append(ty.Funcs, ty.Methods...) {
				check(ty.Name+"."+f.Name, f.Doc)
			}
			ast.Inspect(ty.Decl, func(n ast.Node) bool {
				if f, ok := n.(*ast.Field); ok && f.Doc != nil && len(f.Names) > 0 && f.Names[0].IsExported() {
					check(ty.Name+"."+f.Names[0].Name, f.Doc.Text())
				}
				return true
			})
		}
	}
	return found
}

// notInProse is the history a README or docs page never tells: issues,
// changes, specs by number, sessions and builds are what git log is for —
// a line break between the word and the number included.
var notInProse = regexp.MustCompile(`\b[Ii]ssues?\s+#?\d|#\d{2,}\b|\b[Cc]hanges?\s+\d|\b[Ss]pec(?:s|'s)?\s+[A-Z]?\d|\bsessions?\b|\b(?:build|commit|hash)\s+[0-9a-f]{7,}`)

// sourceFile is a source file named in prose. The README names none; the
// pages of docs/ on design, testing and failures may name the file that
// holds a test or a piece of the design.
var sourceFile = regexp.MustCompile(`\b[\w./-]+\.go\b`)

// TestDocsTellNoHistory: README.md and docs/*.md describe the product as
// it is.
func TestDocsTellNoHistory(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append(pages, "README.md") {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if n := strings.Count(text, "\n"); page == "README.md" && n > 300 {
			t.Errorf("README.md has %d lines: what a user needs fits in 300, the rest belongs in docs/", n)
		}
		lineOf := func(i int) int { return strings.Count(text[:i], "\n") + 1 }
		for _, m := range notInProse.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d tells history: %q", page, lineOf(m[0]), text[m[0]:m[1]])
		}
		if page == "README.md" {
			for _, m := range sourceFile.FindAllStringIndex(text, -1) {
				t.Errorf("%s:%d names a source file: %q", page, lineOf(m[0]), text[m[0]:m[1]])
			}
		}
	}
}
