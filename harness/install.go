package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// scopePath says where a harness keeps its settings for one scope: under
// the tree's root (project, local), or in the user's configuration
// directory, which env names when set and home (under $HOME) otherwise.
type scopePath struct {
	root string
	env  string
	home string
	name string
}

// hookEntry is one hook we install: the event, the tool matcher (empty:
// every firing) and the handler's timeout in seconds. Capture marks an
// event that may take a checkpoint: its timeout is the capture's bound plus
// a margin, so the harness never kills a capture the toolkit would finish
// or abandon itself (HARNESS-HOOKS.md 1.5 rule 4).
type hookEntry struct {
	Event   string
	Matcher string
	Timeout int
	Capture bool
}

// installSpec is how a harness's settings file holds hooks. The nested
// shape (Claude Code, Codex, Gemini CLI) is hooks.<event>[] = {matcher?,
// hooks: [handler]}; the flat one (Cursor) hooks.<event>[] = handler, with
// a top-level version. Gemini CLI counts timeouts in milliseconds and shows
// a handler's name.
type installSpec struct {
	file         map[string]scopePath
	defaultScope string
	flat         bool
	timeoutMS    bool
	named        bool
	entries      []hookEntry
	// after are lines to tell the person once the file is written: a step
	// only they can take.
	after []string
}

// Scopes are the --scope values, in the order help lists them.
var Scopes = []string{"project", "local", "user"}

// captureMargin is added to venom.checkpoints.timeout for the handler
// timeout of an event that captures; minHookTimeout is its floor.
const (
	captureMargin  = 15 * time.Second
	minHookTimeout = 45
)

// InstallOptions says which settings file to change.
type InstallOptions struct {
	// Scope is project, local or user; empty means the harness's default
	// (local for Claude Code, project for the others).
	Scope string
	// Root is the working tree's top, for project and local scopes.
	Root string
	// Home is the user's home directory, for user scope.
	Home string
	// Getenv reads CLAUDE_CONFIG_DIR and CODEX_HOME; nil means os.Getenv.
	Getenv func(string) string
	// CaptureTimeout is venom.checkpoints.timeout (default 30s).
	CaptureTimeout time.Duration
	// ToolCalls is venom.checkpoints.toolCalls: shell installs the
	// harness's pre-tool hook for its shell tools, all for every tool,
	// off none (and removes ours); "" is the default.
	ToolCalls string
}

// Entry is one of our hooks in a settings file. Timeout is in the file's
// unit (seconds, or milliseconds for Gemini CLI); 0 when it has none.
type Entry struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// Change is what Install or Uninstall did to a settings file: the entries
// now installed (Install) or removed (Uninstall), whether the file changed,
// and what the person must still do.
type Change struct {
	Harness string   `json:"harness"`
	Scope   string   `json:"scope"`
	File    string   `json:"file"`
	Changed bool     `json:"changed"`
	Entries []Entry  `json:"entries"`
	Notes   []string `json:"notes,omitempty"`
}

// Command is the hook command written into settings: the shell form, which
// every harness version runs (Claude Code's exec form needs 2.1.139). It
// names the binary, git-venom-hook, rather than `git venom-hook`: the git
// wrapper would cost every event one more process start (about a third of
// an edit record's latency, issue 5), and both need git-venom-hook on the
// harness's PATH. Entries written as `git venom-hook <harness>` by an
// earlier install are ours too and are replaced.
func (h *Harness) Command() string { return "git-venom-hook " + h.Name }

// lookPath finds the hook binary as the harness's shell would; a variable
// so tests can stand in for PATH.
var lookPath = exec.LookPath

// SettingsFile returns the scope (the default filled in) and the settings
// file it names. An unknown scope, or one the harness does not have, is
// invalid_params.scope; project or local without a Root (outside a
// repository) is unsupported.checkpoint_no_repo; user without a Home is
// failed.internal.
func (h *Harness) SettingsFile(o InstallOptions) (scope, path string, err error) {
	scope = o.Scope
	if scope == "" {
		scope = h.install.defaultScope
	}
	sp, ok := h.install.file[scope]
	if !ok {
		var have []string
		for _, s := range Scopes {
			if _, ok := h.install.file[s]; ok {
				have = append(have, s)
			}
		}
		return "", "", rfcerr.New("invalid_params.scope", map[string]any{"scope": scope, "choices": have},
			"%s has no '%s' settings scope; use one of %s", h.Name, scope, strings.Join(have, ", "))
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case sp.root != "":
		if o.Root == "" {
			return "", "", rfcerr.New("unsupported.checkpoint_no_repo", map[string]any{"scope": scope},
				"the %s scope writes into a repository, and this is not a git working tree", scope).
				WithHint("run it inside the repository, or use --scope user")
		}
		return scope, filepath.Join(o.Root, filepath.FromSlash(sp.root)), nil
	case sp.env != "" && getenv(sp.env) != "":
		return scope, filepath.Join(getenv(sp.env), sp.name), nil
	default:
		if o.Home == "" {
			return "", "", rfcerr.New("failed.settings", map[string]any{"scope": scope}, "no home directory for the user scope, so its settings file cannot be found").
				WithHint("set HOME, or use --scope project")
		}
		return scope, filepath.Join(o.Home, sp.home, sp.name), nil
	}
}

// Install merges our hook entries into the harness's settings file for the
// scope, creating it if need be. The person's other keys and hooks stay as
// they are, in their order; an entry of ours already there is updated in
// place, and duplicates of it are removed, so installing twice changes
// nothing (Changed false, the file not rewritten). The file is replaced
// atomically (renameio: temporary file in the same directory, fsync,
// rename), then the directory is fsynced; a symlinked file is replaced at
// its target. A file that is not a JSON object is failed.settings and left
// alone.
func (h *Harness) Install(o InstallOptions) (*Change, error) {
	return h.change(o, false)
}

// Uninstall removes exactly our entries (handlers whose command is
// `git-venom-hook <harness>` or `git venom-hook <harness>`, under any event) from the scope's settings
// file. A group or event list left empty by that goes too; nothing else is
// touched. A missing file is no change.
func (h *Harness) Uninstall(o InstallOptions) (*Change, error) {
	return h.change(o, true)
}

func (h *Harness) change(o InstallOptions, remove bool) (*Change, error) {
	scope, path, err := h.SettingsFile(o)
	if err != nil {
		return nil, err
	}
	c := &Change{Harness: h.Name, Scope: scope, File: path, Entries: []Entry{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if remove {
			return c, nil
		}
		data = nil
	case err != nil:
		return nil, rfcerr.Wrap("failed.settings", err, map[string]any{"file": path}, "reading %s", path)
	}
	root := newObject()
	if len(bytes.TrimSpace(data)) > 0 {
		v, err := decodeJSON(data)
		if err != nil {
			return nil, rfcerr.Wrap("failed.settings", err, map[string]any{"file": path}, "cannot read %s as JSON", path).
				WithHint("fix the file or move it away; nothing was written")
		}
		o, ok := v.(*object)
		if !ok {
			return nil, rfcerr.New("failed.settings", map[string]any{"file": path}, "%s does not hold a JSON object", path).
				WithHint("fix the file or move it away; nothing was written")
		}
		root = o
	}
	m := merger{h: h, timeout: hookTimeout(o.CaptureTimeout), toolCalls: o.ToolCalls}
	if m.toolCalls == "" {
		m.toolCalls = checkpoint.Defaults().ToolCalls
	}
	if remove {
		c.Changed, c.Entries, err = m.remove(root)
	} else {
		c.Changed, c.Entries, err = m.add(root)
		c.Notes = h.install.after
		if _, lerr := lookPath("git-venom-hook"); lerr != nil {
			c.Notes = append([]string{"git-venom-hook is not on this PATH; the harness runs it by name, so put the directory " +
				"`make install` wrote it to on the PATH the harness starts with"}, c.Notes...)
		}
	}
	if err != nil {
		return nil, rfcerr.Wrap("failed.settings", err, map[string]any{"file": path}, "cannot merge into %s", path).
			WithHint("fix the file or move it away; nothing was written")
	}
	if !c.Changed {
		return c, nil
	}
	if err := writeAtomic(path, encodeJSON(root)); err != nil {
		return nil, rfcerr.Wrap("failed.settings", err, map[string]any{"file": path}, "writing %s", path)
	}
	return c, nil
}

// hookTimeout is the handler timeout, in seconds, of an event that may
// capture.
func hookTimeout(capture time.Duration) int {
	if capture <= 0 {
		capture = 30 * time.Second
	}
	s := int((capture + captureMargin + time.Second - 1) / time.Second)
	return max(s, minHookTimeout)
}

// writeAtomic replaces path with data: renameio writes a temporary file
// in path's own directory, fsyncs and renames it; then the directory is
// fsynced so the rename survives a crash. Permissions of an existing file
// are kept; a new file is 0644.
func writeAtomic(path string, data []byte) error {
	// A symlinked settings file is written at its target, also when the
	// target does not exist yet (the link is kept, the target made).
	for hops := 0; hops < 40; hops++ {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			break
		}
		to, err := os.Readlink(path)
		if err != nil {
			return err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(dir)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// merger adds or removes our entries in a decoded settings file.
type merger struct {
	h         *Harness
	timeout   int    // seconds, for entries that capture
	toolCalls string // venom.checkpoints.toolCalls
}

// entries are the hooks to install: the harness's own, and its pre-tool
// hook as toolCalls says (shell: matching its shell tools; all: every
// tool, no matcher; off: none).
func (m merger) entries() []hookEntry {
	out := m.h.install.entries
	if m.h.preTool == "" || m.toolCalls == checkpoint.ToolCallsOff {
		return out
	}
	e := hookEntry{Event: m.h.preTool, Capture: true}
	if m.toolCalls != checkpoint.ToolCallsAll {
		e.Matcher = strings.Join(m.h.shellTools, "|")
	}
	return append(append([]hookEntry(nil), out...), e)
}

// handler is our handler object for e, as it should be in the file.
func (m merger) handler(e hookEntry) (*object, Entry) {
	spec := m.h.install
	out := Entry{Event: e.Event, Matcher: e.Matcher, Command: m.h.Command()}
	h := newObject()
	if spec.named {
		h.set("name", "git-venom")
	}
	if !spec.flat {
		h.set("type", "command")
	}
	h.set("command", out.Command)
	if !spec.flat {
		t := e.Timeout
		if e.Capture {
			t = m.timeout
		}
		if spec.timeoutMS {
			t *= 1000
		}
		out.Timeout = t
		h.set("timeout", json.Number(strconv.Itoa(t)))
	}
	return h, out
}

// ours reports whether v is a handler this harness's install wrote: its
// command is exactly `git venom-hook <harness>` (or git-venom-hook, or
// Claude Code's exec form with args). A handler the person changed, say
// with --agent, is theirs.
func (m merger) ours(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	f := strings.Fields(o.str("command"))
	if args, ok := o.vals["args"].([]any); ok && len(f) == 1 {
		for _, a := range args {
			s, _ := a.(string)
			f = append(f, s)
		}
	}
	var rest []string
	switch {
	case len(f) >= 1 && filepath.Base(f[0]) == "git-venom-hook":
		rest = f[1:]
	case len(f) >= 2 && filepath.Base(f[0]) == "git" && f[1] == "venom-hook":
		rest = f[2:]
	default:
		return false
	}
	if len(rest) != 1 {
		return false
	}
	h, ok := Lookup(rest[0])
	return ok && h == m.h
}

// hooksObject returns the top-level hooks object, creating it if create.
func hooksObject(root *object, create bool) (*object, error) {
	v, ok := root.get("hooks")
	if !ok {
		if !create {
			return nil, nil
		}
		o := newObject()
		root.set("hooks", o)
		return o, nil
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf(`"hooks" is not an object`)
	}
	return o, nil
}

func eventList(hooks *object, event string) ([]any, error) {
	v, ok := hooks.get(event)
	if !ok {
		return []any{}, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"hooks.%s" is not a list`, event)
	}
	return a, nil
}

func (m merger) add(root *object) (changed bool, entries []Entry, err error) {
	if m.h.install.flat {
		if _, ok := root.get("version"); !ok {
			root.setFirst("version", json.Number("1"))
			changed = true
		}
	}
	hooks, err := hooksObject(root, true)
	if err != nil {
		return false, nil, err
	}
	if m.h.preTool != "" && m.toolCalls == checkpoint.ToolCallsOff {
		// Per-tool-call checkpoints are off: our pre-tool hook goes.
		if c, _, err := m.remove(root, m.h.preTool); err != nil {
			return false, nil, err
		} else if c {
			changed = true
		}
		if hooks, err = hooksObject(root, true); err != nil {
			return false, nil, err
		}
	}
	for _, e := range m.entries() {
		want, entry := m.handler(e)
		entries = append(entries, entry)
		list, err := eventList(hooks, e.Event)
		if err != nil {
			return false, nil, err
		}
		var c bool
		if m.h.install.flat {
			list, c = m.addFlat(list, want)
		} else {
			list, c = m.addNested(list, want, e.Matcher)
		}
		if c {
			changed = true
			hooks.set(e.Event, list)
		}
	}
	return changed, entries, nil
}

// addFlat keeps the first handler of ours in list (updated to want) and
// drops any other, or appends want.
func (m merger) addFlat(list []any, want *object) ([]any, bool) {
	changed, found := false, false
	out := list[:0:0]
	for _, v := range list {
		if !m.ours(v) {
			out = append(out, v)
			continue
		}
		if found {
			changed = true
			continue
		}
		found = true
		if update(v.(*object), want) {
			changed = true
		}
		out = append(out, v)
	}
	if !found {
		out = append(out, want)
		changed = true
	}
	return out, changed
}

// addNested keeps the first handler of ours that sits in a group with the
// right matcher (updated to want), drops every other handler of ours (and a
// group that held only it), or appends a new group {matcher, hooks: [want]}.
func (m merger) addNested(list []any, want *object, matcher string) ([]any, bool) {
	changed, found := false, false
	out := list[:0:0]
	for _, g := range list {
		grp, ok := g.(*object)
		hs, ok2 := grp.valsList("hooks")
		if !ok || !ok2 {
			out = append(out, g)
			continue
		}
		kept := hs[:0:0]
		for _, v := range hs {
			if !m.ours(v) {
				kept = append(kept, v)
				continue
			}
			if !found && grp.str("matcher") == matcher {
				found = true
				if update(v.(*object), want) {
					changed = true
				}
				kept = append(kept, v)
				continue
			}
			changed = true
		}
		if len(kept) == 0 && len(hs) > 0 {
			continue // the group held only handlers of ours we dropped
		}
		if len(kept) != len(hs) {
			grp.set("hooks", kept)
		}
		out = append(out, g)
	}
	if !found {
		grp := newObject()
		if matcher != "" {
			grp.set("matcher", matcher)
		}
		grp.set("hooks", []any{want})
		out = append(out, grp)
		changed = true
	}
	return out, changed
}

// update sets want's members on h (keeping h's other members) and reports
// whether anything changed.
func update(h, want *object) bool {
	changed := false
	for _, k := range want.keys {
		if cur, ok := h.get(k); !ok || !sameValue(cur, want.vals[k]) {
			h.set(k, want.vals[k])
			changed = true
		}
	}
	return changed
}

func sameValue(a, b any) bool {
	return bytes.Equal(encodeJSON(a), encodeJSON(b))
}

// remove takes our handlers out of root's hooks: under every event, or
// under only the events named.
func (m merger) remove(root *object, only ...string) (changed bool, removed []Entry, err error) {
	hooks, err := hooksObject(root, false)
	if err != nil || hooks == nil {
		return false, nil, err
	}
	for _, event := range append([]string(nil), hooks.keys...) {
		if len(only) > 0 && !slices.Contains(only, event) {
			continue
		}
		list, ok := hooks.vals[event].([]any)
		if !ok {
			continue
		}
		out := list[:0:0]
		for _, g := range list {
			if m.h.install.flat {
				if m.ours(g) {
					removed = append(removed, m.entry(event, "", g.(*object)))
					continue
				}
				out = append(out, g)
				continue
			}
			grp, _ := g.(*object)
			hs, ok := grp.valsList("hooks")
			if !ok {
				out = append(out, g)
				continue
			}
			kept := hs[:0:0]
			for _, v := range hs {
				if m.ours(v) {
					removed = append(removed, m.entry(event, grp.str("matcher"), v.(*object)))
					continue
				}
				kept = append(kept, v)
			}
			if len(kept) == len(hs) {
				out = append(out, g)
				continue
			}
			if len(kept) > 0 {
				grp.set("hooks", kept)
				out = append(out, g)
			}
		}
		if len(out) == len(list) {
			continue
		}
		changed = true
		if len(out) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, out)
		}
	}
	if changed && hooks.len() == 0 {
		root.del("hooks")
	}
	return changed, removed, nil
}

func (m merger) entry(event, matcher string, h *object) Entry {
	e := Entry{Event: event, Matcher: matcher, Command: h.str("command")}
	if n, ok := h.vals["timeout"].(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			e.Timeout = int(i)
		}
	}
	return e
}
