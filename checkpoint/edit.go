package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

// RecordEdit logs an edit record (DESIGN.md section 3, RFC 7.3 "an edit
// tool call of a turn window names it"): agent's edit tool wrote paths in
// this tree. Paths are absolute or relative to the tree's root (callers
// resolve a user's relative path against their own directory first); each
// is stored slash-separated and relative to the root, sorted, without
// duplicates. Paths in ignored files are kept on purpose: they feed a
// rollback's ignored_edits.
//
// The record names the agent's open turn. With no open turn (hooks
// installed mid-turn, an edit after the turn's end, a person running
// `git venom-checkpoint edit` between turns) it is still recorded, with an
// empty turn: it is a true fact about the tree, and since the window it
// falls in is a gap, RFC 7.3 classes the path outside whatever the record
// says. Attaching it to the last ended turn instead would claim the edit
// is in that turn's checkpoint, which it is not.
//
// The turn is read and the record appended under the agent's lock, held
// shared, so an edit never lands on the wrong side of a concurrent
// capture's turn records while parallel edits do not wait for each other.
// The wait for that lock is bounded by venom.checkpoints.timeout.
//
// Errors: invalid_params.agent for a bad agent id; invalid_params.path when
// no path is given or any path is outside the tree, inside a .git
// directory or beyond a symlink in a loop (RelPath; nothing is recorded
// then; data.paths lists the refused ones);
// timeout.checkpoint when a capture held the lock past the timeout;
// failed.internal when the log cannot be read or written.
func (t *Tree) RecordEdit(ctx context.Context, agent string, paths []string) (*journal.Edit, error) {
	if err := refs.ValidAgent(agent); err != nil {
		return nil, rfcerr.Wrap("invalid_params.agent", err, map[string]any{"agent": agent}, "bad agent id")
	}
	if len(paths) == 0 {
		return nil, rfcerr.New("invalid_params.path", map[string]any{"paths": []string{}}, "no path given for the edit record")
	}
	seen := map[string]bool{}
	var rels []string
	var bad []map[string]any
	var first error
	for _, p := range paths {
		rel, err := t.RelPath(p)
		if err != nil {
			if first == nil {
				first = err
			}
			data := map[string]any{"path": p}
			if e := rfcerr.As(err); e != nil {
				data = e.Data
			}
			bad = append(bad, data)
			continue
		}
		if !seen[rel] {
			seen[rel] = true
			rels = append(rels, rel)
		}
	}
	if len(bad) > 0 {
		e := rfcerr.As(first)
		if len(bad) > 1 {
			e = rfcerr.New("invalid_params.path", nil, "%d paths are not in the working tree %s; nothing recorded", len(bad), t.Path())
		}
		e.Data = map[string]any{"paths": bad, "tree": t.Path()}
		return nil, e
	}
	sort.Strings(rels)

	if t.Config.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Config.Timeout)
		defer cancel()
	}
	lk, err := journal.WaitLock(ctx, t.Log.LockPath(AgentLock(agent)), false)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, rfcerr.New("timeout.checkpoint", map[string]any{"agent": agent},
				"a capture of %s held its lock past venom.checkpoints.timeout (%s); edit not recorded", agent, t.Config.Timeout)
		}
		return nil, lockError(err, agent)
	}
	defer lk.Unlock()
	turn, err := t.OpenTurn(agent)
	if err != nil {
		return nil, LogError(err, "reading the log")
	}
	rec := journal.Edit{Agent: agent, Turn: turn, Paths: rels, Path: t.Path()}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeEdit, Body: rec}); err != nil {
		return nil, LogError(err, "logging the edit")
	}
	return &rec, nil
}

// RelPath maps p (absolute, or relative to the tree's root) to the
// slash-separated path git would use for it in this tree (RFC 7.3: the
// paths an edit call names). The directories above p are resolved through
// symlinks (the tree's own path is canonical, and a harness may spell it
// another way, /tmp for /private/tmp), dangling ones included, by the text
// they hold; p's last component is not, since git tracks a symlink as
// itself. So no directory above an accepted path is a symlink: git never
// looks beyond one (D9 in internal/model). A path outside the tree (through
// a symlink too, dangling or not), the root itself, a path with a .git
// component (a repository's own files, never part of a tree), or a path
// beyond a symlink that does not resolve (a loop) is invalid_params.path
// with data {path, tree, why: outside|root|git_dir|symlink}.
func (t *Tree) RelPath(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(t.Path(), abs)
	}
	abs = resolveParents(filepath.Clean(abs))
	refuse := func(why, format string, args ...any) error {
		return rfcerr.New("invalid_params.path", map[string]any{"path": p, "tree": t.Path(), "why": why}, format, args...)
	}
	rel, err := filepath.Rel(t.Path(), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", refuse("outside", "'%s' is outside the working tree %s", p, t.Path())
	}
	if rel == "." {
		return "", refuse("root", "'%s' is the working tree itself, not a file in it", p)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for _, c := range parts {
		if strings.EqualFold(c, ".git") {
			return "", refuse("git_dir", "'%s' is inside a .git directory, not the working tree", p)
		}
	}
	// Only a symlink resolveParents could not follow is left above the
	// path: one in a loop, or one made since.
	dir := t.Path()
	for i, c := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, c)
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() {
			if err == nil && st.Mode()&os.ModeSymlink != 0 {
				return "", refuse("symlink", "'%s' is beyond the symlink '%s', which does not resolve", p, strings.Join(parts[:i+1], "/"))
			}
			break
		}
	}
	return filepath.ToSlash(rel), nil
}

// maxLinks bounds the dangling symlinks resolveParents follows for one
// path, as the kernel bounds a lookup (ELOOP).
const maxLinks = 40

// resolveParents resolves symlinks in the longest existing directory above
// the clean absolute path p and joins the rest back on. Components that do
// not exist cannot be symlinks, so this gives one spelling for a deleted
// file and a new one alike. A dangling symlink, which EvalSymlinks cannot
// resolve, is followed by the text it holds, read relative to its own
// resolved directory and cleaned: the spelling the path would have if its
// target were made. One in a loop is left as it is.
func resolveParents(p string) string {
	for hops := 0; ; hops++ {
		dir, rest := filepath.Dir(p), filepath.Base(p)
		next := ""
		for {
			// Any error (missing, not a directory, no permission, a
			// dangling symlink) moves up: the first directory that
			// resolves fixes the spelling.
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				return filepath.Join(r, rest)
			}
			if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 && hops < maxLinks {
				if target, err := os.Readlink(dir); err == nil {
					if !filepath.IsAbs(target) {
						base := filepath.Dir(dir)
						if r, err := filepath.EvalSymlinks(base); err == nil {
							base = r
						}
						target = filepath.Join(base, target)
					}
					next = filepath.Join(target, rest)
					break
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return p
			}
			rest = filepath.Join(filepath.Base(dir), rest)
			dir = parent
		}
		p = next
	}
}

// OpenTurn returns the id of agent's open turn, or "" when none is open:
// the answer a replay of the log gives (journal.Agent.OpenTurn), read from
// the agent's last turn record alone. Take writes an agent's turn records
// in order under the agent's lock, so the last one is a turn.started while
// a turn is open and a turn.ended once it is closed (a synthetic end is
// followed by the next turn's start). The log is read backwards from its
// end and only lines naming the agent's turn records are decoded, so an
// edit event costs the same on a log of ten records or a million.
func (t *Tree) OpenTurn(agent string) (string, error) {
	f, err := os.Open(t.Log.Path())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	needle := []byte(`"agent":"` + agent + `"`)
	turn := ""
	err = LinesBackward(f, func(line []byte) bool {
		if !bytes.Contains(line, []byte(`"turn.`)) || !bytes.Contains(line, needle) {
			return false
		}
		var r struct {
			Type  string `json:"type"`
			Agent string `json:"agent"`
			Turn  string `json:"turn"`
		}
		if json.Unmarshal(line, &r) != nil || r.Agent != agent {
			return false
		}
		switch r.Type {
		case journal.TypeTurnStarted:
			turn = r.Turn
			return true
		case journal.TypeTurnEnded:
			return true
		}
		return false
	})
	return turn, err
}

// LinesBackward calls fn with each complete, non-empty line of the JSON
// Lines file f, last first, until fn returns true. A last line without its
// newline (an append cut short by a crash, or one still being written) is
// not complete and is skipped, as journal readers do. It reads 64 KiB at a
// time from the end, so finding a recent record costs the same in any
// file; the harness package reads transcripts with it too.
func LinesBackward(f *os.File, fn func(line []byte) bool) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	const chunk = 64 << 10
	pos := st.Size()
	var head []byte // a line cut by the chunk boundary: its end, so far
	atEnd := true
	for pos > 0 {
		n := min(int64(chunk), pos)
		pos -= n
		data := make([]byte, n, n+int64(len(head)))
		if _, err := f.ReadAt(data, pos); err != nil && err != io.EOF {
			return err
		}
		data = append(data, head...)
		body := data
		head = nil
		if pos > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				head = data
				continue
			}
			head, body = data[:i], data[i+1:]
		}
		lines := bytes.Split(body, []byte{'\n'})
		if atEnd {
			lines = lines[:len(lines)-1] // after the last newline: nothing, or a torn line
			atEnd = false
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if len(lines[i]) > 0 && fn(lines[i]) {
				return nil
			}
		}
	}
	return nil
}
