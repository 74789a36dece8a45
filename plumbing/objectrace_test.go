package plumbing_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// raceGit writes a git wrapper that makes the first `fails` runs of each
// subcommand in subs (whatever -c pairs come first) fail as git does when
// a concurrent gc removed the objects/xx directory it was writing into
// (plumbing/objectrace.go), and runs the real git otherwise. It returns
// the wrapper's path and a function that counts the runs of a subcommand.
func raceGit(t *testing.T, fails int, subs ...string) (string, func(sub string) int) {
	t.Helper()
	real, err := plumbing.GitBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
sub= prev=
for a in "$@"; do
	if [ "$prev" = -c ]; then prev=; continue; fi
	if [ "$a" = -c ]; then prev=-c; continue; fi
	sub=$a; break
done
echo x >>"%[1]s/runs-$sub"
case " %[2]s " in
*" $sub "*)
	n=$(wc -l <"%[1]s/runs-$sub")
	if [ "$n" -le %[3]d ]; then
		echo "error: unable to create temporary file: No such file or directory" >&2
		echo "fatal: unable to write $sub object" >&2
		exit 128
	fi;;
esac
exec %[4]q "$@"
`, dir, strings.Join(subs, " "), fails, real)
	path := filepath.Join(dir, "git")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, func(sub string) int {
		b, _ := os.ReadFile(filepath.Join(dir, "runs-"+sub))
		return bytes.Count(b, []byte("\n"))
	}
}

// TestObjectWritesRetriedAfterConcurrentGc: a step of a capture that
// fails only because a concurrent gc removed the object directory it
// wrote into (git's "unable to create temporary file: No such file or
// directory") is run again, and the capture and its commit are what they
// are without the gc: the staging update-index, mktree's session (the
// tree edit is made again), write-tree and update-index --index-info of
// the full way, and commit-tree (issue 13 item 9).
func TestObjectWritesRetriedAfterConcurrentGc(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		subs  []string
		setup func(r *gittest.Repo)
	}{
		{"tree edit", []string{"update-index", "mktree", "commit-tree"}, func(r *gittest.Repo) {}},
		// core.fileMode off takes the full way: the paths staged in a copy
		// of the whole index, then write-tree.
		{"full way", []string{"update-index", "write-tree", "commit-tree"}, func(r *gittest.Repo) { r.Git("config", "core.fileMode", "false") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("a.txt", "one\n")
			r.Write("dir/b.txt", "two\n")
			r.Commit("init")
			c.setup(r)
			r.Write("a.txt", "changed\n")
			r.Write("dir/new.txt", "new\n")
			repo, err := plumbing.Open(context.Background(), r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			var trace bytes.Buffer
			plumbing.SetTrace(repo, &trace)
			git, runs := raceGit(t, 1, c.subs...)
			repo.Git = git
			snap, err := repo.Capture(context.Background(), plumbing.CaptureOptions{})
			if err != nil {
				t.Fatalf("capture: %v\n%s", err, trace.String())
			}
			assertTree(t, r, snap.Tree, map[string]want{"a.txt": file("changed\n"), "dir/b.txt": file("two\n"), "dir/new.txt": file("new\n")})
			commit, err := repo.CommitTree(context.Background(), snap.Tree, snap.Head, "msg\n")
			if err != nil {
				t.Fatalf("commit-tree: %v", err)
			}
			if got := r.Line("rev-parse", string(commit)+"^{tree}"); got != string(snap.Tree) {
				t.Errorf("commit's tree %s, want %s", got, snap.Tree)
			}
			for _, sub := range c.subs {
				if n := runs(sub); n < 2 {
					t.Errorf("%s ran %d time(s): its failure was not met, or not retried\n%s", sub, n, trace.String())
				}
			}
		})
	}
}

// TestObjectWritesRetriedWithProgress: with a progress listener (as
// every capture bounded by venom.checkpoints.timeout has), update-index's
// stdin of paths is still given again after an object-store race, and
// the progress counts the paths once, not twice. Before, the counting
// reader did not seek, so the race failed the capture (the gc loop test
// failed 4 of 8 captures).
func TestObjectWritesRetriedWithProgress(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.Write("a.txt", "changed\n")
	r.Write("dir/new.txt", "new\n")
	r.Write("dir/new2.txt", "new2\n")
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	last := map[string][2]int{}
	repo.OnProgress = func(step string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		last[step] = [2]int{done, total}
	}
	// The first update-index given paths on its stdin fails as git does
	// when a gc removed its object directory.
	real, err := plumbing.GitBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" update-index "*" --stdin "*)
	echo x >>"%[1]s/runs"
	if [ "$(wc -l <"%[1]s/runs")" -le 1 ]; then
		echo "error: unable to create temporary file: No such file or directory" >&2
		exit 128
	fi;;
esac
exec %[2]q "$@"
`, dir, real)
	repo.Git = filepath.Join(dir, "git")
	if err := os.WriteFile(repo.Git, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	snap, err := repo.Capture(context.Background(), plumbing.CaptureOptions{})
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	assertTree(t, r, snap.Tree, map[string]want{"a.txt": file("changed\n"), "dir/new.txt": file("new\n"), "dir/new2.txt": file("new2\n")})
	if b, _ := os.ReadFile(filepath.Join(dir, "runs")); bytes.Count(b, []byte("\n")) < 2 {
		t.Errorf("update-index --stdin ran %d time(s): its failure was not met, or not retried", bytes.Count(b, []byte("\n")))
	}
	// Run itself gave it its stdin again; the tree edit was not redone
	// (that is the slower outer retry, which only eight races in a row
	// defeat).
	if !strings.Contains(trace.String(), "git update-index: an object directory went away under it (a concurrent gc): run 2 of 8") ||
		strings.Contains(trace.String(), "editing the tree met a concurrent gc") {
		t.Errorf("update-index was not run again by Run:\n%s", trace.String())
	}
	if got := last["capture.stage"]; got != [2]int{3, 3} {
		t.Errorf("capture.stage progress ended at %d of %d, want 3 of 3", got[0], got[1])
	}
}

// TestObjectWriteRetriesAreBounded: a write that keeps failing so is run
// eight times in all, then fails with git's error; and a command that
// writes no object (status) is never run again.
func TestObjectWriteRetriesAreBounded(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.Write("a.txt", "changed\n")
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	git, runs := raceGit(t, 100, "commit-tree", "status")
	repo.Git = git
	_, err = repo.CommitTree(context.Background(), plumbing.OID(r.Line("rev-parse", "HEAD^{tree}")), "", "msg\n")
	if err == nil || !plumbing.IsObjectRace(err) {
		t.Errorf("commit-tree: %v, want git's object write failure", err)
	}
	if n := runs("commit-tree"); n != 8 {
		t.Errorf("commit-tree ran %d times, want 8", n)
	}
	if _, err := repo.Capture(context.Background(), plumbing.CaptureOptions{}); err == nil {
		t.Errorf("capture with a failing status succeeded")
	}
	if n := runs("status"); n != 1 {
		t.Errorf("status ran %d times, want 1: it writes no object", n)
	}
}
