package rollback

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// Permission bits (CASES BR-41). A checkpoint holds git's modes only, 644
// or 755, and checkout-index creates files and directories under the
// umask. So a rollback keeps the bits of a file it rewrites with the same
// git mode, and logs in rollback.started the bits of what it may remove or
// rewrite with another git mode; the undo (a rollback to that safety
// checkpoint) and a failed rollback's way back to S give them back to what
// they recreate. A 0600 file a rollback deleted comes back 0600, not 0644.

// gitPerm reports whether perm is bits git gives anyway: 0644 or 0755 for
// a file, 0755 for a directory.
func gitPerm(perm os.FileMode, dir bool) bool {
	if dir {
		return perm == 0o755
	}
	return perm == 0o644 || perm == 0o755
}

// permsToRecord reads, before anything is touched, the permission bits the
// plan could lose: of each regular file it deletes or rewrites with another
// git mode (or type), and of each directory above a deletion (it may be
// emptied and removed), where they are not git's own. Paths that cannot be
// read are left out: nothing of theirs can be given back.
func (p *plan) permsToRecord(w *worktree) []journal.PathPerm {
	var out []journal.PathPerm
	seen := map[string]bool{}
	add := func(rel string, dir bool) {
		st, err := w.lstat(rel)
		if err != nil || (dir && !st.IsDir()) || (!dir && !st.Mode().IsRegular()) {
			return
		}
		if perm := st.Mode().Perm(); !gitPerm(perm, dir) {
			out = append(out, journal.PathPerm{Path: rel, Perm: fmt.Sprintf("%04o", uint32(perm)), Dir: dir})
		}
	}
	for _, c := range p.changes() {
		deleted := c.DstMode == "000000"
		if !deleted && (c.SrcMode == c.DstMode || c.SrcMode == "000000") {
			continue // the same mode keeps its bits; where nothing is, nothing is lost
		}
		add(c.Path, false)
		if !deleted {
			continue
		}
		for d := path.Dir(c.Path); d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			add(d, true)
		}
	}
	return out
}

// recordedPerms is the permission bits logged by the rollback whose safety
// checkpoint is the target, in this tree: what an undo gives back. It is
// nil for any other target.
func (p *plan) recordedPerms() []journal.PathPerm {
	rs := p.agent.Rollbacks
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Safety == p.target.ID() && rs[i].Path == p.tree.Path() {
			return rs[i].Perms
		}
	}
	return nil
}

// permPlan is what a write step sets once git has written: the bits of
// files by path, and of the directories the writes create.
type permPlan struct {
	files map[string]os.FileMode
	dirs  []journal.PathPerm // deepest first
}

// planPerms decides, before the writes, the bits each written regular
// file and each created directory ends with. A file rewritten with its own
// git mode keeps its bits (a 0600 file is not widened to 0644). A file the
// writes create or give another mode, and a directory they create, get the
// bits recorded gives them, if any: for a file only when its owner-exec
// bit agrees with the mode written, so that a capture reads the mode the
// target holds.
func planPerms(w *worktree, writes []plumbing.TreeChange, recorded []journal.PathPerm) permPlan {
	pp := permPlan{files: map[string]os.FileMode{}}
	byPath := map[string]journal.PathPerm{}
	for _, r := range recorded {
		if r.Dir {
			if _, err := w.lstat(r.Path); os.IsNotExist(err) {
				pp.dirs = append(pp.dirs, r)
			}
			continue
		}
		byPath[r.Path] = r
	}
	sort.SliceStable(pp.dirs, func(i, j int) bool {
		return strings.Count(pp.dirs[i].Path, "/") > strings.Count(pp.dirs[j].Path, "/")
	})
	for _, c := range writes {
		if c.DstMode != "100644" && c.DstMode != "100755" {
			continue
		}
		if st, err := w.lstat(c.Path); err == nil && st.Mode().IsRegular() && c.SrcMode == c.DstMode {
			pp.files[c.Path] = st.Mode().Perm()
			continue
		}
		r, ok := byPath[c.Path]
		if !ok {
			continue
		}
		perm, ok := r.FileMode()
		if ok && (perm&0o100 != 0) == (c.DstMode == "100755") {
			pp.files[c.Path] = perm
		}
	}
	return pp
}

// apply sets the bits once git has written, files first, then directories
// from the deepest up (a directory's own bits may forbid reaching below
// it). Only a regular file or a real directory is changed, never through a
// symlink; one that is gone or of another type now is passed over.
func (pp permPlan) apply(w *worktree) error {
	set := func(rel string, perm os.FileMode, dir bool) error {
		st, err := w.lstat(rel)
		if err != nil || (dir && !st.IsDir()) || (!dir && !st.Mode().IsRegular()) || st.Mode().Perm() == perm {
			return nil
		}
		if err := os.Chmod(filepath.Join(w.root, filepath.FromSlash(rel)), perm); err != nil {
			return fmt.Errorf("setting the permission bits of %s: %w", rel, err)
		}
		return nil
	}
	for rel, perm := range pp.files {
		if err := set(rel, perm, false); err != nil {
			return err
		}
	}
	for _, d := range pp.dirs {
		if perm, ok := d.FileMode(); ok {
			if err := set(d.Path, perm, true); err != nil {
				return err
			}
		}
	}
	return nil
}
