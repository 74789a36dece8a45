package rollback

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/plumbing"
)

// Deleting a whole directory (issue 16: 50,000 deletions cost a rename
// into the backup and an unlink each, 5x `rm -rf`): when every entry
// below a directory is a file or symlink the plan deletes, of the type
// the baseline saw, and the directory holds nothing else (no untracked,
// ignored or nested-repository content, no directory without a planned
// file below it), the directory is moved into the backup in one rename
// instead of each file (moveDir). What a rename of each file promises
// still holds:
//
//   - The manifest names every file of it (at its place in the moved
//     directory) and the directory itself (Moved.Dir) before the rename:
//     a rollback killed after it leaves what the next command needs to
//     find a save among them, and anything a person put there (rescueIn).
//   - The directory's content is read again right after the rename, each
//     file's lstat against the baseline: a file the plan does not name (a
//     person's save into the directory between the check and the rename)
//     and a planned file no longer as the baseline saw it (saved since)
//     are put back in the tree at their paths, and left
//     (changed_during_rollback), as a per-file move leaves a file saved
//     before its move.
//   - The rescue reads the moved directories once more, and the backup
//     is removed by name (dropMovedDirs): something that appears in a
//     moved directory later (a program whose working directory it was)
//     is put back, or kept under refs/venom/rescued/, never removed.
//   - The directory's parents are looked at again just before the rename
//     (parentsNow), and the directory moved must be the one checked
//     (its device and inode): one swapped for a symlink is put back.

// dirMoveMin is how many planned deletions a directory must hold, below
// it, for its move in one rename to be tried: below it, the walks of a
// directory cost about what its renames save. GIT_VENOM_TEST_DIRMOVE_MIN
// sets it for the random and stress tests, so that their small trees
// take this way too.
var dirMoveMin = dirMoveMinFrom(os.Getenv("GIT_VENOM_TEST_DIRMOVE_MIN"))

func dirMoveMinFrom(v string) int {
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return n
	}
	return 32
}

// movedDir is a directory the rollback moved into the backup whole: rel
// in the tree, file where it is now, and the files of the plan in it
// (their paths in the tree).
type movedDir struct {
	rel, file string
	planned   map[string]bool
	// files are the planned files it was moved with, at[i] where files[i]
	// is in it since (dropNamed).
	files, at []string
}

// moveDirs moves into the backup, each in one rename, the directories
// whose every entry is one of dels (moveDir), the highest first, and
// returns the paths of dels it moved that way. A directory the checks
// refuse is passed over: its deletions go one by one.
func (ap *applier) moveDirs(dels []plumbing.TreeChange) (map[string]bool, error) {
	under := map[string]int{}
	for _, c := range dels {
		for d := path.Dir(c.Path); d != "." && d != "/"; d = path.Dir(d) {
			under[d]++
		}
	}
	var cands []string
	for d, n := range under {
		if n >= dirMoveMin {
			cands = append(cands, d)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	sort.Slice(cands, func(i, j int) bool {
		if a, b := strings.Count(cands[i], "/"), strings.Count(cands[j], "/"); a != b {
			return a < b
		}
		return cands[i] < cands[j]
	})
	covered := map[string]bool{}
	var done []string
	var err error
	ap.w.batch(func() {
		for _, d := range cands {
			if ap.noDirMoves {
				return
			}
			if underAny(d, done) {
				continue
			}
			var files []string
			if files, err = ap.moveDir(d, under[d]); err != nil {
				return
			}
			if files != nil {
				done = append(done, d)
				for _, f := range files {
					covered[f] = true
				}
			}
		}
		// The directories above those moved that are empty now.
		ap.w.pruneAll(done)
	})
	return covered, err
}

// underAny reports whether d is below one of dirs.
func underAny(d string, dirs []string) bool {
	for _, q := range dirs {
		if strings.HasPrefix(d, q+"/") {
			return true
		}
	}
	return false
}

// moveDir moves the directory d, whose planned deletions below it are
// want, into the backup in one rename, when the checks allow (see the
// comment at the top of this file), and returns the planned paths below
// it, which are now in the backup or left (nil when it moved nothing).
func (ap *applier) moveDir(d string, want int) ([]string, error) {
	w := ap.w
	if bad, err := w.parents(d, false); bad != "" || err != nil {
		return nil, nil
	}
	if kind, _ := w.dirAt(d); kind != atDir {
		return nil, nil
	}
	abs := filepath.Join(w.root, filepath.FromSlash(d))
	top, err := os.Lstat(abs)
	if err != nil || !top.IsDir() {
		return nil, nil
	}
	planned, ok := ap.wholeDir(d, abs, want)
	if !ok {
		return nil, nil
	}
	if err := ap.backupDirReady(); err != nil {
		return nil, err
	}
	dst := ap.nextBackup()
	// The manifest first: every file at its place in the moved directory,
	// then the directory.
	var buf bytes.Buffer
	files := make([]string, 0, len(planned))
	for rel := range planned {
		files = append(files, rel)
	}
	sort.Strings(files)
	at := make([]string, len(files)) // where each of files is once moved
	for i, rel := range files {
		at[i] = inMoved(dst, d, rel)
		line, err := ap.moved(rel, at[i], false).MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("recording the backup of %s: %w", rel, err)
		}
		buf.Write(append(line, '\n'))
	}
	dev, ino, _, _ := plumbing.StatIdentity(top)
	line, err := checkpoint.Moved{Path: d, File: dst, Dev: dev, Ino: ino, Dir: true}.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("recording the backup of %s: %w", d, err)
	}
	buf.Write(append(line, '\n'))
	if _, err := ap.manifest.Write(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("recording the backup of %s: %w", d, err)
	}
	if touching != nil {
		touching("movedir", d)
	}
	if bad := w.parentsNow(d); bad != "" {
		return nil, nil
	}
	if touching != nil {
		touching("dirrename", d)
	}
	if err := os.Rename(abs, dst); err != nil {
		if errors.Is(err, syscall.EXDEV) {
			ap.noDirMoves = true // the backup is on another device: copies, file by file
		}
		return nil, nil
	}
	if touching != nil {
		touching("dirmoved", d)
	}
	ap.touched = true
	// Nothing is at d now, nor below it, for the rest of the pass.
	for q := range w.dirs {
		if strings.HasPrefix(q, d+"/") {
			delete(w.dirs, q)
		}
	}
	w.dirs[d] = dirSeen{atNothing, nil}
	moved, err := os.Lstat(dst)
	if err != nil || !moved.IsDir() || !sameInode(moved, top) {
		delete(w.dirs, d)
		if err == nil {
			ap.movedAmiss(d, abs, dst, moved)
		}
		return nil, nil
	}
	md := movedDir{rel: d, file: dst, planned: planned, files: files, at: at}
	ap.movedDirs = append(ap.movedDirs, md)
	// What is in it now: what the plan did not name, or a planned file
	// saved into since the check, goes back to the tree.
	for i, rel := range files {
		st, err := os.Lstat(at[i])
		if err != nil {
			continue // gone since the check: nothing of it to keep
		}
		if ok, _ := ap.stillAs(rel, st); !ok {
			if ap.putBackNew(rel, at[i]) {
				ap.leave(rel, "saved while the rollback ran")
				continue
			}
		}
		ap.backups[rel] = &backup{file: at[i], st: ap.before[rel].st}
	}
	ap.strangers(md)
	if touching != nil {
		touching("moved", d)
	}
	return files, nil
}

// movedAmiss deals with what the rename of d moved to dst when it was not
// the directory checked (d, or a parent of it, was swapped between the
// checks and the rename: a person's new directory, or one outside the
// tree reached through a symlink). It goes back to d when nothing took
// its place and d's parents are the tree's; else nothing of it is ever
// removed: a directory is kept as one moved whole whose every file is a
// stranger's (strangers puts each back at its path, or keeps it for the
// rescue, which stores it under refs/venom/rescued/), and a file or
// symbolic link goes back or is kept for the rescue the same way. The
// plan's deletions below d then go one by one.
func (ap *applier) movedAmiss(d, abs, dst string, moved os.FileInfo) {
	ap.touched = true
	// A directory goes back by rename (it cannot replace a file, nor a
	// directory with anything in it); a file or symbolic link by link
	// (putBackNew, below), which never replaces what someone made there
	// since the look.
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) && ap.w.parentsNow(d) == "" {
		if moved.IsDir() && os.Rename(dst, abs) == nil {
			return
		}
		if !moved.IsDir() && ap.putBackNew(d, dst) {
			return // back where it was, as it was
		}
	}
	switch {
	case moved.IsDir():
		md := movedDir{rel: d, file: dst, planned: map[string]bool{}}
		ap.movedDirs = append(ap.movedDirs, md)
		ap.strangers(md)
	case ap.putBackNew(d, dst):
		ap.leave(d, "created while the rollback ran, in a directory it deleted; put back")
	case moved.Mode().IsRegular() || moved.Mode()&fs.ModeSymlink != 0:
		ap.foreign = append(ap.foreign, checkpoint.Moved{Path: d, File: dst})
	default:
		ap.keep = true // nothing git can store: the backup directory stays
	}
}

// dirDev is the device of a directory wholeDir looks at (a variable for
// the tests, which cannot mount a file system).
var dirDev = func(fi os.FileInfo) uint64 {
	dev, _, _, _ := plumbing.StatIdentity(fi)
	return dev
}

// sameInode reports whether a and b are the same file (device and inode).
func sameInode(a, b os.FileInfo) bool {
	ad, ai, _, _ := plumbing.StatIdentity(a)
	bd, bi, _, _ := plumbing.StatIdentity(b)
	return ad == bd && ai == bi
}

// inMoved is where the file at rel, below the directory d the rollback
// moved to dst, is now.
func inMoved(dst, d, rel string) string {
	return filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(rel, d+"/")))
}

// wholeDir walks the directory d (at abs) and returns its files, when
// each is a planned deletion of the type the baseline saw, there are want
// of them (every planned deletion below d), and every directory below d
// has one of them below it, on d's file system; ok is false otherwise,
// and at the first entry that is not so. One readdir a directory, and
// one lstat a directory (its device), none a file.
func (ap *applier) wholeDir(d, abs string, want int) (planned map[string]bool, ok bool) {
	planned = make(map[string]bool, want)
	holds := map[string]bool{} // a directory below d with a planned file below it
	var dirs []string
	ok = true
	var topDev uint64
	_ = filepath.WalkDir(abs, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return filepath.SkipAll
		}
		sub := subOf(abs, p)
		rel := d
		if sub != "." {
			rel = d + "/" + filepath.ToSlash(sub)
		}
		if e.IsDir() {
			// A directory on another file system (a mount point: a
			// person's tmpfs or bind mount below d) would go into the
			// git dir with the rename; its files go one by one.
			fi, err := e.Info()
			if err != nil {
				ok = false
				return filepath.SkipAll
			}
			if dev := dirDev(fi); sub == "." {
				topDev = dev
			} else if dev != topDev {
				ok = false
				return filepath.SkipAll
			}
			dirs = append(dirs, rel)
			return nil
		}
		// The names and types alone: each file's lstat against the
		// baseline comes after the rename (moveDir), which a save made
		// since the baseline, before or after this look, cannot escape.
		b := ap.before[rel]
		if !ap.w.deletes[rel] || b == nil || !b.present || b.changed != "" || e.Type() != b.st.mode {
			ok = false
			return filepath.SkipAll
		}
		planned[rel] = true
		for q := path.Dir(rel); !holds[q]; q = path.Dir(q) {
			holds[q] = true
			if q == d {
				break
			}
		}
		return nil
	})
	if !ok || len(planned) != want {
		return nil, false
	}
	for _, q := range dirs {
		if !holds[q] {
			return nil, false
		}
	}
	return planned, true
}

// subOf is filepath.Rel(root, p) for a p that filepath.WalkDir(root)
// gave: p itself is root joined with names, so its path below root is
// what follows root and a separator ("." for root itself). It takes no
// filepath.Rel, which cleans both paths again: 0.22 s of the CPU of a
// rollback of 50,000 deletions, whose walks give 150,000 names (issue
// 16).
func subOf(root, p string) string {
	if len(p) > len(root)+1 && p[len(root)] == filepath.Separator && p[:len(root)] == root {
		return p[len(root)+1:]
	}
	sub, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return sub
}

// strangers puts back in the tree what is in the moved directory md that
// the plan did not name (a person's file, made in it between the checks
// and its rename, or in it since by a program whose working directory
// it is), each at its path, and leaves it (changed_during_rollback);
// what cannot go back (its path is taken, a parent is not a directory of
// the tree) is kept for the rescue (ap.foreign). It returns whether the
// directory holds nothing but the plan's files now.
func (ap *applier) strangers(md movedDir) bool {
	clean := true
	_ = filepath.WalkDir(md.file, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == md.file && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			clean = false
			return nil
		}
		if e.IsDir() {
			return nil
		}
		sub := subOf(md.file, p)
		rel := md.rel + "/" + filepath.ToSlash(sub)
		if md.planned[rel] {
			return nil
		}
		if ap.putBackNew(rel, p) {
			ap.leave(rel, "created while the rollback ran, in a directory it deleted; put back")
			ap.unforeign(p)
			return nil
		}
		clean = false
		// Only a file or symlink can be stored; anything else keeps the
		// backup directory (dropDir never removes it).
		if t := e.Type(); (t.IsRegular() || t&fs.ModeSymlink != 0) && !ap.foreignSeen[p] {
			if ap.foreignSeen == nil {
				ap.foreignSeen = map[string]bool{}
			}
			ap.foreignSeen[p] = true
			ap.foreign = append(ap.foreign, checkpoint.Moved{Path: rel, File: p})
		}
		return nil
	})
	return clean
}

// unforeign drops the file at file from what the rescue is to keep
// (foreign): it went back to the tree since it was found.
func (ap *applier) unforeign(file string) {
	if !ap.foreignSeen[file] {
		return
	}
	delete(ap.foreignSeen, file)
	ap.foreign = slices.DeleteFunc(ap.foreign, func(m checkpoint.Moved) bool { return m.File == file })
}

// putBackNew moves the file or symlink at file, which the rollback moved
// out of the tree, back to rel, only where nothing is (a link, then the
// backup's name removed), making its missing parents (never through a
// symlink); false when it could not.
func (ap *applier) putBackNew(rel, file string) bool {
	st, err := os.Lstat(file)
	if err != nil || !(st.Mode().IsRegular() || st.Mode()&fs.ModeSymlink != 0) {
		return false
	}
	if ap.w.mkParents(rel) != nil || ap.w.parentsNow(rel) != "" {
		return false
	}
	abs := filepath.Join(ap.w.root, filepath.FromSlash(rel))
	// Neither link(2) nor symlink(2) replaces what is there; a symbolic
	// link is made again from its target (link(2) may follow it).
	if st.Mode()&fs.ModeSymlink != 0 {
		if remakeLink(file, abs) != nil {
			return false
		}
	} else if err := os.Link(file, abs); err != nil {
		return false
	}
	os.Remove(file)
	return true
}

// dropMovedDirs removes the directories the rollback moved whole from the
// backup, by name: each planned file, then each directory, deepest first.
// What is in one that the plan did not name (it appeared after the
// rescue's look) goes back to the tree (strangers); what cannot keeps
// the backup directory. It returns whether every one is gone.
func (ap *applier) dropMovedDirs() bool {
	all := true
	for _, md := range ap.movedDirs {
		if !ap.dropMovedDir(md) {
			all = false
		}
	}
	return all
}

// settleMovedDirs is the end of the directories moved whole, after the
// rescue judged their files and, in a rollback that ends as planned,
// after its end is logged (so that no file is unlinked while a save
// into it could still be lost before the end), just before the other
// backups go (cleanup): each is removed from the backup
// (dropMovedDirs). One that cannot be emptied holds what a program whose
// working directory it is keeps making there, or what cannot go back to
// the tree file by file (neither a file nor a symlink): it goes back to
// its path, whole, where nothing took its place (and the program's next
// files land in the tree), else it stays in the backup directory, which
// is kept; either way its path is left, saying so (issue 16's F3: such
// a directory was kept in the git dir silently).
func (ap *applier) settleMovedDirs() {
	if ap.keep {
		return // a save could not be stored: the result names its file here
	}
	// What a directory moved whole still holds is S's, perhaps alone
	// once a gc pruned the safety checkpoint: it goes only while that is
	// whole (keepUnlessWhole), as the cleanup's backups do.
	for _, md := range ap.movedDirs {
		if holdsFiles(md.file, false) { // a file of the tree may be named like the manifest
			if ap.keepUnlessWhole(); ap.keep {
				return
			}
			break
		}
	}
	for _, md := range ap.movedDirs {
		if ap.dropMovedDir(md) {
			continue
		}
		abs := filepath.Join(ap.w.root, filepath.FromSlash(md.rel))
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) && ap.w.mkParents(md.rel) == nil && ap.w.parentsNow(md.rel) == "" {
			if os.Rename(md.file, abs) == nil {
				ap.leave(md.rel, "something was made or saved in it while the rollback deleted it (a program whose working directory it is, or that held a file of it open?); put back with it")
				continue
			}
		}
		ap.keep = true
		ap.leave(md.rel, "something was made or saved in it while the rollback deleted it (a program whose working directory it is, or that held a file of it open?); kept in "+md.file)
	}
}

// dropMovedDir is dropMovedDirs for one: whether md is gone.
func (ap *applier) dropMovedDir(md movedDir) bool {
	if ap.dropNamed(md) {
		return true
	}
	for try := 0; ; try++ {
		if ap.dropDir(md) {
			return true
		}
		if try == 2 || !ap.strangers(md) {
			return false
		}
	}
}

// dropNamed is the first try of dropMovedDir, by the names md was moved
// with and no readdir (issue 16: the walk's readdir and joins cost 0.3 s
// of a rollback of 50,000 deletions): each planned file, while it is as
// the rescue judged it (what dropDir unlinks too), then each directory
// that held one, deepest first, and md itself, by rmdir. It stops, false,
// at the first of them that is not so (a file gone, put back or saved
// into, a directory that holds something else: a person's file, or a
// directory they made): dropDir's walk then judges what is left, as it
// judged all before.
func (ap *applier) dropNamed(md movedDir) bool {
	if len(md.files) == 0 {
		return false
	}
	dirs := map[string]bool{}
	for i, p := range md.at {
		if !md.planned[md.files[i]] || !ap.judged.Unchanged(p) {
			return false
		}
		if err := syscall.Unlink(p); err != nil {
			return false
		}
		for d := p[:strings.LastIndexByte(p, filepath.Separator)]; len(d) > len(md.file) && !dirs[d]; d = d[:strings.LastIndexByte(d, filepath.Separator)] {
			dirs[d] = true
		}
	}
	order := make([]string, 0, len(dirs)+1)
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool { return len(order[i]) > len(order[j]) })
	for _, d := range append(order, md.file) {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			return false
		}
	}
	return true
}

// dropDir is one try of dropMovedDirs for md: false when something the
// plan did not name is in it.
func (ap *applier) dropDir(md movedDir) bool {
	var dirs []string
	clean := true
	_ = filepath.WalkDir(md.file, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if !(p == md.file && errors.Is(err, fs.ErrNotExist)) {
				clean = false
			}
			return nil
		}
		if e.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		sub := subOf(md.file, p)
		// Planned, and as the rescue judged it: a save made into it
		// since (a program that holds it open) keeps it.
		if !md.planned[md.rel+"/"+filepath.ToSlash(sub)] || !ap.judged.Unchanged(p) {
			clean = false
			return nil
		}
		if err := syscall.Unlink(p); err != nil && !errors.Is(err, syscall.ENOENT) {
			clean = false
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			clean = false
		}
	}
	return clean
}
