package planview

import (
	"strings"
	"unicode/utf8"
)

// Quote returns path as the human output prints it: as it is, unless
// it holds a byte that would make the line ambiguous, and then in git's
// C-style quoting (quote.c's quote_c_style, as `git ls-files` prints): in
// double quotes, with \a \b \t \n \v \f \r \" and \\ for those bytes, and
// every other control byte, and every byte that is not part of valid
// UTF-8, in octal (\377). Valid UTF-8 stays as it is, as git prints it
// with core.quotePath=false: "é" is readable and names one file, while two
// names that differ only in bytes that are not UTF-8 would otherwise print
// alike. Paths are any bytes but NUL (RFC 4.2, 11.1), so this is how the
// human output of plan, rollback and checkpoint prints one on a line.
func Quote(path string) string {
	if !needsQuote(path) {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); {
		c := path[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(path[i:])
			if r == utf8.RuneError && n == 1 {
				octal(&b, c)
			} else {
				b.WriteString(path[i : i+n])
			}
			i += n
			continue
		}
		switch k := strings.IndexByte(cEscaped, c); {
		case k >= 0:
			b.WriteByte('\\')
			b.WriteByte(cEscapes[k])
		case c < 0x20 || c == 0x7f:
			octal(&b, c)
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}

// cEscaped are the bytes git's C-style quoting writes as a backslash and
// the letter at the same place in cEscapes.
const cEscaped, cEscapes = "\a\b\t\n\v\f\r\"\\", `abtnvfr"\`

// needsQuote reports whether path has a byte Quote escapes. A path
// starting with a double quote is quoted too, so a quoted name can never be
// read as a plain one.
func needsQuote(path string) bool {
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			return true
		}
	}
	return !utf8.ValidString(path)
}

func octal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + c>>3&7)
	b.WriteByte('0' + c&7)
}

// Quotes quotes each of paths with Quote.
func Quotes(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = Quote(p)
	}
	return out
}
