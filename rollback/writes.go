package rollback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/failpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// How a rollback writes (RFC 7.4 step 4), so that nothing a person saves
// while it runs is lost (issue 13 items 1 to 3):
//
//   - Before the first write, each planned path is looked at once
//     (baseline): its lstat, and, when its last change is too near S's
//     capture for the capture to be sure to have read it as it is, its
//     bytes against S's blob. The lstat is the one the plan's own check
//     took, after S's capture (worktree.lstatFirst), and the permission
//     bits logged for the undo (permsToRecord) are read from it too.
//   - The writes go to git in batches of writeBatch paths (growing, while
//     git writes under the stage: nextBatch). Just before a
//     batch, each of its paths is checked again: parents, what is in the
//     way, and its lstat against the baseline. A path that changed since
//     S is left as it is, in left with reason changed_during_rollback.
//   - What S held at a path is not unlinked by git: the rollback renames
//     it into a backup directory under the git dir itself (deletions
//     too), and checkout-index runs without -f, creating each file with
//     O_EXCL. A save that recreates the path after the rename is kept by
//     git ("already exists") and left; a write into the old file lands in
//     the backup.
//   - Before the backups are removed, each is compared with what the
//     baseline saw (rescue): a difference is a save made during the
//     rollback, and its bytes are kept under refs/venom/rescued/, named in
//     the result's rescued[].
//   - A directory that holds nothing but planned deletions goes into the
//     backup in one rename, its content checked before and after it
//     (dirmove.go).
//   - A git child killed with venom (a parent-death signal on Linux) or
//     left running (macOS) holds one batch at most, whose paths are
//     already cleared: it can write only where nothing is (under the
//     stage: checkout).

// writeBatch is how many paths one checkout-index is given: what a git
// child can still write after venom died where no parent-death signal
// kills it, and how long a path stays cleared before git writes it. A
// batch costs two git starts (the private index, the checkout). It is
// the first batch's size, and every batch's where git writes in the
// tree itself (direct); while git writes under the stage, where a git
// left alive writes nothing into the tree, each batch is twice the one
// before, up to maxStagedBatch (nextBatch): 50,000 files written back
// took 391 batches of 128 (issue 16: 9.5 s of CPU in checkout-index
// alone, where one checkout-index of the 50,000 costs 2.7 s), and now 29.
const writeBatch = 128

// maxStagedBatch is the largest batch git writes under the stage.
const maxStagedBatch = 2048

// nextBatch is the size of the batch after one of n paths (see
// writeBatch).
func (ap *applier) nextBatch(n int) int {
	if ap.direct {
		return writeBatch
	}
	return min(2*n, maxStagedBatch)
}

// stamp is what any change to a path changes: its type, size, times,
// device and inode.
type stamp struct {
	mode       fs.FileMode // type bits only
	size       int64
	mtime      int64 // ns
	ctime      int64 // ns; 0 where the system gives none
	dev, ino   uint64
	regular    bool
	executable bool
	bits       fs.FileMode // permission bits
}

// perm is the permission bits of the file.
func (a stamp) perm() fs.FileMode { return a.bits }

func stampOf(st os.FileInfo) stamp {
	s := stamp{mode: st.Mode().Type(), size: st.Size(), mtime: st.ModTime().UnixNano(),
		regular: st.Mode().IsRegular(), executable: st.Mode()&0o100 != 0, bits: st.Mode().Perm()}
	s.dev, s.ino, s.ctime, _ = plumbing.StatIdentity(st)
	return s
}

// sameFile reports whether a and b are the same file with no write to
// its bytes between them: a rename changes a file's ctime, not this.
func (a stamp) sameFile(b stamp) bool {
	return a.mode == b.mode && a.size == b.size && a.mtime == b.mtime && a.dev == b.dev && a.ino == b.ino
}

// unchanged reports whether nothing at all happened to the file between
// a and b (a chmod or a rename changes its ctime).
func (a stamp) unchanged(b stamp) bool { return a.sameFile(b) && a.ctime == b.ctime }

// recentTo reports whether the file's last change (its ctime) may have
// come after, or during, a capture that began at t: the file systems'
// clocks tick coarsely (a jiffy on Linux, up to a second or two where
// times have no fraction), so a change up to one tick before t may carry
// a time after the capture read the file, and one just after it a time
// before. Without a ctime every file is recent.
func (a stamp) recentTo(t time.Time) bool {
	if a.ctime == 0 {
		return true
	}
	margin := 100 * time.Millisecond
	if a.ctime%int64(time.Second) == 0 {
		margin = 2 * time.Second // a file system whose times have no fraction
	}
	return a.ctime >= t.Add(-margin).UnixNano()
}

// seen is what a planned path held when the writes began, for a path S
// holds a file or symlink at.
type seen struct {
	present bool
	st      stamp
	// racy: its last change was too near S's capture (recentTo) for its
	// lstat alone to say S read it as it is; then raw is its bytes' hash
	// (no filters) as they were found to be S's.
	racy bool
	raw  plumbing.OID
	// changed says how it differs from S, already ("" when it does not).
	changed string
}

// backup is what the rollback moved out of a path: file is where it is
// now, st what the baseline saw, copied whether it is a copy (the backup
// directory is on another device) rather than the file itself. held is,
// for a copy of a regular file, the file itself, open, once its path is
// removed: a program that had it open may still write into it, and only
// this descriptor can read what it wrote (heldCopies); saved is set once
// such a write was found and copied into file.
type backup struct {
	file   string
	st     stamp
	copied bool
	held   *os.File
	saved  bool
	// heldSt is what the held file was when its bytes were last copied
	// (heldCopies), once they were: a change after that is a save too.
	heldSt   stamp
	heldSeen bool
}

// heldChanged reports whether the file held open behind b was written
// since it was copied last (since the rollback moved it, before that).
func (b *backup) heldChanged() (os.FileInfo, bool) {
	if b.held == nil {
		return nil, false
	}
	fi, err := b.held.Stat()
	if err != nil {
		return nil, false
	}
	was := b.st
	if b.heldSeen {
		was = b.heldSt
	}
	return fi, !stampOf(fi).unchanged(was)
}

// release closes the file held open behind the backup, if any.
func (b *backup) release() {
	if b.held != nil {
		b.held.Close()
		b.held = nil
	}
}

// maxHeld is how many files a rollback keeps open at most (backup.held),
// of its limit of open files: the rest is left to git's pipes.
func maxHeld() int {
	n := 2048
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur/2 < uint64(n) {
		n = int(rl.Cur / 2)
	}
	return n
}

// applier carries out the file and HEAD steps and knows how to undo them.
type applier struct {
	plan      *plan
	w         *worktree
	backupDir string
	manifest  *os.File           // the backup directory's (checkpoint.ManifestFile)
	backups   map[string]*backup // path -> what the rollback moved away from it
	held      int                // how many backups hold their file open (backup.held)
	maxHeld   int
	before    map[string]*seen        // path -> the baseline, for paths S holds
	src       map[string]plumbing.OID // path -> S's blob there
	wrote     map[string]stamp        // path -> what git wrote there, once written
	pending   []plumbing.TreeChange
	left      []Left // paths left because they changed during the rollback
	rescued   []Rescued
	keep      bool // a save could not be rescued: keep the backup directory
	touched   bool // any file was moved, written or removed
	headMoved bool
	indexCopy string // copy of the user's index taken before it was reset
	converted []string
	// own is the permission bits this rollback may lose (logged in
	// rollback.started, given back if it fails); restore is those of the
	// rollback whose safety checkpoint is the target, when it is an undo.
	own     []journal.PathPerm
	restore []journal.PathPerm
	made    created   // what git gives what it creates here
	began   time.Time // when the writes' preparation began
	// safety is the safety checkpoint's record; safetyObjs what of it no
	// ref but its own keeps (safetyWhole), once read.
	safety     journal.RepoState
	indexTree  plumbing.OID // the user's index as the rollback found it, kept when HEAD moves
	safetyObjs []plumbing.OID
	missing    []plumbing.OID // what the last safetyWhole found missing
	// partial: the last safetyWhole could not list S's objects (a tree
	// of them missing), so missing names only the trees git said it
	// could not read, not what is below them.
	partial bool
	// wholeRead: a check of the safety checkpoint passed with each
	// object's header read (safetyWhole).
	wholeRead bool
	// direct is set once the scratch directory proved to be on another
	// file system than the tree (a link fails with EXDEV): git then
	// writes in the tree itself.
	direct bool
	// movedDirs are the directories moved into the backup whole
	// (dirmove.go); noDirMoves is set once such a move failed with EXDEV.
	// foreign is what was found in them that the plan did not name and
	// could not go back to the tree (foreignSeen: by its file), for the
	// rescue. seq names the backups.
	movedDirs   []movedDir
	noDirMoves  bool
	foreign     []checkpoint.Moved
	foreignSeen map[string]bool
	seq         int
	// judged is what each file of the backup directory was when the
	// rescue judged it, and judgedMoved the backups it judged: the
	// cleanup removes only those, and only while they are so
	// (checkpoint.RemoveNamed). cleaned is set once the cleanup ran.
	judged      checkpoint.Seen
	judgedMoved []checkpoint.Moved
	cleaned     bool
	// keptBackup is the backup directory, kept whole because the safety
	// checkpoint was no longer whole when the cleanup was to remove it.
	keptBackup string
}

// nextBackup is the name of a new backup in the backup directory.
func (ap *applier) nextBackup() string {
	ap.seq++
	return filepath.Join(ap.backupDir, strconv.Itoa(ap.seq-1))
}

// Rescued is one member of repos[].rescued: a person's save the rollback
// kept (checkpoint.Rescued).
type Rescued = checkpoint.Rescued

// leave puts path in left with reason changed_during_rollback.
func (ap *applier) leave(path, detail string) {
	ap.left = append(ap.left, Left{Path: path, Reason: LeftChangedDuringRollback, Detail: detail})
}

// baseline looks at every planned path S holds a file or symlink at, once,
// before the first write: its lstat, and, when that cannot prove S read
// it as it is (recentTo S's capture), its bytes against S's blob (one
// hash-object for the bytes, one through the path's filters) or, for a
// symlink, its target. The batches compare against it (still).
func (ap *applier) baseline(ctx context.Context) error {
	p := ap.plan
	r := p.tree.Repo
	changes := p.changes()
	ap.before = make(map[string]*seen, len(changes))
	var racyFiles []string
	var racyLinks []plumbing.OID
	src := make(map[string]plumbing.TreeChange, len(changes))
	ap.src = make(map[string]plumbing.OID, len(changes))
	// One pass of lstats, each parent directory looked at once.
	ap.w.batch(func() {
		for _, c := range changes {
			if c.SrcMode == "000000" || c.SrcMode == "160000" {
				continue
			}
			src[c.Path] = c
			ap.src[c.Path] = c.Src
			b := &seen{}
			ap.before[c.Path] = b
			st, err := ap.w.lstatFirst(c.Path)
			if err != nil {
				b.changed = "gone since the plan's capture"
				continue
			}
			b.present, b.st = true, stampOf(st)
			isLink := st.Mode()&fs.ModeSymlink != 0
			switch {
			case !isLink && !st.Mode().IsRegular(),
				// With core.symlinks off git writes a symlink as a file.
				p.tree.Config.ModesFromDisk && isLink != (c.SrcMode == "120000"):
				b.changed = "another type since the plan's capture"
			case p.tree.Config.ExecFromDisk && c.SrcMode != "120000" && b.st.executable != (c.SrcMode == "100755"):
				b.changed = "another mode since the plan's capture"
			case b.st.recentTo(p.snapAt):
				b.racy = true
				if isLink {
					racyLinks = append(racyLinks, c.Src)
				} else {
					racyFiles = append(racyFiles, c.Path)
				}
			}
		}
	})
	if len(racyFiles) > 0 {
		// The bytes first, then what a capture makes of them: a write
		// between the two shows in the second.
		raw, err := r.RawHashes(ctx, racyFiles)
		if err != nil {
			return fmt.Errorf("reading files changed as the rollback began: %w", err)
		}
		clean, err := r.CleanHashes(ctx, racyFiles)
		if err != nil {
			return fmt.Errorf("reading files changed as the rollback began: %w", err)
		}
		for _, path := range racyFiles {
			b := ap.before[path]
			b.raw = raw[path]
			if h, ok := clean[path]; !ok || h != src[path].Src || b.raw == "" {
				b.changed = "changed since the plan's capture"
			}
		}
	}
	if len(racyLinks) > 0 {
		targets, err := r.ReadBlobs(ctx, racyLinks)
		if err != nil {
			return err
		}
		for path, b := range ap.before {
			c := src[path]
			if !b.racy || b.st.mode&fs.ModeSymlink == 0 {
				continue
			}
			if t, err := os.Readlink(filepath.Join(ap.w.root, filepath.FromSlash(path))); err != nil || t != string(targets[c.Src]) {
				b.changed = "changed since the plan's capture"
			}
		}
	}
	return nil
}

// still reports whether the path of c, which S holds a file or symlink
// at, holds now what the baseline saw, which is S's: as each batch comes
// to it, just before it is moved away. detail says what changed.
func (ap *applier) still(rel string) (bool, string) {
	b := ap.before[rel]
	if b == nil {
		return true, ""
	}
	if b.changed != "" {
		return false, b.changed
	}
	st, err := ap.w.lstatReal(rel)
	if err != nil {
		st = nil
	}
	return ap.stillAs(rel, st)
}

// stillAs is still, for a path just found as st (nil: gone) by a check
// of the same pass.
func (ap *applier) stillAs(rel string, st os.FileInfo) (bool, string) {
	b := ap.before[rel]
	if b == nil {
		return true, ""
	}
	if b.changed != "" {
		return false, b.changed
	}
	if st == nil {
		return false, "gone since the plan's capture"
	}
	if !stampOf(st).unchanged(b.st) {
		return false, "saved while the rollback ran"
	}
	return true, ""
}

// moveAway moves what is at rel, a file or symlink S holds, out of the
// tree into the backup directory, after a last lstat against the
// baseline: false when it is no longer what S held, and then nothing is
// moved and rel is left (changed_during_rollback).
// Its parents were checked by the pass (worktree.checkWrite or
// checkDelete) and are looked at again first (parentsNow): one swapped
// for a symlink since is left as in the way, never moved through. A backup directory on another device gets a copy, and
// the file is removed once the copy is made and the file is still as
// the baseline saw it.
func (ap *applier) moveAway(rel string) (bool, error) {
	if touching != nil {
		touching("move", rel)
	}
	if bad := ap.w.parentsNow(rel); bad != "" {
		ap.leave(rel, "something is in the way: "+bad)
		return false, nil
	}
	if ok, _ := ap.still(rel); !ok || ap.before[rel] == nil {
		ap.leave(rel, "saved while the rollback ran")
		return false, nil
	}
	if err := ap.backupDirReady(); err != nil {
		return false, err
	}
	abs := filepath.Join(ap.w.root, filepath.FromSlash(rel))
	dst := ap.nextBackup()
	b := &backup{file: dst, st: ap.before[rel].st}
	// The manifest says what is moved before it is: a rollback killed
	// now leaves what the next command needs to find a save in it.
	line, err := ap.moved(rel, dst, false).MarshalJSON()
	if err == nil {
		_, err = ap.manifest.Write(append(line, '\n'))
	}
	if err != nil {
		return false, fmt.Errorf("recording the backup of %s: %w", rel, err)
	}
	err = os.Rename(abs, dst)
	if errors.Is(err, syscall.EXDEV) {
		b.copied = true
		var moved bool
		if ap.held < ap.maxHeld {
			b.held = holdOpen(abs, b.st)
		}
		if moved, err = copyAway(abs, dst, b.st, b.held); err == nil && !moved {
			if b.held != nil {
				b.held.Close()
			}
			ap.leave(rel, "saved while the rollback ran")
			return false, nil
		}
		if b.held != nil {
			ap.held++
		}
	}
	if err != nil {
		return false, fmt.Errorf("moving %s out of the way: %w", rel, err)
	}
	ap.backups[rel] = b
	ap.touched = true
	return true, nil
}

// touching, when set (by tests), is called as moveAway ("move") and
// placeAll ("link") begin with a path, and before the bits of a path
// are set ("chmod"); with a directory moved whole (moveDir), between its
// checks and its rename ("movedir") and once its content was read again
// after it ("moved").
var touching func(op, rel string)

// backupDirReady makes the backup directory, in the worktree's scratch
// directory in the git dir (never in the tree: a capture would see it).
func (ap *applier) backupDirReady() error {
	if ap.backupDir != "" {
		return nil
	}
	d, err := ap.plan.tree.Repo.TmpDir()
	if err != nil {
		return err
	}
	p := ap.plan
	if ap.backupDir, err = os.MkdirTemp(d, checkpoint.BackupPrefix(p.agent.ID, p.res.Safety)); err != nil {
		return err
	}
	if ap.manifest, err = os.OpenFile(filepath.Join(ap.backupDir, checkpoint.ManifestFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		return err
	}
	ap.backups = make(map[string]*backup, len(ap.before)) // at most one a path the baseline saw
	ap.maxHeld = maxHeld()
	return nil
}

// moved is what the manifest records of the backup of rel in file.
func (ap *applier) moved(rel, file string, copied bool) checkpoint.Moved {
	b := ap.before[rel]
	m := checkpoint.Moved{Path: rel, File: file, Dev: b.st.dev, Ino: b.st.ino, Size: b.st.size, Mtime: b.st.mtime,
		Link: b.st.mode&fs.ModeSymlink != 0, Src: string(ap.src[rel]), Racy: b.racy, Raw: string(b.raw), Copied: copied}
	return m
}

// holdOpen opens the regular file at abs for reading when it is still the
// file st describes (nil otherwise, or for a symlink).
func holdOpen(abs string, st stamp) *os.File {
	if !st.regular {
		return nil
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !stampOf(fi).unchanged(st) {
		f.Close()
		return nil
	}
	return f
}

// copyAway copies the file or symlink at abs to dst, and removes abs if
// it is still the file st describes (else removes the copy and answers
// false): for a backup directory on another device. held, when not nil,
// is that file open (holdOpen), which the copy is read from.
func copyAway(abs, dst string, st stamp, held *os.File) (bool, error) {
	var err error
	if held != nil {
		err = copyFrom(held, dst, st.perm())
	} else {
		err = copyEntry(abs, dst)
	}
	if err != nil {
		return false, err
	}
	if now, err := os.Lstat(abs); err != nil || !stampOf(now).unchanged(st) {
		os.Remove(dst)
		return false, nil
	}
	return true, os.Remove(abs)
}

// copyEntry copies a regular file (its bytes and permission bits) or a
// symlink from src to a new dst.
func copyEntry(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, st.Mode().Perm())
}

// copyFrom copies the bytes of the open file f, from its start, to a new
// file dst with the permission bits perm.
func copyFrom(f *os.File, dst string, perm fs.FileMode) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm)
}

// heldCopies looks at each file held open behind a copy (backup.held):
// one written since it was copied (its size or times changed) has a
// person's save in it, which only that descriptor can read now that its
// path is gone. Its bytes replace the copy (saved), so that the way back
// puts them back and the rescue keeps them. Called before either.
func (ap *applier) heldCopies() {
	for _, b := range ap.backups {
		fi, changed := b.heldChanged()
		if !changed {
			continue
		}
		tmp := b.file + ".saved"
		os.Remove(tmp)
		if copyFrom(b.held, tmp, b.st.perm()) == nil && os.Rename(tmp, b.file) == nil {
			b.saved = true
			b.heldSt, b.heldSeen = stampOf(fi), true
		}
	}
}

// releaseHeld closes the file held open behind the backup of rel, after
// a last look: one written since heldCopies copied it (a program saving
// through its own descriptor in the milliseconds since) has its bytes
// copied to a new file of the backup directory first, which is returned
// to be named (nil when there was none): once the descriptor is closed,
// nothing can read them. A new file nothing judged keeps the backup
// directory (checkpoint.RemoveNamed).
func (ap *applier) releaseHeld(rel string, b *backup) *Rescued {
	defer b.release()
	if _, changed := b.heldChanged(); !changed || ap.backupDir == "" {
		return nil
	}
	dst := ap.nextBackup()
	if copyFrom(b.held, dst, b.st.perm()) != nil {
		// The directory is gone (removed by hand, or by a sweep that did
		// not see this rollback running): it is made again, with a
		// manifest that names the file, so that it is a backup the
		// sweeps keep (the file is no backup the log knows).
		if os.MkdirAll(ap.backupDir, 0o700) != nil || copyFrom(b.held, dst, b.st.perm()) != nil {
			return nil
		}
		if line, err := json.Marshal(checkpoint.Moved{Path: rel, File: dst}); err == nil {
			if f, err := os.OpenFile(filepath.Join(ap.backupDir, checkpoint.ManifestFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
				f.Write(append(line, '\n'))
				f.Close()
			}
		}
	}
	return &Rescued{Repo: ap.plan.rel, Path: rel, File: dst}
}

// heldAfterPutBack releases the file held behind b, put back at rel by
// the way back: what a program saved through it since heldCopies looked
// is copied out first (releaseHeld), and goes to the rescue, which
// stores it under refs/venom/rescued/ (it is not in the tree: the path
// has the copy's bytes).
func (ap *applier) heldAfterPutBack(rel string, b *backup) {
	if rs := ap.releaseHeld(rel, b); rs != nil {
		ap.foreign = append(ap.foreign, checkpoint.Moved{Path: rel, File: rs.File})
	}
}

// errTaken is putBack's answer when the path is no longer as the way
// back found it (a person saved there meanwhile): nothing was replaced,
// and the backup stays.
var errTaken = errors.New("saved into while the way back put it back")

// putBack moves the backup b back to abs: over what the rollback wrote
// there when still (asked just before) says abs still holds it, or, with
// still nil, only where nothing is (a file is linked, which never
// replaces, or renamed after a last look where the file system refuses
// links; a symbolic link is made again from its target). A backup on
// another device is copied first, to a name of its own beside abs
// (created, never replacing anything), and still, or the absence of abs,
// is asked again once the copy is made: a save made while the bytes were
// copied is kept (errTaken). The copy in the backup goes once its bytes
// are at abs.
func putBack(b *backup, abs string, still func() bool) error {
	taken := func() bool {
		if still != nil {
			return !still()
		}
		_, err := os.Lstat(abs)
		return err == nil
	}
	if still == nil && b.st.mode&fs.ModeSymlink != 0 {
		// A symbolic link where nothing is: made again from its target,
		// which never replaces (nor follows) what someone made there.
		if err := remakeLink(b.file, abs); errors.Is(err, fs.ErrExist) {
			return errTaken
		} else if err != nil {
			return err
		}
		os.Remove(b.file)
		return nil
	}
	if !b.copied {
		if still == nil && b.st.regular {
			err := os.Link(b.file, abs)
			switch {
			case err == nil:
				return os.Remove(b.file)
			case errors.Is(err, fs.ErrExist):
				return errTaken
			case noLinks(err):
				// A file system without hard links (or a file the
				// kernel's protected_hardlinks keeps): a last look,
				// then the rename.
				if taken() {
					return errTaken
				}
				return os.Rename(b.file, abs)
			case !errors.Is(err, syscall.EXDEV):
				return err
			}
		} else {
			if taken() {
				return errTaken
			}
			if err := os.Rename(b.file, abs); !errors.Is(err, syscall.EXDEV) {
				return err
			}
		}
	}
	tmp, err := restoreName(abs)
	if err != nil {
		return err
	}
	if err := copyEntry(b.file, tmp); err != nil {
		if !errors.Is(err, fs.ErrExist) { // else it is someone's, made since the look
			os.Remove(tmp)
		}
		return err
	}
	linked := false
	if still == nil && b.st.regular {
		err = os.Link(tmp, abs)
		linked = !noLinks(err)
	}
	if linked {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return errTaken
		}
	} else if taken() {
		os.Remove(tmp)
		return errTaken
	} else {
		err = os.Rename(tmp, abs)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	os.Remove(b.file) // what stays is the next command's sweep's (checkpoint.DropEndedBackups)
	return nil
}

// remakeLink makes at abs a symbolic link with the target of the one at
// from, only where nothing is (fs.ErrExist otherwise): symlink(2) never
// replaces, and never follows, where link(2) of a symlink may follow it.
func remakeLink(from, abs string) error {
	target, err := os.Readlink(from)
	if err != nil {
		return err
	}
	return os.Symlink(target, abs)
}

// noLinks reports whether err is a hard link's refusal by the file
// system or the kernel (EPERM, ENOTSUP, EOPNOTSUPP, EMLINK).
func noLinks(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EMLINK)
}

// restoreName is a name beside abs that nothing has, for putBack's copy:
// "<name>.venom-restore-<n>", n the first free one from the process id
// (a person's file of the plain name is never touched).
func restoreName(abs string) (string, error) {
	for i := 0; i < 100; i++ {
		p := fmt.Sprintf("%s.venom-restore-%d-%d", abs, os.Getpid(), i)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free name beside %s", abs)
}

// clearDir removes the directory at rel if it holds nothing but empty
// directories (checkWrite let a write replace it: its files were the
// plan's to delete); false when something is in it now.
func clearDir(abs string) bool {
	var dirs []string
	clean := true
	_ = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			clean = false
			return filepath.SkipAll
		}
		dirs = append(dirs, p)
		return nil
	})
	if !clean {
		return false
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if syscall.Rmdir(dirs[i]) != nil { // never unlink a file swapped in
			return false
		}
	}
	return true
}

// run deletes, writes and moves HEAD (RFC 7.4 steps 4 and 5), as the
// comment at the top of this file says.
func (ap *applier) run(ctx context.Context) error {
	p := ap.plan
	r := p.tree.Repo
	if err := ap.baseline(ctx); err != nil {
		return err
	}
	ap.wrote = map[string]stamp{}
	deletes := append([]plumbing.TreeChange(nil), p.deletes...)
	byDepth(deletes)
	if len(deletes) > 0 {
		r.Report("rollback.delete", 0, len(deletes))
	}
	// First the directories that hold nothing but deletions, each in one
	// rename (dirmove.go); then the rest, in passes of writeBatch paths:
	// no git child runs among them, so each pass looks at each parent
	// directory once (worktree.batch), and a swap of one for a symlink is
	// seen by the next pass at the latest.
	covered, err := ap.moveDirs(deletes)
	if err != nil {
		return err
	}
	total := len(deletes)
	if len(covered) > 0 {
		rest := deletes[:0:0]
		for _, c := range deletes {
			if !covered[c.Path] {
				rest = append(rest, c)
			}
		}
		deletes = rest
		r.Report("rollback.delete", total-len(rest), total)
	}
	for start := 0; start < len(deletes); start += writeBatch {
		end := min(start+writeBatch, len(deletes))
		var err error
		ap.w.batch(func() { err = ap.deleteBatch(deletes[start:end], total-len(deletes)+start, total) })
		if err != nil {
			return err
		}
	}
	if p.rel == "" {
		failpoint.Hit("rollback.deleted")
	} else {
		failpoint.Hit("rollback.sub-deleted")
	}
	// A directory the deletions emptied and the writes fill again gets its
	// own bits back, in any rollback; in an undo, what is not there now
	// gets the bits its rollback logged (own first: the first wins).
	recorded := append(dirsOnly(ap.own), ap.restore...)
	if len(p.writes) > 0 {
		r.Report("restore.write", 0, len(p.writes))
	}
	for start, size := 0, writeBatch; start < len(p.writes); start, size = start+size, ap.nextBatch(size) {
		if err := ctx.Err(); err != nil {
			return err // interrupted: move nothing more away
		}
		end := min(start+size, len(p.writes))
		if err := ap.writeOneBatch(ctx, p.writes[start:end], recorded); err != nil {
			return err
		}
		r.Report("restore.write", end, len(p.writes))
		if p.rel == "" {
			failpoint.Hit("rollback.batch-written")
		} else {
			failpoint.Hit("rollback.sub-batch-written")
		}
	}
	// What checkout-index wrote may not be the blob's bytes: an
	// end-of-line conversion or a smudge filter changed them, and a tree
	// compare cannot see it (CASES BR-35). Such paths are reported, and the
	// result is not called exact. A path that is no longer what git wrote
	// there (its stamp, taken once its batch was written, changed) was
	// saved into since, by a person: it is left, not called converted.
	var regular []string
	want := map[string]plumbing.OID{}
	for _, c := range p.writes {
		if _, ok := ap.wrote[c.Path]; ok && (c.DstMode == "100644" || c.DstMode == "100755") {
			regular = append(regular, c.Path)
			want[c.Path] = c.Dst
		}
	}
	if len(regular) > 0 {
		raw, err := r.RawHashes(ctx, regular)
		if err == nil {
			for _, path := range regular {
				h, ok := raw[path]
				if !ok || h == want[path] {
					continue
				}
				if st, err := ap.w.lstatReal(path); err == nil && !stampOf(st).sameFile(ap.wrote[path]) {
					ap.leave(path, "saved after the rollback wrote it")
					continue
				}
				ap.converted = append(ap.converted, path)
			}
		}
	}
	if p.rel == "" {
		failpoint.Hit("rollback.written")
	} else {
		failpoint.Hit("rollback.sub-written")
	}
	if p.headMove {
		// The index as the rollback found it is what rollback.started
		// recorded and what its undo gives back: something staged since
		// (a person's git add while the files were written) would be
		// reset with nothing keeping it. Then the rollback goes back
		// instead (RFC 7.6), and the staging stays. What is staged in the
		// milliseconds between this look and the reset is not seen.
		if ap.indexTree != "" {
			now, err := r.IndexTree(ctx)
			if err != nil {
				return fmt.Errorf("reading the index again before moving HEAD: %w", err)
			}
			if now != ap.indexTree {
				return fmt.Errorf("the index changed while the rollback ran (something was staged since it began, tree %s, was %s): moving HEAD would reset it, and nothing would keep what was staged; run the rollback again once the staging is done", now, ap.indexTree)
			}
		}
		// Keep the user's index to put back if the move fails.
		cp, err := r.PrivateIndex("user-index")
		if err != nil {
			return err
		}
		if err := plumbing.CopyKeepMtime(r.RealIndex(), cp); err != nil {
			return fmt.Errorf("saving the index before moving HEAD: %w", err)
		}
		ap.indexCopy = cp
		if err := r.MoveHead(ctx, p.branch, p.headTo, p.headFrom, "venom rollback "+p.agent.ID+" to "+p.target.ID()); err != nil {
			return fmt.Errorf("moving HEAD: %w", err)
		}
		ap.headMoved = true
		if p.rel == "" {
			failpoint.Hit("rollback.head-moved")
		} else {
			failpoint.Hit("rollback.sub-head-moved")
		}
		// The index follows HEAD (RFC 7.5); in the undo of a rollback
		// that moved HEAD, it becomes what that rollback found.
		to := p.headTo
		if p.indexTree != "" {
			to = p.indexTree
		}
		if err := r.ResetIndex(ctx, to); err != nil {
			return err
		}
	}
	// Again before the backups can go: a gc that began while the
	// rollback ran may have pruned the safety checkpoint since the first
	// check. The backups still hold what the rollback replaced, and the
	// way back puts the tree back from them (fail, recover).
	return ap.safetyWhole(ctx)
}

// stillFree returns the judge of a check of rel (checkWriteStat,
// checkDeleteStat: whether rel may be written or deleted, what is in the
// way, what is there): true when nothing is in the way and rel is still
// what the baseline saw (stillAs); otherwise rel is left, saying why.
func (ap *applier) stillFree(rel string) func(free bool, inTheWay string, st os.FileInfo) bool {
	return func(free bool, inTheWay string, st os.FileInfo) bool {
		if !free {
			ap.leave(rel, "something is in the way: "+inTheWay)
			return false
		}
		if ok, detail := ap.stillAs(rel, st); !ok {
			ap.leave(rel, detail)
			return false
		}
		return true
	}
}

// deleteBatch moves away each of dels (paths S holds that the plan
// deletes), after checking it again (checkDelete, still), and then removes
// the parent directories that leaves empty, each tried once; done is how
// many deletions came before it, of total.
func (ap *applier) deleteBatch(dels []plumbing.TreeChange, done, total int) error {
	r := ap.plan.tree.Repo
	var moved []string
	defer func() { ap.w.pruneAll(moved) }()
	for i, c := range dels {
		r.Report("rollback.delete", done+i+1, total)
		if !ap.stillFree(c.Path)(ap.w.checkDeleteStat(c.Path)) {
			continue
		}
		ok, err := ap.moveAway(c.Path)
		if err != nil {
			return err
		}
		if ok {
			moved = append(moved, c.Path)
		}
	}
	return nil
}

// writeOneBatch writes one batch of the plan's writes: each path checked
// again and, where S holds a file, moved out of the way, then the lot
// given to checkout-index (without -f), then what git wrote recorded.
func (ap *applier) writeOneBatch(ctx context.Context, batch []plumbing.TreeChange, recorded []journal.PathPerm) error {
	p := ap.plan
	r := p.tree.Repo
	// The checks and the moves out of the way are one pass: no git child
	// runs among them (worktree.batch).
	var write []plumbing.TreeChange
	var perms permPlan
	var err error
	ap.w.batch(func() { write, perms, err = ap.clearBatch(batch, recorded) })
	if err != nil || len(write) == 0 {
		return err
	}
	ap.touched = true
	ap.pending = write
	refused, filterFailed, err := ap.checkout(ctx, write, perms)
	if err != nil {
		return err
	}
	ap.pending = nil
	gone := map[string]bool{}
	for _, path := range refused {
		gone[path] = true
		ap.leave(path, "saved while the rollback ran")
	}
	written := map[string]bool{}
	var paths []string
	var wrote []plumbing.TreeChange
	for _, c := range write {
		if !gone[c.Path] {
			written[c.Path] = true
			paths = append(paths, c.Path)
			wrote = append(wrote, c)
		}
	}
	// git has run: a new pass looks at the parents again, of what was
	// written (a path refused, below a file a person saved, was not).
	ap.w.batch(func() {
		if err = ap.parentsStillDirs(wrote); err != nil {
			return
		}
		_, seen := perms.only(written).applySeen(ap.w)
		for _, path := range paths {
			if st, err := lookAt(ap.w, path, seen); err == nil {
				ap.wrote[path] = stampOf(st)
			}
		}
	})
	if err != nil {
		return err
	}
	if filterFailed {
		// A smudge filter failed and git wrote the blob as it is (a
		// pointer, for LFS): those files are not what the checkpoint
		// meant, and the result must not say exact (CASES BR-36).
		if fp, err := r.FilterPaths(ctx, paths, false); err == nil {
			ap.converted = append(ap.converted, fp...)
		}
	}
	return nil
}

// clearBatch checks each path of batch again (checkWrite, still) and
// moves what S holds there out of the way (moveAway; a directory
// checkWrite let a write replace is cleared): write is what git may now
// be given, perms the bits those files and the directories they make end
// with.
func (ap *applier) clearBatch(batch []plumbing.TreeChange, recorded []journal.PathPerm) (write []plumbing.TreeChange, perms permPlan, err error) {
	// One lstat a path for the checks (checkWriteStat), and a last one
	// just before its move (moveAway).
	var ok []plumbing.TreeChange
	found := map[string]os.FileInfo{}
	for _, c := range batch {
		good, detail, st := ap.w.checkWriteStat(c, false)
		if !ap.stillFree(c.Path)(good, detail, st) {
			continue
		}
		ok = append(ok, c)
		found[c.Path] = st
	}
	perms = planPerms(ap.w, ok, recorded, ap.plan.tree.Config.ExecFromDisk, ap.made, found)
	for _, c := range ok {
		abs := filepath.Join(ap.w.root, filepath.FromSlash(c.Path))
		switch st := found[c.Path]; {
		case st == nil:
		case st.IsDir():
			if bad := ap.w.parentsNow(c.Path); bad != "" {
				ap.leave(c.Path, "something is in the way: "+bad)
				continue
			}
			if !clearDir(abs) {
				ap.leave(c.Path, "something was put there while the rollback ran")
				continue
			}
			ap.touched = true
		default:
			moved, err := ap.moveAway(c.Path)
			if err != nil {
				return nil, perms, err
			}
			if !moved {
				continue
			}
		}
		write = append(write, c)
	}
	return write, perms, nil
}

// checkout has git write the batch write where nothing is (the caller
// moved S's files away), and returns the paths where something was by
// then: git writes the files under a stage directory in the git dir's
// scratch directory (plumbing.CheckoutUnder), and each is then linked
// into the tree (place), so a file appears at its path whole or not at
// all. Written straight into the tree, a file exists, empty, from git's
// create to its write, and a person's save in between was mixed with
// git's bytes: the stress test saw one in 2,585 saves (issue 13 item 2).
// A git child left alive after venom died (where there is no
// parent-death signal) writes only in the stage. Where the stage is on
// another file system than the tree, git writes in the tree, as before.
func (ap *applier) checkout(ctx context.Context, write []plumbing.TreeChange, perms permPlan) (refused []string, filterFailed bool, err error) {
	r := ap.plan.tree.Repo
	if ap.direct {
		return r.Checkout(ctx, write)
	}
	d, err := r.TmpDir()
	if err != nil {
		return nil, false, err
	}
	stage, err := os.MkdirTemp(d, "stage-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(stage)
	if filterFailed, err = r.CheckoutUnder(ctx, write, stage); err != nil {
		return nil, false, err
	}
	refused, rest, err := ap.place(write, stage, perms)
	if err != nil || rest == nil {
		return refused, filterFailed, err
	}
	ap.direct = true
	more, ff, err := r.Checkout(ctx, rest)
	return append(refused, more...), filterFailed || ff, err
}

// place links each of write from stage, where git wrote it, into the
// tree at its path, making its missing parents as git does (never
// through a symbolic link); a symbolic link is made anew with the target
// git gave it. A file whose planned bits (perms) lack some of those git
// gave it loses them in the stage first, so that it never appears in the
// tree wider than it will end (a 0600 file rewritten is not 0644 there,
// even for the moment before perms are applied, nor after a kill in that
// moment); bits it must gain are added after, with its group
// (permPlan.apply). A path where something is by then is left as it is
// and returned in refused. When the stage cannot be linked from (EXDEV),
// rest is what is not placed yet.
func (ap *applier) place(write []plumbing.TreeChange, stage string, perms permPlan) (refused []string, rest []plumbing.TreeChange, err error) {
	ap.w.batch(func() { refused, rest, err = ap.placeAll(write, stage, perms) })
	return refused, rest, err
}

func (ap *applier) placeAll(write []plumbing.TreeChange, stage string, perms permPlan) (refused []string, rest []plumbing.TreeChange, err error) {
	for i, c := range write {
		src := filepath.Join(stage, filepath.FromSlash(c.Path))
		dst := filepath.Join(ap.w.root, filepath.FromSlash(c.Path))
		st, err := os.Lstat(src)
		if err != nil {
			return refused, nil, fmt.Errorf("git wrote no file for %s: %w", c.Path, err)
		}
		if po, ok := perms.files[c.Path]; ok && st.Mode().IsRegular() {
			// The stage is this process's own directory: nothing there
			// is a link a person made. Best effort, as apply is.
			if narrow := st.Mode().Perm() & po.mode.Perm(); narrow != st.Mode().Perm() {
				os.Chmod(src, narrow)
			}
		}
		if err := ap.w.mkParents(c.Path); err != nil {
			if ap.w.fileInTheWay(c.Path) {
				refused = append(refused, c.Path)
				continue
			}
			return refused, nil, fmt.Errorf("writing %s: %w", c.Path, err)
		}
		// The pass looked at the parents for an earlier path: a person
		// may have swapped one for a symlink since, and a link is made
		// through it.
		if touching != nil {
			touching("link", c.Path)
		}
		if bad := ap.w.parentsNow(c.Path); bad != "" {
			if ap.w.fileInTheWay(c.Path) {
				refused = append(refused, c.Path)
				continue
			}
			return refused, nil, fmt.Errorf("writing %s: %s is not a directory of the tree", c.Path, bad)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			var target string
			if target, err = os.Readlink(src); err == nil {
				err = os.Symlink(target, dst)
			}
		} else {
			err = os.Link(src, dst)
		}
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrExist):
			refused = append(refused, c.Path)
		case errors.Is(err, syscall.EXDEV):
			return refused, write[i:], nil
		default:
			return refused, nil, fmt.Errorf("writing %s: %w", c.Path, err)
		}
	}
	return refused, nil, nil
}

// rescue implements issue 13 item 2 (b), before the backups are
// removed: each backup still there is compared with what the baseline
// saw, which was S's (checkpoint.SavesAmong); a save found there (made
// into the file the rollback moved away, by a program that held it open,
// or just before the move) is kept under refs/venom/rescued/
// (checkpoint.KeepSaves). What cannot be stored keeps the backup
// directory, and is named by its file. The directories moved whole are
// removed from the backup, or go back, later, after the end is logged
// (settleMovedDirs), as the other backups are (cleanup).
func (ap *applier) rescue(ctx context.Context) {
	// A file a rename moved into the backup where a directory was
	// checked (movedAmiss) is in foreign alone.
	if len(ap.backups) == 0 && len(ap.movedDirs) == 0 && len(ap.foreign) == 0 {
		return
	}
	p := ap.plan
	ap.heldCopies()
	var moved []checkpoint.Moved
	for path, b := range ap.backups {
		// A copy holds no save, unless heldCopies put one there.
		moved = append(moved, ap.moved(path, b.file, b.copied && !b.saved))
	}
	ap.judged = make(checkpoint.Seen, len(moved))
	saves := p.tree.SavesAmong(ctx, moved, ap.judged)
	ap.judgedMoved = moved
	// What a person put into a directory moved whole, and could not go
	// back to the tree, is a save too: looked at before KeepSaves reads
	// it, so that what is written into it after is not removed with it.
	for _, md := range ap.movedDirs {
		ap.strangers(md)
	}
	for _, f := range ap.foreign {
		ap.judged.Look(f.File)
	}
	saves = append(saves, ap.foreign...)
	if len(saves) == 0 {
		return
	}
	var stored bool
	ap.rescued, stored = p.tree.KeepSaves(ctx, p.agent.ID, p.target.ID(), p.res.Safety, ap.safety, saves)
	for i := range ap.rescued {
		ap.rescued[i].Repo = p.rel
	}
	if !stored {
		ap.keep = true
		return
	}
	// Stored: the backup of each may go with its directory, or by name
	// (cleanup), while it is as it was when stored.
	ap.judgedMoved = append(ap.judgedMoved, ap.foreign...)
	for _, f := range ap.foreign {
		for _, md := range ap.movedDirs {
			if strings.HasPrefix(f.Path, md.rel+"/") {
				md.planned[f.Path] = true
			}
		}
	}
	ap.foreign = nil
}

// cleanup removes the backups (unless a save among them could not be
// stored) and the copy of the user's index, once. It removes the backup
// directory by name (checkpoint.RemoveNamed), as the sweeps after a kill
// do: only what the rescue judged, and only while it is as judged. A
// backup written into since (a program that holds the file open, saving
// in the few milliseconds between the rescue and this) keeps the backup
// directory, manifest and all, and is returned, named by its file, as
// rescued[] (git venom-doctor's checkpoints.backups names the directory
// too). A file the rescue never judged stays as well, and keeps the
// directory for the next command's sweep (checkpoint.DropEndedBackups).
func (ap *applier) cleanup() (late []Rescued) {
	if ap.cleaned {
		return nil
	}
	ap.cleaned = true
	for rel, b := range ap.backups {
		if rs := ap.releaseHeld(rel, b); rs != nil {
			late = append(late, *rs)
		}
	}
	if ap.manifest != nil {
		ap.manifest.Close()
		ap.manifest = nil
	}
	// The backups may hold the only copy of what the rollback replaced
	// once the safety checkpoint is not whole (a `git gc --prune=now`
	// that began before its ref existed prunes what the ref reaches, even
	// after the last check of the writes): then they all stay, named.
	if ap.backupDir != "" && !ap.keep && holdsFiles(ap.backupDir, true) {
		ap.keepUnlessWhole()
	}
	if ap.backupDir != "" && !ap.keep && ap.dropMovedDirs() && !checkpoint.RemoveNamed(ap.backupDir, ap.judgedMoved, nil, ap.judged) {
		for _, m := range ap.judgedMoved {
			if _, err := os.Lstat(m.File); err == nil && !m.Dir {
				late = append(late, Rescued{Repo: ap.plan.rel, Path: m.Path, File: m.File})
			}
		}
	}
	sort.Slice(late, func(i, j int) bool { return late[i].Path < late[j].Path })
	if ap.indexCopy != "" {
		plumbing.RemovePrivateIndex(ap.indexCopy)
	}
	return late
}

// keepUnlessWhole checks the safety checkpoint whole once more, on a
// context of its own, before what the rollback replaced is removed from
// its backup: when it is not (a gc pruned it after the last check), the
// backup directory is kept whole (keep) and named (keptBackup).
func (ap *applier) keepUnlessWhole() {
	c, cancel := ownContext(context.Background(), ap.began)
	defer cancel()
	if err := ap.safetyWhole(c); err != nil {
		ap.keep, ap.keptBackup = true, ap.backupDir
	}
}

// holdsFiles reports whether the directory dir holds anything but
// directories (and, at its top when manifest is set, as for a backup
// directory, its manifest): what the rollback replaced, or a person's
// file, that removing it would take.
func holdsFiles(dir string, manifest bool) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			found = found || p != dir // what cannot be read is kept
		case e.IsDir():
			return nil
		case manifest && filepath.Dir(p) == dir && e.Name() == checkpoint.ManifestFile:
			return nil
		default:
			found = true
		}
		if found {
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// safetyWhole checks that the safety checkpoint is whole
// (checkpoint.SafetyWhole: its commit, its tree, and S's blobs HEAD's tree
// does not hold), listing what to check once and checking the same list
// again later. Until a check passes, git reads each object's header (an
// empty object file a crash left is not whole); after, it asks only that
// each is still there, which is what a gc changes. The error says which
// objects are missing.
func (ap *applier) safetyWhole(ctx context.Context) error {
	objs, missing, err := ap.plan.tree.SafetyWhole(ctx, ap.safety, ap.indexTree, ap.safetyObjs, !ap.wholeRead)
	if err != nil || len(missing) > 0 {
		ap.missing, ap.partial = missing, objs == nil
		return notWhole(ap.plan.res.Safety, missing, err)
	}
	ap.safetyObjs, ap.missing, ap.partial, ap.wholeRead = objs, nil, false, true
	return nil
}

// blobsFromDisk writes back the blobs the first check found the safety
// checkpoint without, where the files of S that hold them are still as S
// had them (plumbing.BlobsFromDisk), and returns how many. It runs only
// before the first write: S is then what is on disk. A blob missing
// there was most often missing from the checkpoint S reused or was made
// from (the latest, RFC 5.1: a `git gc --prune=now` beside that capture
// deleted it as the capture wrote it), and every rollback would fail on
// it while the file that holds it is right there; written back, that
// checkpoint is whole again too. What cannot be written back (a tree, the
// commit, a file changed since) still fails the rollback.
func (ap *applier) blobsFromDisk(ctx context.Context) int {
	if len(ap.missing) == 0 || ctx.Err() != nil {
		return 0
	}
	back, err := ap.plan.tree.Repo.BlobsFromDisk(ctx, plumbing.OID(ap.safety.Tree), ap.missing)
	if err != nil {
		return 0
	}
	return len(back)
}

// treesFromDisk captures S again without what the last capture kept
// (plumbing.Repo.ForgetKeptStage) when the first check found the safety
// checkpoint still not whole after blobsFromDisk, and reports whether
// that capture was made. Trees are made from their entries (the same
// files, the same objects): it wrote again every tree of S along a path
// that differs from HEAD's tree and is still as S had it, and the blob
// of every file the user's index does not hold as it is. A tree missing
// there was one the latest checkpoint's capture memoized, with a subtree
// a `git gc --prune=now` beside it deleted, which S reused unread. The
// caller checks S whole again: that check, not this capture, is what
// lets the rollback go on (a file saved since S elsewhere in the tree
// does not stop it; one below the missing tree does). It runs only
// before the first write, and costs a capture.
func (ap *applier) treesFromDisk(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	t := ap.plan.tree
	t.Repo.ForgetKeptStage(fmt.Sprintf("the safety checkpoint %s is not whole (%d object(s) named missing)", ap.plan.res.Safety, len(ap.missing)))
	_, err := t.CurrentTree(ctx)
	return err == nil
}

// notWhole is safetyWhole's error: missing objects (a few named), or the
// failure to read them.
func notWhole(id string, missing []plumbing.OID, err error) error {
	if err != nil {
		return fmt.Errorf("the safety checkpoint %s could not be read whole: %w", id, err)
	}
	var names []string
	for _, o := range missing {
		names = append(names, string(o))
	}
	return fmt.Errorf("the safety checkpoint %s lost %d object(s) (%s)", id, len(missing), firstFew(names, 3, ", "))
}

// firstFew joins the first n of items with sep, and says how many more
// there are: an error names a few paths, not thousands (issue 13 item
// 11).
func firstFew(items []string, n int, sep string) string {
	if len(items) <= n {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:n], sep) + fmt.Sprintf("%sand %d more", sep, len(items)-n)
}

// appliers are a rollback's appliers, one per repository in repos order
// (the top first, then its submodules: issue 18). Every repository is
// written the same way, by its own applier.
type appliers []*applier

// fail ends a rollback that failed, or was interrupted (its context
// ended: Ctrl-C, SIGTERM, a hang-up), after rollback.started, while
// aps[failed] ran its steps (or, failed the last, after all of them):
// RFC 7.6's way back (recover) in every repository touched, aps[failed]
// and those before it, last first, logged in rollback.ended, and the
// error that says where the tree is. It is failed.rollback_undone when
// each went back; otherwise failed.rollback_partial, whose data.repos
// says which repository is in which state ("as before" for each that
// went back or was never touched, "mixed" with the reason for each that
// did not). The way back runs to its end on a context of its own
// (ownContext): run on the cancelled one, every git it starts would fail
// at once, and a tree back at S would be called mixed (issue 13 item 7).
func (aps appliers) fail(ctx context.Context, ended journal.RollbackEnded, failed int, cause error) error {
	top := aps[0].plan
	t, res := top.tree, &top.res
	what := "failed"
	if ctx.Err() != nil {
		what = "was interrupted"
		cause = fmt.Errorf("interrupted (%v)", context.Cause(ctx))
	}
	uctx, cancel := ownContext(ctx, aps[0].began)
	defer cancel()
	type outcome struct {
		code string
		data map[string]any
	}
	outs := make([]outcome, len(aps))
	for i := failed; i >= 0; i-- {
		why := cause
		if i != failed {
			why = fmt.Errorf("%s failed: %w", aps[failed].plan.what(), cause)
		}
		code, data := aps[i].recover(uctx, why)
		outs[i] = outcome{code, data}
	}
	for _, ap := range aps[failed+1:] {
		ap.cleanup()
	}
	code, data := "failed.rollback_undone", outs[failed].data
	var repos []map[string]any
	var kept []string
	for i, ap := range aps {
		if i <= failed && outs[i].code == "failed.rollback_partial" {
			code = "failed.rollback_partial"
			if rs, ok := outs[i].data["repos"].([]map[string]any); ok {
				repos = append(repos, rs...)
				continue
			}
		}
		repos = append(repos, map[string]any{"repo": ap.plan.repoName(), "state": "as before"})
		if i <= failed {
			if ks, ok := outs[i].data["kept"].([]string); ok {
				for _, k := range ks {
					kept = append(kept, ap.plan.prefix()+k)
				}
			}
		}
	}
	if code == "failed.rollback_partial" {
		data = map[string]any{"repos": repos}
	} else if len(kept) > 0 {
		data["kept"] = kept
	}
	ended.Code = code
	ended.Rescued = aps.rescuedRef()
	var err error = cause
	if _, lerr := t.Log.Append(journal.Entry{Type: journal.TypeRollbackEnded, Body: ended}); lerr != nil {
		err = multierror.Append(err, lerr)
	}
	data["safety"] = res.Safety
	msg := "the rollback " + what + " and was undone: the tree is as it was before"
	if len(kept) > 0 {
		// Someone saved meanwhile, and the way back kept it (issue 13
		// item 7: the result says the true state).
		msg += fmt.Sprintf(", but for %d path(s) saved while it ran, kept as saved (kept)", len(kept))
	}
	if code == "failed.rollback_partial" {
		msg = "the rollback " + what + " and could not be fully undone"
	}
	e := rfcerr.Wrap(code, err, data, "%s", msg).
		WithHint("%s", aps.undoHint(top.agent.ID, res.Safety))
	return aps.withKept(e, data, res.Safety)
}

// undoHint is checkpoint.UndoHint, unless a repository's backup was kept
// because the safety checkpoint lost objects: then it does not hold the
// tree as it was, and the hint says what going back to it can do.
func (aps appliers) undoHint(agent, safety string) string {
	for _, ap := range aps {
		if ap.keptBackup != "" {
			return "the safety checkpoint " + safety + " lost objects, so going back to it may not give back everything (what the rollback replaced is kept, as said below); to go back as far as it can, run `" +
				checkpoint.UndoCommand(agent, safety, "") + "`"
		}
	}
	return checkpoint.UndoHint(agent, safety)
}

// withKept adds to the error e of a rollback that did not end as planned
// (data is its data) what it kept: each save, in data's rescued and a
// hint with the command that shows it, and each backup directory kept
// whole because the safety checkpoint (safety) lost objects, in a hint.
func (aps appliers) withKept(e *rfcerr.Error, data map[string]any, safety string) *rfcerr.Error {
	for _, ap := range aps {
		if ap.keptBackup != "" {
			e = e.WithHint("the safety checkpoint %s lost objects (a git gc --prune=now beside the rollback?); what the rollback had replaced in %s is kept in %s", safety, ap.plan.repoName(), ap.keptBackup)
		}
	}
	if rescued := aps.rescued(); len(rescued) > 0 {
		data["rescued"] = rescued
		for _, rs := range rescued {
			if rs.Ref != "" {
				e = e.WithHint("a save made while the rollback ran is kept: %s", checkpoint.ShowRescued(rs))
			} else {
				e = e.WithHint("a save made while the rollback ran is kept in %s (it was %s)", rs.File, rs.Path)
			}
		}
	}
	return e
}

// cleanup is applier.cleanup of each.
func (aps appliers) cleanup() {
	for _, ap := range aps {
		ap.cleanup()
	}
}

// rescued is every repository's rescued[], in repos order.
func (aps appliers) rescued() []Rescued {
	var out []Rescued
	for _, ap := range aps {
		out = append(out, ap.rescued...)
	}
	return out
}

// rescuedRef is rollback.ended's rescued: the first ref a save was kept
// under, in repos order (a submodule's is in that submodule), or "".
func (aps appliers) rescuedRef() string {
	for _, rs := range aps.rescued() {
		if rs.Ref != "" {
			return rs.Ref
		}
	}
	return ""
}

// ownContext is a context for the steps that must run to their end once
// the writes began: the way back after a failure or an interruption, and
// the reads that judge what was done. It does not end with ctx, but is
// bounded: two minutes, plus four times as long as the rollback has run
// since began (a way back costs about what the way there did), so a git
// that hangs (a smudge filter waiting on the network) cannot hold the
// tree's locks for ever.
func ownContext(ctx context.Context, began time.Time) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute+4*time.Since(began))
}

// recover implements RFC 7.6 after a failure: it undoes what the rollback
// did, and only that. A path holding what git wrote gets back what was
// moved away from it, from its backup (or S's entry from the safety
// checkpoint, where none was moved), or is removed where S had nothing;
// a path the rollback deleted gets its backup back; HEAD and the index
// go back. A path someone else wrote meanwhile is kept as it is, and so
// is anything outside the plan. Then the planned paths must match S's
// capture again, except those kept: failed.rollback_undone when they do,
// else failed.rollback_partial, whose reason says what was not put back.
// Nothing is ever put back through a parent that is no longer a
// directory of the tree.
func (ap *applier) recover(ctx context.Context, cause error) (string, map[string]any) {
	p := ap.plan
	r := p.tree.Repo
	defer ap.cleanup()
	var errs *multierror.Error
	kept := map[string]bool{}
	for _, l := range ap.left {
		kept[l.Path] = true
	}
	// What the rollback itself changed: only those paths are its to put
	// back, and to be judged by. A planned path it never came to that
	// differs from S now was changed by someone else meanwhile, and is
	// kept as it is. The batch git was writing when it failed counts
	// whole: a path of it that is not the target's entry may be git's
	// write cut short (a full disk) as well as someone's save.
	touched := map[string]bool{}
	for _, c := range ap.pending {
		touched[c.Path] = true
	}
	// What git wrote, and still holds what it wrote: the batch in flight
	// when git failed included, and a save made into a written path
	// before its batch ended excluded.
	for _, path := range ap.claimOurs(ctx) {
		kept[path] = true
	}
	for path := range ap.backups {
		touched[path] = true
	}
	for path := range ap.wrote {
		touched[path] = true
	}
	// A save through a file held open behind a copy goes back with it.
	ap.heldCopies()
	root := p.tree.Path()
	var fromS []plumbing.TreeChange
	for _, c := range p.writes {
		rel := c.Path
		b := ap.backups[rel]
		ours, wrote := ap.wrote[rel]
		if b == nil && !wrote {
			continue // not touched
		}
		if bad, err := ap.w.parents(rel, false); bad != "" || err != nil {
			errs = multierror.Append(errs, fmt.Errorf("not putting back %s: %s is not a directory of the tree", rel, bad))
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Lstat(abs)
		present := err == nil
		if present && (!wrote || !stampOf(st).sameFile(ours)) {
			// Someone wrote here after the rollback cleared it.
			kept[rel] = true
			continue
		}
		switch {
		case b != nil:
			var still func() bool
			if present {
				still = func() bool {
					now, err := os.Lstat(abs)
					return err == nil && stampOf(now).sameFile(ours)
				}
			}
			if err := putBack(b, abs, still); errors.Is(err, errTaken) {
				kept[rel] = true
				continue
			} else if err != nil {
				errs = multierror.Append(errs, fmt.Errorf("putting back %s: %w", rel, err))
				continue
			}
			ap.heldAfterPutBack(rel, b)
			delete(ap.backups, rel)
		case c.SrcMode == "000000":
			if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = multierror.Append(errs, fmt.Errorf("removing %s: %w", rel, err))
				continue
			}
			ap.w.pruneParents(rel)
		default:
			// S's entry without a backup (moved away by no one: the
			// write replaced an empty directory, or nothing).
			if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = multierror.Append(errs, fmt.Errorf("removing %s: %w", rel, err))
				continue
			}
			fromS = append(fromS, plumbing.TreeChange{SrcMode: c.DstMode, Src: c.Dst, DstMode: c.SrcMode, Dst: c.Src, Path: rel})
		}
	}
	// The deletions, deepest last: a parent comes back before its files.
	deletes := append([]plumbing.TreeChange(nil), p.deletes...)
	byDepth(deletes)
	perms := planPerms(ap.w, nil, dirsOnly(ap.own), p.tree.Config.ExecFromDisk, ap.made, nil)
	for i := len(deletes) - 1; i >= 0; i-- {
		rel := deletes[i].Path
		b := ap.backups[rel]
		if b == nil {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if err := ap.w.mkParents(rel); err != nil {
			errs = multierror.Append(errs, fmt.Errorf("not putting back %s: %w", rel, err))
			continue
		}
		if _, err := os.Lstat(abs); err == nil {
			kept[rel] = true // recreated meanwhile
			continue
		}
		if err := putBack(b, abs, nil); errors.Is(err, errTaken) {
			kept[rel] = true // recreated meanwhile
			continue
		} else if err != nil {
			errs = multierror.Append(errs, fmt.Errorf("putting back %s: %w", rel, err))
			continue
		}
		ap.heldAfterPutBack(rel, b)
		delete(ap.backups, rel)
	}
	perms.apply(ap.w)
	if ap.headMoved {
		if err := r.MoveHead(ctx, p.branch, p.headFrom, p.headTo, "venom rollback undone"); err != nil {
			errs = multierror.Append(errs, err)
		}
	}
	if ap.indexCopy != "" {
		if err := os.Rename(ap.indexCopy, r.RealIndex()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = multierror.Append(errs, fmt.Errorf("putting back the index: %w", err))
		}
	}
	if len(fromS) > 0 {
		sp := planPerms(ap.w, fromS, ap.own, p.tree.Config.ExecFromDisk, ap.made, nil)
		refused, _, err := r.Checkout(ctx, fromS)
		if err != nil {
			errs = multierror.Append(errs, fmt.Errorf("writing back S's files: %w", err))
		}
		for _, path := range refused {
			kept[path] = true
		}
		sp.apply(ap.w)
	}
	// A save into a file the rollback had moved away, and that is not
	// going back (its path holds another save now), is kept; so is one
	// made into a backup after that (cleanup).
	ap.rescue(ctx)
	ap.settleMovedDirs()
	ap.rescued = append(ap.rescued, ap.cleanup()...)
	state, reason := "as before", ""
	if errs.ErrorOrNil() != nil {
		state, reason = "mixed", firstFew(errStrings(errs), 5, "; ")
	} else if ap.touched || ap.headMoved {
		// The planned paths must match S again, but for those someone
		// else wrote meanwhile. HEAD is ours to judge only when we moved
		// it: if the compare-and-swap failed, another process moved the
		// branch, and that commit is theirs, not a half-undone rollback.
		snap, err := p.tree.CurrentTree(ctx)
		switch {
		case err != nil:
			state, reason = "mixed", "capturing the tree again: "+err.Error()
		case ap.headMoved && snap.Head != p.snap.Head:
			state, reason = "mixed", "HEAD did not go back"
		case snap.Tree != p.snap.Tree:
			diff, err := r.DiffTrees(ctx, string(snap.Tree), string(p.snap.Tree))
			if err != nil {
				state, reason = "mixed", "comparing with S: "+err.Error()
				break
			}
			planned := map[string]bool{}
			for _, c := range p.changes() {
				planned[c.Path] = true
			}
			var off []string
			for _, c := range diff {
				switch {
				case !planned[c.Path] || kept[c.Path]:
				case !touched[c.Path]:
					kept[c.Path] = true
				default:
					off = append(off, c.Path)
				}
			}
			if len(off) > 0 {
				state, reason = "mixed", "not as before: "+firstFew(off, 10, ", ")
			}
		}
	}
	data := map[string]any{"repo": p.repoName(), "reason": cause.Error()}
	var ks []string
	for k := range kept {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) > 0 {
		data["kept"] = ks
	}
	if ap.keptBackup != "" {
		data["backup"] = ap.keptBackup
	}
	if state != "as before" {
		rs := map[string]any{"repo": p.repoName(), "state": state, "reason": cause.Error() + "; undoing it: " + reason}
		if len(ks) > 0 {
			rs["kept"] = ks // saved meanwhile, kept as saved
		}
		if ap.keptBackup != "" {
			rs["backup"] = ap.keptBackup
		}
		data = map[string]any{"repos": []map[string]any{rs}}
		return "failed.rollback_partial", data
	}
	return "failed.rollback_undone", data
}

// claimOurs makes wrote what the way back may undo: the paths git wrote
// that still hold what git wrote there, the target's entry (through the
// path's filters, or as the blob is, where a smudge filter failed and git
// wrote it so; a symlink's target). That takes the batch that was being
// written when git failed (pending), whose paths have no stamp, and it
// checks the bytes of every path that has one: a stamp is taken once its
// whole batch is written, so a person's save made into a path after git
// wrote it but before the batch ended (in place, by a rename over it, or
// into a file git created) has its stamp, and would be put back over. A
// path that is not the target's entry now is someone else's, and is kept
// (issue 13 item 2, found with a Ctrl-C during a 15,000-path rollback and
// an editor saving). One that cannot be read is kept too: keeping what
// git wrote loses nothing (it is the target's), undoing a save would.
// It returns the paths that had a stamp and are not ours: the way back
// keeps them, and says so.
func (ap *applier) claimOurs(ctx context.Context) (theirs []string) {
	r := ap.plan.tree.Repo
	pending := map[string]bool{}
	for _, c := range ap.pending {
		pending[c.Path] = true
	}
	ap.pending = nil
	var cands []plumbing.TreeChange
	for _, c := range ap.plan.writes {
		if _, ok := ap.wrote[c.Path]; ok || pending[c.Path] {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	var files []string
	var links []plumbing.OID
	st := map[string]stamp{}
	for _, c := range cands {
		s, err := ap.w.lstatReal(c.Path)
		if err != nil {
			continue
		}
		now := stampOf(s)
		if was, ok := ap.wrote[c.Path]; ok && !was.sameFile(now) {
			continue // written again since its batch ended
		}
		st[c.Path] = now
		switch {
		case c.DstMode == "120000" && s.Mode()&fs.ModeSymlink != 0:
			links = append(links, c.Dst)
		case c.DstMode != "120000" && s.Mode().IsRegular():
			files = append(files, c.Path)
		}
	}
	clean := ap.hashes(ctx, files, r.CleanHashes)
	var unclean []string
	for _, c := range cands {
		if _, ok := st[c.Path]; ok && c.DstMode != "120000" && clean[c.Path] != c.Dst {
			unclean = append(unclean, c.Path)
		}
	}
	raw := ap.hashes(ctx, unclean, r.RawHashes)
	targets, _ := r.ReadBlobs(ctx, links)
	ours := map[string]stamp{}
	for _, c := range cands {
		s, ok := st[c.Path]
		if !ok {
			continue
		}
		if c.DstMode == "120000" {
			t, err := os.Readlink(filepath.Join(ap.w.root, filepath.FromSlash(c.Path)))
			if err == nil && targets != nil && t == string(targets[c.Dst]) {
				ours[c.Path] = s
			}
			continue
		}
		if clean[c.Path] == c.Dst || raw[c.Path] == c.Dst {
			ours[c.Path] = s
		}
	}
	for path := range ap.wrote {
		if _, ok := ours[path]; !ok {
			delete(ap.wrote, path)
			if _, err := ap.w.lstatReal(path); err == nil {
				theirs = append(theirs, path)
			}
		}
	}
	for path, s := range ours {
		ap.wrote[path] = s
	}
	return theirs
}

// hashes is hash's answer for paths, asking again one path at a time when
// the whole list fails (one path removed meanwhile fails hash-object), so
// that one path does not take the others' answers with it. A path with
// no answer is missing from the map.
func (ap *applier) hashes(ctx context.Context, paths []string, hash func(context.Context, []string) (map[string]plumbing.OID, error)) map[string]plumbing.OID {
	if len(paths) == 0 {
		return nil
	}
	if m, err := hash(ctx, paths); err == nil {
		return m
	}
	out := map[string]plumbing.OID{}
	for _, p := range paths {
		if m, err := hash(ctx, []string{p}); err == nil {
			if h, ok := m[p]; ok {
				out[p] = h
			}
		}
	}
	return out
}

// parentsStillDirs checks, after git wrote writes, that each one's parents
// are still directories of the tree, as they were checked to be before.
// One that is not (a symlink now) was swapped while git wrote, by a smudge
// filter or another process, and git may have written through it, outside
// the tree: venom cannot take that back, and must not touch anything
// there, but it does not call the rollback done. The error names the
// paths; the rollback then goes back to S where it safely can (RFC 7.6).
func (ap *applier) parentsStillDirs(writes []plumbing.TreeChange) error {
	var through []string
	ap.w.batch(func() {
		for _, c := range writes {
			if bad, err := ap.w.parents(c.Path, false); bad != "" || err != nil {
				through = append(through, fmt.Sprintf("%s (%s is no longer a directory)", c.Path, bad))
			}
		}
	})
	if len(through) > 0 {
		return fmt.Errorf("a parent directory was replaced while git wrote, so git may have written outside the tree: %s", strings.Join(through, ", "))
	}
	return nil
}

// errStrings is each error of errs as text.
func errStrings(errs *multierror.Error) []string {
	var out []string
	for _, e := range errs.WrappedErrors() {
		out = append(out, e.Error())
	}
	return out
}
