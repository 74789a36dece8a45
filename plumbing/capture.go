package plumbing

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/venom-org/git-venom/internal/failpoint"
)

// Skip is a path a capture left at the index's content (RFC 4.2 skipped[]):
// Reason is "too_big" or "skip_worktree"; Bytes is the file's size on disk
// (0 when absent).
type Skip struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Submodule is a gitlink or nested repository in the tree (RFC 4.2
// submodules[]): Commit is its HEAD, or nil when it has none; Dirty is true
// when its own status is not clean (or it has no commit).
type Submodule struct {
	Path   string  `json:"path"`
	Commit *string `json:"commit"`
	Dirty  bool    `json:"dirty"`
}

// Snapshot is the state of one tree as a capture saw it (RFC 4.1 steps 1-4):
// Tree is the tree object written from the private index, Head the commit
// HEAD names ("" when unborn), Branch the short branch name ("" when
// detached), Bytes the total size of the new and changed files it hashed.
type Snapshot struct {
	Tree OID
	Head OID
	// HeadTree is HEAD's tree as the capture read it, with Head ("" when
	// unborn, or when the snapshot was not made by Capture).
	HeadTree OID
	// Refs are the commits of CaptureOptions.Refs, in their order, read
	// with HEAD ("" for one that names none); nil when not asked, or
	// when one named none, and the caller reads them itself.
	Refs       []OID
	Branch     string
	Skipped    []Skip
	Submodules []Submodule
	Bytes      int64
	// Changed is the number of paths the status walk listed.
	Changed int
	// IndexAttributes is true when the user's index, as the capture read
	// it, holds a .gitattributes entry; false, no attribute can come from
	// it, and git can be asked about attributes with an empty index
	// (FilterPaths).
	IndexAttributes bool
	// Scope lists, sorted, the submodules of this tree that the caller
	// captures in turn (CaptureOptions.Submodules): the paths of the
	// index's gitlinks that .gitmodules maps (git's own notion of a
	// submodule) and whose directory holds a repository at a commit. A
	// repository at a gitlink that .gitmodules does not map is described
	// as any nested repository is, and is not in scope.
	// Their entries in Submodules say Dirty false until the caller,
	// which captured them, says otherwise.
	Scope []string
}

// CaptureOptions bounds one capture (RFC 11.5 max_file_bytes,
// max_total_bytes). Zero means no bound.
type CaptureOptions struct {
	MaxFileBytes  int64
	MaxTotalBytes int64
	// Submodules says the caller captures each submodule in scope itself
	// (issue 18, RFC 4.2 repos[]): the walk does not look inside them (git
	// status --ignore-submodules=dirty: a submodule shows only when its
	// commit is not the index's), no status runs in them here, and
	// Snapshot.Scope lists them. The tree holds each one's HEAD as its
	// gitlink either way.
	Submodules bool
	// Refs are refs of this repository whose commits the capture reads
	// in the child that reads HEAD (Snapshot.Refs): a rollback's check of
	// its target's ref, with no git start of its own (issue 16).
	Refs []string
	// Head, when set, is HEAD as the caller read it in this same command
	// and expects it still (a rollback's verification, issue 16): the
	// walk says where HEAD is (`status --branch`), with no child of its
	// own to read it, and only where the walk finds HEAD elsewhere does
	// a child read it, after the walk. Refs are then not read, and the
	// kept stage's memo is not taken (whether its tree is still there is
	// what that child would ask). A hint of a detached or unborn HEAD,
	// or of a branch named "(detached)", is not taken.
	Head *HeadHint
}

// HeadHint is HEAD as a caller read it: the commit, its tree and the
// branch it is on (CaptureOptions.Head).
type HeadHint struct {
	Head, Tree OID
	Branch     string
}

// TooLargeError is a capture whose new and changed files together pass
// MaxTotalBytes (RFC 4, failed.checkpoint_too_large). Largest holds up to
// five paths, largest first.
type TooLargeError struct {
	Bytes   int64
	Largest []string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("new and changed files total %d bytes, over venom.checkpoints.maxTotalBytes; largest: %s",
		e.Bytes, strings.Join(e.Largest, ", "))
}

// TmpDir is the worktree's scratch directory for private indexes
// (DESIGN.md section 2), created on demand; once a process, the file
// system is asked to spread the directories made in it, a rollback's
// stage and backups, over its block groups (spreadSubdirs).
func (r *Repo) TmpDir() (string, error) {
	d := filepath.Join(r.GitDir, "venom", "tmp")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", d, err)
	}
	r.spread.Do(func() { spreadSubdirs(d) })
	return d, nil
}

// PrivateIndex is a path for a private index file that does not exist yet
// (git treats a missing index as empty, so it is never pre-created).
func (r *Repo) PrivateIndex(purpose string) (string, error) {
	d, err := r.TmpDir()
	if err != nil {
		return "", err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(d, fmt.Sprintf("%s-%d-%s.index", purpose, os.Getpid(), hex.EncodeToString(b[:]))), nil
}

// RemovePrivateIndex removes a private index and the lock git may have left
// beside it.
func RemovePrivateIndex(path string) {
	os.Remove(path)
	os.Remove(path + ".lock")
}

// RealIndex is the path of the worktree's own index. GIT_INDEX_FILE from the
// caller's environment is never used (a hook exports it).
func (r *Repo) RealIndex() string { return filepath.Join(r.GitDir, "index") }

// privateCopy copies the index file src (the user's, or a capture's kept
// one) to a new private index for purpose, keeping its mtime
// (CopyKeepMtime), and returns its path and the stat of the file copied.
// On an error nothing is left behind.
func (r *Repo) privateCopy(purpose, src string) (string, os.FileInfo, error) {
	idx, err := r.PrivateIndex(purpose)
	if err != nil {
		return "", nil, err
	}
	fi, err := copyKeepMtime(src, idx)
	if err != nil {
		RemovePrivateIndex(idx)
		return "", nil, fmt.Errorf("copying the index to a private one: %w", err)
	}
	return idx, fi, nil
}

// CopyKeepMtime copies a file (the real index) to dst keeping its mtime, as `cp -p`
// does. git's racy-entry check compares each entry's mtime with the index
// file's own; a copy stamped "now" makes a same-second, same-size edit look
// clean and the capture misses it (DESIGN.md section 4). A missing index
// copies to nothing.
func CopyKeepMtime(src, dst string) error {
	_, err := copyKeepMtime(src, dst)
	return err
}

// copyKeepMtime is CopyKeepMtime, and also returns the stat of the open
// source file, so that what the caller keys on (indexKeyOf) is the very
// file whose bytes were copied, even if git replaced src meanwhile. The
// stat is nil when src does not exist.
func copyKeepMtime(src, dst string) (os.FileInfo, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return nil, err
	}
	return st, copyOpenKeepMtime(in, dst)
}

// copyOpenKeepMtime copies the open file in, from its start, to a new
// file dst, keeping in's mtime.
func copyOpenKeepMtime(in *os.File, dst string) error {
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := writeNew(dst, in); err != nil {
		return err
	}
	return os.Chtimes(dst, st.ModTime(), st.ModTime())
}

// linkOpen makes dst, a new name, the open file in, whose name is path:
// a hard link to it when path still names that very file, else a copy of
// in that keeps its mtime (copyOpenKeepMtime). Only for a file no one
// writes in place: git replaces an index it writes, so what it does to
// dst leaves in as it is, and in keeps dst's mtime, which racy-git needs.
func linkOpen(in *os.File, path, dst string) error {
	if os.Link(path, dst) == nil {
		a, err1 := in.Stat()
		b, err2 := os.Lstat(dst)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return nil
		}
		os.Remove(dst)
	}
	return copyOpenKeepMtime(in, dst)
}

// HeadState returns the commit HEAD names ("" when unborn) and the branch
// it is on ("" when detached).
func (r *Repo) HeadState(ctx context.Context) (OID, string, error) {
	h, err := r.headState(ctx, false, "", nil)
	return h.head, h.branch, err
}

// headAnswer is what headState read: HEAD's commit and branch, its tree
// when asked, whether also's tree is there, and the commits of the refs
// asked (nil when they were not read in the same child).
type headAnswer struct {
	head, tree OID
	branch     string
	there      bool
	refs       []OID
}

// headState is HeadState, and with withTree also HEAD's tree ("" when
// unborn), from the same child. With also a tree's name, the same child
// says whether that tree is in the object store (there; false when it is
// not, or when HEAD is unborn). With refs, the same child reads the
// commit each names (CaptureOptions.Refs); when one names none, they are
// not read (refs nil), and the rest is asked again without them.
func (r *Repo) headState(ctx context.Context, withTree bool, also OID, refs []string) (h headAnswer, err error) {
	// One child for the usual case: the commit, [its tree,] [also's tree,]
	// [each ref's commit,] then the symbolic name ("HEAD" when detached).
	// An unborn HEAD fails and is told apart below; so does a missing
	// also, asked again without it, and a ref that names no commit.
	args := []string{"rev-parse", "HEAD"}
	if withTree {
		args = append(args, "HEAD^{tree}")
	}
	if also != "" {
		// Peeling reads the object: rev-parse fails when it is not there,
		// or is no tree.
		args = append(args, string(also)+"^{tree}")
	}
	for _, ref := range refs {
		args = append(args, ref+"^{commit}")
	}
	out, err := r.Run(ctx, Options{}, append(args, "--symbolic-full-name", "HEAD")...)
	if err != nil {
		if len(refs) > 0 && ctx.Err() == nil {
			return r.headState(ctx, withTree, also, nil)
		}
		if also != "" && ctx.Err() == nil {
			h, err = r.headState(ctx, withTree, "", nil)
			h.there = false
			return h, err
		}
		b, err2 := r.Line(ctx, Options{}, "symbolic-ref", "-q", "HEAD")
		if err2 != nil {
			return headAnswer{}, fmt.Errorf("reading HEAD: %w", err)
		}
		return headAnswer{branch: strings.TrimPrefix(b, "refs/heads/")}, nil
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != len(args) {
		return headAnswer{}, fmt.Errorf("reading HEAD: unexpected output %q", out)
	}
	h.head = OID(f[0])
	if withTree {
		h.tree = OID(f[1])
	}
	n := len(f) - 1 - len(refs) // the first ref's line
	if also != "" {
		h.there = OID(f[n-1]) == also
	}
	if len(refs) > 0 {
		h.refs = make([]OID, len(refs))
		for i := range refs {
			h.refs[i] = OID(f[n+i])
		}
	}
	if sym := f[len(f)-1]; strings.HasPrefix(sym, "refs/heads/") {
		h.branch = strings.TrimPrefix(sym, "refs/heads/")
	}
	return h, nil
}

// Capture implements RFC 4.1 steps 1 to 4 for this tree, walking it once:
// it copies the real index (mtime kept), clears assume-unchanged in the copy,
// runs one status on the copy, and updates only the paths status lists,
// minus files over MaxFileBytes and nested repositories, then writes the
// tree. What git says of the index itself (ls-files, and write-tree when
// nothing changed) is kept in the index cache and reused while the real
// index is the same file (indexcache.go). The user's index, HEAD, refs and
// files are never written. Any failed step returns an error and no tree
// (BR-21). Errors: *TooLargeError, *Error, or the context's error on
// timeout.
func (r *Repo) Capture(ctx context.Context, o CaptureOptions) (*Snapshot, error) {
	read := time.Now()
	// The private index is a copy of the user's index, or of its status
	// index when a capture of this same index file left one (kept.go):
	// the same entries, with stat data git refreshed since.
	in, err := os.Open(r.RealIndex())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("copying the index to a private one: %w", err)
	}
	var indexStat os.FileInfo
	if in != nil {
		defer in.Close()
		if indexStat, err = in.Stat(); err != nil {
			return nil, fmt.Errorf("copying the index to a private one: %w", err)
		}
	}
	// The cache entry for this index file, if any; store is what this
	// capture learnt about it, written when the capture ends, whether it
	// succeeds or fails (too large, a failed step): it is true of the index
	// either way. A capture out of time writes nothing more.
	var key indexKey
	var keyed bool
	if in != nil {
		key, keyed = indexKeyOfOpen(in, indexStat)
	}
	var cached, store *indexCache
	if keyed {
		if cached = r.loadIndexCache(key); cached == nil {
			cached = r.heldCache(key, indexStat)
		}
	}
	// The status index is used only where it was made under the
	// configuration of now (keptEnvID: a clean filter changed since would
	// make other blobs of files its stat data calls unchanged).
	var statusName string
	if keyed {
		statusName = statusIndexName(key, r.keptEnvID())
	}
	src := in
	fromStatus := false
	var statusPath string
	if cached != nil && cached.Status != "" && cached.Status == statusName {
		statusPath = filepath.Join(r.keptDir(), cached.Status)
		if k, err := os.Open(statusPath); err == nil {
			defer k.Close()
			src, fromStatus = k, true
			r.trace.printf("capture: from the status index %s", cached.Status)
		}
	}
	idx, err := r.PrivateIndex("capture")
	if err != nil {
		return nil, err
	}
	defer RemovePrivateIndex(idx)
	switch {
	case fromStatus:
		// The status index is ours: a hard link to it serves as the
		// copy (git replaces an index it writes, never writes it in
		// place), where a copy of its bytes cost a tenth of a dedup's
		// own CPU on test262. Never the user's index: a link changes its
		// ctime, which the index cache keys on.
		if err := linkOpen(src, statusPath, idx); err != nil {
			return nil, fmt.Errorf("copying the index to a private one: %w", err)
		}
	case src != nil:
		if err := copyOpenKeepMtime(src, idx); err != nil {
			return nil, fmt.Errorf("copying the index to a private one: %w", err)
		}
		// The key's checksum is of the bytes copied: git never writes an
		// index in place, but if something did between the stat and the
		// copy, the cache is neither used nor stored for this capture.
		if keyed && key.Trailer != "" && fileTrailer(idx) != key.Trailer {
			r.trace.printf("index cache: not used, the index changed while it was copied")
			keyed, cached = false, nil
		}
	}
	failpoint.Hit("capture.index-copied")
	// Before its lstats, the moments a file must have changed before for
	// its stamp to be kept (stamps.go), by the clocks of now.
	stamps := stampsBefore(read, idx)
	defer func() {
		if store == nil || ctx.Err() != nil {
			return
		}
		if !store.Key.storable(read) {
			r.trace.printf("index cache: not stored, the index has no checksum and changed less than %v ago; held", indexSettle)
			r.hold(store, indexStat)
			return
		}
		if err := r.storeIndexCache(store); err != nil {
			r.trace.printf("index cache: not stored: %v", err)
		}
	}()
	env := []string{"GIT_INDEX_FILE=" + idx}
	snap := &Snapshot{}
	var headTree OID
	// The stage index the last tree edit kept (kept.go), and whether the
	// tree it memoized is still there, asked of the child that reads HEAD.
	kept := r.loadKeptStage()
	var memo OID
	if kept != nil {
		memo = kept.Memo.Tree
	}
	var memoThere bool
	var h headAnswer
	hint := o.Head
	// status writes "(detached)" for a detached HEAD and for a branch of
	// that very name: on such a branch, the walk could not tell them
	// apart.
	if hint != nil && (hint.Head == "" || hint.Tree == "" || hint.Branch == "" || hint.Branch == "(detached)") {
		hint = nil
	}
	if hint != nil {
		h = headAnswer{head: hint.Head, tree: hint.Tree, branch: hint.Branch}
	} else if h, err = r.headState(ctx, true, memo, o.Refs); err != nil {
		return nil, err
	}
	snap.Head, snap.Branch, headTree, memoThere, snap.Refs = h.head, h.branch, h.tree, h.there, h.refs
	snap.HeadTree = headTree
	if kept != nil && !memoThere {
		kept.Memo = stageMemo{}
	}

	// Step 2: the index's own view: assume-unchanged bits to clear in the
	// copy, skip-worktree paths to report, gitlinks to describe. On 100k
	// files ls-files and its parsing cost half a status (bench/README.md),
	// so its answer for this index file comes from the cache when there is
	// one; else git is asked, and the answer kept.
	var ans indexAnswer
	if cached != nil {
		ans = cached.Answer
	} else {
		if ans, err = r.listIndex(ctx, env, true); err != nil {
			return nil, err
		}
		if keyed {
			store = &indexCache{Key: key, Answer: ans}
		}
	}
	// That answer has the bits as the index file holds them. In a sparse
	// checkout git clears, as it reads the index, the skip-worktree bit of
	// each such path present in the work tree, and the status walk then
	// treats it as tracked (listIndex). When none is present, git's view is
	// the file's, whatever the configuration; when one is, git is asked
	// with the user's configuration, and that answer, which depends on the
	// work tree, is not cached.
	var present bool
	if snap.Skipped, present = r.skipWorktree(ans.SkipWorktree); present {
		if ans, err = r.listIndex(ctx, env, false); err != nil {
			return nil, err
		}
		snap.Skipped, _ = r.skipWorktree(ans.SkipWorktree)
	}
	assumed := ans.AssumeUnchanged
	gitlinks := ans.Gitlinks
	snap.IndexAttributes = ans.Attributes
	clearAssumed := func() error {
		if len(assumed) == 0 {
			return nil
		}
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(assumed))},
			"update-index", "-z", "--no-assume-unchanged", "--stdin"); err != nil {
			return fmt.Errorf("clearing assume-unchanged in the private index: %w", err)
		}
		return nil
	}
	if err := clearAssumed(); err != nil {
		return nil, err
	}

	// Step 3: the one walk. Where the private index can be kept as the
	// status index of this index file (it settled, and no entry has bits
	// the copy changes or git's reading of it does), status may rewrite it
	// to refresh stat data, and a rewritten copy is kept (kept.go);
	// elsewhere GIT_OPTIONAL_LOCKS=0 keeps status from rewriting it for
	// nothing. Never with a submodule: status runs a status in it, which
	// would then rewrite the submodule's own index (the variable is what
	// stops it, and it goes to that child too).
	keep := keyed && key.settled(read) && len(ans.AssumeUnchanged) == 0 && len(ans.SkipWorktree) == 0 && len(ans.Gitlinks) == 0
	stEnv := env
	if !keep {
		stEnv = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	// Beside it, directories the index tracks are looked at for a
	// repository status would walk into: all of them when the index's
	// answer was asked of git now, else those the cache remembers holding
	// one (nested.go).
	full := cached == nil
	first := ans.Dirs
	if !full {
		first = cached.Hidden
	}
	hiddenc := make(chan []string, 1)
	go func() { hiddenc <- r.hiddenNested(first) }()
	ignoreSubs := "--ignore-submodules=none"
	if o.Submodules {
		// Each submodule's own capture walks it; git's own look inside
		// (a status child per submodule) would be a second walk.
		ignoreSubs = "--ignore-submodules=dirty"
	}
	r.progress("capture.walk", 0, 0)
	// walk runs status; rewritten says that it replaced the private index.
	args := []string{"status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=all", ignoreSubs}
	if hint != nil {
		// Where HEAD is, read as the walk begins (no ahead/behind counts:
		// no walk of history).
		args = append(args, "--branch", "--no-ahead-behind")
	}
	// walkHead is HEAD as the last walk read it (hint only).
	var walkHead, walkBranch string
	walk := func() (status []Status, rewritten bool, err error) {
		before, _ := os.Stat(idx)
		out, err := r.Run(ctx, Options{Env: stEnv}, args...)
		if err != nil {
			return nil, false, &walkError{err}
		}
		after, err := os.Stat(idx)
		rewritten = err == nil && (before == nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()))
		if hint != nil {
			walkHead, walkBranch = StatusBranch(out)
		}
		status, err = ParseStatusV2(out)
		return status, rewritten, err
	}
	status, rewritten, err := walk()
	// The status index was made when the work tree's attributes files
	// were the index's (none was listed); one listed now is a change
	// since, under which its stat data may call a file unchanged that now
	// cleans to other bytes. Nor does a status index git cannot read fail
	// the capture (any other failure of the walk does, as without one).
	// Either way the walk is made again from the user's index, and the
	// status index is dropped.
	if fromStatus && ctx.Err() == nil && (indexUnreadable(err) || (err == nil && attrsChanged(statusPaths(status)))) {
		r.trace.printf("capture: the walk from the status index %s cannot stand (%v); again from the user's index", cached.Status, err)
		os.Remove(filepath.Join(r.keptDir(), cached.Status))
		fromStatus = false
		RemovePrivateIndex(idx)
		if _, err := in.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("copying the index to a private one: %w", err)
		}
		if err := copyOpenKeepMtime(in, idx); err != nil {
			return nil, fmt.Errorf("copying the index to a private one: %w", err)
		}
		if err := clearAssumed(); err != nil {
			return nil, err
		}
		status, rewritten, err = walk()
	}
	hiddenDirs := <-hiddenc
	var we *walkError
	if errors.As(err, &we) {
		return nil, fmt.Errorf("walking the tree: %w", we.error)
	}
	failpoint.Hit("capture.status-done")
	if err != nil {
		return nil, err
	}
	if hint != nil && (walkHead != string(hint.Head) || walkBranch != hint.Branch) {
		// HEAD is not where the caller left it (a commit or a checkout
		// beside the command): read as without a hint, now.
		r.trace.printf("capture: HEAD is not where the caller read it (%s on %q); read again", walkHead, walkBranch)
		if h, err = r.headState(ctx, true, "", nil); err != nil {
			return nil, err
		}
		snap.Head, snap.Branch, snap.HeadTree = h.head, h.branch, h.tree
		headTree = h.tree
	}
	if keyed {
		// The status index for the captures of this index to come: this
		// walk's private index when status refreshed it or it is not
		// one, else the one it started from; none while an attributes
		// file differs from the index's.
		want := ""
		switch {
		case !keep || attrsChanged(statusPaths(status)):
		case rewritten:
			if unsure := r.unsureEntry(ctx, idx, env, stamps); unsure != "" {
				// Not kept, nor the one it started from: it is not
				// what the walk found.
				r.trace.printf("capture: status refreshed the private index; not kept: %s", unsure)
			} else if want = r.keepStatusIndex(idx, statusName); want != "" {
				r.trace.printf("capture: status refreshed the private index; kept as %s", want)
			}
		case fromStatus:
			want = cached.Status
		default:
			// Nothing to refresh: the copy is the user's index byte for
			// byte, a status index too, and the captures to come link
			// it rather than copy the user's index (a link to that one
			// would change its ctime, which the cache keys on).
			if want = r.keepStatusIndex(idx, statusName); want != "" {
				r.trace.printf("capture: the private index kept as the status index %s", want)
			}
		}
		if store == nil && cached.Status != want {
			c := *cached
			store = &c
		}
		if store != nil {
			store.Status = want
		}
	}
	if !full {
		// And the tracked directories above each path status lists: a
		// repository whose files differ from the index's in any way.
		listed := make([]string, len(status))
		for i, s := range status {
			listed[i] = s.Path
		}
		hiddenDirs = outermost(append(hiddenDirs, r.hiddenNested(trackedAncestors(listed, ans.Dirs))...))
	}
	if keyed {
		// Remembered for the captures of this index to come.
		switch {
		case store != nil:
			store.Hidden = hiddenDirs
		case !slices.Equal(cached.Hidden, hiddenDirs):
			c := *cached
			c.Hidden = hiddenDirs
			store = &c
		}
	}
	snap.Changed = len(status)
	// inScope reports whether a gitlink path is a submodule git knows
	// (.gitmodules maps it), read once, when first asked.
	var mapped map[string]bool
	inScope := func(p string) bool {
		if mapped == nil {
			mapped = r.submoduleMapping(ctx)
		}
		return mapped[p]
	}
	var update, removed []string // stamps gets update's lstat results
	var sizes []sized
	var indexInfo bytes.Buffer
	var infoPaths []string    // the paths of indexInfo's records
	var unmerged bytes.Buffer // --index-info records: a stage-0 entry for each unmerged path of update
	// links are the entries of nested repositories (nested.go), put in
	// the tree as they are: a gitlink at the repository's commit, or
	// dropTree for one with no commit under which the index tracks paths.
	links := map[string]*Entry{}
	nested := map[string]bool{}
	// The repositories status walks into: each is reported, and nothing
	// status says below it is the tree's.
	hidden := map[string]bool{}
	for _, d := range hiddenDirs {
		sm, ok := r.readNested(ctx, d)
		if !ok {
			continue // not a repository git reads: its files are the tree's
		}
		hidden[d], nested[d] = true, true
		snap.Submodules = append(snap.Submodules, sm)
		if sm.Commit != nil {
			links[d] = gitlinkEntry(*sm.Commit)
		} else {
			links[d] = dropTree
		}
	}
	for _, s := range status {
		if len(hidden) > 0 && nestedRootOf(strings.TrimSuffix(s.Path, "/"), hidden) != "" {
			continue
		}
		switch s.Kind {
		case '!':
			continue
		case '?':
			if strings.HasSuffix(s.Path, "/") {
				// An untracked nested repository (a .git dir or file):
				// a gitlink at its HEAD, nothing inside; reported with
				// it, and with no entry when it has no commit (BR-21,
				// BR-28; nested.go).
				p := strings.TrimSuffix(s.Path, "/")
				nested[p] = true
				sm := r.describeNested(ctx, p)
				if sm.Commit != nil {
					links[p] = gitlinkEntry(*sm.Commit)
				}
				snap.Submodules = append(snap.Submodules, sm)
				continue
			}
		case '1', 'u':
			if s.Kind == '1' && s.XY[1] == '.' {
				continue // the index already holds the work tree's content
			}
			if strings.HasPrefix(s.Sub, "S") && s.ModeW == "160000" {
				// A submodule: record the commit it is at, nothing inside.
				var sm Submodule
				if o.Submodules && gitlinks[s.Path] != "" && inScope(s.Path) {
					sm = r.scopedSubmodule(ctx, s.Path, snap)
				} else {
					sm = r.describeNested(ctx, s.Path)
				}
				if sm.Commit != nil && OID(*sm.Commit) != gitlinks[s.Path] {
					links[s.Path] = gitlinkEntry(*sm.Commit)
				}
				snap.Submodules = append(snap.Submodules, sm)
				continue
			}
		}
		if s.ModeW == "000000" {
			// Deleted, or now beyond a symlink (lib/y.c after lib became a
			// link, CASES BR-29), or, for an unmerged path, a directory
			// now: --remove would refuse the latter two, so these are
			// force-removed, before anything is added (the files of such
			// a directory come as untracked paths of their own).
			removed = append(removed, s.Path)
			continue
		}
		st, err := os.Lstat(r.inTree(s.Path))
		if err != nil {
			update = append(update, s.Path)
			stamps.fis = append(stamps.fis, nil)
			continue
		}
		if st.Mode().IsRegular() && o.MaxFileBytes > 0 && st.Size() > o.MaxFileBytes {
			snap.Skipped = append(snap.Skipped, Skip{Path: s.Path, Bytes: st.Size(), Reason: "too_big"})
			if s.Kind == 'u' {
				// An unmerged path has no stage-0 entry, and write-tree
				// fails on it: one big conflicted file would fail every
				// capture until the merge ends. Keep ours (stage 2, what
				// HEAD has), or nothing when our side deleted it.
				if s.ModeI == "000000" {
					fmt.Fprintf(&indexInfo, "0 %s 0\t%s\x00", strings.Repeat("0", len(s.IndexOID)), s.Path)
				} else {
					fmt.Fprintf(&indexInfo, "%s %s 0\t%s\x00", s.ModeI, s.IndexOID, s.Path)
				}
				infoPaths = append(infoPaths, s.Path)
			}
			continue
		}
		if st.Mode().IsRegular() {
			snap.Bytes += st.Size()
			sizes = append(sizes, sized{s.Path, st.Size()})
		}
		update = append(update, s.Path)
		stamps.fis = append(stamps.fis, st)
		if s.Kind == 'u' && s.AddMode != "" {
			// Staged over a stage-0 entry of the stage `git add` takes
			// the mode from (RFC 4.1 step 4): update-index alone, with
			// no stage-0 entry, makes a file 100644 where core.fileMode
			// or core.symlinks is off.
			fmt.Fprintf(&unmerged, "%s %s 0\t%s\x00", s.AddMode, s.AddOID, s.Path)
		}
	}
	if o.MaxTotalBytes > 0 && snap.Bytes > o.MaxTotalBytes {
		sort.Slice(sizes, func(i, j int) bool { return sizes[i].n > sizes[j].n })
		e := &TooLargeError{Bytes: snap.Bytes}
		for i := 0; i < len(sizes) && i < 5; i++ {
			e.Largest = append(e.Largest, sizes[i].path)
		}
		return nil, e
	}
	// Tracked submodules whose commit did not change are still reported.
	for p, oid := range gitlinks {
		if nested[p] || (len(hidden) > 0 && nestedRootOf(p, hidden) != "") {
			continue
		}
		found := false
		for _, s := range snap.Submodules {
			if s.Path == p {
				found = true
				break
			}
		}
		if !found {
			if _, err := os.Lstat(filepath.Join(r.WorkTree, p)); err == nil {
				c := string(oid)
				switch {
				case !o.Submodules || !r.populated(p):
					snap.Submodules = append(snap.Submodules, Submodule{Path: p, Commit: &c})
				case inScope(p):
					snap.Submodules = append(snap.Submodules, Submodule{Path: p, Commit: &c})
					snap.Scope = append(snap.Scope, p)
				default:
					// A repository at a gitlink that is no submodule (no
					// .gitmodules entry): status no longer looks inside
					// it, so whether it is dirty is asked of it here.
					snap.Submodules = append(snap.Submodules, r.describeNested(ctx, p))
				}
			}
		}
	}
	sort.Slice(snap.Submodules, func(i, j int) bool { return snap.Submodules[i].Path < snap.Submodules[j].Path })
	sort.Strings(snap.Scope)

	// Step 4: stage exactly what status listed, and write the tree. The
	// tree starts from the index's own: HEAD's when the cache says the
	// index's tree is HEAD's (HEAD reaches it, so no gc can have pruned
	// it since), else what write-tree makes of the copy as it still is,
	// which costs no index write while the index's cache tree is valid.
	// An unmerged index has none, and takes the full way below.
	// With core.fileMode or core.symlinks off, update-index takes modes
	// from the full index's entries: the paths are staged the full way,
	// which needs no base.
	wroteInfo := indexInfo.Len() > 0
	unwritten := len(update) == 0 && len(removed) == 0 && !wroteInfo && len(links) == 0
	needBase := unwritten
	if !unwritten {
		fromDisk, err := r.modesFromDisk(ctx)
		needBase = err == nil && fromDisk
	}
	var base OID
	if needBase {
		if cached != nil && cached.Tree != "" && cached.Tree == headTree {
			base = headTree
		} else if tree, err := r.Line(ctx, Options{Env: env}, "write-tree"); err == nil {
			base = OID(tree)
			if keyed {
				if store == nil && cached.Tree != base {
					c := *cached
					store = &c
				}
				if store != nil {
					store.Tree = base
				}
			}
		} else if unwritten || ctx.Err() != nil {
			return nil, fmt.Errorf("writing the tree: %w", err)
		}
	}
	if unwritten {
		snap.Tree = base
		return snap, nil
	}
	if base != "" {
		// The paths' entries from an index of those paths alone, and the
		// tree from base with them: no rewrite of a copy of the whole
		// index, so a capture's cost beyond its one status grows with the
		// paths that changed (treeEditor, issue 3). A failure to read the
		// work tree fails the capture as it would the full way; one of
		// the editor itself (an object gone from base) takes the full way.
		tree, err := r.editCapture(ctx, kept, idx, base, update, removed, indexInfo.Bytes(), infoPaths, links, stamps)
		for try := 1; err != nil && IsObjectRace(err) && try < objectWriteTries && sleepCtx(ctx, retryWait(try)); try++ {
			// mktree met a concurrent gc (objectrace.go); its session
			// cannot be run again by Run, so the edit is.
			r.trace.printf("editing the tree met a concurrent gc: edit %d of %d", try+1, objectWriteTries)
			tree, err = r.editCapture(ctx, kept, idx, base, update, removed, indexInfo.Bytes(), infoPaths, links, stamps)
		}
		var se *stageError
		switch {
		case err == nil:
			snap.Tree = tree
			return snap, nil
		case errors.As(err, &se) || ctx.Err() != nil:
			return nil, err
		default:
			r.trace.printf("editing the tree failed, taking the full way: %v", err)
		}
	}
	// The full way: the paths staged in the copy of the whole index.
	// Paths on stdin are literal (never pathspecs, so ':todo.md' is a
	// name: BR-38); --replace lets a file become a directory and back
	// (BR-32). A repository status walked into loses every entry the
	// copy has below it first, and the gitlinks go in last, with the
	// kept entries.
	for p, e := range links {
		if hidden[p] {
			below, err := r.Run(ctx, Options{Env: env}, "ls-files", "-z", "--", ":(literal)"+p+"/")
			if err != nil {
				return nil, fmt.Errorf("listing the index below %s: %w", p, err)
			}
			list, _ := splitNul(below)
			removed = append(removed, list...)
		}
		if e != dropTree {
			fmt.Fprintf(&indexInfo, "160000 %s 0\t%s\x00", e.OID, p)
		}
	}
	wroteInfo = indexInfo.Len() > 0
	if len(removed) > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(removed))},
			"update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return nil, fmt.Errorf("removing deleted paths from the private index: %w", err)
		}
	}
	if unmerged.Len() > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: &unmerged}, "update-index", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("resolving unmerged paths in the private index: %w", err)
		}
	}
	if len(update) > 0 {
		if err := r.updateIndex(ctx, env, update); err != nil {
			return nil, err
		}
	}
	if wroteInfo {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(indexInfo.Bytes())},
			"update-index", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("recording submodule commits and kept entries: %w", err)
		}
	}
	failpoint.Hit("capture.index-updated")
	tree, err := r.Line(ctx, Options{Env: env}, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("writing the tree: %w", err)
	}
	snap.Tree = OID(tree)
	return snap, nil
}

// editCapture writes a capture's tree as base with the paths that status
// listed changed: update read again from the work tree, removed taken
// out, info's --index-info records (about infoPaths) applied, all as
// they would be in a copy of the whole index (Repo.stage, treeEditor),
// and the nested repositories' entries, links, set last (a gitlink
// replaces whatever base has at its path; dropTree removes it). With no
// path to read, no index is made. The stage index the last capture
// kept (nil: none; loaded by the caller, its Memo cleared unless git
// said the memoized tree is there) is where staging starts, and this
// one's is kept for the next (kept.go).
func (r *Repo) editCapture(ctx context.Context, kept *keptStage, whole string, base OID, update, removed []string, info []byte, infoPaths []string, links map[string]*Entry, stamps stageStamps) (OID, error) {
	tree, err := r.editCaptureFrom(ctx, kept, whole, base, update, removed, info, infoPaths, links, stamps)
	var se *stageError
	if err != nil && kept != nil && ctx.Err() == nil && (!errors.As(err, &se) || indexUnreadable(err)) {
		// What the last capture kept may be what git fails on (a damaged
		// file, a blob a gc pruned that mktree refuses): it is dropped,
		// and the edit made without it. Not a failure to read the work
		// tree (a clean filter that fails): that fails the capture, as
		// without a kept index.
		r.trace.printf("capture: the edit from the kept stage index failed (%v); again without it", err)
		r.dropKeptStage()
		tree, err = r.editCaptureFrom(ctx, nil, whole, base, update, removed, info, infoPaths, links, stamps)
	}
	return tree, err
}

// editCaptureFrom is editCapture, staging from the kept stage index kept
// (nil: none).
func (r *Repo) editCaptureFrom(ctx context.Context, kept *keptStage, whole string, base OID, update, removed []string, info []byte, infoPaths []string, links map[string]*Entry, stamps stageStamps) (OID, error) {
	// The way the tree is written (wholeWay), told by how many paths
	// change; a dropTree, which only the tree edit takes, may come with
	// the links. Without a kept stage index, the editor's processes start
	// now, the tree edit's mktree only where it is the way.
	hasDrop := false
	for _, e := range links {
		hasDrop = hasDrop || e == dropTree
	}
	useWhole := wholeWay(len(update)+len(removed)+len(infoPaths)+len(links), hasDrop, whole)
	ed, err := r.editTreeLazy(ctx, base, kept == nil, !useWhole)
	if err != nil {
		return "", err
	}
	defer ed.close()
	ed.keep, ed.kept, ed.stamps = true, kept, stamps
	defer func() {
		if ed.stageIdx != "" {
			RemovePrivateIndex(ed.stageIdx)
		}
	}()
	changes := map[string]*Entry{}
	if len(update) > 0 || len(info) > 0 {
		if changes, err = r.stage(ctx, ed, update, removed, info, infoPaths); err != nil {
			return "", err
		}
	}
	for _, p := range removed {
		if _, again := changes[p]; !again {
			changes[p] = nil
		}
	}
	for p, e := range links {
		changes[p] = e
	}
	failpoint.Hit("capture.index-updated")
	// The same changes on the same base as the capture that kept the
	// stage index make the same tree: it is not written again where git
	// said, as the capture read HEAD, that it is still there (a tree no
	// checkpoint holds may have gone with a gc; the caller cleared a memo
	// that is not). Below its top it is not read: a gc that pruned as the
	// capture that made it wrote it may have taken a subtree or a blob, and
	// a rollback that finds its S so captures it again without the kept
	// stage (ForgetKeptStage), which writes them again. Elsewhere mktree
	// checks that every object it is given is there, those of the kept
	// entries included.
	sorted := sortedChanges(changes)
	records := changesRecords(changes, sorted)
	digest := changesDigest(records)
	var tree OID
	if m := kept; m != nil && m.Memo.Base == base && m.Memo.Digest == digest && m.Memo.Tree != "" {
		tree = m.Memo.Tree
		r.trace.printf("capture: the tree of the same changes, %s", tree)
	}
	// Else, the last capture's tree on the same base, edited along the
	// paths whose changes are not its (memo.go), where they are fewer
	// than half of these and fewer than the whole way is for.
	var delta map[string]*Entry
	if m := kept; tree == "" && !hasDrop && len(changes) >= memoChangesMin && m != nil && m.Memo.Base == base && m.Memo.Tree != "" {
		// At least as many paths differ as the two counts do: where
		// that is more than half of these, the memo's changes are not
		// read (after a turn of 50,000 new files, 4 MB to hash and
		// parse).
		if d := m.Memo.Count - len(changes); m.Memo.Count > 0 && (d > len(changes)/2 || -d > len(changes)/2) {
			r.trace.printf("capture: the memo's %d changes cannot be within half of these %d: its tree is not edited", m.Memo.Count, len(changes))
		} else if prev, ok := r.loadMemoChanges(m.Memo.Digest); ok {
			d, ok, err := ed.memoDelta(base, prev, changes, len(changes)/2)
			if err != nil {
				return "", err
			}
			if ok && !wholeWay(len(d), false, whole) {
				delta = d
			}
		}
	}
	switch {
	case tree != "":
		if err := ed.close(); err != nil {
			return "", err
		}
	case delta != nil:
		r.trace.printf("capture: %d of %d changes differ from those of the tree %s; it is edited along them", len(delta), len(changes), kept.Memo.Tree)
		ed.base = kept.Memo.Tree
		tree, err = ed.write(delta)
		ed.base = base
		if err != nil {
			return "", err
		}
	case useWhole:
		// Many changed paths: their entries into a copy of the whole
		// index, and write-tree (writeWhole), costs less than the trees
		// along them read and written again (wholeWay).
		if err := ed.close(); err != nil {
			return "", err
		}
		if tree, err = r.writeWhole(ctx, whole, changes, sorted, len(base)); err != nil {
			return "", err
		}
	default:
		if tree, err = ed.write(changes); err != nil {
			return "", err
		}
	}
	if len(changes) >= memoChangesMin && !hasDrop && (ed.fast || ed.next != nil) && (kept == nil || kept.Memo.Digest != digest) {
		// The records beside the memo that names them, before it does.
		r.storeMemoChanges(digest, records)
	}
	if memo := (stageMemo{Base: base, Digest: digest, Tree: tree, Count: len(changes)}); ed.fast && kept.Memo != memo {
		// Its entries taken as they were, with other removals or
		// nested repositories: the kept index stays, with this tree.
		r.rememoKeptStage(kept, memo)
	}
	if ed.next != nil {
		ed.next.Memo = stageMemo{Base: base, Digest: digest, Tree: tree, Count: len(changes)}
		if !ed.same || ed.next.Memo != kept.Memo {
			if r.storeKeptStage(ed.stageIdx, ed.next) {
				ed.stageIdx = "" // kept: not removed as the edit ends
			}
		}
	}
	return tree, nil
}

// wholeWay reports whether a capture's tree is better written from a copy
// of the whole private index whole (writeWhole) than by the tree edit,
// for n changed paths: when they are many. mktree looks up every entry of
// every tree it makes, and for a loose object, as each blob update-index
// just wrote is, that is an open, a map and an inflate; write-tree only
// checks that each is there. On test262 (57k files, a 6 MB index) 10,000
// changed files cost mktree 1.1 s against 0.65 s for write-tree of the
// same trees, where update-index --index-info of a copy of the index
// costs about 0.05 s; 1,000 cost mktree and cat-file about 0.7 s, the
// whole way 0.6 s, and venom's own edit of the trees is not made. Never
// with a change that drops a whole directory (dropTree), which the index
// would need listed below it. GIT_VENOM_TEST_TREE_WAY=edit or whole
// chooses, for tests.
func wholeWay(n int, hasDrop bool, whole string) bool {
	if whole == "" || hasDrop {
		return false
	}
	switch os.Getenv("GIT_VENOM_TEST_TREE_WAY") {
	case "edit":
		return false
	case "whole":
		return true
	}
	if n < wholeMin {
		return false
	}
	fi, err := os.Stat(whole)
	if err != nil {
		return false
	}
	// About 100 bytes an entry in the index (105 on test262): the whole
	// way when the changes are more than one in wholeEvery of its
	// entries.
	return int64(n)*wholeEvery*100 > fi.Size()
}

// wholeMin and wholeEvery bound wholeWay: on test262 the whole way costs
// a floor of about 0.2 s (update-index and write-tree each read and
// write the 6 MB index) and the tree edit about 0.12 s at 100 changed
// files; at 300 and more the whole way costs less (GIT_VENOM_TRACE
// children's CPU, both ways on the same states).
const (
	wholeMin   = 128
	wholeEvery = 256
)

// writeWhole writes the tree of the private index whole with changes
// applied (each path's entry set, a nil entry removing it), as the tree
// edit would make it from whole's tree: in a hard link to whole (git
// replaces the index it writes, so whole stays as it is, for a retry),
// `update-index --index-info` (which adds, replaces a file by a
// directory and back, and removes, as update-index --replace does) and
// write-tree. No entry may be dropTree (wholeWay); paths are changes'
// keys, sorted (sortedChanges); hexLen is the length of an object's name.
func (r *Repo) writeWhole(ctx context.Context, whole string, changes map[string]*Entry, paths []string, hexLen int) (OID, error) {
	idx, err := r.PrivateIndex("whole")
	if err != nil {
		return "", err
	}
	defer RemovePrivateIndex(idx)
	in, err := os.Open(whole)
	if err != nil {
		return "", fmt.Errorf("copying the index to a private one: %w", err)
	}
	err = linkOpen(in, whole, idx)
	in.Close()
	if err != nil {
		return "", fmt.Errorf("copying the index to a private one: %w", err)
	}
	// The records, removals first: "<mode> <object> 0\t<path>\0" each,
	// about 70 bytes and a path.
	size := 0
	for _, p := range paths {
		size += 16 + hexLen + len(p)
	}
	info := make([]byte, 0, size)
	zero := strings.Repeat("0", hexLen)
	for _, p := range paths {
		if changes[p] == nil {
			info = append(append(append(append(append(info, "0 "...), zero...), " 0\t"...), p...), 0)
		}
	}
	for _, p := range paths {
		if e := changes[p]; e != nil {
			info = append(append(append(append(append(append(info, e.Mode...), ' '), e.OID...), " 0\t"...), p...), 0)
		}
	}
	env := []string{"GIT_INDEX_FILE=" + idx}
	if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(info)}, "update-index", "-z", "--index-info"); err != nil {
		return "", fmt.Errorf("recording the changed paths in a private index: %w", err)
	}
	tree, err := r.Line(ctx, Options{Env: env}, "write-tree")
	if err != nil {
		return "", fmt.Errorf("writing the tree: %w", err)
	}
	return OID(tree), nil
}

// inTree is the file system path of the git path p (clean, as git prints
// it: relative, no "." or ".." and no doubled or trailing "/") in the work
// tree: filepath.Join without its Clean, which for the 10,000 paths of a
// big capture cost about 10 ms (pprof), a fifth of what their lstat did.
func (r *Repo) inTree(p string) string {
	return r.WorkTree + string(filepath.Separator) + filepath.FromSlash(p)
}

// walkError is a failure of the status walk itself, told apart from one
// to parse what it printed.
type walkError struct{ error }

func (e *walkError) Unwrap() error { return e.error }

// statusPaths lists the paths of status's entries.
func statusPaths(status []Status) []string {
	paths := make([]string, len(status))
	for i, s := range status {
		paths[i] = strings.TrimSuffix(s.Path, "/")
	}
	return paths
}

type sized struct {
	path string
	n    int64
}

// skipWorktree lists paths as skip-worktree skips (RFC 4.2 skipped[]),
// each with the size of what is at the path in the work tree (0 when
// nothing is), and reports whether anything is at any of them.
func (r *Repo) skipWorktree(paths []string) (skips []Skip, present bool) {
	for _, p := range paths {
		var size int64
		if st, err := os.Lstat(filepath.Join(r.WorkTree, p)); err == nil {
			size = st.Size()
			present = true
		}
		skips = append(skips, Skip{Path: p, Bytes: size, Reason: "skip_worktree"})
	}
	return skips, present
}

// describeNested reads a nested repository's or submodule's HEAD and
// whether its own status is clean, for RFC 4.2 submodules[]. A nested
// repository with no commit, or that cannot be read, has Commit nil and is
// dirty. rel may hold any byte but NUL: the repository is named to git by
// its path (nestedAt), never by a path git prints back.
func (r *Repo) describeNested(ctx context.Context, rel string) Submodule {
	sm, _ := r.readNested(ctx, rel)
	return sm
}

// scopedSubmodule is the Submodule of a gitlink of the index whose commit
// status says moved, for a capture whose caller captures submodules
// itself (CaptureOptions.Submodules): its HEAD, read by one rev-parse and
// no status, with Dirty false for the caller to set. One that holds a
// repository at a commit joins snap.Scope; one that does not is described
// as any nested repository is.
func (r *Repo) scopedSubmodule(ctx context.Context, rel string, snap *Snapshot) Submodule {
	n := r.nestedAt(ctx, filepath.Join(r.WorkTree, rel))
	if n == nil {
		return r.describeNested(ctx, rel)
	}
	head, _, err := n.HeadState(ctx)
	if err != nil || head == "" {
		return r.describeNested(ctx, rel)
	}
	c := string(head)
	snap.Scope = append(snap.Scope, rel)
	return Submodule{Path: rel, Commit: &c}
}

// submoduleMapping is the set of paths .gitmodules (the work tree's file)
// maps to a submodule: what `git submodule status` needs to call a
// gitlink a submodule. No .gitmodules, or one git cannot read, maps none.
func (r *Repo) submoduleMapping(ctx context.Context) map[string]bool {
	m := map[string]bool{}
	out, err := r.Run(ctx, Options{}, "config", "-z", "--file", ".gitmodules", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		return m
	}
	for _, s := range modulePaths(out) {
		m[s.path] = true
	}
	return m
}

// modulePath is one submodule a .gitmodules names: its name and path.
type modulePath struct{ name, path string }

// modulePaths reads `git config -z --get-regexp '^submodule\..*\.path$'`
// output: each submodule's name and path (a trailing slash cut).
func modulePaths(out []byte) []modulePath {
	var subs []modulePath
	list, _ := splitNul(out)
	for _, rec := range list {
		k, v, ok := strings.Cut(rec, "\n")
		name, isPath := strings.CutSuffix(strings.TrimPrefix(k, "submodule."), ".path")
		if ok && isPath {
			subs = append(subs, modulePath{name, strings.TrimSuffix(v, "/")})
		}
	}
	return subs
}

// SubmoduleGitDir returns a runner for the git directory of the submodule
// at rel (a path of this tree) when it is not checked out there: after
// `git submodule deinit`, or once its directory is gone, its git directory
// stays in this repository's, <common dir>/modules/<name>
// (gitrepository-layout(5)), name being what .gitmodules calls the
// submodule at rel, or rel itself (git's default) where it names none; a
// submodule of a submodule's is in that one's, <its git
// dir>/modules/<name>, its name read from the .gitmodules of that one's
// HEAD (its work tree is not checked out either), or its path. The runner
// is for what needs no work tree (refs, objects: its WorkTree is rel's
// directory, which may be empty or missing). It fails when no such
// directory holds a HEAD owned by this tree's owner.
func (r *Repo) SubmoduleGitDir(ctx context.Context, rel string) (*Repo, error) {
	common := r.CommonDir
	if common == "" {
		common = r.GitDir
	}
	out, _ := r.Run(ctx, Options{}, "config", "-z", "--file", ".gitmodules", "--get-regexp", `^submodule\..*\.path$`)
	for _, gd := range r.moduleDirs(ctx, common, rel, out, 0) {
		hfi, err := os.Stat(filepath.Join(gd, "HEAD"))
		if err != nil || !sameOwner(r.WorkTree, hfi) {
			continue
		}
		if gd, err = canonical(gd); err != nil {
			continue
		}
		return &Repo{Git: r.Git, WorkTree: filepath.Join(r.WorkTree, filepath.FromSlash(rel)), GitDir: gd, CommonDir: gd, baseEnv: r.baseEnv, trace: r.trace}, nil
	}
	return nil, fmt.Errorf("no git directory of the submodule %s in %s", rel, filepath.Join(common, "modules"))
}

// moduleDirs lists where the git directory of the submodule at rest (a
// path below the repository whose git directory is gd; "" for that one
// itself) may be, most likely first: for each submodule of that
// repository that rest is in, by the name its .gitmodules (mapping: `git
// config -z --get-regexp` output of its path keys) gives, then by its
// path, that submodule's git directory (gd/modules/<name>), and below it
// the same again, its .gitmodules read from its HEAD. depth bounds the
// nesting.
func (r *Repo) moduleDirs(ctx context.Context, gd, rest string, mapping []byte, depth int) []string {
	if rest == "" {
		return []string{gd}
	}
	if depth > 8 {
		return nil
	}
	var subs []modulePath
	for _, s := range modulePaths(mapping) {
		if s.path == rest || strings.HasPrefix(rest, s.path+"/") {
			subs = append(subs, s)
		}
	}
	// Where .gitmodules says nothing, each leading part of rest may be a
	// submodule named by its path.
	for i := len(rest); i > 0; i = strings.LastIndex(rest[:i], "/") {
		subs = append(subs, modulePath{rest[:i], rest[:i]})
	}
	var out []string
	for _, s := range subs {
		dir := filepath.Join(gd, "modules", filepath.FromSlash(s.name))
		left := strings.TrimPrefix(strings.TrimPrefix(rest, s.path), "/")
		var inner []byte
		if left != "" {
			if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
				continue
			}
			inner, _ = (&Repo{Git: r.Git, WorkTree: r.WorkTree, GitDir: dir, baseEnv: r.baseEnv, trace: r.trace}).Run(ctx,
				Options{NoWorkTree: true}, "config", "-z", "--blob", "HEAD:.gitmodules", "--get-regexp", `^submodule\..*\.path$`)
		}
		out = append(out, r.moduleDirs(ctx, dir, left, inner, depth+1)...)
	}
	return out
}

// populated reports whether the gitlink path rel holds a checked-out
// submodule: a .git (a gitfile or a directory) in a real directory of the
// tree. Whether git reads it as a repository at a commit is for the
// caller's capture of it to find out (OpenSubmodule).
func (r *Repo) populated(rel string) bool {
	if !r.Exists(rel) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(r.WorkTree, filepath.FromSlash(rel), ".git"))
	return err == nil && (fi.IsDir() || fi.Mode().IsRegular())
}

// OpenSubmodule returns the runner of the submodule checked out at rel, a
// path of Snapshot.Scope: its own work tree (rel below this one), git dir
// and common dir, found by git from that directory. It fails when git
// finds no repository whose top is that directory.
//
// The usual case starts no git: a submodule's .git is a gitfile naming
// its git directory ("gitdir: ../.git/modules/lib", gitrepository-layout(5)),
// whose own directory is its common one; git is asked (rev-parse) only
// when that is not plainly so (a .git directory, a gitdir with a
// commondir file, another owner's files, a gitfile that does not read).
// A capture of 20 submodules saves 20 git starts.
func (r *Repo) OpenSubmodule(ctx context.Context, rel string) (*Repo, error) {
	dir := filepath.Join(r.WorkTree, filepath.FromSlash(rel))
	// A gitlink path that is a symbolic link, or lies below one, is not
	// the submodule: git will not enter it ("expected submodule path
	// not to be a symbolic link"), and what it leads to may be any
	// repository of the person's, outside the tree, whose files a
	// rollback must never touch (rollback(1): nothing is changed through
	// a symbolic link). WorkTree is canonical (git's own top, or this
	// check's result one level up).
	if c, err := canonical(dir); err != nil || c != dir {
		return nil, fmt.Errorf("submodule %s is reached through a symbolic link", rel)
	}
	n := r.gitfileSubmodule(dir)
	if n == nil {
		var err error
		if n, err = r.ForDir(ctx, dir); err != nil {
			return nil, err
		}
		if want, err := canonical(dir); err != nil || n.WorkTree != want {
			return nil, fmt.Errorf("%s is not the top of a repository", rel)
		}
		n.trace = r.trace
	}
	// The global and system configuration's named files are the
	// submodule's too; its own are for the caller to add
	// (SubmoduleConfigMayInclude).
	n.configFiles, n.configOnBranch = r.configFiles, r.configOnBranch
	return n, nil
}

// gitfileSubmodule is OpenSubmodule's runner for dir when its .git is a
// gitfile naming a git directory that holds HEAD and no commondir file,
// all of the tree owner's; nil otherwise.
func (r *Repo) gitfileSubmodule(dir string) *Repo {
	dfi, err := os.Lstat(dir)
	if err != nil || !dfi.IsDir() {
		return nil
	}
	gitfile := filepath.Join(dir, ".git")
	gfi, err := os.Lstat(gitfile)
	if err != nil || !gfi.Mode().IsRegular() || gfi.Size() > 4096 {
		return nil
	}
	b, err := os.ReadFile(gitfile)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok || gd == "" {
		return nil
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	gd, err = canonical(gd)
	if err != nil {
		return nil
	}
	hfi, err := os.Stat(filepath.Join(gd, "HEAD"))
	if err != nil {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(gd, "commondir")); err == nil {
		return nil // a worktree of the submodule: its common dir is elsewhere
	}
	gdi, err := os.Stat(gd)
	if err != nil || !sameOwner(r.WorkTree, dfi, gfi, gdi, hfi) {
		return nil
	}
	wt, err := canonical(dir)
	if err != nil {
		return nil
	}
	return &Repo{Git: r.Git, WorkTree: wt, GitDir: gd, CommonDir: gd, baseEnv: r.baseEnv, trace: r.trace}
}

// nestedAt returns a runner for the repository whose work tree is dir, a
// directory status reported as a nested repository or a submodule, or nil
// when dir is no longer a directory, has no .git, or git will not read it.
// The usual case starts no git: git is given dir and
// dir/.git (a directory, or a gitfile such as a submodule's) as GIT_WORK_TREE
// and GIT_DIR, so no path has to be read back from git's output, where a
// name with a newline would not survive. Naming GIT_DIR skips git's check
// of who owns a repository it discovers (safe.directory), so that is done
// only when dir and its .git belong to the owner of this tree, which git
// accepted when it found this one; a nested repository of another owner, or
// a .git that is a symlink, is found by discovery from dir (ForDir) as
// before, and git decides whether to read it. CommonDir is left unset: the
// runner is only asked about HEAD and status.
func (r *Repo) nestedAt(ctx context.Context, dir string) *Repo {
	dfi, err := os.Lstat(dir)
	if err != nil || !dfi.IsDir() {
		return nil // gone, or no longer a directory, since status
	}
	gitDir := filepath.Join(dir, ".git")
	gfi, err := os.Lstat(gitDir)
	if err != nil {
		return nil
	}
	if (gfi.IsDir() || gfi.Mode().IsRegular()) && sameOwner(r.WorkTree, dfi, gfi) {
		return &Repo{Git: r.Git, WorkTree: dir, GitDir: gitDir, baseEnv: r.baseEnv, trace: r.trace}
	}
	n, err := r.ForDir(ctx, dir)
	if err != nil || n.WorkTree != filepath.Clean(dir) {
		return nil
	}
	return n
}

// sameOwner reports whether the files fis describe are all owned by the
// owner of top. It is false when the system does not say.
func sameOwner(top string, fis ...os.FileInfo) bool {
	owner := func(fi os.FileInfo) (uint32, bool) {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return 0, false
		}
		return st.Uid, true
	}
	tfi, err := os.Stat(top)
	if err != nil {
		return false
	}
	want, ok := owner(tfi)
	if !ok {
		return false
	}
	for _, fi := range fis {
		if uid, ok := owner(fi); !ok || uid != want {
			return false
		}
	}
	return true
}

// Identity is the fixed author and committer of checkpoint commits (RFC 4.1
// step 5): no user identity is needed, and none is used.
var Identity = []string{
	"GIT_AUTHOR_NAME=venom", "GIT_AUTHOR_EMAIL=venom@localhost",
	"GIT_COMMITTER_NAME=venom", "GIT_COMMITTER_EMAIL=venom@localhost",
}

// CommitTree makes a commit of tree with the given parent ("" for none),
// and more parents after it ("" ones left out), and message, as venom (RFC
// 4.1 step 5). commit-tree reads no commit.gpgSign.
func (r *Repo) CommitTree(ctx context.Context, tree, parent OID, msg string, more ...OID) (OID, error) {
	args := []string{"commit-tree"}
	for _, p := range append([]OID{parent}, more...) {
		if p != "" {
			args = append(args, "-p", string(p))
		}
	}
	args = append(args, "-F", "-", string(tree))
	env := append([]string(nil), Identity...)
	if d := os.Getenv("GIT_VENOM_TEST_DATE"); d != "" {
		env = append(env, "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
	}
	out, err := r.Line(ctx, Options{Env: env, Stdin: strings.NewReader(msg)}, args...)
	if err != nil {
		return "", fmt.Errorf("making the checkpoint commit: %w", err)
	}
	return OID(out), nil
}

// CreateRef creates ref at oid; it fails if the ref exists (the empty old
// value of RFC 4.1 step 6). Its git is GitDirOnly, as UpdateRef's.
func (r *Repo) CreateRef(ctx context.Context, ref string, oid OID, reason string) error {
	_, err := r.Run(ctx, Options{GitDirOnly: true}, "update-ref", "-m", reason, ref, string(oid), "")
	return err
}

// UpdateRef moves ref from old to oid, as a compare-and-swap (`git
// update-ref <ref> <oid> <old>`); with oid "" it deletes ref if it still
// names old. It fails if ref does not name old. Its git is GitDirOnly:
// killed with its parent, it removes the ref's lock.
func (r *Repo) UpdateRef(ctx context.Context, ref string, oid, old OID, reason string) error {
	if oid == "" {
		_, err := r.Run(ctx, Options{GitDirOnly: true}, "update-ref", "-m", reason, "-d", ref, string(old))
		return err
	}
	_, err := r.Run(ctx, Options{GitDirOnly: true}, "update-ref", "-m", reason, ref, string(oid), string(old))
	return err
}

// ResolveRefs returns the commit each ref names; a missing ref maps to "".
// One for-each-ref call serves any number of refs.
func (r *Repo) ResolveRefs(ctx context.Context, prefix string) (map[string]OID, error) {
	out, err := r.Run(ctx, Options{}, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	m := map[string]OID{}
	for _, l := range strings.Split(string(out), "\n") {
		oid, name, ok := strings.Cut(l, " ")
		if ok {
			m[name] = OID(oid)
		}
	}
	return m, nil
}

// RefObject returns the object ref points at as it is, unpeeled, and that
// object's type (commit, tree, blob or tag); "" and "" when the ref does
// not exist. One for-each-ref; RefValue is the check, this is for saying
// what a ref that fails it holds now.
func (r *Repo) RefObject(ctx context.Context, ref string) (OID, string, error) {
	out, err := r.Line(ctx, Options{NoWorkTree: true}, "for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", ref)
	if err != nil {
		return "", "", err
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 && f[2] == ref {
			return OID(f[0]), f[1], nil
		}
	}
	return "", "", nil
}

// RefValue returns the commit a ref names, or "" when it does not exist
// or names no commit (a blob, a tree: RefObject says which).
func (r *Repo) RefValue(ctx context.Context, ref string) (OID, error) {
	out, err := r.Line(ctx, Options{}, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		if IsExit(err, 1) {
			return "", nil
		}
		return "", err
	}
	return OID(out), nil
}

// RefValues is RefValue for each of refs, in their order, from one
// rev-parse when every ref names a commit, which is the usual case (a
// rollback reads its target's ref and its latest checkpoint's together:
// issue 16); when one does not, each is asked on its own, as RefValue
// says: "" for a ref that does not exist or names no commit.
func (r *Repo) RefValues(ctx context.Context, refs ...string) ([]OID, error) {
	if len(refs) > 1 {
		args := []string{"rev-parse"}
		for _, ref := range refs {
			args = append(args, ref+"^{commit}")
		}
		// "--": every argument before it must be a revision, never a
		// path; rev-parse prints it back last.
		out, err := r.Run(ctx, Options{}, append(args, "--")...)
		if err == nil {
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) == len(refs)+1 && lines[len(refs)] == "--" {
				vals := make([]OID, len(refs))
				for i := range refs {
					vals[i] = OID(lines[i])
				}
				return vals, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	vals := make([]OID, len(refs))
	for i, ref := range refs {
		v, err := r.RefValue(ctx, ref)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// BackupManifest is the name of the manifest in a rollback's backup
// directory (checkpoint.ManifestFile).
const BackupManifest = "manifest.jsonl"

// CleanTmp removes private indexes and scratch files that a killed process
// left behind: those last changed more than an hour ago. "Changed" is the
// status-change time (ctime), not the modification time: a private index
// is a copy of the user's index that keeps that index's mtime on purpose
// (racy-git, DESIGN.md section 4), so an mtime an hour old says nothing of
// when the copy was made, and another capture running now in the same
// tree (captures hold the tree lock shared) may own it. Where the system
// gives no ctime, nothing is removed. Failures are ignored: the files are
// ours and harmless. A rollback's backup directory with a manifest
// (BackupManifest) is never removed here: a killed rollback leaves what
// it moved out of the tree there, maybe with a person's save in it, and
// the next command that closes the rollback as interrupted looks at it
// first (checkpoint.CloseInterrupted).
func (r *Repo) CleanTmp() {
	d := filepath.Join(r.GitDir, "venom", "tmp")
	ents, err := os.ReadDir(d)
	if err != nil {
		return
	}
	age := time.Hour
	if v, err := time.ParseDuration(os.Getenv("GIT_VENOM_TEST_TMP_AGE")); err == nil {
		age = v // tests: a ctime cannot be set back, so the age is lowered
	}
	cut := time.Now().Add(-age).UnixNano()
	// Every name is looked at before any is removed: a private index can
	// be a hard link to a kept status index (Capture), and removing one
	// name of a file changes its ctime under its other names, which a
	// killed capture may have left here too.
	var old []string
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), "backup-") {
			if _, err := os.Lstat(filepath.Join(d, e.Name(), BackupManifest)); err == nil {
				continue
			}
		}
		if _, _, ctime, ok := statIdentity(info); ok && ctime < cut {
			old = append(old, e.Name())
		}
	}
	for _, n := range old {
		os.RemoveAll(filepath.Join(d, n))
	}
}

// Exists reports whether rel names something in the work tree as git sees
// it: every parent a real directory (not a symlink: git never looks beyond
// one), and rel itself present (a symlink counts, whatever it points to).
func (r *Repo) Exists(rel string) bool {
	parts := strings.Split(rel, "/")
	p := r.WorkTree
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return false
		}
		if i < len(parts)-1 && !st.IsDir() {
			return false
		}
	}
	return true
}

// CheckedOutSubmodules lists, sorted, the gitlinks of the user's index
// (stage 0) that .gitmodules maps and whose directory holds a checked-out
// submodule (populated): the submodules a capture would take in scope,
// for a reader that needs no capture (doctor). One ls-files, and one git
// config when there are any.
func (r *Repo) CheckedOutSubmodules(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, Options{}, "ls-files", "-s", "-v", "-z")
	if err != nil {
		return nil, err
	}
	ents, err := ParseLsFiles(out)
	if err != nil {
		return nil, err
	}
	var paths []string
	var mapped map[string]bool
	for _, e := range ents {
		if e.Mode == "160000" && e.Stage == 0 && r.populated(e.Path) {
			if mapped == nil {
				mapped = r.submoduleMapping(ctx)
			}
			if mapped[e.Path] {
				paths = append(paths, e.Path)
			}
		}
	}
	sort.Strings(paths)
	return paths, nil
}
