package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/plumbing"
)

// colorReset ends a coloured span (git's GIT_COLOR_RESET).
const colorReset = "\x1b[m"

// defaultColors are the slots of color.venom.<slot> and their colours
// when git's config sets none: outside is the RFC's gold (RFC 12, the TUI:
// outside paths first, in gold), 256-colour 178.
var defaultColors = map[string]string{
	"outside": "\x1b[38;5;178m",
	"create":  "\x1b[32m",
	"modify":  "\x1b[36m",
	"delete":  "\x1b[31m",
	"left":    "\x1b[2m",
	"header":  "\x1b[1m",
	"warn":    "\x1b[33m",
}

// palette maps a slot to its escape sequence; a nil palette colours
// nothing.
type palette map[string]string

// newPalette is defaultColors with the slots git's config sets
// (color.venom.<slot>) read by `git config --get-color`, so git's colour
// syntax ("bold red", "#ffd700", "178 ul") is git's to parse. A value git
// refuses keeps the slot's default and says so on errw.
func newPalette(ctx context.Context, cfg outputConfig, errw io.Writer) palette {
	p := palette{}
	for k, v := range defaultColors {
		p[k] = v
	}
	var keys []string
	for k := range cfg {
		if slot, ok := strings.CutPrefix(k, "color.venom."); ok {
			if _, known := defaultColors[slot]; known {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out, err := plumbing.RunDiscovered(ctx, ".", "config", "--get-color", k)
		if err != nil {
			fmt.Fprintf(errw, "warning: %s: git cannot read it as a colour; the default is used\n", k)
			continue
		}
		p[strings.TrimPrefix(k, "color.venom.")] = string(out)
	}
	return p
}

// paint wraps s in slot's colour; with no palette, or an empty colour, s
// is as it is.
func (p palette) paint(slot, s string) string {
	c := p[slot]
	if c == "" || s == "" {
		return s
	}
	return c + s + colorReset
}
