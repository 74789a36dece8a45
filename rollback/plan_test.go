package rollback_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/rollback"
)

// planID is RFC 7.2's id of a canonical JSON document, computed here from
// the exact bytes.
func planID(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return "p1-" + hex.EncodeToString(sum[:])[:16]
}

// TestDigest checks Digest against RFC 7.2's canonical JSON byte for byte:
// the example's members in its order, no spaces, outside null when not
// given, head null when unborn. The toolkit has one repo, named ".".
func TestDigest(t *testing.T) {
	t.Parallel()
	const tree = "6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b"
	const headOID = "8f3a1c9e5d7b2046a1c3e5f708192a3b4c5d6e7f"
	for _, tc := range []struct {
		name, checkpoint, restore, outside string
		keepHead                           bool
		head                               plumbing.OID
		doc                                string
	}{
		{"RFC 7.2's example", "k2", "all", "", false, headOID,
			`{"checkpoint":"k2","restore":"all","outside":null,"keep_head":false,"repos":[{"repo":".","tree":"6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b","head":"8f3a1c9e5d7b2046a1c3e5f708192a3b4c5d6e7f"}]}`},
		{"choices given", "k12", "files", "keep", true, headOID,
			`{"checkpoint":"k12","restore":"files","outside":"keep","keep_head":true,"repos":[{"repo":".","tree":"6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b","head":"8f3a1c9e5d7b2046a1c3e5f708192a3b4c5d6e7f"}]}`},
		{"unborn HEAD", "k1", "files", "overwrite", false, "",
			`{"checkpoint":"k1","restore":"files","outside":"overwrite","keep_head":false,"repos":[{"repo":".","tree":"6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b","head":null}]}`},
	} {
		got := rollback.Digest(tc.checkpoint, tc.restore, tc.outside, tc.keepHead, tree, tc.head)
		if want := planID(tc.doc); got != want {
			t.Errorf("%s: Digest = %s, want %s (SHA-256 of %s)", tc.name, got, want, tc.doc)
		}
	}
	// The value computed outside Go (python3 hashlib), so the test does not
	// only agree with itself.
	if got := rollback.Digest("k2", "all", "", false, tree, headOID); got != "p1-f65dd0bc18a1af53" {
		t.Errorf("Digest of RFC 7.2's example = %s", got)
	}
}

// TestPlanIDAndDryRun: a dry run's plan id is the digest of its checkpoint,
// the choices as given and S (the tree and HEAD it captured); each choice
// changes it; and the dry run writes no ref, no log record and nothing the
// user sees, and leaves no private index behind (RFC 7.2, DESIGN.md 5).
func TestPlanIDAndDryRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	r.Write("a.txt", "one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart)
	r.Write("a.txt", "two\n")
	r.Commit("agent")
	f.take(checkpoint.ReasonTurnEnd)
	r.Write("b.txt", "after\n")

	s, err := f.tree().CurrentTree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	headNow, _ := head(r)
	logBefore := logBytes(t, r)
	snap := r.Snapshot()
	seen := map[string]rollback.Options{}
	for _, o := range []rollback.Options{
		{Restore: "files"},
		{Restore: "all"},
		{Restore: "files", Outside: "overwrite"},
		{Restore: "files", Outside: "keep"},
		{Restore: "files", KeepHead: true},
	} {
		res, err := f.plan("k1", o)
		if err != nil {
			t.Fatalf("plan %+v: %s", o, describe(err))
		}
		want := rollback.Digest("k1", o.Restore, o.Outside, o.KeepHead, string(s.Tree), plumbing.OID(headNow))
		if res.Plan != want {
			t.Errorf("plan %+v: id %s, want %s", o, res.Plan, want)
		}
		if prev, dup := seen[res.Plan]; dup {
			t.Errorf("choices %+v and %+v have the same plan id", prev, o)
		}
		seen[res.Plan] = o
		if !res.DryRun || res.Safety != "" || res.After != "" || res.Exact != nil || res.Guarded == nil {
			t.Errorf("dry run result: %+v", res)
		}
	}
	if added := r.AssertUnchanged(snap); len(added) > 0 {
		t.Errorf("the dry run made refs %v", added)
	}
	if got := logBytes(t, r); got != logBefore {
		t.Errorf("the dry run wrote to the log: %q", got[len(logBefore):])
	}
	ents, _ := os.ReadDir(filepath.Join(r.GitDir, "venom", "tmp"))
	for _, e := range ents {
		t.Errorf("the dry run left %s in venom/tmp", e.Name())
	}
	// The same state and choices give the same id again.
	res, err := f.plan("k1", rollback.Options{Restore: "files"})
	if err != nil || !reflect.DeepEqual(seen[res.Plan], rollback.Options{Restore: "files"}) {
		t.Errorf("a second dry run gave %v, %v", res, err)
	}
}

// A plan refused after S was captured (here conflict.outside_edits, and a
// stale real call) leaves no private index behind: S's is as big as the
// user's index, and a refusal repeated by a harness would fill the disk.
func TestRefusedPlanKeepsNoPrivateIndex(t *testing.T) {
	f := newFixture(t, true)
	f.r.Write("a.txt", "one\n")
	f.r.Commit("init")
	k1 := f.take(checkpoint.ReasonTurnStart)
	f.r.Write("a.txt", "two\n")
	f.take(checkpoint.ReasonTurnEnd)
	f.r.Write("person.txt", "mine\n")
	_, err := f.plan(k1, rollback.Options{Restore: "files"})
	if code(err) != "conflict.outside_edits" {
		t.Fatalf("plan: %v, want conflict.outside_edits", err)
	}
	stale := rollback.Options{Agent: f.agent, Checkpoint: k1, Restore: "files", Outside: "keep", Plan: "p1-0000000000000000"}
	if _, err := rollback.Run(context.Background(), f.tree(), stale); code(err) != "conflict.rollback_stale" {
		t.Fatalf("real call with a wrong plan: %v, want conflict.rollback_stale", err)
	}
	ents, _ := os.ReadDir(filepath.Join(f.r.GitDir, "venom", "tmp"))
	for _, e := range ents {
		t.Errorf("a refused plan left %s in venom/tmp", e.Name())
	}
}

// TestTargetFileTooBig: a file the target holds over maxFileBytes (a
// commit put it in the index, and the capture took the index's entry) is
// left too_big and not written: the capture after the rollback could not
// record it, so the rollback would not be exact and its undo could not
// bring back what was there (TestRandomTrees seed 536198355). The other
// paths are rolled back, exactly, and the undo restores everything.
func TestTargetFileTooBig(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.r.Git("config", "venom.checkpoints.maxFileBytes", "100")
	f.r.Write("a.txt", "one\n")
	f.r.Write("big.bin", string(make([]byte, 200)))
	f.r.Commit("init")
	k1 := f.take(checkpoint.ReasonTurnStart)
	f.r.Write("a.txt", "two\n")
	f.r.Write("big.bin", "small now\n")
	f.r.Commit("agent")
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback(k1, rollback.Options{Restore: "files"})
	if want := []rollback.Left{{Path: "big.bin", Reason: "too_big"}}; !reflect.DeepEqual(res.Repos[0].Left, want) {
		t.Errorf("left %+v, want %+v", res.Repos[0].Left, want)
	}
	if want := []rollback.File{{Path: "a.txt", Change: "modify", Class: "turn"}}; !reflect.DeepEqual(res.Repos[0].Files, want) {
		t.Errorf("files %+v, want %+v", res.Repos[0].Files, want)
	}
	if got := f.r.Read("big.bin"); got != "small now\n" {
		t.Errorf("big.bin is %q, want it untouched", got)
	}
	if got := f.r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt is %q, want k1's", got)
	}
	if res.Exact == nil || !*res.Exact {
		t.Errorf("exact %v, want true", res.Exact)
	}
	f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if got := f.r.Read("a.txt"); got != "two\n" {
		t.Errorf("after the undo a.txt is %q, want two", got)
	}
}

// TestSkipWorktreeLeftWhenOnlyOneSideSkips: a file made skip-worktree
// after the target (its new bytes in no capture, S holding the index's
// entry, equal to the target's) is listed in left as skip_worktree, so
// the rollback does not pass it over in silence; one both sides skipped
// (the sparse checkout's) is not listed.
func TestSkipWorktreeLeftWhenOnlyOneSideSkips(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.r.Write("a", "v1\n")
	f.r.Write("sparse", "s\n")
	f.r.Commit("base")
	f.r.Git("update-index", "--skip-worktree", "sparse")
	k1 := f.take(checkpoint.ReasonManual)
	f.r.Write("a", "v2 precious\n")
	f.r.Git("update-index", "--skip-worktree", "a")
	res := f.mustRollback(k1, rollback.Options{Restore: "files", Outside: "overwrite"})
	if want := []rollback.Left{{Path: "a", Reason: "skip_worktree"}}; !reflect.DeepEqual(res.Repos[0].Left, want) {
		t.Errorf("left %+v, want %+v", res.Repos[0].Left, want)
	}
	if got := f.r.Read("a"); got != "v2 precious\n" {
		t.Errorf("a is %q, want it untouched", got)
	}
}

// TestUndoRestoresBigFileTheRollbackReplaced: a file over maxFileBytes
// that S holds (its bytes are staged, so S's entry is the index's and
// equals them) and the rollback replaces is written back by the undo: a
// target that is a safety checkpoint writes its big files (helper repro
// toobig-lost.sh staged).
func TestUndoRestoresBigFileTheRollbackReplaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.r.Git("config", "venom.checkpoints.maxFileBytes", "100")
	f.r.Write("b", "b\n")
	f.r.Commit("base")
	f.r.Write("c", "x\n")
	k1 := f.take(checkpoint.ReasonManual)
	big := strings.Repeat("z", 150)
	f.r.Write("c", big)
	f.r.Git("add", "c")
	res := f.mustRollback(k1, rollback.Options{Restore: "files", Outside: "overwrite"})
	if got := f.r.Read("c"); got != "x\n" {
		t.Fatalf("after the rollback c is %q, want k1's", got)
	}
	undo := f.mustRollback(res.Safety, rollback.Options{Restore: "files", Outside: "overwrite"})
	if got := f.r.Read("c"); got != big {
		t.Errorf("after the undo c is %.20q (left %+v), want the 150 bytes it had", got, undo.Repos[0].Left)
	}
}

// TestRollbackOfAttributesTakesAFullCapture: a rollback that removes a
// .gitattributes changes how files it does not touch are read (here b.txt,
// CRLF on disk, was normalized by `text`): its rollback checkpoint is a
// full capture, holding b.txt as it now reads, and exact is false, since
// the files are not the target's (helper repro attr-delete.sh).
func TestRollbackOfAttributesTakesAFullCapture(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.r.Write("b.txt", "x\n")
	f.r.Commit("base")
	k1 := f.take(checkpoint.ReasonManual)
	f.r.Write(".gitattributes", "*.txt text\n")
	f.r.Write("b.txt", "x\r\n")
	res := f.mustRollback(k1, rollback.Options{Restore: "files", Outside: "overwrite"})
	if want := []rollback.File{{Path: ".gitattributes", Change: "delete", Class: "outside"}}; !reflect.DeepEqual(res.Repos[0].Files, want) {
		t.Fatalf("files %+v, want %+v", res.Repos[0].Files, want)
	}
	if got, _ := f.r.Show(f.ref(res.After), "b.txt"); got != "x\r\n" {
		t.Errorf("the rollback checkpoint holds b.txt as %q, want the bytes a capture reads now", got)
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact %v, want false: b.txt reads differently from the target's", res.Exact)
	}
}
