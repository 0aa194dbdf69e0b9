package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Caller strings. Every name a caller gives the scheduler — a job type, a
// job id, a fairness key, a group, a conflict group, a worker id, a cluster
// domain or instance — follows one rule, whatever the mode: valid UTF-8,
// no NUL byte, at most MaxNameLen bytes. A program that works in memory
// then keeps working when moved to bbolt or PostgreSQL: PostgreSQL's text
// refuses NUL and invalid UTF-8, and the longest index key the stores
// build — a conflict group and a job id joined, or a (type, id) pair — is
// 2 × MaxNameLen + 1 bytes, under PostgreSQL's btree limit of 2 704 with
// room to spare.

// MaxNameLen bounds every caller string, in bytes.
const MaxNameLen = 1024

// CheckName returns nil when s follows the rule for caller strings, and
// otherwise an error that says which part it breaks. It does not decide
// whether s may be empty: each field says that itself.
func CheckName(s string) error {
	switch {
	case len(s) > MaxNameLen:
		return fmt.Errorf("is %d bytes long, over the limit of %d", len(s), MaxNameLen)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("contains a NUL byte at %d", strings.IndexByte(s, 0))
	case !utf8.ValidString(s):
		return fmt.Errorf("is not valid UTF-8")
	}
	return nil
}

// InvalidName returns nil when s follows the rule for caller strings, and
// otherwise an error wrapping sentinel (ErrInvalidJob or ErrInvalidConfig)
// that names field and shows the start of s, made safe to print.
func InvalidName(sentinel error, field, s string) error {
	if err := CheckName(s); err != nil {
		return fmt.Errorf("%w: %s %q %v", sentinel, field, CleanTextN(s, 64), err)
	}
	return nil
}

// MaxTextLen bounds free text the library stores or publishes to other
// instances — a failed attempt's error, a reason — in bytes.
const MaxTextLen = 4096

// CleanText returns s made safe to store and to show: each run of invalid
// UTF-8 bytes replaced by U+FFFD, NUL bytes removed, and cut at a rune boundary
// to at most MaxTextLen bytes, a cut text ending in "…". Text that is
// already clean comes back unchanged, without a copy.
func CleanText(s string) string { return CleanTextN(s, MaxTextLen) }

// CleanTextN is CleanText with a bound of n bytes (n ≥ 4).
func CleanTextN(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= n {
		return s
	}
	const ellipsis = "…" // 3 bytes
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
