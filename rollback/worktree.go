package rollback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/venom-org/git-venom/plumbing"
)

// worktree checks and performs the rollback's own file operations: the
// deletions and the checks before every delete or write (RFC 7.4). Git
// writes the files; this never follows a symlinked parent and never removes
// a file or non-empty directory that S does not hold.
//
// Every check of a path looks at each of its parent directories (parentState:
// a real directory, not a symlink, a file or a nested repository) before the
// path itself is looked at with a plain lstat, which then cannot go through
// a symlink the check did not see. Within one pass of checks (batch) each
// parent is looked at once, not once per path below it per check.
type worktree struct {
	root    string
	deletes map[string]bool // paths S holds that the plan deletes
	nested  map[string]bool // S's nested repositories and gitlinks: never written into
	changes []plumbing.TreeChange
	dirs    map[string]dirSeen // within a batch: what dirAt found
	// looks, when set, gets the lstat of each path of the plan that a
	// check (checkDeleteStat, checkWriteStat) took below real parent
	// directories: the plan's own look (blocked). first is that of the
	// plan applied, which the looks before the first write (permsToRecord,
	// the baseline) take instead of looking again (lstatFirst).
	looks map[string]looked
	first map[string]looked
}

// looked is one lstat of a path below real directories of the tree: what
// it found (nil when err is set; fs.ErrNotExist when nothing is there).
type looked struct {
	st  os.FileInfo
	err error
}

// newWorktree checks changes against the tree at root. s is S, the
// capture the plan starts from: its submodules (RFC 4.2: gitlinks and
// nested repositories) are directories nothing is written into or deleted
// from, whatever the target holds below them (RFC 7.4 gitlink).
func newWorktree(root string, changes []plumbing.TreeChange, s *plumbing.Snapshot) *worktree {
	w := &worktree{root: root, deletes: map[string]bool{}, nested: map[string]bool{}, changes: changes}
	for _, c := range changes {
		if c.DstMode == "000000" {
			w.deletes[c.Path] = true
		}
	}
	if s != nil {
		for _, sm := range s.Submodules {
			w.nested[sm.Path] = true
		}
	}
	return w
}

// lstat is Lstat of a path relative to the root, for a caller that has
// just checked its parents (parentState): each is a real directory of the
// tree, so the path cannot resolve outside it. (A filesystem bound to the
// root, go-billy's BoundOS, would resolve every parent again, per path,
// and accept a symlink that stays inside the root, which parentState
// refuses.)
func (w *worktree) lstat(rel string) (os.FileInfo, error) {
	return os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
}

// parents checks each parent directory of rel from the root down: it must
// be a real directory, not a symlink or a file. It returns the first
// component that is not ("" when all are, or when one does not exist, since
// nothing below it can exist either) and whether it exists. A component the
// plan deletes is accepted when allowDeleted: after the deletions it is gone.
func (w *worktree) parents(rel string, allowDeleted bool) (bad string, err error) {
	bad, _, err = w.parentState(rel, allowDeleted)
	return bad, err
}

// untouchedSince reports whether rel is on disk, below real directories
// of the tree, as a file or symlink that nothing changed since t: its
// status-change time (ctime, which every write, rename or chmod sets and
// no program can set back) is before t. False where the system gives no
// ctime.
func (w *worktree) untouchedSince(rel string, t time.Time) bool {
	st, err := w.lstatReal(rel)
	if err != nil || st.IsDir() {
		return false
	}
	_, _, ctime, ok := plumbing.StatIdentity(st)
	return ok && ctime < t.UnixNano()
}

// lookAt is lstat, for a check that has just found rel's parents real
// directories of the tree, kept in looks when that is set.
func (w *worktree) lookAt(rel string) (os.FileInfo, error) {
	st, err := w.lstat(rel)
	if w.looks != nil {
		w.looks[rel] = looked{st, err}
	}
	return st, err
}

// lstatFirst is lstatReal for the looks before the rollback's first
// write, which the plan's own look answers where it took one (first):
// that look was after S's capture, and whatever changes at rel since
// shows against it as it shows against any later one (the baseline's
// stamps, the checks before each move), so a second and a third lstat of
// every path would only cost (issue 16: 50,000 deletions, 0.3 s).
func (w *worktree) lstatFirst(rel string) (os.FileInfo, error) {
	if l, ok := w.first[rel]; ok {
		return l.st, l.err
	}
	return w.lstatReal(rel)
}

// errParent is lstatReal's answer for a path below a symlink, a file or a
// nested repository.
var errParent = errors.New("a parent is not a directory of the tree")

// lstatReal is lstat of rel when every parent is a real directory of the
// tree, as the checks before each delete and write ask: errParent when one
// is a symlink, a file or a nested repository, fs.ErrNotExist when one is
// missing or rel is.
func (w *worktree) lstatReal(rel string) (os.FileInfo, error) {
	bad, absent, err := w.parentState(rel, false)
	switch {
	case err != nil:
		return nil, err
	case bad != "":
		return nil, errParent
	case absent:
		return nil, fs.ErrNotExist
	}
	return w.lstat(rel)
}

// parentState is parents, and also says whether rel cannot exist once the
// plan's deletions are done (absent: a parent is missing, or is a file or
// symlink the plan deletes).
func (w *worktree) parentState(rel string, allowDeleted bool) (bad string, absent bool, err error) {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		q := rel[:i] // each parent, from the root down
		kind, err := w.dirAt(q)
		switch kind {
		case atNothing:
			return "", true, nil
		case atError:
			return q, false, err
		case atDir:
			continue
		case atRepo:
			return q, false, nil
		}
		if allowDeleted && w.deletes[q] {
			return "", true, nil
		}
		return q, false, nil
	}
	return "", false, nil
}

// What parentState finds at a parent directory's path.
const (
	atNothing = iota // nothing: nothing below it exists either
	atError          // lstat failed otherwise
	atDir            // a real directory
	atRepo           // a directory that is a repository's work tree: S's nested one, or one holding .git
	atOther          // a file, a symlink, anything but a directory
)

// dirAt lstats rel, a parent of a path of the plan, and says what is
// there. A repository git does not report as nested (the user's index
// tracks paths below it, so git descends into it) is still its own work
// tree: nothing is written into it or deleted from it. Within a batch the
// answer is remembered.
func (w *worktree) dirAt(rel string) (int, error) {
	if k, ok := w.dirs[rel]; ok {
		return k.kind, k.err
	}
	kind := atDir
	if lookedAt != nil {
		lookedAt(rel)
	}
	st, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind, err = atNothing, nil
	case err != nil:
		kind = atError
	case !st.IsDir():
		kind = atOther
	case w.nested[rel]:
		kind = atRepo
	default:
		if _, gerr := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel), ".git")); gerr == nil {
			kind = atRepo
		}
	}
	if w.dirs != nil {
		w.dirs[rel] = dirSeen{kind, err}
	}
	return kind, err
}

// parentsNow looks at each parent directory of rel again, from the root
// down, whatever the pass remembers of them: the last look before the
// rollback moves or removes something at rel (moveAway, clearDir,
// pruneAll). A pass looks at each parent once for its checks, and a
// person can swap one for a symlink (to outside the tree, or to where the
// directory now is) while the pass works through the paths below it;
// rename and remove follow a symlinked parent. It returns the first
// parent that is no longer a real directory ("" when each is), and the
// pass remembers it as such. One plain lstat a parent: whether a parent
// holds a repository was checked by the pass.
func (w *worktree) parentsNow(rel string) string {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		q := strings.Join(parts[:i], "/")
		st, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(q)))
		if err == nil && st.IsDir() {
			continue
		}
		if w.dirs != nil {
			kind := atOther
			if errors.Is(err, fs.ErrNotExist) {
				kind = atNothing
			}
			w.dirs[q] = dirSeen{kind, nil}
		}
		return q
	}
	return ""
}

// lookedAt, when set (by tests), is called each time dirAt looks at a
// directory on disk rather than remembering it.
var lookedAt func(rel string)

// dirSeen is a remembered dirAt answer.
type dirSeen struct {
	kind int
	err  error
}

// batch runs f remembering what dirAt finds, for a pass of checks and of
// the rollback's own moves, links and removals that no git child runs in
// the middle of (a filter of git's could change the tree): each parent
// directory is looked at once per pass, not once per path below it per
// check. What the pass itself makes or removes (mkParents, pruneParents)
// is remembered as made or removed. A batch inside a batch is the same
// pass.
func (w *worktree) batch(f func()) {
	if w.dirs != nil {
		f()
		return
	}
	w.dirs = map[string]dirSeen{}
	defer func() { w.dirs = nil }()
	f()
}

// blocked returns the paths of the plan that must go to left with
// ignored_in_the_way (RFC 7.4), as the tree is now: a write whose path or
// parent holds something S does not (an ignored file, a non-empty folder),
// and a delete under such a path, so the tree is not left matching neither
// S nor T (CASES BR-32).
func (w *worktree) blocked() (out []Left) {
	w.batch(func() { out = w.blockedNow() })
	return out
}

func (w *worktree) blockedNow() []Left {
	var out []Left
	blockedDirs := map[string]string{}
	for _, c := range w.changes {
		if c.DstMode == "000000" {
			continue
		}
		if ok, detail := w.checkWrite(c, true); !ok {
			out = append(out, Left{Path: c.Path, Reason: "ignored_in_the_way", Detail: detail})
			blockedDirs[c.Path] = detail
		}
	}
	for _, c := range w.changes {
		if c.DstMode != "000000" {
			continue
		}
		if ok, detail := w.checkDelete(c.Path); !ok {
			out = append(out, Left{Path: c.Path, Reason: "ignored_in_the_way", Detail: detail})
			continue
		}
		for d, detail := range blockedDirs {
			if strings.HasPrefix(c.Path, d+"/") {
				out = append(out, Left{Path: c.Path, Reason: "ignored_in_the_way", Detail: detail})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// checkDelete says whether rel may be unlinked now: no parent is a symlink
// or file, and rel is a file or symlink (S holds it) or absent. A directory
// there is something S does not hold.
func (w *worktree) checkDelete(rel string) (bool, string) {
	ok, detail, _ := w.checkDeleteStat(rel)
	return ok, detail
}

// checkDeleteStat is checkDelete, and also returns what it found at rel
// (nil when nothing is there), for the checks that follow in the same
// pass.
func (w *worktree) checkDeleteStat(rel string) (bool, string, os.FileInfo) {
	if bad, err := w.parents(rel, false); bad != "" || err != nil {
		return false, bad, nil
	}
	st, err := w.lookAt(rel)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist), "", nil
	}
	if st.IsDir() {
		return false, rel, st
	}
	return true, "", st
}

// checkWrite says whether checkout-index may be handed c's path: it is
// absent, a file or symlink that S holds, or a directory with nothing in
// it but what the plan deletes (checkout-index -f removes a directory in
// its way, ignored files and all: CASES BR-32). beforeDeletes is true at
// plan time, when paths the plan deletes are still on disk.
func (w *worktree) checkWrite(c plumbing.TreeChange, beforeDeletes bool) (bool, string) {
	ok, detail, _ := w.checkWriteStat(c, beforeDeletes)
	return ok, detail
}

// checkWriteStat is checkWrite, and also returns what it found at the
// path, below real directories of the tree (nil when nothing is there),
// for the checks that follow in the same pass.
func (w *worktree) checkWriteStat(c plumbing.TreeChange, beforeDeletes bool) (bool, string, os.FileInfo) {
	bad, absent, err := w.parentState(c.Path, beforeDeletes)
	if err != nil || bad != "" {
		return false, bad, nil
	}
	if absent {
		return true, "", nil // nothing can be there once the deletions are done
	}
	st, err := w.lookAt(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, "", nil
	}
	if err != nil {
		return false, c.Path, nil
	}
	if !st.IsDir() {
		if c.SrcMode != "000000" && c.SrcMode != "160000" {
			return true, "", st // S holds this file; its content is in the safety checkpoint
		}
		if beforeDeletes && w.deletes[c.Path] {
			return true, "", st
		}
		return false, c.Path, st
	}
	// A directory: every file below it must be one the plan deletes.
	extra := ""
	_ = filepath.WalkDir(filepath.Join(w.root, filepath.FromSlash(c.Path)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			extra = c.Path
			return filepath.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(w.root, p)
		rel = filepath.ToSlash(rel)
		if !beforeDeletes || !w.deletes[rel] {
			extra = rel
			return filepath.SkipAll
		}
		return nil
	})
	return extra == "", extra, st
}

// remove unlinks rel (never following it) and then removes its parent
// directories while they are empty, up to the root.
func (w *worktree) remove(rel string) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	st, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		// Only an empty directory can get here (checkDelete refuses
		// others); rmdir, which never unlinks a file swapped in.
		if err := syscall.Rmdir(abs); err != nil {
			return err
		}
	} else if err := os.Remove(abs); err != nil {
		return err
	}
	w.pruneParents(rel)
	return nil
}

// mkParents makes rel's missing parent directories, from the root down,
// never below a symlink, a file or a nested repository: it fails naming
// the first component that is not a directory of the tree.
func (w *worktree) mkParents(rel string) error {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		q := strings.Join(parts[:i], "/")
		switch kind, err := w.dirAt(q); kind {
		case atDir:
			continue
		case atNothing:
			err := os.Mkdir(filepath.Join(w.root, filepath.FromSlash(q)), 0o777)
			if errors.Is(err, fs.ErrExist) {
				// Made meanwhile by another process: a directory is as good.
				delete(w.dirs, q)
				if kind, _ := w.dirAt(q); kind == atDir {
					continue
				}
				return fmt.Errorf("%s is not a directory of the tree", q)
			}
			if err != nil {
				return err
			}
			if w.dirs != nil {
				w.dirs[q] = dirSeen{atDir, nil}
			}
		case atError:
			return err
		default:
			return fmt.Errorf("%s is not a directory of the tree", q)
		}
	}
	return nil
}

// fileInTheWay reports whether a parent of rel is now a regular file,
// looked at afresh: a person saved one where the rollback makes a
// directory, as git wrote the batch. The path is then left, as one where
// something is by then; a parent that became anything else (a symbolic
// link) fails the rollback, which never writes through one.
func (w *worktree) fileInTheWay(rel string) bool {
	for i := strings.IndexByte(rel, '/'); i >= 0; i = nextSlash(rel, i) {
		st, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel[:i])))
		switch {
		case err != nil:
			return false
		case st.Mode().IsRegular():
			return true
		case !st.IsDir():
			return false
		}
	}
	return false
}

// nextSlash is the index of the first '/' in s after i, or -1.
func nextSlash(s string, i int) int {
	if j := strings.IndexByte(s[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// pruneParents removes rel's parent directories that are empty, from the
// deepest up, stopping at the first that is not (or is a symlink).
func (w *worktree) pruneParents(rel string) {
	for d := filepath.Dir(filepath.FromSlash(rel)); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		abs := filepath.Join(w.root, d)
		st, err := os.Lstat(abs)
		if err != nil || !st.IsDir() {
			return
		}
		// rmdir, never os.Remove: that unlinks first, and a file
		// swapped in since the lstat would go.
		if err := syscall.Rmdir(abs); err != nil {
			return
		}
		if w.dirs != nil {
			w.dirs[filepath.ToSlash(d)] = dirSeen{atNothing, nil}
		}
	}
}

// pruneAll is pruneParents for each of rels, each parent directory tried
// once: from the deepest up, and not one above a directory that stays.
func (w *worktree) pruneAll(rels []string) {
	dirs := map[string]bool{}
	for _, rel := range rels {
		for d := path.Dir(rel); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool {
		if a, b := strings.Count(order[i], "/"), strings.Count(order[j], "/"); a != b {
			return a > b
		}
		return order[i] < order[j]
	})
	stays := map[string]bool{}
	for _, d := range order {
		if stays[d] {
			continue
		}
		abs := filepath.Join(w.root, filepath.FromSlash(d))
		st, err := os.Lstat(abs)
		removed := err == nil && st.IsDir() && w.parentsNow(d) == "" && syscall.Rmdir(abs) == nil
		if !removed {
			for q := path.Dir(d); q != "." && q != "/" && !stays[q]; q = path.Dir(q) {
				stays[q] = true
			}
			continue
		}
		if w.dirs != nil {
			w.dirs[d] = dirSeen{atNothing, nil}
		}
	}
}

// byDepth sorts deletions longest path first (RFC 7.4 recipe step 2), so
// children go before their parents and a file can replace a folder.
func byDepth(cs []plumbing.TreeChange) {
	sort.SliceStable(cs, func(i, j int) bool {
		if len(cs[i].Path) != len(cs[j].Path) {
			return len(cs[i].Path) > len(cs[j].Path)
		}
		return cs[i].Path > cs[j].Path
	})
}
