package fairsched_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// minGo is the lowest Go the module needs: testing/synctest.Test, which
// fairschedtest uses, came in Go 1.25. go vet's stdversion check holds the
// code to it; this test holds go.mod and the README to it, so that a
// dependency bump (go mod tidy raises the line to the highest of the
// dependencies') cannot force every importer's go line up unnoticed.
const minGo = "1.25.0"

func TestGoLineIsTheMinimum(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil || string(m[1]) != minGo {
		t.Errorf("go.mod's go line is %q; want %s (a dependency that needs more must be pinned lower)", m, minGo)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go " + strings.TrimSuffix(minGo, ".0"); !strings.Contains(string(readme), want) {
		t.Errorf("the README does not say it needs %s", want)
	}
}

// TestNoCompiledFilesTracked: git tracks no compiled file — an executable
// or object (ELF, Mach-O, PE), an archive (.a) or a test binary (.test) —
// whatever its name: a build run at the root leaves one that `git add -A`
// would take.
func TestNoCompiledFilesTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if kind := compiledKind(t, name); kind != "" {
			t.Errorf("%s is tracked and is %s; remove it (git rm --cached) and add it to .gitignore", name, kind)
		}
	}
}

// compiledKind names the compiled format of the file name, from its
// extension or its first bytes, or returns "".
func compiledKind(t *testing.T, name string) string {
	switch path.Ext(name) {
	case ".test", ".a", ".o", ".so", ".exe", ".dylib", ".dll":
		return "a compiled file (" + path.Ext(name) + ")"
	}
	f, err := os.Open(name)
	if err != nil {
		if os.IsNotExist(err) {
			return "" // deleted in the work tree, not yet committed
		}
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return magicKind(head[:n], f)
}

// magicKind tells a compiled file by its magic number; f is read further
// for a PE signature.
func magicKind(head []byte, f io.ReaderAt) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "an ELF binary"
	case bytes.HasPrefix(head, []byte("!<arch>\n")):
		return "an archive (.a)"
	case len(head) >= 4 && isMachO(binary.BigEndian.Uint32(head)):
		return "a Mach-O binary"
	case len(head) >= 64 && bytes.HasPrefix(head, []byte("MZ")):
		sig := make([]byte, 4)
		if _, err := f.ReadAt(sig, int64(binary.LittleEndian.Uint32(head[0x3c:]))); err == nil && string(sig) == "PE\x00\x00" {
			return "a PE binary"
		}
	}
	return ""
}

func isMachO(magic uint32) bool {
	switch magic {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe:
		return true
	}
	return false
}
