package planview

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Columns are the widths, in terminal cells, of the change and class
// columns of a set of rows, so that their paths line up.
type Columns struct {
	Change, Class int
}

// ColumnsOf returns the columns that fit every row of rows: at least 6
// cells for the change (create, modify, delete, left) and 7 for the class
// (outside, or a left path's reason, up to changed_during_rollback's 23).
func ColumnsOf(rows []Row) Columns {
	c := Columns{Change: 6, Class: 7}
	for _, r := range rows {
		c.Change = max(c.Change, len(r.Change))
		c.Class = max(c.Class, len(r.Class))
	}
	return c
}

// Cells is a row laid out for a terminal: Mark is "!" for the person's
// row and " " otherwise; Change and Class are padded to their columns;
// Path is quoted (Quote), a directory's with its trailing "/", and cut at
// its start ("...") when the line would be wider than asked; Suffix is ""
// or "  (4,603 files)", "  (detail)", "  (2 files; detail)". A UI styles
// each part; String joins them. When a width too narrow for even a short
// path was asked, Mark holds the whole line, cut (Fit), and the other
// parts are empty.
type Cells struct {
	Mark, Change, Class, Path, Suffix string
}

// String is the row's line: mark, change, class and path in columns two
// cells apart, then the suffix.
func (c Cells) String() string {
	if c.Change == "" {
		return c.Mark // cut: the whole line is in Mark
	}
	return c.Mark + " " + c.Change + "  " + c.Class + "  " + c.Path + c.Suffix
}

// Cells lays r out in columns cols, in at most width terminal cells
// (width <= 0: no limit). When the line is too wide the path loses its
// start, as git's diffstat does ("...al/PlainDate/"), so its end stays
// readable; a directory's suffix shrinks to "  (4,603)" and then goes
// before the path gets shorter than 5 cells; if even that cannot fit, the
// line is cut (Fit).
func (r Row) Cells(cols Columns, width int) Cells {
	c := Cells{Mark: " ", Change: pad(r.Change, cols.Change), Class: pad(r.Class, cols.Class), Path: Quote(r.Path)}
	if r.Person() {
		c.Mark = "!"
	}
	switch {
	case r.Dir && r.Detail != "":
		c.Suffix = "  (" + plural(r.Count, "file", "files") + "; " + r.Detail + ")"
	case r.Dir:
		c.Suffix = "  (" + plural(r.Count, "file", "files") + ")"
	case r.Detail != "":
		c.Suffix = "  (" + r.Detail + ")"
	}
	if width <= 0 || Width(c.String()) <= width {
		return c
	}
	// The path loses its start; if too little of it would be left, the
	// suffix first shrinks to the bare count, then goes.
	short := ""
	if r.Dir {
		short = "  (" + Number(r.Count) + ")"
	}
	for _, suffix := range []string{c.Suffix, short, ""} {
		fixed := Width(c.Mark) + 1 + Width(c.Change) + 2 + Width(c.Class) + 2 + Width(suffix)
		if avail := width - fixed; avail >= 8 || (suffix == "" && avail >= 4) {
			c.Path, c.Suffix = "..."+tail(c.Path, avail-3), suffix
			return c
		}
	}
	// Not even that fits: cut the line.
	return Cells{Mark: Fit(c.Mark+" "+c.Change+"  "+c.Class+"  "+c.Path, width)}
}

func pad(s string, n int) string {
	if w := Width(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return s
}

// tail is the end of s that fits in n cells.
func tail(s string, n int) string {
	w := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if w+runeWidth(r) > n {
			return s[i:]
		}
		w += runeWidth(r)
		i -= size
	}
	return s
}

// Fit cuts line to at most width terminal cells, ending it with "..." when
// it was cut; width <= 0 leaves it as it is. line holds no escape
// sequences (colour is added after fitting).
func Fit(line string, width int) string {
	if width <= 0 || Width(line) <= width {
		return line
	}
	if width <= 3 {
		return strings.Repeat(".", width)
	}
	w := 0
	for i, r := range line {
		if w+runeWidth(r) > width-3 {
			return line[:i] + "..."
		}
		w += runeWidth(r)
	}
	return line
}

// Wrap breaks line at spaces into lines of at most width terminal cells,
// the first as line's own indent has it and the rest after indent: for
// prose a person reads, which Fit would cut. A word wider than the room
// is not broken (a command or a path stays whole, as git leaves a long
// hint); width <= 0 leaves line as it is, one line.
func Wrap(line string, width int, indent string) []string {
	if width <= 0 || Width(line) <= width {
		return []string{line}
	}
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	var out []string
	cur, curW := lead, Width(lead)
	empty := true
	for _, w := range strings.Fields(line) {
		ww := Width(w)
		if !empty && curW+1+ww > width {
			out = append(out, cur)
			cur, curW, empty = indent, Width(indent), true
		}
		if !empty {
			cur, curW = cur+" ", curW+1
		}
		cur, curW, empty = cur+w, curW+ww, false
	}
	return append(out, cur)
}

// Width is how many terminal cells s takes: one a character, two for the
// wide characters of East Asian scripts and emoji, none for combining
// marks and control characters (which Quote never leaves in a path). It
// is an approximation of wcwidth, without its locale tables.
func Width(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			n = 0
			for _, r := range s {
				n += runeWidth(r)
			}
			return n
		}
	}
	return len(s)
}

func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b:
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
