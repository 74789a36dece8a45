package plumbing

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// DiffTrees lists what differs between two trees or commits, recursively,
// without rename detection: `git diff-tree -r -z --no-renames
// --ignore-submodules=none`. Every gitlink that differs is listed,
// whatever .gitmodules says (its ignore setting is for a person's diff,
// and a capture records every gitlink: RFC 7.4 left gitlink), so nothing
// of the work tree, the index or HEAD changes the answer, and a
// .gitmodules git cannot parse (a merge's conflict markers) does not fail
// it. Its cost follows the directories that differ: it runs with an empty
// index (Options.NoIndex), which git would otherwise read whole first.
func (r *Repo) DiffTrees(ctx context.Context, from, to string) ([]TreeChange, error) {
	return r.DiffTreesIn(ctx, from, to, nil)
}

// DiffTreesIn is DiffTrees narrowed to the paths ps matches (nil or empty:
// all), matched by git (Pathspec).
func (r *Repo) DiffTreesIn(ctx context.Context, from, to string, ps *Pathspec) ([]TreeChange, error) {
	return r.DiffTreesEnv(ctx, from, to, ps, nil)
}

// DiffTreesEnv is DiffTreesIn with env added to git's environment (Flatten's
// alternates, for flattened trees).
func (r *Repo) DiffTreesEnv(ctx context.Context, from, to string, ps *Pathspec, env []string) ([]TreeChange, error) {
	return r.diffTrees(ctx, from, to, ps, env, false)
}

// diffTreeArgs are the arguments of every diff-tree of DiffTrees' kind;
// with trees, the trees that differ are listed too (-t), each a record of
// mode 040000 on one side or both (FilesOnly drops them).
func diffTreeArgs(trees bool) []string {
	if trees {
		return []string{"diff-tree", "-r", "-t", "-z", "--no-renames", "--ignore-submodules=none"}
	}
	return []string{"diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none"}
}

func (r *Repo) diffTrees(ctx context.Context, from, to string, ps *Pathspec, env []string, trees bool) ([]TreeChange, error) {
	args := append(append(diffTreeArgs(trees), from, to), ps.Argv()...)
	out, err := r.Run(ctx, Options{NoIndex: true, Dir: ps.Where(), Env: env}, args...)
	if err != nil {
		return nil, fmt.Errorf("comparing %s and %s: %w", from, to, err)
	}
	return ParseDiffTreeRaw(out)
}

// TreePaths lists every path tree holds below its root, files, symbolic
// links and gitlinks (not the directories between): `git ls-tree -r -z
// --name-only --full-tree`, in git's order.
func (r *Repo) TreePaths(ctx context.Context, tree OID) ([]string, error) {
	out, err := r.Run(ctx, Options{NoIndex: true}, "ls-tree", "-r", "-z", "--name-only", "--full-tree", string(tree))
	if err != nil {
		return nil, fmt.Errorf("listing tree %s: %w", tree, err)
	}
	paths, ok := splitNul(out)
	if !ok {
		return nil, fmt.Errorf("listing tree %s: output not NUL-terminated", tree)
	}
	return paths, nil
}

// DiffTreePairs is DiffTreesEach for pairs of trees (not commits), as
// the log records them with each checkpoint; with trees, each pair's
// answer lists the trees that differ too (diff-tree -t: FilesOnly drops
// them again). When every member of every pair is a full object name,
// one `git diff-tree --stdin` answers them all (diffTreesAtOnce), where
// on a small tree each diff-tree child costs 2-3 ms of CPU, nearly all of
// it git's start (issue 16). --stdin takes a pair of trees only (a commit
// first on a line means a commit and its parents), and says nothing in
// its exit status of a line it cannot read: so its answer is used only
// when it has the header of every pair, in order, and otherwise, or when
// it fails, each pair is asked on its own (as DiffTreesEach does), which
// gives git's error for the pair that fails.
func (r *Repo) DiffTreePairs(ctx context.Context, pairs [][2]string, ps *Pathspec, trees bool) ([][]TreeChange, int, error) {
	if len(pairs) > 1 && allOIDs(pairs) {
		res, err := r.diffTreesAtOnce(ctx, pairs, ps, trees)
		if err == nil {
			return res, -1, nil
		}
		if ctx.Err() != nil {
			return nil, 0, err
		}
		r.trace.printf("diff-tree --stdin: %v; each pair on its own", err)
	}
	return r.diffTreesEach(ctx, pairs, ps, trees)
}

// FilesOnly is changes less the records of trees (mode 040000 on either
// side) that a diff-tree -t lists: what the same diff-tree without -t
// lists. git lists a path that is a tree on one side and not on the other
// as two records, one a tree's.
func FilesOnly(changes []TreeChange) []TreeChange {
	out := changes[:0:0]
	for _, c := range changes {
		if c.SrcMode != "040000" && c.DstMode != "040000" {
			out = append(out, c)
		}
	}
	return out
}

// DiffTreesEach runs DiffTreesIn for each pair (from, to), with ps (nil:
// all paths), a few at a time, and returns their changes in the order of
// pairs. On a failure it returns the index of a pair that failed, and its
// error.
func (r *Repo) DiffTreesEach(ctx context.Context, pairs [][2]string, ps *Pathspec) ([][]TreeChange, int, error) {
	return r.diffTreesEach(ctx, pairs, ps, false)
}

func (r *Repo) diffTreesEach(ctx context.Context, pairs [][2]string, ps *Pathspec, trees bool) ([][]TreeChange, int, error) {
	res := make([][]TreeChange, len(pairs))
	errs := make([]error, len(pairs))
	sem := make(chan struct{}, diffsAtOnce)
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res[i], errs[i] = r.diffTrees(ctx, p[0], p[1], ps, nil, trees)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, i, err
		}
	}
	return res, -1, nil
}

// diffsAtOnce is how many diff-tree processes DiffTreesEach runs at a
// time.
const diffsAtOnce = 4

// allOIDs reports whether each member of each pair is a full object name
// in lower-case hex (SHA-1 or SHA-256), as `diff-tree --stdin` reads
// them and prints them back.
func allOIDs(pairs [][2]string) bool {
	for _, p := range pairs {
		for _, o := range p {
			if !isOIDHex(o) {
				return false
			}
		}
	}
	return true
}

// diffTreesAtOnce asks one `git diff-tree --stdin` for the changes of
// each pair of trees, and splits its answer (ParseDiffTreeStdin). Any
// answer that is not exactly one block a pair, in order, is an error.
func (r *Repo) diffTreesAtOnce(ctx context.Context, pairs [][2]string, ps *Pathspec, trees bool) ([][]TreeChange, error) {
	var in bytes.Buffer
	for _, p := range pairs {
		in.WriteString(p[0] + " " + p[1] + "\n")
	}
	args := append(append(diffTreeArgs(trees)[:1:1], "--stdin"), diffTreeArgs(trees)[1:]...)
	args = append(args, ps.Argv()...)
	out, err := r.Run(ctx, Options{NoIndex: true, Dir: ps.Where(), Stdin: &in}, args...)
	if err != nil {
		return nil, fmt.Errorf("comparing %d pairs of trees: %w", len(pairs), err)
	}
	return ParseDiffTreeStdin(out, pairs)
}

// ParseDiffTreeStdin splits the output of `git diff-tree --stdin -r [-t]
// -z --no-renames` given the lines "<from> <to>" of pairs (trees, full
// object names) into each pair's changes, in the order of pairs. git
// prints "<from> <to>\n" before each pair's records, and nothing for a
// line it could not read (an object missing, or not a tree), with exit
// status 0: a header missing, out of order or for another pair, a
// commit's header (a commit first on a line), or anything left over is
// an error, so that no pair's answer is ever taken from another's or
// from none. Errors say which pair's header was not found.
func ParseDiffTreeStdin(out []byte, pairs [][2]string) ([][]TreeChange, error) {
	res := make([][]TreeChange, len(pairs))
	for i, p := range pairs {
		head := p[0] + " " + p[1] + "\n"
		if !bytes.HasPrefix(out, []byte(head)) {
			return nil, fmt.Errorf("diff-tree --stdin: no answer for %s..%s (pair %d of %d)", p[0], p[1], i+1, len(pairs))
		}
		out = out[len(head):]
		// The records: ":<modes> <oids> <status>\0<path>\0" each, up to
		// the next header or the end.
		n := 0
		for n < len(out) && out[n] == ':' {
			j := bytes.IndexByte(out[n:], 0)
			if j < 0 {
				return nil, fmt.Errorf("diff-tree: record without NUL terminator")
			}
			k := bytes.IndexByte(out[n+j+1:], 0)
			if k < 0 {
				return nil, fmt.Errorf("diff-tree: record without path")
			}
			n += j + 1 + k + 1
		}
		changes, err := ParseDiffTreeRaw(out[:n])
		if err != nil {
			return nil, err
		}
		res[i], out = changes, out[n:]
	}
	if len(out) > 0 {
		return nil, fmt.Errorf("diff-tree --stdin: %d bytes after the last pair's answer", len(out))
	}
	return res, nil
}

// Checkout writes the given entries (mode, object, path) into the working
// tree with checkout-index from a private index holding only those paths,
// so its cost follows the number of paths, not the size of the tree
// (DESIGN.md section 5). Smudge filters run and modes and symlinks are set,
// as checkout-index does. The user's index is never read or written.
//
// It writes only where nothing is: checkout-index runs without -f, so git
// never unlinks what is at a path, and creates each file with O_EXCL. The
// caller moves what S holds out of the way first (the rollback's backups).
// A path where something is by the time git comes to it (a person's
// editor saved it meanwhile) is left as it is, and returned in refused,
// in the order of entries; that is no error. Any other failure is.
//
// A filter that fails without filter.<driver>.required makes checkout-index
// write the blob as it is and only say so on stderr (CASES BR-36): Checkout
// returns true for filterFailed then, so the caller can say the bytes are
// not what the checkpoint meant.
func (r *Repo) Checkout(ctx context.Context, entries []TreeChange) (refused []string, filterFailed bool, err error) {
	return r.checkout(ctx, entries, "")
}

// CheckoutUnder is Checkout with git writing each entry under stage, an
// empty directory, at stage/<path> (`checkout-index --prefix`), instead
// of in the work tree: filters, attributes and %f still see each entry's
// own path. Nothing in the work tree is written. The rollback then links
// each file into the tree whole (issue 13 item 2: git creates a file
// before it writes its bytes, and a save that lands in between is mixed
// with them), and a git child left alive after its parent died writes
// only there (item 1).
func (r *Repo) CheckoutUnder(ctx context.Context, entries []TreeChange, stage string) (filterFailed bool, err error) {
	_, filterFailed, err = r.checkout(ctx, entries, stage)
	return filterFailed, err
}

func (r *Repo) checkout(ctx context.Context, entries []TreeChange, stage string) (refused []string, filterFailed bool, err error) {
	if len(entries) == 0 {
		return nil, false, nil
	}
	idx, err := r.PrivateIndex("restore")
	if err != nil {
		return nil, false, err
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	if err := r.indexInfo(ctx, env, entries); err != nil {
		return nil, false, fmt.Errorf("building the private index for the writes: %w", err)
	}
	var stderr bytes.Buffer
	args := []string{"checkout-index", "-z", "--stdin"}
	if stage != "" {
		args = append(args, "--prefix="+filepath.Clean(stage)+string(filepath.Separator))
	}
	_, err = r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(paths)), Stderr: &stderr}, args...)
	// LC_ALL=C keeps git's messages in English: "error: external filter
	// '<cmd>' failed <status>", and for a path something is at, "<path>
	// already exists, no checkout" (it was there when git looked) or
	// "error: unable to create file|symlink <path>: File exists" (it came
	// between git's look and its O_EXCL create).
	refused, filterFailed, other := parseCheckoutErrors(stderr.String(), paths)
	if err != nil && (ctx.Err() != nil || !IsExit(err, 1) || other || len(refused) == 0) {
		return nil, false, fmt.Errorf("writing files: %w", err)
	}
	return refused, filterFailed, nil
}

// parseCheckoutErrors reads checkout-index's stderr for the batch of
// paths: the paths git refused because something was there (in the order
// of paths), whether a filter failed, and whether any other line is
// there.
func parseCheckoutErrors(stderr string, paths []string) (refused []string, filterFailed, other bool) {
	asked := make(map[string]bool, len(paths))
	for _, p := range paths {
		asked[p] = true
	}
	there := map[string]bool{}
	for _, l := range strings.Split(stderr, "\n") {
		switch {
		case l == "":
		case strings.Contains(l, "external filter") && strings.Contains(l, "failed"):
			filterFailed = true
		case strings.HasSuffix(l, " already exists, no checkout") && asked[strings.TrimSuffix(l, " already exists, no checkout")]:
			there[strings.TrimSuffix(l, " already exists, no checkout")] = true
		case strings.HasSuffix(l, ": File exists") && createdOver(l, asked, there):
		default:
			other = true
		}
	}
	for _, p := range paths {
		if there[p] {
			refused = append(refused, p)
		}
	}
	return refused, filterFailed, other
}

// createdOver reads "error: unable to create file|symlink <path>: File
// exists" for a path of asked, into there.
func createdOver(l string, asked, there map[string]bool) bool {
	l = strings.TrimSuffix(l, ": File exists")
	for _, pre := range []string{"error: unable to create file ", "error: unable to create symlink "} {
		if p, ok := strings.CutPrefix(l, pre); ok && asked[p] {
			there[p] = true
			return true
		}
	}
	return false
}

// indexInfo puts each entry's DstMode and Dst at its Path, stage 0, in
// the index env names: `git update-index -z --index-info`.
func (r *Repo) indexInfo(ctx context.Context, env []string, entries []TreeChange) error {
	var info bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&info, "%s %s 0\t%s\x00", e.DstMode, e.Dst, e.Path)
	}
	_, err := r.Run(ctx, Options{Env: env, Stdin: &info}, "update-index", "-z", "--index-info")
	return err
}

// FilterPaths returns the paths among paths that have a filter attribute
// set (`git check-attr filter`), the ones a failing smudge can change.
// With noIndex git is asked with an empty index (Options.NoIndex), which
// gives the same answer when the user's index holds no .gitattributes
// (Snapshot.IndexAttributes false) and spares reading it whole: 10 ms on
// a 100,000-file tree.
func (r *Repo) FilterPaths(ctx context.Context, paths []string, noIndex bool) ([]string, error) {
	out, err := r.Run(ctx, Options{Stdin: bytes.NewReader(NulList(paths)), Env: []string{"GIT_LITERAL_PATHSPECS=1"}, NoIndex: noIndex},
		"check-attr", "-z", "--stdin", "filter")
	if err != nil {
		return nil, err
	}
	// -z output: path NUL attribute NUL value NUL, per path.
	f := strings.Split(string(out), "\x00")
	var res []string
	for i := 0; i+2 < len(f); i += 3 {
		if v := f[i+2]; v != "unspecified" && v != "unset" {
			res = append(res, f[i])
		}
	}
	return res, nil
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b OID) (bool, error) {
	_, err := r.Run(ctx, Options{}, "merge-base", "--is-ancestor", string(a), string(b))
	if err == nil {
		return true, nil
	}
	if IsExit(err, 1) {
		return false, nil
	}
	return false, err
}

// RevListParents returns the commits reachable from tip and not from base,
// each with its parents: `git rev-list --parents tip ^base`.
func (r *Repo) RevListParents(ctx context.Context, tip, base OID) (map[OID][]OID, []OID, error) {
	out, err := r.Run(ctx, Options{}, "rev-list", "--parents", string(tip), "^"+string(base))
	if err != nil {
		return nil, nil, err
	}
	m := map[OID][]OID{}
	var order []OID
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		c := OID(f[0])
		order = append(order, c)
		for _, p := range f[1:] {
			m[c] = append(m[c], OID(p))
		}
		if _, ok := m[c]; !ok {
			m[c] = nil
		}
	}
	return m, order, nil
}

// RemoteRefsContaining lists the remote-tracking refs that contain commit.
func (r *Repo) RemoteRefsContaining(ctx context.Context, commit OID) ([]string, error) {
	out, err := r.Run(ctx, Options{}, "for-each-ref", "--format=%(refname)", "--contains", string(commit), "refs/remotes")
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			refs = append(refs, l)
		}
	}
	return refs, nil
}

// MoveHead moves the branch HEAD is on (or HEAD itself when detached, with
// --no-deref) from old to new, failing if it no longer holds old (RFC 7.5's
// compare-and-swap). Its git is GitDirOnly: killed with its parent, it
// removes the ref's lock.
func (r *Repo) MoveHead(ctx context.Context, branch string, newOID, oldOID OID, reason string) error {
	if branch != "" {
		_, err := r.Run(ctx, Options{GitDirOnly: true}, "update-ref", "-m", reason, "refs/heads/"+branch, string(newOID), string(oldOID))
		return err
	}
	_, err := r.Run(ctx, Options{GitDirOnly: true}, "update-ref", "--no-deref", "-m", reason, "HEAD", string(newOID), string(oldOID))
	return err
}

// TreeExists reports whether the repository has the tree oid names.
func (r *Repo) TreeExists(ctx context.Context, oid OID) bool {
	_, err := r.Run(ctx, Options{NoWorkTree: true}, "cat-file", "-e", string(oid)+"^{tree}")
	return err == nil
}

// IndexTree writes the tree of the user's index as it is now, from a
// private copy of it (the user's index is never written), so that a
// rollback that resets the index can record what was staged (rollback.
// started's index) and its undo give it back. The tree has every stage-0
// entry, as git write-tree makes it, with two limits that follow from
// what a tree can hold: an intent-to-add entry (git add -N) is left out,
// as write-tree leaves it out of every commit (its file's content is in
// the safety checkpoint, and after the undo the path is untracked); and
// an unmerged path, which has no stage-0 entry and makes write-tree fail,
// is recorded at its stage-2 entry ("ours", HEAD's side), or left out
// when ours deleted it, as a capture records it: the conflict's other
// stages are not kept. One copy of the index and one write-tree; for an
// unmerged index, one ls-files -u and one update-index more.
func (r *Repo) IndexTree(ctx context.Context) (OID, error) {
	idx, _, err := r.privateCopy("index-tree", r.RealIndex())
	if err != nil {
		return "", err
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	tree, err := r.Line(ctx, Options{Env: env, NoWorkTree: true}, "write-tree")
	if err == nil {
		return OID(tree), nil
	}
	if ctx.Err() != nil {
		return "", err
	}
	out, lerr := r.Run(ctx, Options{Env: env}, "ls-files", "-u", "-v", "-z")
	if lerr != nil {
		return "", fmt.Errorf("writing the index's tree: %w", err)
	}
	unmerged, perr := ParseLsFiles(out)
	if perr != nil || len(unmerged) == 0 {
		return "", fmt.Errorf("writing the index's tree: %w", err)
	}
	ours := map[string]IndexEntry{}
	var paths []string
	for _, e := range unmerged {
		if _, seen := ours[e.Path]; !seen {
			paths = append(paths, e.Path)
			ours[e.Path] = IndexEntry{}
		}
		if e.Stage == 2 {
			ours[e.Path] = e
		}
	}
	var info bytes.Buffer
	for _, p := range paths {
		// A stage-0 entry replaces the path's higher stages; mode 0
		// removes them all (git-update-index(1), --index-info).
		if e := ours[p]; e.Mode != "" {
			fmt.Fprintf(&info, "%s %s 0\t%s\x00", e.Mode, e.OID, p)
		} else {
			fmt.Fprintf(&info, "0 %s 0\t%s\x00", strings.Repeat("0", len(unmerged[0].OID)), p)
		}
	}
	if _, err := r.Run(ctx, Options{Env: env, Stdin: &info}, "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("resolving unmerged paths in a copy of the index: %w", err)
	}
	tree, err = r.Line(ctx, Options{Env: env, NoWorkTree: true}, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing the index's tree: %w", err)
	}
	return OID(tree), nil
}

// ResetIndex makes the user's real index follow HEAD after it moved (RFC
// 7.5): read-tree of treeish (HEAD's commit, or in the undo of a rollback
// that moved HEAD, the tree of the index that rollback found, IndexTree),
// the skip-worktree and assume-unchanged bits put back on the paths that
// had them (a sparse checkout stays sparse), then a quiet refresh so
// unchanged files show clean.
//
// The new index is made in a private file (GIT_INDEX_FILE) and put in
// place as git puts its own: linked as index.lock, which fails where
// another git holds that lock, then renamed over the index. So the lock
// exists only between two system calls of this process, never while a
// git child runs: a rollback killed with SIGKILL in the reset leaves no
// stale index.lock, which git's own children, killed while they create
// it, can (termOnParentDeath). The private file, left in the scratch
// directory by such a kill, goes with its hourly sweep (CleanTmp).
func (r *Repo) ResetIndex(ctx context.Context, treeish OID) error {
	// A plain read-tree drops every entry's skip-worktree and
	// assume-unchanged bits: a sparse checkout would then see each file
	// outside its cone as deleted, and `git commit -a` would delete it.
	// The bits are kept for the paths the new index still has.
	out, err := r.Run(ctx, Options{}, "ls-files", "-s", "-v", "-z")
	if err != nil {
		return fmt.Errorf("reading the index before resetting it: %w", err)
	}
	entries, err := ParseLsFiles(out)
	if err != nil {
		return err
	}
	var skip, assume []string
	for _, e := range entries {
		if e.SkipWorktree() {
			skip = append(skip, e.Path)
		}
		if e.AssumeUnchanged() {
			assume = append(assume, e.Path)
		}
	}
	idx, err := r.PrivateIndex("reset")
	if err != nil {
		return err
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := r.Run(ctx, Options{Env: env}, "read-tree", string(treeish)); err != nil {
		return fmt.Errorf("resetting the index to %s: %w", treeish, err)
	}
	if len(skip)+len(assume) > 0 {
		now, err := r.Run(ctx, Options{Env: env}, "ls-files", "-z")
		if err != nil {
			return fmt.Errorf("reading the reset index: %w", err)
		}
		have := map[string]bool{}
		for _, p := range strings.Split(string(now), "\x00") {
			have[p] = true
		}
		for _, set := range []struct {
			flag  string
			paths []string
		}{{"--skip-worktree", skip}, {"--assume-unchanged", assume}} {
			var keep []string
			for _, p := range set.paths {
				if have[p] {
					keep = append(keep, p)
				}
			}
			if len(keep) == 0 {
				continue
			}
			if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(keep))}, "update-index", "-z", set.flag, "--stdin"); err != nil {
				return fmt.Errorf("keeping %s bits: %w", set.flag, err)
			}
		}
	}
	if _, err := r.Run(ctx, Options{Env: env}, "update-index", "-q", "--refresh"); err != nil && !IsExit(err, 1) {
		return fmt.Errorf("refreshing the index: %w", err)
	}
	lock := r.RealIndex() + ".lock"
	if err := os.Link(idx, lock); err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("another git process holds %s, and the index must be reset: %w", lock, err)
		}
		// No hard link here (another file system under the git
		// directory, say): the lock is made and filled as git does.
		if err := copyExclusive(idx, lock); err != nil {
			return err
		}
	}
	if err := os.Rename(lock, r.RealIndex()); err != nil {
		os.Remove(lock)
		return fmt.Errorf("putting the reset index in place: %w", err)
	}
	return nil
}

// copyExclusive makes dst, which must not exist (O_EXCL, as git takes a
// lock), a copy of src with its mtime (CopyKeepMtime) and permission
// bits; on an error dst is removed, unless it was there already.
func copyExclusive(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := CopyKeepMtime(src, dst); err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("another git process holds %s: %w", dst, err)
		}
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := os.Chmod(dst, st.Mode().Perm()); err != nil {
		os.Remove(dst)
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// Operation names a merge, rebase, cherry-pick, revert or bisect under way
// in this worktree (its state files in the git dir), or "" (RFC 7.1 item
// 10, CASES BR-19).
func (r *Repo) Operation() string {
	checks := []struct{ file, op string }{
		{"rebase-merge", "rebase"},
		{"rebase-apply", "rebase"},
		{"MERGE_HEAD", "merge"},
		{"CHERRY_PICK_HEAD", "cherry-pick"},
		{"REVERT_HEAD", "revert"},
		{"BISECT_LOG", "bisect"},
	}
	for _, c := range checks {
		if _, err := os.Lstat(filepath.Join(r.GitDir, c.file)); err == nil {
			if c.file == "rebase-apply" {
				if _, err := os.Lstat(filepath.Join(r.GitDir, c.file, "applying")); err == nil {
					return "am"
				}
			}
			return c.op
		}
	}
	return ""
}

// IndexLocked reports whether another git process holds the user's index
// lock (index.lock in the worktree's git dir).
func (r *Repo) IndexLocked() bool {
	_, err := os.Lstat(r.RealIndex() + ".lock")
	return err == nil
}

// IgnoredAt reports which of paths the ignore rules of tree would ignore:
// the .gitignore files tree holds in each path's directories, plus the
// repository's own info/exclude and core.excludesFile. A rollback uses it
// so that a file ignored at the target, which the target could not record,
// is never deleted for being absent from it (CASES BR-05 B: a turn that
// drops an ignore rule must not cost the person their .env). It reads only
// the .gitignore blobs it needs (one cat-file) and asks git's own
// check-ignore against a scratch tree holding them.
func (r *Repo) IgnoredAt(ctx context.Context, tree OID, paths []string) (map[string]bool, error) {
	res := map[string]bool{}
	if len(paths) == 0 {
		return res, nil
	}
	dirs := map[string]bool{"": true}
	for _, p := range paths {
		for d := filepath.Dir(filepath.FromSlash(p)); d != "." && d != "/"; d = filepath.Dir(d) {
			dirs[filepath.ToSlash(d)] = true
		}
	}
	var specs, names []string
	for d := range dirs {
		gi := ".gitignore"
		if d != "" {
			gi = d + "/.gitignore"
		}
		if strings.ContainsAny(gi, "\n") {
			continue // cat-file --batch reads lines; such a name cannot be asked for
		}
		specs = append(specs, gi)
		names = append(names, string(tree)+":"+gi)
	}
	objs, err := r.catBatch(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("reading the target's .gitignore files: %w", err)
	}
	scratch, err := os.MkdirTemp(filepath.Join(r.GitDir, "venom", "tmp"), "ignore-")
	if err != nil {
		if _, err2 := r.TmpDir(); err2 != nil {
			return nil, err2
		}
		if scratch, err = os.MkdirTemp(filepath.Join(r.GitDir, "venom", "tmp"), "ignore-"); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(scratch)
	for i, gi := range specs {
		if objs[i].missing || objs[i].typ != "blob" {
			continue
		}
		body := objs[i].body
		dst := filepath.Join(scratch, filepath.FromSlash(gi))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, body, 0o600); err != nil {
			return nil, err
		}
	}
	// GIT_WORK_TREE is the scratch tree; GIT_DIR stays the repository's, so
	// info/exclude and core.excludesFile apply as they do now.
	o := Options{Stdin: bytes.NewReader(NulList(DotPaths(paths))), NoWorkTree: true, Dir: scratch,
		Env: []string{"GIT_WORK_TREE=" + scratch}}
	out, err := r.Run(ctx, o, "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil && !IsExit(err, 1) {
		return nil, fmt.Errorf("checking the target's ignore rules: %w", err)
	}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			res[strings.TrimPrefix(p, "./")] = true
		}
	}
	return res, nil
}

// OutOfReach reports which of paths git cannot take as a pathspec in the
// work tree now, each with the outermost leading directory in the way (RFC
// 7.3, for the plan's ignored_edits):
//
//   - below a symlink in the work tree: git never looks beyond one, and
//     check-ignore, add and the like die with "pathspec '<p>' is beyond a
//     symbolic link";
//   - below a gitlink the index holds, at any stage: the nested repository
//     is its own, and they die with "Pathspec '<p>' is in submodule '<g>'".
//
// No path below either is in a tree a capture writes (RFC 4: a nested
// repository is recorded beside the tree, never written by a rollback). A command given
// such a path on --stdin dies on it and answers nothing for the rest, so a
// caller leaves them out first.
//
// The symlink test is git's own: an lstat of each leading directory, from
// the root down (has_symlink_leading_path in git's symlinks.c), each
// directory once. The gitlinks are git's answer: one `git ls-files -s -v -z`
// (one per 64 KiB of arguments) whose pathspecs match the leading
// directories above any symlink themselves and nothing below them
// (exactPathspec), so what git prints, and what is parsed here, follows the
// number of paths, not the size of the index. Paths are slash-separated and
// relative to the root; a path with no '/' is always in reach.
func (r *Repo) OutOfReach(ctx context.Context, paths []string) (map[string]string, error) {
	link := map[string]bool{}   // leading directory: whether it is a symlink
	stop := map[string]string{} // path: its first leading directory that is a symlink
	asked := map[string]bool{}  // leading directories above any symlink, to ask the index about
	var dirs []string           // the same, each once, in order
	for _, p := range paths {
		for i := strings.IndexByte(p, '/'); i > 0; i = nextSlash(p, i) {
			d := p[:i]
			is, ok := link[d]
			if !ok {
				st, err := os.Lstat(filepath.Join(r.WorkTree, filepath.FromSlash(d)))
				is = err == nil && st.Mode()&os.ModeSymlink != 0
				link[d] = is
			}
			if is {
				stop[p] = d
				break
			}
			if !asked[d] {
				asked[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	gitlinks := map[string]bool{}
	for len(dirs) > 0 {
		args := []string{"ls-files", "-s", "-v", "-z", "--"}
		for size := 0; len(dirs) > 0 && size < 64<<10; dirs = dirs[1:] {
			spec := exactPathspec(dirs[0])
			args = append(args, spec)
			size += len(spec) + 1
		}
		out, err := r.Run(ctx, Options{}, args...)
		if err != nil {
			return nil, fmt.Errorf("listing gitlinks above the paths: %w", err)
		}
		entries, err := ParseLsFiles(out)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			// A glob is also matched as a literal prefix first (git's
			// match_pathspec_item), so a name that spells a pattern can
			// come back too: only the directories asked about count.
			if e.Mode == "160000" && asked[e.Path] {
				gitlinks[e.Path] = true
			}
		}
	}
	res := map[string]string{}
	for _, p := range paths {
		for i := strings.IndexByte(p, '/'); i > 0; i = nextSlash(p, i) {
			if d := p[:i]; gitlinks[d] || stop[p] == d {
				res[p] = d
				break
			}
		}
	}
	return res, nil
}

// nextSlash returns the index of the next '/' in p after i, or -1.
func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// exactPathspec is a pathspec that matches the path p itself, from the top
// of the tree, and nothing below it. A literal pathspec names a directory
// and everything in it; a glob does not reach below its end, since its
// wildcards never match a '/' (wildmatch with WM_PATHNAME). So p goes in
// as a glob whose last byte is a one-byte class, escaped inside it, and
// whose other bytes that wildmatch reads as special (* ? [ \) are escaped.
func exactPathspec(p string) string {
	var b strings.Builder
	b.WriteString(":(top,glob)")
	for i := 0; i < len(p)-1; i++ {
		if strings.IndexByte(`*?[\`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	b.WriteString(`[\`)
	b.WriteByte(p[len(p)-1])
	b.WriteByte(']')
	return b.String()
}

// DotPaths prefixes each path with "./" for commands that read paths as
// pathspecs and refuse every magic, :(literal) included (check-ignore): a
// pathspec is magic only when it starts with ':', so "./:!a" names the file
// ':!a' (CASES BR-38). Such a command echoes the "./" back.
func DotPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = "./" + p
	}
	return out
}

// RawHashes returns the object name each path's bytes would have with no
// filters (`git hash-object --no-filters`), for comparing what a checkout
// wrote with the blob it wrote from: they differ when an end-of-line
// conversion or a smudge filter changed the bytes (CASES BR-35). Paths
// are relative to the work tree, or absolute (a rollback's backups).
func (r *Repo) RawHashes(ctx context.Context, paths []string) (map[string]OID, error) {
	return r.hashPaths(ctx, paths, "--no-filters")
}

// CleanHashes returns the object name each path, relative to the work
// tree, would get in a capture: its bytes through the clean filter and
// end-of-line conversion its attributes name (`git hash-object
// --stdin-paths`), nothing written.
func (r *Repo) CleanHashes(ctx context.Context, paths []string) (map[string]OID, error) {
	return r.hashPaths(ctx, paths)
}

// StoreRaw writes each file's bytes as they are into the object store, as
// a blob (`git hash-object -w --no-filters`), and returns their names:
// for bytes that must be kept exactly, whatever the attributes of the
// path they came from (a save a rollback rescued). Paths are absolute or
// relative to the work tree.
func (r *Repo) StoreRaw(ctx context.Context, files []string) (map[string]OID, error) {
	return r.hashPaths(ctx, files, "-w", "--no-filters")
}

// stdinPathOK reports whether `git hash-object --stdin-paths` reads the
// line p as the path p: not one holding a newline, nor one that begins
// with a double quote (git unquotes such a line as a C string), nor one
// that ends in a carriage return (git strips it from the line).
func stdinPathOK(p string) bool {
	return !strings.Contains(p, "\n") && !strings.HasPrefix(p, `"`) && !strings.HasSuffix(p, "\r")
}

// BlobsFromDisk writes back into the object store those of missing (blob
// names) that a regular file of tree holds and that the file at the same
// path in the work tree still hashes to, through its clean filter as a
// capture reads it (`git ls-tree -r -z`, then `git hash-object -w
// --stdin-paths` of those paths alone, first without writing and then
// writing those that match, each a regular file below directories of the
// tree, never through a symbolic link): a blob that a `git gc
// --prune=now` beside a capture deleted while the file stayed as it was.
// It returns the names written back, in missing's order; the others are
// gone from the files too (a file changed since writes another blob,
// which stays unreferenced). Symlinks and gitlinks are not looked at. An
// error (tree itself missing, a filter failing) writes nothing known.
func (r *Repo) BlobsFromDisk(ctx context.Context, tree OID, missing []OID) ([]OID, error) {
	want := make(map[OID]bool, len(missing))
	for _, o := range missing {
		want[o] = true
	}
	out, err := r.Run(ctx, Options{NoIndex: true}, "ls-tree", "-r", "-z", "--full-tree", string(tree))
	if err != nil {
		return nil, err
	}
	entries, err := ParseLsTree(out)
	if err != nil {
		return nil, err
	}
	var paths []string
	of := map[string]OID{}
	for _, e := range entries {
		if want[e.OID] && (e.Mode == "100644" || e.Mode == "100755") && regularInTree(r.WorkTree, e.Path) {
			paths = append(paths, e.Path)
			of[e.Path] = e.OID
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	// Hashed first, nothing written; then written, the files that hash
	// to a missing blob alone: a file changed since S writes nothing.
	got, err := r.hashPaths(ctx, paths)
	if err != nil {
		return nil, err
	}
	var same []string
	for _, p := range paths {
		if got[p] == of[p] {
			same = append(same, p)
		}
	}
	if len(same) == 0 {
		return nil, nil
	}
	if got, err = r.hashPaths(ctx, same, "-w"); err != nil {
		return nil, err
	}
	back := map[OID]bool{}
	for _, p := range same {
		if got[p] == of[p] {
			back[of[p]] = true
		}
	}
	var res []OID
	for _, o := range missing {
		if back[o] {
			res = append(res, o)
		}
	}
	return res, nil
}

// regularInTree reports whether rel (slash-separated, relative to root)
// is a regular file of the tree: it is one, and each directory above it
// below root is a directory, not a symbolic link to one elsewhere.
func regularInTree(root, rel string) bool {
	dir := root
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, d)
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			return false
		}
	}
	st, err := os.Lstat(filepath.Join(dir, parts[len(parts)-1]))
	return err == nil && st.Mode().IsRegular()
}

// hashPaths runs `git hash-object <flags> --stdin-paths` on paths; a
// path --stdin-paths cannot be given goes on the command line of a
// second hash-object instead (stdinPathOK).
func (r *Repo) hashPaths(ctx context.Context, paths []string, flags ...string) (map[string]OID, error) {
	var in bytes.Buffer
	var asked, odd []string
	for _, p := range paths {
		if !stdinPathOK(p) {
			odd = append(odd, p)
			continue
		}
		asked = append(asked, p)
		in.WriteString(p)
		in.WriteByte('\n')
	}
	res := map[string]OID{}
	read := func(out []byte, asked []string) error {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != len(asked) {
			return fmt.Errorf("hash-object: %d names for %d paths", len(lines), len(asked))
		}
		for i, p := range asked {
			res[p] = OID(lines[i])
		}
		return nil
	}
	if len(asked) > 0 {
		out, err := r.Run(ctx, Options{Stdin: &in}, append(append([]string{"hash-object"}, flags...), "--stdin-paths")...)
		if err != nil {
			return nil, err
		}
		if err := read(out, asked); err != nil {
			return nil, err
		}
	}
	if len(odd) > 0 {
		out, err := r.Run(ctx, Options{}, append(append(append([]string{"hash-object"}, flags...), "--"), odd...)...)
		if err != nil {
			return nil, err
		}
		if err := read(out, odd); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ReadBlobs returns the content of each of oids (one `git cat-file
// --batch`). An object git does not have, or one that is no blob, is an
// error.
func (r *Repo) ReadBlobs(ctx context.Context, oids []OID) (map[OID][]byte, error) {
	res := map[OID][]byte{}
	if len(oids) == 0 {
		return res, nil
	}
	names := make([]string, len(oids))
	for i, o := range oids {
		names[i] = string(o)
	}
	objs, err := r.catBatch(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("reading blobs: %w", err)
	}
	for i, o := range objs {
		if o.missing || o.typ != "blob" {
			return nil, fmt.Errorf("cat-file: %s is not a blob here", oids[i])
		}
		res[oids[i]] = o.body
	}
	return res, nil
}

// BlobSizes returns the size in bytes of each of oids, from one `git
// cat-file --batch-check`. An object git does not have is an error.
func (r *Repo) BlobSizes(ctx context.Context, oids []OID) (map[OID]int64, error) {
	sizes := make(map[OID]int64, len(oids))
	if len(oids) == 0 {
		return sizes, nil
	}
	lines, err := r.catCheck(ctx, "%(objectname) %(objectsize)", oids)
	if err != nil {
		return nil, fmt.Errorf("reading object sizes: %w", err)
	}
	for _, l := range lines {
		name, size, _ := strings.Cut(l, " ")
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reading object sizes: %q", l)
		}
		sizes[OID(name)] = n
	}
	return sizes, nil
}
