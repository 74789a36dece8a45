package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// Directories of deletions moved whole (rollback/dirmove.go, issue 16):
// the tests below arm moveDir's test hook ("movedir" between a
// directory's checks and its rename, "moved" once its content was read
// again after it), so they are not parallel.

// genTree makes f's tree one whose rollback to k1 deletes 50 files the
// turn created under gen/ (gen/a/f00.txt..f24.txt, gen/b/f25.txt..f49.txt),
// and 40 under mixed/, which also holds an ignored file the rollback
// must keep (so mixed/ cannot go whole). It returns gen's files.
func genTree(t *testing.T, f *fixture) []string {
	t.Helper()
	r := f.r
	r.Write(".gitignore", "*.log\n")
	r.Write("base.txt", "base\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	var gen []string
	for i := 0; i < 50; i++ {
		p := fmt.Sprintf("gen/%c/f%02d.txt", 'a'+i/25, i)
		gen = append(gen, p)
		r.Write(p, fmt.Sprintf("generated %d\n", i))
	}
	for i := 0; i < 40; i++ {
		r.Write(fmt.Sprintf("mixed/m%02d.txt", i), fmt.Sprintf("mixed %d\n", i))
	}
	r.Write("mixed/keep.log", "ignored, kept\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	return gen
}

// hook arms the test hook with f for the test's length.
func hook(t *testing.T, f func(op, rel string)) {
	rollback.SetTouching(f)
	t.Cleanup(func() { rollback.SetTouching(nil) })
}

// leftPaths is res's left, as "path reason" lines, sorted.
func leftPaths(res *rollback.Result) []string {
	var out []string
	for _, rp := range res.Repos {
		for _, l := range rp.Left {
			out = append(out, l.Path+" "+l.Reason)
		}
	}
	sort.Strings(out)
	return out
}

// noBackups fails the test if a backup directory is left in r's git dir.
func noBackups(t *testing.T, f *fixture) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(f.r.GitDir, "venom", "tmp", "backup-*")); len(left) != 0 {
		t.Errorf("backup directories left: %v", left)
	}
}

// nextRescues runs the command after a killed rollback (a plan with
// args, in r, env added), which must close it as interrupted, once, and
// name a rescued ref in rollback.ended; it returns the command and the
// ref.
func nextRescues(t *testing.T, r *gittest.Repo, env []string, args ...string) (procResult, string) {
	t.Helper()
	next := runBin(t, r.Dir, "git-venom-plan", env, args...)
	ended := records(t, r, "rollback.ended")
	if len(ended) != 1 || ended[0]["code"] != "failed.rollback_interrupted" {
		t.Fatalf("rollback.ended after the kill: %v\n%s", ended, next.stderr)
	}
	ref, _ := ended[0]["rescued"].(string)
	if ref == "" {
		t.Fatalf("rollback.ended names no rescued ref: %v\n%s", ended, next.stderr)
	}
	return next, ref
}

// movedGen is where the rollback moved gen/ (the directory of the backup
// that holds a/f00.txt), found while it runs.
func movedGen(t *testing.T, f *fixture) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(f.r.GitDir, "venom", "tmp", "backup-*", "*", "a", "f00.txt"))
	if len(m) != 1 {
		t.Fatalf("gen/ is not in the backup: %v", m)
	}
	return filepath.Dir(filepath.Dir(m[0]))
}

// TestDirOfDeletionsMovesInOneRename: a directory that holds nothing but
// planned deletions goes into the backup in one rename, none of its
// files one by one; one that also holds an ignored file goes file by
// file, and the ignored file stays. The result is exact and the backup
// is gone. (The old code moved each of the 90 files.)
func TestDirOfDeletionsMovesInOneRename(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	genTree(t, f)
	var dirs, files []string
	hook(t, func(op, rel string) {
		switch op {
		case "movedir":
			dirs = append(dirs, rel)
		case "move":
			files = append(files, rel)
		}
	})
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if strings.Join(dirs, ",") != "gen" {
		t.Errorf("directories moved whole: %v, want [gen]", dirs)
	}
	if len(files) != 40 || !strings.HasPrefix(files[0], "mixed/") {
		t.Errorf("files moved one by one: %d %v, want the 40 of mixed/", len(files), files)
	}
	if _, err := os.Lstat(r.Path("gen")); err == nil {
		t.Errorf("gen/ is still there")
	}
	if got := r.Read("mixed/keep.log"); got != "ignored, kept\n" {
		t.Errorf("mixed/keep.log is %q", got)
	}
	if m, _ := filepath.Glob(r.Path("mixed/*.txt")); len(m) != 0 {
		t.Errorf("mixed/ files left: %v", m)
	}
	if res.Exact == nil || !*res.Exact {
		t.Errorf("exact is %v, left %v", res.Exact, leftPaths(res))
	}
	noBackups(t, f)
}

// TestPersonsFileInADirMovedWholeIsPutBack: a person saves a new file
// into the directory the rollback is about to move whole, and another
// into a new directory below it, between its checks and its rename. Both
// come back into the tree at their paths (never removed with the
// backup), are left (changed_during_rollback), and exact is false; the
// planned files are gone.
func TestPersonsFileInADirMovedWholeIsPutBack(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	gen := genTree(t, f)
	hook(t, func(op, rel string) {
		if op == "movedir" && rel == "gen" {
			r.Write("gen/a/person.txt", "saved by a person\n")
			r.Write("gen/new/p2.txt", "saved by a person in a new folder\n")
		}
	})
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read("gen/a/person.txt"); got != "saved by a person\n" {
		t.Errorf("gen/a/person.txt is %q after the rollback: the save was lost", got)
	}
	if got := r.Read("gen/new/p2.txt"); got != "saved by a person in a new folder\n" {
		t.Errorf("gen/new/p2.txt is %q after the rollback: the save was lost", got)
	}
	for _, p := range gen {
		if _, err := os.Lstat(r.Path(p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	want := "gen/a/person.txt changed_during_rollback,gen/new/p2.txt changed_during_rollback"
	if got := strings.Join(leftPaths(res), ","); got != want {
		t.Errorf("left %s, want %s", got, want)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with a person's files put back", res.Exact)
	}
	noBackups(t, f)
}

// TestSaveIntoADirsFileBeforeItsRenameStays: a person saves into one of
// the planned files of the directory (in place) between its checks and
// its rename: the save is put back at its path and left, as a file saved
// before its own move is.
func TestSaveIntoADirsFileBeforeItsRenameStays(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	genTree(t, f)
	hook(t, func(op, rel string) {
		if op == "movedir" && rel == "gen" {
			fh, err := os.OpenFile(r.Path("gen/b/f30.txt"), os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Errorf("saving: %v", err)
				return
			}
			fh.WriteString("saved in place\n")
			fh.Close()
		}
	})
	res := f.mustRollback("k1", rollback.Options{Restore: "files"})
	if got := r.Read("gen/b/f30.txt"); got != "saved in place\n" {
		t.Errorf("gen/b/f30.txt is %q after the rollback: the save was lost", got)
	}
	if got := strings.Join(leftPaths(res), ","); got != "gen/b/f30.txt changed_during_rollback" {
		t.Errorf("left %s, want gen/b/f30.txt", got)
	}
	if _, err := os.Lstat(r.Path("gen/b/f31.txt")); err == nil {
		t.Errorf("gen/b/f31.txt is still there")
	}
	noBackups(t, f)
}

// TestFileMadeInAMovedDirAfterItsMoveIsKept: a program whose working
// directory was gen/ makes a file in it after the rollback moved it and
// read it again (so in the backup). The rescue's look finds it: it goes
// back to the tree where its path is free, and where the person has made
// that path again meanwhile, it is kept under refs/venom/rescued/ (named
// in rescued[]) and the person's new file stays. Never removed with the
// backup.
func TestFileMadeInAMovedDirAfterItsMoveIsKept(t *testing.T) {
	for _, taken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", taken), func(t *testing.T) {
			f := newFixture(t, false)
			r := f.r
			genTree(t, f)
			hook(t, func(op, rel string) {
				if op != "moved" || rel != "gen" {
					return
				}
				if err := os.WriteFile(filepath.Join(movedGen(t, f), "late.txt"), []byte("made in the moved folder\n"), 0o644); err != nil {
					t.Errorf("writing into the moved folder: %v", err)
				}
				if taken {
					r.Write("gen/late.txt", "the person's new file\n")
				}
			})
			res := f.mustRollback("k1", rollback.Options{Restore: "files"})
			if !taken {
				if got := r.Read("gen/late.txt"); got != "made in the moved folder\n" {
					t.Errorf("gen/late.txt is %q: the file made in the moved folder is lost", got)
				}
				if got := strings.Join(leftPaths(res), ","); got != "gen/late.txt changed_during_rollback" {
					t.Errorf("left %s, want gen/late.txt", got)
				}
				noBackups(t, f)
				return
			}
			if got := r.Read("gen/late.txt"); got != "the person's new file\n" {
				t.Errorf("gen/late.txt is %q, want the person's new file", got)
			}
			rs := res.Repos[0].Rescued
			if len(rs) != 1 || rs[0].Path != "gen/late.txt" || rs[0].Ref == "" {
				t.Fatalf("rescued %+v, want gen/late.txt under a ref", rs)
			}
			if got, ok := r.Show(rs[0].Ref, "gen/late.txt"); !ok || got != "made in the moved folder\n" {
				t.Errorf("%s:gen/late.txt is %q (%v)", rs[0].Ref, got, ok)
			}
			if res.Exact == nil || *res.Exact {
				t.Errorf("exact is %v with a save rescued", res.Exact)
			}
			noBackups(t, f)
		})
	}
}

// TestDirSwappedForASymlinkBeforeItsMove: between the checks of gen/ and
// its rename, gen/ is moved outside the tree and a symlink to it put in
// its place; and in the other case its parent top/ is. Nothing outside
// the tree is moved or removed through the symlink: the files there stay,
// the symlink stays, and the paths are left.
func TestDirSwappedForASymlinkBeforeItsMove(t *testing.T) {
	for _, swap := range []string{"top/gen", "top"} {
		t.Run(strings.ReplaceAll(swap, "/", "_"), func(t *testing.T) {
			f := newFixture(t, false)
			r := f.r
			r.Write("top/keep.txt", "tracked, stays\n")
			r.Commit("init")
			f.take(checkpoint.ReasonTurnStart) // k1
			for i := 0; i < 40; i++ {
				r.Write(fmt.Sprintf("top/gen/f%02d.txt", i), fmt.Sprintf("generated %d\n", i))
			}
			f.take(checkpoint.ReasonTurnEnd) // k2
			outside := filepath.Join(t.TempDir(), "away")
			swapped := false
			hook(t, func(op, rel string) {
				if op != "movedir" || rel != "top/gen" || swapped {
					return
				}
				swapped = true
				if err := os.Rename(r.Path(swap), outside); err != nil {
					t.Errorf("moving %s outside: %v", swap, err)
				}
				if err := os.Symlink(outside, r.Path(swap)); err != nil {
					t.Errorf("a symlink for %s: %v", swap, err)
				}
			})
			res := f.mustRollback("k1", rollback.Options{Restore: "files"})
			if !swapped {
				t.Fatalf("top/gen was never about to be moved whole")
			}
			in := outside
			if swap == "top" {
				in = filepath.Join(outside, "gen")
			}
			for i := 0; i < 40; i++ {
				p := filepath.Join(in, fmt.Sprintf("f%02d.txt", i))
				if got, err := os.ReadFile(p); err != nil || string(got) != fmt.Sprintf("generated %d\n", i) {
					t.Errorf("%s outside the tree is %q (%v): moved through the symlink", p, got, err)
				}
			}
			if st, err := os.Lstat(r.Path(swap)); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s is no longer the symlink (%v)", swap, err)
			}
			if got := leftPaths(res); len(got) != 40 {
				t.Errorf("left %d paths %v, want the 40 below the symlink", len(got), got)
			}
			noBackups(t, f)
		})
	}
}

// killedAfterDirMove is genTree's tree, its rollback to k1 killed
// (SIGKILL) once its deletions are done, gen/ in its backup; and the
// rollback's arguments, for the next command.
func killedAfterDirMove(t *testing.T) (*fixture, []string) {
	t.Helper()
	f := newFixture(t, false)
	genTree(t, f)
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, f.r, args)
	real := realCall(t, f.r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.deleted")
	if !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	return f, args
}

// TestKilledAfterADirMoveKeepsWhatAPersonPutInIt: the rollback is killed
// (SIGKILL) once its deletions are done, gen/ in its backup, and a
// program whose working directory gen/ was makes a file there. The next
// command, closing the rollback as interrupted, keeps that file under
// refs/venom/rescued/ (the manifest names the directory, and every file
// of the plan in it: what it does not name is a person's) before it
// removes the backup.
func TestKilledAfterADirMoveKeepsWhatAPersonPutInIt(t *testing.T) {
	f, args := killedAfterDirMove(t)
	r := f.r
	if err := os.WriteFile(filepath.Join(movedGen(t, f), "b", "late.txt"), []byte("made in the moved folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ref := nextRescues(t, r, nil, args...)
	if got, ok := r.Show(ref, "gen/b/late.txt"); !ok || got != "made in the moved folder\n" {
		t.Errorf("%s:gen/b/late.txt is %q (%v)", ref, got, ok)
	}
	noBackups(t, f)
}

// TestMovedDirThatCannotBeEmptiedIsReported (F3 of break-dirmove): what
// a program whose working directory is gen/ makes there after the move
// may be nothing a commit holds (here a FIFO), or keep coming; the
// directory then cannot be emptied. It goes back to gen/, whole, where
// nothing took its place; where something did (a file of it put back
// first), it stays in the kept backup directory. Either way gen/ is left,
// saying so, and exact is false: it used to stay in the git dir, the
// result exact with nothing left.
func TestMovedDirThatCannotBeEmptiedIsReported(t *testing.T) {
	for _, withFile := range []bool{false, true} {
		t.Run(fmt.Sprintf("file=%v", withFile), func(t *testing.T) {
			f := newFixture(t, false)
			r := f.r
			genTree(t, f)
			hook(t, func(op, rel string) {
				if op != "moved" || rel != "gen" {
					return
				}
				moved := movedGen(t, f)
				if err := syscall.Mkfifo(filepath.Join(moved, "a", "pipe"), 0o644); err != nil {
					t.Errorf("mkfifo: %v", err)
				}
				if withFile {
					if err := os.WriteFile(filepath.Join(moved, "late.txt"), []byte("made in the moved folder\n"), 0o644); err != nil {
						t.Errorf("writing into the moved folder: %v", err)
					}
				}
			})
			res := f.mustRollback("k1", rollback.Options{Restore: "files"})
			var detail string
			for _, l := range res.Repos[0].Left {
				if l.Path == "gen" {
					detail = l.Detail
				}
			}
			if res.Exact == nil || *res.Exact {
				t.Errorf("exact is not false (left %v)", leftPaths(res))
			}
			if !withFile {
				if st, err := os.Lstat(r.Path("gen/a/pipe")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("gen/a/pipe is not back in the tree: %v", err)
				}
				if !strings.Contains(detail, "put back") {
					t.Errorf("gen is not left as put back: %q (left %v)", detail, leftPaths(res))
				}
				noBackups(t, f)
				return
			}
			if got := r.Read("gen/late.txt"); got != "made in the moved folder\n" {
				t.Errorf("gen/late.txt is %q", got)
			}
			kept, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "tmp", "backup-*", "*", "a", "pipe"))
			if len(kept) != 1 || !strings.Contains(detail, "kept in ") || !strings.Contains(detail, filepath.Dir(filepath.Dir(kept[0]))) {
				t.Errorf("gen is not left naming the kept directory: %q, pipe at %v", detail, kept)
			}
		})
	}
}

// TestKilledDirMoveOfNamesNotUTF8RescuesOnlyTheSaves (F5 of
// break-dirmove): the files of a directory moved whole are named in the
// manifest by their real names in the backup, and a name that is not
// UTF-8 (here every name below gen/, a directory's too) must come back
// from it byte for byte. Killed with gen/ in the backup, a person appends
// to one file there and makes one; the next command keeps just those two
// under refs/venom/rescued/ and removes the backup. JSON strings hold
// only UTF-8, and the old manifest line turned each such name into one
// with U+FFFD that named nothing: all 41 files were kept as saves.
func TestKilledDirMoveOfNamesNotUTF8RescuesOnlyTheSaves(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	r.Write("base.txt", "base\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i := 0; i < 40; i++ {
		r.Write(fmt.Sprintf("gen/d\xfe%d/\xff-%02d.txt", i/20, i), fmt.Sprintf("generated %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.deleted")
	if !real.killed {
		t.Fatalf("not killed: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	m, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "tmp", "backup-*", "*", "d\xfe0", "\xff-00.txt"))
	if len(m) != 1 {
		t.Fatalf("gen/ is not in the backup whole: %v", m)
	}
	moved := filepath.Dir(filepath.Dir(m[0]))
	saved := filepath.Join(moved, "d\xfe1", "\xff-25.txt")
	fh, err := os.OpenFile(saved, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("appended by a person\n")
	fh.Close()
	if err := os.WriteFile(filepath.Join(moved, "d\xfe0", "new\xfe.txt"), []byte("made by a person\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next, ref := nextRescues(t, r, nil, args...)
	safety, rescued := r.Tree(ref+"^"), r.Tree(ref)
	var kept []string
	for p, e := range rescued {
		if safety[p] != e {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	want := []string{"gen/d\xfe0/new\xfe.txt", "gen/d\xfe1/\xff-25.txt"}
	if strings.Join(kept, "|") != strings.Join(want, "|") {
		t.Errorf("%s keeps %d path(s) as saves: %q; want %q", ref, len(kept), kept, want)
	}
	if got, _ := r.Show(ref, want[1]); got != "generated 25\nappended by a person\n" {
		t.Errorf("%s:%q is %q", ref, want[1], got)
	}
	// What is named as saved: the commit's message and the warning (the
	// tree alone cannot tell, an untouched file being S's blob again).
	if msg := r.Line("log", "-1", "--format=%s", ref); !strings.HasPrefix(msg, "venom: 2 save(s) ") {
		t.Errorf("the rescued commit says %q, want 2 saves", msg)
	}
	if n := strings.Count(next.stderr, "git show '"+ref+":"); n != 2 {
		t.Errorf("the warning names %d saves, want 2:\n%s", n, next.stderr)
	}
	noBackups(t, f)
}

// TestKilledAfterADirMoveKeepsASymlinkMadeInIt: as
// TestKilledAfterADirMoveKeepsWhatAPersonPutInIt, with a symbolic link
// made in the moved directory. It is kept under refs/venom/rescued/ as a
// link, and the backup goes: its target is stored from a file outside the
// backup (one written beside the link kept the backup directory, without
// its manifest once RemoveNamed had run).
func TestKilledAfterADirMoveKeepsASymlinkMadeInIt(t *testing.T) {
	f, args := killedAfterDirMove(t)
	r := f.r
	if err := os.Symlink("../a/f00.txt", filepath.Join(movedGen(t, f), "b", "link")); err != nil {
		t.Fatal(err)
	}
	_, ref := nextRescues(t, r, nil, args...)
	if e := r.Tree(ref)["gen/b/link"]; e.Mode != "120000" || e.OID != r.HashBlob("../a/f00.txt") {
		t.Errorf("%s:gen/b/link is %+v, want the link to ../a/f00.txt", ref, e)
	}
	noBackups(t, f)
	if m, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "tmp", "targets-*")); len(m) != 0 {
		t.Errorf("the links' targets are left: %v", m)
	}
}
