package plumbing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
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

// PathspecError is a pathspec git refuses to read: magic it does not know
// (":(foo)x"), an element outside the work tree ("../../x"), or any other
// element its pathspec parser rejects. Args is the pathspec as given and
// Reason git's own message (its last line, "fatal: " dropped).
type PathspecError struct {
	Args   []string
	Reason string
}

func (e *PathspecError) Error() string {
	return fmt.Sprintf("bad pathspec %s: %s", strings.Join(e.Args, " "), e.Reason)
}

// CheckPathspec asks git whether it reads ps, before a command spends work
// on it: `git ls-files` over an empty index in ps.Dir, which matches
// nothing and fails only when its pathspec does not parse. It returns a
// *PathspecError then, and nil for a pathspec git reads (matching nothing
// is fine) or an empty one. One git child; none for an empty pathspec.
func (r *Repo) CheckPathspec(ctx context.Context, ps *Pathspec) error {
	if ps.Empty() {
		return nil
	}
	_, err := r.Run(ctx, Options{NoIndex: true, Dir: ps.Where()}, append([]string{"ls-files", "-z"}, ps.Argv()...)...)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 128 {
		msg := strings.TrimSpace(ge.Stderr)
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return &PathspecError{Args: ps.Args, Reason: strings.TrimPrefix(msg, "fatal: ")}
	}
	return err
}

// Empty reports whether ps matches every path (nil, or no Args).
func (ps *Pathspec) Empty() bool { return ps == nil || len(ps.Args) == 0 }

// Argv is what a git command takes after its other arguments: "--" and
// the pathspec, or nothing for an empty one. A command given it runs in
// Where.
//
// A pathspec of excludes only (":!vendor") gets ":/" added: git gives such
// a pathspec an implied positive element that is the whole tree for diff
// but the current directory for ls-files (pathspec.c, PATHSPEC_PREFER_CWD),
// and a plan asks both (diff-tree for the top's changes, ls-files for a
// submodule's paths and for left paths), so that from a subdirectory the
// two would disagree. With ":/" both mean the whole tree, as git diff does.
func (ps *Pathspec) Argv() []string {
	if ps.Empty() {
		return nil
	}
	argv := append([]string{"--"}, ps.Args...)
	for _, a := range ps.Args {
		if !hasMagic(a, "exclude") {
			return argv
		}
	}
	return append(argv, ":/")
}

// hasMagic reports whether a pathspec element has the magic word
// (PathspecMagic's spelling: "exclude", "attr", ...).
func hasMagic(arg, word string) bool {
	return slices.Contains(PathspecMagic(arg), word)
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
	return r.match(ctx, ps, "100644", paths)
}

// match is Match with each path entered in the private index with mode
// (100644, or 160000 to match them as gitlinks).
func (r *Repo) match(ctx context.Context, ps *Pathspec, mode string, paths []string) (map[string]bool, error) {
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
			fmt.Fprintf(&in, "%s %s\t%s\x00", mode, EmptyBlob, p)
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

// PathspecMagic returns the magic words of one pathspec element arg, as
// gitglossary(7) spells them and git reads them (GIT_LITERAL_PATHSPECS is
// never inherited, so magic always applies): the long form ":(top,icase)x"
// gives [top icase], and an attribute match ":(attr:a b)x" gives "attr";
// the short form ":/x" gives [top] and ":!x" or ":^x" [exclude]. An
// element with no magic (not starting with ':') gives nil. Only the magic
// is read: what the element matches is git's to decide.
func PathspecMagic(arg string) []string {
	if !strings.HasPrefix(arg, ":") {
		return nil
	}
	if strings.HasPrefix(arg, ":(") {
		end := strings.IndexByte(arg, ')')
		if end < 0 {
			end = len(arg) // git refuses it; whatever it is, it is magic
		}
		var words []string
		for _, w := range strings.Split(arg[2:end], ",") {
			w = strings.TrimSpace(w)
			if name, _, ok := strings.Cut(w, ":"); ok {
				w = name
			}
			if w != "" {
				words = append(words, w)
			}
		}
		return words
	}
	var words []string
short:
	for _, c := range arg[1:] {
		switch c {
		case '/':
			words = append(words, "top")
		case '!', '^':
			words = append(words, "exclude")
		default:
			break short
		}
	}
	return words
}

// MagicError is a pathspec element whose magic git cannot take into a
// submodule (SplitPathspec): Arg the element as given, Magic the word, Repo
// the first submodule (its path relative to the top) it would reach.
type MagicError struct {
	Arg, Magic, Repo string
}

func (e *MagicError) Error() string {
	return fmt.Sprintf("pathspec %q: :(%s) magic cannot go into submodule %s", e.Arg, e.Magic, e.Repo)
}

// RepoPathspec is a pathspec as it applies to one repository of a tree
// with submodules (issue 18): the pathspec as typed (Spec, relative to its
// Dir), the top repository whose git matches it (Top), and the
// repository's path relative to the top with a trailing "/" (Prefix; ""
// for the top). As for `git ls-files --recurse-submodules` and `git grep
// --recurse-submodules`, a path inside a submodule is matched by its whole
// path from the top: "lib/l" for the submodule lib's l, so every magic but
// attr means what it means for the top's own paths ("*.c" matches lib/x.c
// and top.c; ":!lib/d" leaves lib/d out; "lib" names all of lib).
type RepoPathspec struct {
	Spec   *Pathspec
	Top    *Repo
	Prefix string
}

// SplitPathspec gives each repository of a tree its RepoPathspec: rels are
// their paths relative to the top, in repos order ("." for the top, then
// the submodules), and the answer is in the same order. An element with
// attr magic is refused (a *MagicError) when rels holds a submodule: git
// reads a path's attributes from its own repository's .gitattributes,
// which a pathspec matched from the top cannot see (git 2.39 itself gets
// it wrong both ways: `ls-files --recurse-submodules` reads the top's
// attributes for a submodule's paths, `grep --recurse-submodules` matches
// none of them). An empty ps splits into empty ones.
func SplitPathspec(top *Repo, ps *Pathspec, rels []string) ([]RepoPathspec, error) {
	out := make([]RepoPathspec, len(rels))
	var firstSub string
	for i, rel := range rels {
		out[i] = RepoPathspec{Spec: ps, Top: top}
		if rel != "." && rel != "" {
			out[i].Prefix = rel + "/"
			if firstSub == "" {
				firstSub = rel
			}
		}
	}
	if firstSub != "" && !ps.Empty() {
		for _, a := range ps.Args {
			if hasMagic(a, "attr") {
				return nil, &MagicError{Arg: a, Magic: "attr", Repo: firstSub}
			}
		}
	}
	return out, nil
}

// Empty reports whether rp matches every path of its repository.
func (rp RepoPathspec) Empty() bool { return rp.Spec.Empty() }

// Match returns which of paths (relative to rp's repository's root) rp
// matches, asked of the top's git as Repo.Match asks it, with each path
// given its Prefix.
func (rp RepoPathspec) Match(ctx context.Context, paths []string) (map[string]bool, error) {
	if rp.Prefix == "" || rp.Spec.Empty() {
		return rp.Top.Match(ctx, rp.Spec, paths)
	}
	full := make([]string, len(paths))
	for i, p := range paths {
		full[i] = rp.Prefix + p
	}
	in, err := rp.Top.Match(ctx, rp.Spec, full)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(in))
	for i, p := range paths {
		if in[full[i]] {
			out[p] = true
		}
	}
	return out, nil
}

// Names reports whether rp's pathspec names the submodule itself: its
// gitlink, matched as git matches a gitlink entry (as a directory: "lib",
// "lib/", "l*" and "." name lib; "lib/x" and ":(glob)**/*.c" do not). A
// pathspec that names it selects the whole submodule, as far as its paths
// match too; one that names no path in it leaves it. True for the top and
// for an empty pathspec.
func (rp RepoPathspec) Names(ctx context.Context) (bool, error) {
	if rp.Prefix == "" || rp.Spec.Empty() {
		return true, nil
	}
	link := strings.TrimSuffix(rp.Prefix, "/")
	in, err := rp.Top.match(ctx, rp.Spec, "160000", []string{link})
	return in[link], err
}
