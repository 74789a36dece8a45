package planview

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/venom-org/git-venom/internal/gittest"
)

// TestQuote: names print as they are unless a byte would make the line
// ambiguous; two names that differ only in bytes that are not UTF-8 print
// apart.
func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a.txt":          "a.txt",
		"sp ace/é.go":    "sp ace/é.go",
		"\ufffd.txt":     "\ufffd.txt", // a real U+FFFD is a valid name
		"n\xff":          `"n\377"`,
		"n\xfe":          `"n\376"`,
		"caf\xe9/x":      `"caf\351/x"`,
		"é\xff":          `"é\377"`,
		"t\tb":           `"t\tb"`,
		"n\nl":           `"n\nl"`,
		"a\x01\x1b\x7fz": `"a\001\033\177z"`,
		`q"x`:            `"q\"x"`,
		`"lead`:          `"\"lead"`,
		`b\s`:            `"b\\s"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuoteAsGit: Quote quotes as git does: as `git ls-files` with
// core.quotePath=false for names that are UTF-8, and as with the default
// core.quotePath=true for names of ASCII and bytes that are not UTF-8.
// The names are only in the index, so any filesystem will do.
func TestQuoteAsGit(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	names := []string{"plain", "sp ace", "é.go", "t\tb", "n\nl", "a\x01\x1b\x7fz", `q"x`, `b\s`, "n\xff", "n\xfe", "x\x80\xc3"}
	for _, n := range names {
		r.Git("update-index", "--add", "--info-only", "--cacheinfo", "100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,"+n)
	}
	utf := strings.Split(strings.TrimSuffix(r.Git("-c", "core.quotePath=false", "ls-files"), "\n"), "\n")
	full := strings.Split(strings.TrimSuffix(r.Git("-c", "core.quotePath=true", "ls-files"), "\n"), "\n")
	if len(utf) != len(names) || len(full) != len(names) {
		t.Fatalf("ls-files listed %d and %d names for %d", len(utf), len(full), len(names))
	}
	for i, n := range strings.Split(strings.TrimSuffix(r.Git("ls-files", "-z"), "\x00"), "\x00") {
		got := Quote(n)
		if utf8.ValidString(n) && got != utf[i] {
			t.Errorf("%q: %s, git with core.quotePath=false prints %s", n, got, utf[i])
		}
		if !hasMultibyteRune(n) && got != full[i] {
			t.Errorf("%q: %s, git prints %s", n, got, full[i])
		}
	}
}

// hasMultibyteRune reports whether s holds a valid UTF-8 sequence of more
// than one byte (which git's default core.quotePath escapes and we keep).
func hasMultibyteRune(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && n > 1 {
			return true
		}
		i += n
	}
	return false
}
