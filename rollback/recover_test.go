package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

// TestRecoveryNeverWritesThroughASymlink: a rollback whose writes fail
// puts back the files it had replaced, but never through a parent that is
// no longer a directory of the tree: here a required smudge filter turns
// A into a symlink to a directory outside the tree, then fails, and the
// file there with A/x's name keeps its content. The recovery is partial
// (S still holds A/x), never a write outside the tree.
func TestRecoveryNeverWritesThroughASymlink(t *testing.T) {
	t.Parallel()
	f, outside := swapDuringWrite(t, true)
	r := f.r
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if code(err) != "failed.rollback_partial" {
		t.Fatalf("rollback with A swapped for a symlink while git wrote: %v, %v", res, describe(err))
	}
	e := rfcerr.As(err)
	repos, _ := e.Data["repos"].([]map[string]any)
	if len(repos) != 1 || repos[0]["state"] != "mixed" || !strings.Contains(repos[0]["reason"].(string), "not putting back A/x: A is not a directory of the tree") {
		t.Errorf("error data %v: want state mixed and a reason that says A/x was not put back", e.Data)
	}
	if got, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(got) != "precious\n" {
		t.Errorf("the file outside the tree is %q (%v), want it untouched", got, err)
	}
	if got, ok := r.Show(f.ref("k3"), "A/x"); !ok || got != "x2\n" {
		t.Errorf("the safety checkpoint holds A/x = %q (%v), want x2", got, ok)
	}
}

// TestWriteThroughASwappedParentFails: a smudge filter turns A into a
// symlink to a directory outside the tree while git writes A/x. Written
// straight into the tree, git created the file there (git's own race;
// O_EXCL kept it from replacing one). Now git writes under a stage in the
// git dir and the rollback links each file into the tree, never through
// a symbolic link: nothing is written outside the tree, and the rollback
// fails, naming A/x, and goes back no further than it safely can.
func TestWriteThroughASwappedParentFails(t *testing.T) {
	t.Parallel()
	f, outside := swapDuringWrite(t, false)
	r := f.r
	_, res, err := f.rollback("k1", rollback.Options{Restore: "files"})
	if c := code(err); c != "failed.rollback_partial" && c != "failed.rollback_undone" {
		t.Fatalf("rollback with A swapped for a symlink while git wrote A/x: %+v, %v", res, describe(err))
	}
	if e := rfcerr.As(err); !strings.Contains(fmt.Sprint(e.Data), "writing A/x: A is not a directory of the tree") {
		t.Errorf("the error does not name the write of A/x and why: %v", e.Data)
	}
	if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
		t.Errorf("the directory outside the tree holds %v (%v), want nothing", ents, err)
	}
	if got, ok := r.Show(f.ref("k3"), "A/x"); !ok || got != "x2\n" {
		t.Errorf("the safety checkpoint holds A/x = %q (%v), want x2", got, ok)
	}
	if ended := records(t, r, "rollback.ended"); len(ended) != 1 || ended[0]["ok"] != false {
		t.Errorf("rollback.ended: %v", ended)
	}
}

// swapDuringWrite makes a guarded tree where the rollback to k1 writes A/x
// (x2 back to x1) through a smudge filter that first turns A into a
// symlink to a new directory outside the tree, which it returns; with
// fail, the filter then fails (filter.sw.required), so git stops.
func swapDuringWrite(t *testing.T, fail bool) (*fixture, string) {
	t.Helper()
	f := newFixture(t, true)
	r := f.r
	outside := t.TempDir()
	exit := ""
	if fail {
		exit = "; exit 1"
	}
	smudge := filepath.Join(t.TempDir(), "smudge.sh")
	script := "#!/bin/sh\nif [ -d A ] && [ ! -L A ]; then mv A A.moved && ln -s '" + outside + "' A" + exit + "; fi\ncat\n"
	if err := os.WriteFile(smudge, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Write(".gitattributes", "A/x filter=sw\n")
	r.Write("A/x", "x1\n")
	r.Commit("init")
	r.Git("config", "filter.sw.clean", "cat")
	r.Git("config", "filter.sw.smudge", smudge)
	if fail {
		r.Git("config", "filter.sw.required", "true")
	}
	f.take(checkpoint.ReasonTurnStart)
	r.Write("A/x", "x2\n")
	f.take(checkpoint.ReasonTurnEnd)
	return f, outside
}
