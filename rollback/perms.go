package rollback

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// Permission bits (CASES BR-41). A checkpoint holds git's modes only, 644
// or 755, and checkout-index creates files and directories under the
// umask. So a rollback keeps the bits of a file it rewrites with the same
// git mode, and logs in rollback.started the bits (and group) of what it
// may remove or rewrite with another git mode, where git would not give
// them back; the undo (a rollback to that safety checkpoint), a failed
// rollback's way back to S, and the rollback itself for a directory it
// empties and fills again, give them back to what they recreate. A 0600
// file a rollback deleted comes back 0600, not 0644.

// specialDir is the bits of a directory's mode kept beside its permission
// bits: setgid (new files take its group) and sticky (only owners may
// remove). A file's setuid and setgid bits are never given back.
const specialDir = os.ModeSetgid | os.ModeSticky

// created is what checkout-index gives what it creates, under the umask
// (and any default ACL) in force: a file, an executable file, a
// directory.
type created struct{ file, exec, dir os.FileMode }

// gitDefault is created for the usual umask 022.
var gitDefault = created{file: 0o644, exec: 0o755, dir: 0o755}

// probeCreated learns created by making a file (0666), an executable file
// (0777) and a directory (0777) in the scratch directory tmp and reading
// what they got. On any failure it answers gitDefault.
func probeCreated(tmp string) created {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return gitDefault
	}
	base := filepath.Join(tmp, "perm-probe-"+hex.EncodeToString(b[:]))
	mk := func(suffix string, perm os.FileMode, dir bool) (os.FileMode, bool) {
		p := base + suffix
		var err error
		if dir {
			err = os.Mkdir(p, perm)
		} else {
			var f *os.File
			if f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm); err == nil {
				f.Close()
			}
		}
		if err != nil {
			return 0, false
		}
		defer os.Remove(p)
		st, err := os.Lstat(p)
		if err != nil {
			return 0, false
		}
		return st.Mode() & (os.ModePerm | specialDir), true
	}
	var c created
	var ok1, ok2, ok3 bool
	c.file, ok1 = mk("-f", 0o666, false)
	c.exec, ok2 = mk("-x", 0o777, false)
	c.dir, ok3 = mk("-d", 0o777, true)
	if !ok1 || !ok2 || !ok3 {
		return gitDefault
	}
	return c
}

// want is what c gives a file (by its owner-exec bit) or a directory: its
// permission bits (a directory's setgid and sticky bits are always
// recorded).
func (c created) want(mode os.FileMode, dir bool) os.FileMode {
	switch {
	case dir:
		return c.dir.Perm()
	case mode&0o100 != 0:
		return c.exec
	}
	return c.file
}

// bits is the part of mode a record keeps: permission bits, and setgid
// and sticky for a directory.
func bits(mode os.FileMode, dir bool) os.FileMode {
	if dir {
		return mode & (os.ModePerm | specialDir)
	}
	return mode.Perm()
}

// gidOf is the group that owns the file st describes.
func gidOf(st os.FileInfo) (uint32, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Gid, true
	}
	return 0, false
}

// permsToRecord reads, before anything is touched, the permission bits the
// plan could lose: of each regular file it deletes or rewrites, with the
// same git mode too (the rewrite keeps its bits, but a rollback killed
// while the file is in its backup directory leaves nothing there, and the
// undo then writes it anew), and of each directory above a deletion (it may
// be emptied and removed), where they are not what c, git's way of creating
// them, would give back; and of each file it writes that restore (the bits
// an undo gives back, recordedPerms) names, whatever they are, git's
// default too: the rollback sets that file's bits, and its own undo must
// set them back (a 0644 file an undo made 0600 is 0644 again after the undo
// of that undo). Paths that cannot be read are left out: nothing of theirs
// can be given back. A file's bits are those of the plan's own look at it
// (worktree.lstatFirst), which the baseline takes too: a chmod since
// changes its ctime, and the file is then left, not moved (applier.still).
func (p *plan) permsToRecord(w *worktree, c created, restore []journal.PathPerm) []journal.PathPerm {
	var out []journal.PathPerm
	seen := map[string]bool{}
	restored := map[string]bool{}
	for _, r := range restore {
		if !r.Dir {
			restored[r.Path] = true
		}
	}
	add := func(rel string, dir, kept bool) {
		look := w.lstatReal
		if !dir {
			look = w.lstatFirst // the plan's look at the file
		}
		st, err := look(rel)
		if err != nil || (dir && !st.IsDir()) || (!dir && !st.Mode().IsRegular()) {
			return
		}
		b := bits(st.Mode(), dir)
		if b == c.want(b, dir) && (dir || !restored[rel]) {
			return
		}
		pp := journal.PathPerm{Path: rel, Perm: journal.OctalPerm(b, dir), Dir: dir, Kept: kept}
		if gid, ok := gidOf(st); ok {
			pp.Gid = &gid
		}
		out = append(out, pp)
	}
	w.batch(func() {
		for _, ch := range p.changes() {
			deleted := ch.DstMode == "000000"
			if !deleted && restored[ch.Path] {
				add(ch.Path, false, false) // its bits are set to the ones restore logged
				continue
			}
			if !deleted && ch.SrcMode == "000000" {
				continue // where nothing is, nothing is lost
			}
			// A rewrite with the same git mode keeps the file's bits:
			// logged as kept, for an undo after a kill that left the file
			// in the backup directory only.
			add(ch.Path, false, !deleted && ch.SrcMode == ch.DstMode)
			if !deleted {
				continue
			}
			for d := path.Dir(ch.Path); d != "." && d != "/" && !seen[d]; d = path.Dir(d) {
				seen[d] = true
				add(d, true, false)
			}
		}
	})
	return out
}

// recordedPerms is the permission bits logged by the rollback whose safety
// checkpoint is the target, in this tree: what an undo gives back. It is
// nil for any other target, and for a record it cannot read.
func (p *plan) recordedPerms() []journal.PathPerm {
	if rs := p.undone(); rs != nil {
		ps, err := rs.PermList()
		if err != nil {
			return nil
		}
		return p.ownPerms(ps)
	}
	return nil
}

// ownPerms is what of ps (paths relative to the top, every repository's
// as rollback.started logs them) is p's repository's, relative to it: no
// path inside one of its submodules.
func (p *plan) ownPerms(ps []journal.PathPerm) []journal.PathPerm {
	var out []journal.PathPerm
	pre := p.prefix()
	for _, pp := range ps {
		rest, ok := strings.CutPrefix(pp.Path, pre)
		if !ok || rest == "" {
			continue
		}
		inner := false
		for _, c := range p.childPaths() {
			if rest == c || strings.HasPrefix(rest, c+"/") {
				inner = true
			}
		}
		if !inner {
			pp.Path = rest
			out = append(out, pp)
		}
	}
	return out
}

// dirsOnly is the directories of ps.
func dirsOnly(ps []journal.PathPerm) []journal.PathPerm {
	var out []journal.PathPerm
	for _, pp := range ps {
		if pp.Dir {
			out = append(out, pp)
		}
	}
	return out
}

// permPlan is what a write step sets once git has written: bits (and, when
// known, the group) of files by path, and of the directories the writes
// create, deepest first.
type permPlan struct {
	files map[string]permOf
	dirs  []permOf
	made  created
}

// permOf is the bits (and group, when recorded) one path ends with.
type permOf struct {
	path string
	mode os.FileMode
	dir  bool
	gid  *uint32
}

// planPerms decides, before the writes, the bits each written regular
// file and each created directory ends with. A file or directory recorded
// gets its recorded bits and group: for a file only when its owner-exec
// bit agrees with the mode written, so that a capture reads the mode the
// target holds (unless git reads no exec bit from disk: execFromDisk
// false, core.fileMode). A record of bits a rollback kept (a file it
// rewrote with its own git mode) counts only where no regular file is
// now: a chmod since then is the person's, and stays. Any other file
// rewritten with its own git mode keeps its bits and group (a 0600 file
// is not widened to 0644). A recorded directory is set only if the
// writes create it: it does not exist now, below real directories.
// Where a path is recorded twice the first record wins. found, when not
// nil, is what a check of the same pass found at each path of writes (nil
// for nothing there), looked at instead of the path again.
func planPerms(w *worktree, writes []plumbing.TreeChange, recorded []journal.PathPerm, execFromDisk bool, made created, found map[string]os.FileInfo) permPlan {
	pp := permPlan{files: map[string]permOf{}, made: made}
	files := map[string]journal.PathPerm{}
	seenDir := map[string]bool{}
	for _, r := range recorded {
		if !r.Dir {
			if _, dup := files[r.Path]; !dup {
				files[r.Path] = r
			}
			continue
		}
		mode, ok := r.FileMode()
		if !ok || seenDir[r.Path] {
			continue
		}
		seenDir[r.Path] = true
		if _, err := w.lstatReal(r.Path); !errors.Is(err, fs.ErrNotExist) {
			continue // there now (or below a symlink): the writes do not create it
		}
		pp.dirs = append(pp.dirs, permOf{path: r.Path, mode: mode, dir: true, gid: r.Gid})
	}
	sort.SliceStable(pp.dirs, func(i, j int) bool {
		return strings.Count(pp.dirs[i].path, "/") > strings.Count(pp.dirs[j].path, "/")
	})
	for _, c := range writes {
		if c.DstMode != "100644" && c.DstMode != "100755" {
			continue
		}
		if r, ok := files[c.Path]; ok && (!r.Kept || !regularAt(w, c.Path, found)) {
			if mode, ok := r.FileMode(); ok && (!execFromDisk || (mode&0o100 != 0) == (c.DstMode == "100755")) {
				pp.files[c.Path] = permOf{path: c.Path, mode: mode, gid: r.Gid}
				continue
			}
		}
		if st, err := lookAt(w, c.Path, found); err == nil && st.Mode().IsRegular() && c.SrcMode == c.DstMode {
			po := permOf{path: c.Path, mode: st.Mode().Perm()}
			if gid, ok := gidOf(st); ok {
				po.gid = &gid // checkout-index makes a new file, of the user's group
			}
			pp.files[c.Path] = po
		}
	}
	return pp
}

// regularAt reports whether a regular file is at rel (lookAt).
func regularAt(w *worktree, rel string, found map[string]os.FileInfo) bool {
	st, err := lookAt(w, rel, found)
	return err == nil && st.Mode().IsRegular()
}

// lookAt is what found says is at rel, when it was looked at, else the
// lstat of rel below real directories of the tree (worktree.lstatReal).
func lookAt(w *worktree, rel string, found map[string]os.FileInfo) (os.FileInfo, error) {
	if st, ok := found[rel]; ok {
		if st == nil {
			return nil, fs.ErrNotExist
		}
		return st, nil
	}
	return w.lstatReal(rel)
}

// only is pp for the files of written alone (the others git did not
// write: something was there), and the same directories.
func (pp permPlan) only(written map[string]bool) permPlan {
	out := permPlan{files: map[string]permOf{}, dirs: pp.dirs, made: pp.made}
	for path, po := range pp.files {
		if written[path] {
			out.files[path] = po
		}
	}
	return out
}

// apply sets the bits once git has written, files first, then directories
// from the deepest up (a directory's own bits may forbid reaching below
// it). Only a regular file or a real directory below real directories is
// changed, never through a symlink; one that is gone or of another type
// now is passed over. Where a recorded group differs from the one the new
// file got, it is given back if the user may (chown to a group of theirs);
// if not, group bits beyond what git would have given, and a directory's
// setgid bit, are dropped rather than granted to another group. It is
// best effort: the files and their modes are what the rollback promises,
// and a chmod a file system refuses must not undo them; it returns the
// paths it could not set, for the tests.
func (pp permPlan) apply(w *worktree) (failed []string) {
	failed, _ = pp.applySeen(w)
	return failed
}

// applySeen is apply, and also returns what it found at each file it
// then left as it was (no chown, no chmod): that lstat is the file as
// it is now.
func (pp permPlan) applySeen(w *worktree) (failed []string, seen map[string]os.FileInfo) {
	seen = map[string]os.FileInfo{}
	set := func(po permOf) {
		st, err := w.lstatReal(po.path)
		abs := filepath.Join(w.root, filepath.FromSlash(po.path))
		if err != nil || (po.dir && !st.IsDir()) || (!po.dir && !st.Mode().IsRegular()) {
			return
		}
		mode := po.mode
		changed := false
		// The pass looked at the parents for an earlier path; one may
		// be a symlink since, and chown and chmod follow it: look again
		// just before either (rarely reached: most bits are git's).
		swapped := func() bool {
			if touching != nil {
				touching("chmod", po.path)
			}
			return w.parentsNow(po.path) != ""
		}
		if gid, ok := gidOf(st); ok && po.gid != nil && gid != *po.gid {
			changed = true
			if swapped() {
				return
			}
			if os.Lchown(abs, -1, int(*po.gid)) != nil {
				def := pp.made.want(mode, po.dir)
				mode = mode&^(0o070|os.ModeSetgid) | mode&def&0o070
			} else if st, err = os.Lstat(abs); err != nil {
				return
			}
		}
		if bits(st.Mode(), po.dir) != mode {
			changed = true
			if swapped() {
				return
			}
			if os.Chmod(abs, mode) != nil {
				failed = append(failed, po.path)
			}
		}
		if !changed && !po.dir {
			seen[po.path] = st
		}
	}
	for _, po := range pp.files {
		set(po)
	}
	for _, po := range pp.dirs {
		set(po)
	}
	return failed, seen
}
