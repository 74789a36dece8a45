package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/venom-org/git-venom/internal/planview"
)

// styles are the screens' few looks. With NO_COLOR set lipgloss drops
// every colour (termenv honours it); the cursor row keeps its reverse
// video and its "›" mark, and outside paths their "!", so nothing is told
// by colour alone.
type styles struct {
	header, footer, cursor, dim, gold, err, ok, bold lipgloss.Style
}

func newStyles() styles {
	return styles{
		header: lipgloss.NewStyle().Bold(true).Reverse(true),
		footer: lipgloss.NewStyle().Faint(true),
		cursor: lipgloss.NewStyle().Reverse(true),
		dim:    lipgloss.NewStyle().Faint(true),
		// Gold: the person's paths (RFC 12, "outside paths come first, in gold").
		gold: lipgloss.NewStyle().Foreground(lipgloss.Color("220")).Bold(true),
		err:  lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		ok:   lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		bold: lipgloss.NewStyle().Bold(true),
	}
}

// colourOn reports whether lipgloss puts colours on this terminal. It
// does not with NO_COLOR set, with CI set (termenv takes the output for a
// build log's), or on a terminal without colours (TERM=dumb). Patches ask
// the same question (then color.diff), so that no screen is half in
// colour.
func colourOn() bool {
	return lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Render("x") != "x"
}

// cut shortens s (which may hold colour sequences) to w cells, with "…"
// when something was cut.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad cuts or pads s to exactly w cells.
func pad(s string, w int) string {
	s = cut(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// fit makes lines exactly h lines of at most w cells: cut, or padded with
// empty lines.
func fit(lines []string, w, h int) []string {
	out := make([]string, 0, h)
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out = append(out, cut(lines[i], w))
		} else {
			out = append(out, "")
		}
	}
	return out
}

// plural is "1 file", "4,603 files" (planview.Number, as the plan
// counts).
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return planview.Number(n) + " " + many
}

// wrap breaks s (plain text) into lines of at most w cells at spaces only
// (a command or a path never breaks at a hyphen), the lines after the
// first indented by indent; a word longer than a line is cut into pieces.
func wrap(s string, w int, indent string) []string {
	if w <= ansi.StringWidth(indent)+8 || ansi.StringWidth(s) <= w {
		return []string{s}
	}
	var out []string
	line := s[:len(s)-len(strings.TrimLeft(s, " "))]
	empty := true
	for _, word := range strings.Fields(s) {
		for {
			lw, ww := ansi.StringWidth(line), ansi.StringWidth(word)
			sep := 1
			if empty {
				sep = 0
			}
			if lw+sep+ww <= w {
				if !empty {
					line += " "
				}
				line, empty = line+word, false
				break
			}
			if !empty {
				out = append(out, line)
				line, empty = indent, true
				continue
			}
			n := w - lw
			out = append(out, line+ansi.Cut(word, 0, n))
			word = ansi.Cut(word, n, ww)
			line = indent
		}
	}
	if !empty {
		out = append(out, line)
	}
	return out
}

// render styles each of lines.
func render(st lipgloss.Style, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = st.Render(l)
	}
	return out
}
