package policy

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want string // "" when valid
	}{
		{"", ""},
		{"repo/a.git", ""},
		{"ключ-日本", ""},
		{strings.Repeat("x", MaxNameLen), ""},
		{strings.Repeat("é", MaxNameLen/2), ""},
		{strings.Repeat("x", MaxNameLen+1), "over the limit"},
		{"bad\x00byte", "NUL byte at 3"},
		{"\xff", "not valid UTF-8"},
		{"key\xfe", "not valid UTF-8"},
	} {
		err := CheckName(tc.s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckName(%q) = %v, want nil", tc.s[:min(len(tc.s), 20)], err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckName(%q) = %v, want an error saying %q", tc.s[:min(len(tc.s), 20)], err, tc.want)
		}
	}
}

func TestInvalidNameNamesTheFieldAndPrintsSafely(t *testing.T) {
	err := InvalidName(ErrInvalidJob, "job id", "a\x00b"+strings.Repeat("z", 5000))
	if !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("err = %v, want ErrInvalidJob", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "job id") || strings.IndexByte(msg, 0) >= 0 || !utf8.ValidString(msg) || len(msg) > 300 {
		t.Fatalf("message %q: want the field named, no NUL, valid UTF-8, short", msg)
	}
	if InvalidName(ErrInvalidConfig, "group", "ok") != nil {
		t.Fatal("a valid name was refused")
	}
}

func TestCleanText(t *testing.T) {
	long := strings.Repeat("é", MaxTextLen) // 2 bytes a rune
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"bad\x00byte", "badbyte"},
		{"a\xffb", "a\uFFFDb"},
		{"\xff\xfe", "\uFFFD"},
		{long, long[:MaxTextLen-4] + "…"},
	} {
		if got := CleanText(tc.in); got != tc.want {
			t.Errorf("CleanText(%.20q) = %.40q, want %.40q", tc.in, got, tc.want)
		}
	}
}

func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", "a\x00", "\xff", strings.Repeat("日", 2000)} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = 4 + abs(n)%MaxTextLen
		got := CleanTextN(s, n)
		if !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 || len(got) > n {
			t.Fatalf("CleanTextN(%q, %d) = %q: not clean", s, n, got)
		}
		if CheckName(s) == nil && len(s) <= n && got != s {
			t.Fatalf("clean text %q changed to %q", s, got)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// BenchmarkValidateJob is the cost the rule for caller strings adds to
// each call: a job's type, id, key and group, short and ASCII.
func BenchmarkValidateJob(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if ValidateJob("clone", "repo/linux.git", true) != nil || ValidateJobNames("10.0.0.7", "mirrors") != nil {
			b.Fatal("refused")
		}
	}
}
