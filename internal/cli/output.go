package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// columns is the width, in terminal cells, the human output fits its
// lines to: $COLUMNS when it is a positive number (as git's term_columns
// reads it, and as git sets it for a pager it starts), else the
// terminal's when Out is one (measured before a pager takes Out over),
// else 0: a file or a pipe gets whole lines.
func (e *env) columns() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if e.width != 0 {
		return e.width
	}
	if f, ok := e.Out.(*os.File); ok {
		if n, ok := termColumns(f); ok {
			if n <= 0 {
				n = 80 // a terminal that does not say: git's default
			}
			return n
		}
	}
	return 0
}

// outputFlags are the options of the commands whose human output is paged
// and coloured as git's (git-venom-plan(1), PAGER AND COLOUR).
type outputFlags struct {
	color             string
	noColor           bool
	noPager, paginate bool
}

func (o *outputFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&o.color, "color", "", "colour the output: `when` is auto, always or never (--color alone: always)")
	fs.Lookup("color").NoOptDefVal = "always"
	fs.BoolVar(&o.noColor, "no-color", false, "no colour (--color=never)")
	fs.BoolVarP(&o.paginate, "paginate", "p", false, "page the output even if pager.<command> says not to")
	fs.BoolVar(&o.noPager, "no-pager", false, "do not page the output")
}

// outputConfig is what git's config says about paging and colour: the
// keys configRegexp lists, lower-cased as git prints them, each with its
// value and whether it had one (a bare "[pager] venom-plan" has none,
// which git reads as true).
type outputConfig map[string]*string

// configRegexp are the keys setupOutput reads, in one git config call.
const configRegexp = `^(color\.(ui|pager|venom)|color\.venom\..*|core\.pager|pager\.venom-.*)$`

func readOutputConfig(ctx context.Context) outputConfig {
	out, err := plumbing.RunDiscovered(ctx, ".", "config", "-z", "--get-regexp", configRegexp)
	c := outputConfig{}
	if err != nil && !plumbing.IsExit(err, 1) {
		return c // no repository, or no config: git's defaults
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, ok := strings.Cut(string(rec), "\n")
		if ok {
			c[k] = &v
		} else {
			c[k] = nil
		}
	}
	return c
}

// get returns key's value and whether it is set; a key set with no value
// reads as "true", as git reads a bare key.
func (c outputConfig) get(key string) (string, bool) {
	v, ok := c[key]
	if !ok {
		return "", false
	}
	if v == nil {
		return "true", true
	}
	return *v, true
}

// colorBool reads a color.* setting as git_config_colorbool does: never,
// always or auto, a true boolean meaning auto.
func colorBool(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "never", "always", "auto":
		return strings.ToLower(v), true
	}
	b, err := checkpoint.ParseBool(v)
	if err != nil {
		return "", false
	}
	if b {
		return "auto", true
	}
	return "never", true
}

// setupOutput decides, for command name ("venom-plan", "venom-checkpoint"),
// whether the human output goes through a pager and uses colour, as git
// does it (pager.c, color.c):
//
//   - Nothing of this with --json, or when Out is not a terminal (a file,
//     a pipe, a harness), except colour that --color=always asks for.
//   - The pager is git's: $GIT_PAGER, then core.pager, then $PAGER, then
//     less; "" or "cat" is none. pager.<name> (true, false, or a pager
//     command) says whether this command pages; pageByDefault is the
//     answer when it says nothing; -p/--paginate pages and --no-pager
//     does not. When git itself started a pager (`git -p`, a
//     pager.<name> git read) it says so in $GIT_PAGER_IN_USE, and
//     `git --no-pager` sets $GIT_PAGER=cat: both are honoured. less gets
//     LESS=FRX and lv LV=-c unless they are set, so a short output
//     leaves the screen at once.
//   - Colour: --color[=when]/--no-color, else none when $NO_COLOR is set
//     (no-color.org), else color.venom, else color.ui, else auto: on a
//     terminal whose $TERM is not dumb, or into a pager (unless
//     color.pager is false). color.venom.<slot> sets a slot's colour, in
//     git's colour syntax, read by `git config --get-color`.
//
// The pager starts at the first byte written, so a command that fails
// before it prints anything shows its error as it would without one.
func (e *env) setupOutput(ctx context.Context, name string, o outputFlags, pageByDefault bool) error {
	when := o.color
	if o.noColor {
		when = "never"
	}
	switch when {
	case "", "auto", "always", "never":
	default:
		return rfcerr.New("invalid_params.usage", map[string]any{"color": when}, "--color must be auto, always or never, not %q", when)
	}
	if e.JSON {
		return nil
	}
	f, _ := e.Out.(*os.File)
	tty := false
	if f != nil {
		var n int
		if n, tty = termColumns(f); tty {
			e.width = n
			if n <= 0 {
				e.width = 80
			}
		}
	}
	inUse, _ := checkpoint.ParseBool(os.Getenv("GIT_PAGER_IN_USE"))
	inUse = inUse && os.Getenv("GIT_PAGER_IN_USE") != ""
	if !tty && !inUse && when != "always" {
		return nil
	}
	cfg := readOutputConfig(ctx)
	paging := false
	if tty && !inUse && !o.noPager {
		want, command := pageByDefault, ""
		if v, ok := cfg.get("pager." + name); ok {
			if b, err := checkpoint.ParseBool(v); err == nil {
				want = b
			} else {
				want, command = true, v
			}
		}
		if o.paginate {
			want = true
		}
		if command == "" {
			command = gitPager(cfg)
		}
		if want && command != "" && command != "cat" {
			p := &pager{command: command, out: f}
			e.Out = p
			e.closers = append(e.closers, p.close)
			paging = true
		}
	}
	if when == "" {
		switch {
		case os.Getenv("NO_COLOR") != "":
			when = "never"
		default:
			when = "auto"
			for _, key := range []string{"color.venom", "color.ui"} {
				if v, ok := cfg.get(key); ok {
					if w, ok := colorBool(v); ok {
						when = w
						break
					}
				}
			}
		}
	}
	if when == "auto" {
		usePager := true
		if v, ok := cfg.get("color.pager"); ok {
			usePager, _ = checkpoint.ParseBool(v)
		}
		term := os.Getenv("TERM")
		switch {
		case (paging || inUse) && usePager:
			when = "always"
		case tty && term != "" && term != "dumb":
			when = "always"
		}
	}
	if when == "always" {
		e.palette = newPalette(ctx, cfg, e.Err)
	}
	return nil
}

// gitPager is git_pager(): $GIT_PAGER, core.pager, $PAGER, then less.
func gitPager(cfg outputConfig) string {
	if v, ok := os.LookupEnv("GIT_PAGER"); ok {
		return v
	}
	if v, ok := cfg.get("core.pager"); ok {
		return v
	}
	if v, ok := os.LookupEnv("PAGER"); ok {
		return v
	}
	return "less"
}

// pager is a pager process started at the first write (sh -c command, as
// git runs one), its output the terminal out. Once it has quit (a person
// pressed q), what is left is dropped, as git's writes meet EPIPE.
type pager struct {
	command string
	out     *os.File
	cmd     *exec.Cmd
	pipe    io.WriteCloser
	failed  bool
}

func (p *pager) Write(b []byte) (int, error) {
	if p.pipe == nil && !p.failed {
		p.start()
	}
	if p.failed {
		return p.out.Write(b)
	}
	if _, err := p.pipe.Write(b); err != nil {
		return len(b), nil // the pager has gone: nobody reads the rest
	}
	return len(b), nil
}

func (p *pager) start() {
	cmd := exec.Command("sh", "-c", p.command)
	cmd.Stdout, cmd.Stderr = p.out, os.Stderr
	env := os.Environ()
	for _, kv := range []string{"LESS=FRX", "LV=-c"} {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := os.LookupEnv(k); !ok {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_PAGER_IN_USE=true")
	w, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		p.failed = true // no pager: write to the terminal itself, as git does
		return
	}
	p.cmd, p.pipe = cmd, w
}

// close ends the pager's input and waits until it has quit.
func (p *pager) close() {
	if p.pipe == nil {
		return
	}
	p.pipe.Close()
	_ = p.cmd.Wait()
}
