// Package aliasdoc writes, under the doc comment of each type alias of the
// root package that names a type of another package of the module, that
// type's exported fields or methods with their comments (a struct or an
// interface) or its declaration (a type defined as a string, a number, a
// map...). An alias of a func type must spell its signature in its own
// doc, in the root package's names.
// An alias shows nothing of its target in go doc or on pkg.go.dev; users
// read the root package, so the fields must be there. The block is
// generated (go generate in the root), and TestAliasDocs fails when it is
// out of date.
package aliasdoc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Marker starts the generated part of a doc comment: everything from it to
// the end of the comment is rewritten.
const Marker = "// Fields, from "

// MethodsMarker is Marker for interfaces.
const MethodsMarker = "// Methods, from "

// TypeMarker is Marker for other types but funcs.
const TypeMarker = "// Declared, in "

// Render returns the root package's non-test files, at dir, whose alias
// docs change, with their new contents. module is the module path.
func Render(dir, module string) (map[string][]byte, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	pkgs := map[string]map[string]*ast.TypeSpec{} // import path → type name → spec
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		imports := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			local := filepath.Base(path)
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = path
		}
		type edit struct {
			from, to int
			text     string
		}
		var edits []edit
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				sel, ok := ts.Type.(*ast.SelectorExpr)
				if !ts.Assign.IsValid() || !ok || !ts.Name.IsExported() {
					continue
				}
				pkgIdent, ok := sel.X.(*ast.Ident)
				if !ok {
					continue
				}
				path := imports[pkgIdent.Name]
				if !strings.HasPrefix(path, module+"/") {
					continue
				}
				if pkgs[path] == nil {
					if pkgs[path], err = typeSpecs(filepath.Join(dir, strings.TrimPrefix(path, module+"/"))); err != nil {
						return nil, err
					}
				}
				target := pkgs[path][sel.Sel.Name]
				if target == nil {
					return nil, fmt.Errorf("%s: %s.%s not found", fset.Position(ts.Pos()), pkgIdent.Name, sel.Sel.Name)
				}
				block, err := members(pkgIdent.Name+"."+sel.Sel.Name, target)
				if err != nil {
					return nil, err
				}
				doc := gd.Doc
				if gd.Lparen.IsValid() {
					doc = ts.Doc
				}
				if _, isFunc := target.Type.(*ast.FuncType); isFunc && (doc == nil || !strings.Contains(doc.Text(), "func(")) {
					return nil, fmt.Errorf("%s: alias %s of a func type does not spell its signature (func(...) ...) in its doc", fset.Position(ts.Pos()), ts.Name.Name)
				}
				if block == "" {
					continue
				}
				if doc == nil {
					return nil, fmt.Errorf("%s: alias %s has no doc comment of its own", fset.Position(ts.Pos()), ts.Name.Name)
				}
				from, to := fset.Position(doc.Pos()).Offset, fset.Position(doc.End()).Offset
				text := string(src[from:to])
				for _, m := range []string{"\n//\n" + Marker, "\n//\n" + MethodsMarker, "\n//\n" + TypeMarker} {
					if i := strings.Index(text, m); i >= 0 {
						text = text[:i]
					}
				}
				edits = append(edits, edit{from, to, text + "\n//\n" + block})
			}
		}
		if len(edits) == 0 {
			continue
		}
		var b bytes.Buffer
		last := 0
		for _, e := range edits {
			b.Write(src[last:e.from])
			b.WriteString(e.text)
			last = e.to
		}
		b.Write(src[last:])
		if !bytes.Equal(b.Bytes(), src) {
			out[name] = b.Bytes()
		}
	}
	return out, nil
}

// typeSpecs returns the type declarations of the package in dir.
func typeSpecs(dir string) (map[string]*ast.TypeSpec, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	specs := map[string]*ast.TypeSpec{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					specs[ts.Name.Name] = ts
				}
			}
		}
	}
	return specs, nil
}

// members renders the exported fields (or methods) of ts, each after its
// comment, as a doc comment code block, or for a type that is neither a
// struct, an interface nor a func its declaration; "" for a func type.
func members(qualified string, ts *ast.TypeSpec) (string, error) {
	var list *ast.FieldList
	marker := Marker
	switch t := ts.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list, marker = t.Methods, MethodsMarker
	case *ast.FuncType:
		return "", nil
	default:
		typ, err := render(t)
		if err != nil {
			return "", err
		}
		return TypeMarker + qualified + ", as:\n//\n//\ttype " + ts.Name.Name + " " + typ, nil
	}
	var lines []string
	for _, f := range list.List {
		var names []string
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n.Name)
			}
		}
		typ, err := render(f.Type)
		if err != nil {
			return "", err
		}
		if len(f.Names) == 0 { // embedded
			if !ast.IsExported(strings.TrimPrefix(typ, "*")) && !strings.Contains(typ, ".") {
				continue
			}
			names = []string{""}
		}
		if len(names) == 0 {
			continue
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		if f.Doc != nil {
			for _, c := range f.Doc.List {
				lines = append(lines, c.Text)
			}
		}
		line := strings.Join(names, ", ")
		if _, isFunc := f.Type.(*ast.FuncType); isFunc && marker == MethodsMarker {
			line += strings.TrimPrefix(typ, "func")
		} else if line == "" {
			line = typ
		} else {
			line += " " + typ
		}
		if f.Comment != nil {
			line += " " + strings.TrimSpace(f.Comment.List[0].Text)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(marker + qualified + ":\n//")
	for _, l := range lines {
		b.WriteString("\n//")
		if l != "" {
			b.WriteString("\t" + l)
		}
	}
	return b.String(), nil
}

// render prints a type expression as in the source.
func render(e ast.Expr) (string, error) {
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), e); err != nil {
		return "", err
	}
	return b.String(), nil
}
