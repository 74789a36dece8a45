package plumbing

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
)

// EmptyBlob is the SHA-1 name of the blob with no bytes.
const EmptyBlob OID = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// Pathspec is a person's pathspec as typed on a command line after "--"
// (git's pathspec, magic and all: "src/", "*.go", ":(glob)**/x", ":!vendor",
// ":/top"), and Dir, the directory it was typed in, which relative ones are
// relative to. It is never parsed here: the git commands given it run in
// Dir, so git applies Dir's prefix and its magic exactly as for its own
// commands (gitglossary(7), pathspec). A nil or empty Pathspec matches
// every path.
type Pathspec struct {
	Args []string
	Dir  string
}

// Empty reports whether ps matches every path (nil, or no Args).
func (ps *Pathspec) Empty() bool { return ps == nil || len(ps.Args) == 0 }

// Argv is what a git command takes after its other arguments: "--" and
// the pathspec, or nothing for an empty one. A command given it runs in
// Where.
func (ps *Pathspec) Argv() []string {
	if ps.Empty() {
		return nil
	}
	return append([]string{"--"}, ps.Args...)
}

// Where is the directory a git command given Argv runs in: Dir, or "" (the
// work tree) for an empty pathspec.
func (ps *Pathspec) Where() string {
	if ps.Empty() {
		return ""
	}
	return ps.Dir
}

// Match returns which of paths (relative to the top of the tree, as git
// stores them) ps matches, asked of git: `git ls-files` over a private
// index that holds each path as an empty file. It is for paths that are in
// no tree git could diff (files a capture skipped, nested repositories).
// A path and one below it (a and a/b) cannot be in one index, so such
// paths go to separate indexes; the cost is one update-index and one
// ls-files a batch, and one batch unless paths hold such pairs.
func (r *Repo) Match(ctx context.Context, ps *Pathspec, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if ps.Empty() {
		for _, p := range paths {
			out[p] = true
		}
		return out, nil
	}
	for _, batch := range noNesting(paths) {
		idx, err := r.PrivateIndex("pathspec")
		if err != nil {
			return nil, err
		}
		var in bytes.Buffer
		for _, p := range batch {
			fmt.Fprintf(&in, "100644 %s\t%s\x00", EmptyBlob, p)
		}
		env := []string{"GIT_INDEX_FILE=" + idx}
		_, err = r.Run(ctx, Options{Env: env, Stdin: &in}, "update-index", "-z", "--index-info")
		if err == nil {
			var ls []byte
			ls, err = r.Run(ctx, Options{Env: env, Dir: ps.Where()}, append([]string{"ls-files", "-z", "--full-name"}, ps.Argv()...)...)
			for _, rec := range bytes.Split(ls, []byte{0}) {
				if len(rec) > 0 {
					out[string(rec)] = true
				}
			}
		}
		RemovePrivateIndex(idx)
		if err != nil {
			return nil, fmt.Errorf("matching paths against the pathspec: %w", err)
		}
	}
	return out, nil
}

// noNesting splits paths into batches in none of which a path is a
// directory of another.
func noNesting(paths []string) [][]string {
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	var batches [][]string
	var sets []map[string]bool
	for _, p := range sorted {
		placed := false
		for i, set := range sets {
			if !nested(set, p) {
				set[p] = true
				batches[i] = append(batches[i], p)
				placed = true
				break
			}
		}
		if !placed {
			sets = append(sets, map[string]bool{p: true})
			batches = append(batches, []string{p})
		}
	}
	return batches
}

// nested reports whether p is below a member of set or a member is below
// p; with paths taken in sorted order, only the first can happen, but
// both are checked.
func nested(set map[string]bool, p string) bool {
	for d := p; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			break
		}
		d = d[:i]
		if set[d] {
			return true
		}
	}
	for q := range set {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// UserConfig is the value of config key as the person's own config gives
// it (their files, and `git -c`), without the pins every git child runs
// with (gc.auto=0 among them): `git config --get-all key` lists the values
// in the order git reads them, and the pins, given last, come last. ok is
// false when the person set none.
func (r *Repo) UserConfig(ctx context.Context, key string) (value string, ok bool, err error) {
	out, err := r.Run(ctx, Options{NoWorkTree: true}, "config", "--get-all", key)
	if err != nil && !IsExit(err, 1) {
		return "", false, err
	}
	vals := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(out) == 0 {
		vals = nil
	}
	for i := len(pins) - 1; i >= 0; i-- {
		k, v, _ := strings.Cut(pins[i], "=")
		if strings.EqualFold(k, key) && len(vals) > 0 && vals[len(vals)-1] == v {
			vals = vals[:len(vals)-1]
		}
	}
	if len(vals) == 0 {
		return "", false, nil
	}
	return vals[len(vals)-1], true, nil
}
