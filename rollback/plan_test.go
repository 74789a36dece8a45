package rollback_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestPlanDocument checks the p2 plan id's document byte for byte against
// one written by another encoder (python3's json.dumps with sort_keys,
// no spaces and ensure_ascii off, which writes RFC 8785's form for these
// types), and its id against the SHA-256 python3's hashlib gave: members
// sorted at every level, files and left sorted by path, outside as given,
// pathspec absent, a path that is not UTF-8 as U+FFFD with path_bytes,
// and only the characters JSON must escape escaped (U+2028, U+2029 and
// DEL as they are; the text \u2028 stays text).
func TestPlanDocument(t *testing.T) {
	t.Parallel()
	c, d, e, f := strings.Repeat("c", 40), strings.Repeat("d", 40), strings.Repeat("e", 40), strings.Repeat("f", 40)
	t1 := "t1"
	res := &rollback.Result{Agent: "a1", Checkpoint: "k2", DryRun: true, Plan: "ignored", Restore: "all",
		Conversation: rollback.Conversation{Rewinds: true, ThroughTurn: &t1, Drops: []string{"t2", "t3"}, Harness: "claude-code",
			HarnessSession: "ignored: drawn from the id", Resume: []string{"ignored"}},
		SharedWith: []string{}, Children: []string{}, Note: "ignored",
		Repos: []rollback.Repo{{Repo: ".", Path: "/ignored", Commit: c, Tree: d,
			Head: rollback.Head{Moves: true, From: &f, To: &e, Commits: 2},
			Files: []rollback.File{
				{Path: "sep\u2028\u2029 del\x7f ctl\x01\b\t\n\f\r \"q\" \\u2028", Change: "delete", Class: "turn"},
				{Path: "n\xff.bin", Change: "modify", Class: "outside"},
				{Path: "a/<b>&c.txt", Change: "create", Class: "agent"},
			},
			Left: []rollback.Left{
				{Path: "notes.txt", Reason: "outside", Detail: "created after the last checkpoint"},
				{Path: "big.bin", Reason: "too_big"},
			},
			IgnoredEdits: []string{"ignored"}}}}
	doc := rollback.PlanDocument(res, false, rollback.Options{Outside: "keep", KeepHead: true, Restore: "all"})
	want := "{\"agent\":\"a1\",\"checkpoint\":\"k2\",\"conversation\":{\"drops\":[\"t2\",\"t3\"],\"harness\":\"claude-code\",\"rewinds\":true,\"through_turn\":\"t1\"},\"guarded\":false,\"keep_head\":true,\"outside\":\"keep\",\"repos\":[{\"commit\":\"cccccccccccccccccccccccccccccccccccccccc\",\"files\":[{\"change\":\"create\",\"class\":\"agent\",\"path\":\"a/<b>&c.txt\"},{\"change\":\"modify\",\"class\":\"outside\",\"path\":\"n\ufffd.bin\",\"path_bytes\":\"bv8uYmlu\"},{\"change\":\"delete\",\"class\":\"turn\",\"path\":\"sep\u2028\u2029 del\u007f ctl\\u0001\\b\\t\\n\\f\\r \\\"q\\\" \\\\u2028\"}],\"head\":{\"commits\":2,\"from\":\"ffffffffffffffffffffffffffffffffffffffff\",\"moves\":true,\"to\":\"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\"},\"left\":[{\"path\":\"big.bin\",\"reason\":\"too_big\"},{\"detail\":\"created after the last checkpoint\",\"path\":\"notes.txt\",\"reason\":\"outside\"}],\"repo\":\".\",\"tree\":\"dddddddddddddddddddddddddddddddddddddddd\"}],\"restore\":\"all\",\"shared_with\":[]}"
	if string(doc) != want {
		t.Errorf("PlanDocument =\n%s\nwant\n%s", doc, want)
	}
	if got := rollback.PlanID(doc); got != "p2-d650c21e04311c6e" {
		t.Errorf("PlanID = %s, want p2-d650c21e04311c6e (python3 hashlib)", got)
	}
	// Every member the plan shows changes the id; what it only derives
	// from the id (the new session), or does not show, does not.
	base := rollback.PlanID(doc)
	for name, change := range map[string]func(r *rollback.Result, o *rollback.Options, guarded *bool){
		"agent":       func(r *rollback.Result, o *rollback.Options, g *bool) { r.Agent = "b1" },
		"commit":      func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Commit = e },
		"tree":        func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Tree = e },
		"head.from":   func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Head.From = &d },
		"head.moves":  func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Head.Moves = false },
		"a class":     func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Files[2].Class = "turn" },
		"a change":    func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Files[2].Change = "modify" },
		"a left path": func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Left = r.Repos[0].Left[1:] },
		"left reason": func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Left[1].Reason = "skip_worktree" },
		"index":       func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Index = d },
		"guarded":     func(r *rollback.Result, o *rollback.Options, g *bool) { *g = true },
		"drops":       func(r *rollback.Result, o *rollback.Options, g *bool) { r.Conversation.Drops = []string{"t2"} },
		"shared_with": func(r *rollback.Result, o *rollback.Options, g *bool) { r.SharedWith = []string{"b1"} },
		"outside":     func(r *rollback.Result, o *rollback.Options, g *bool) { o.Outside = "" },
		"keep_head":   func(r *rollback.Result, o *rollback.Options, g *bool) { o.KeepHead = false },
		"restore":     func(r *rollback.Result, o *rollback.Options, g *bool) { r.Restore = "files" },
		"-session":    func(r *rollback.Result, o *rollback.Options, g *bool) { r.Conversation.HarnessSession = "other" },
		"-path":       func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].Path = "/other" },
		"-ignored":    func(r *rollback.Result, o *rollback.Options, g *bool) { r.Repos[0].IgnoredEdits = nil },
		"-order": func(r *rollback.Result, o *rollback.Options, g *bool) {
			r.Repos[0].Left[0], r.Repos[0].Left[1] = r.Repos[0].Left[1], r.Repos[0].Left[0]
		},
	} {
		r := cloneResult(res)
		o := rollback.Options{Outside: "keep", KeepHead: true, Restore: "all"}
		g := false
		change(r, &o, &g)
		got := rollback.PlanID(rollback.PlanDocument(r, g, o))
		if same := got == base; same != strings.HasPrefix(name, "-") {
			t.Errorf("changing %s: id %s, the original's %s", name, got, base)
		}
	}
}

// cloneResult is a deep copy of res, through its JSON.
func cloneResult(res *rollback.Result) *rollback.Result {
	b, err := json.Marshal(res)
	if err != nil {
		panic(err)
	}
	var out rollback.Result
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return &out
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
		if r := res.Repos[0]; r.Tree != string(s.Tree) || r.Commit != f.r.Line("rev-parse", f.ref("k1")) || deref(r.Head.From) != headNow {
			t.Errorf("plan %+v: tree %s commit %s head %v, want S's tree %s and HEAD %s and k1's commit", o, r.Tree, r.Commit, r.Head.From, s.Tree, headNow)
		}
		want := rollback.PlanID(rollback.PlanDocument(res, *res.Guarded, o))
		if res.Plan != want || !strings.HasPrefix(res.Plan, "p2-") || len(res.Plan) != 19 {
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

// rollBackOverBigAtK1 makes a guarded tree whose k1 holds big.bin over
// maxFileBytes (committed, so the capture took the index's entry) beside
// a.txt "one", runs turn (then commits it and takes the turn's end), and
// rolls back to k1: big.bin must be left too_big, the rollback exact.
func rollBackOverBigAtK1(t *testing.T, turn func(f *fixture)) (*fixture, *rollback.Result) {
	t.Helper()
	f := newFixture(t, true)
	f.r.Git("config", "venom.checkpoints.maxFileBytes", "100")
	f.r.Write("a.txt", "one\n")
	f.r.Write("big.bin", string(make([]byte, 200)))
	f.r.Commit("init")
	k1 := f.take(checkpoint.ReasonTurnStart)
	turn(f)
	f.r.Commit("agent")
	f.take(checkpoint.ReasonTurnEnd)
	res := f.mustRollback(k1, rollback.Options{Restore: "files"})
	if want := []rollback.Left{{Path: "big.bin", Reason: "too_big"}}; !reflect.DeepEqual(res.Repos[0].Left, want) {
		t.Errorf("left %+v, want %+v", res.Repos[0].Left, want)
	}
	if res.Exact == nil || !*res.Exact {
		t.Errorf("exact %v, want true", res.Exact)
	}
	return f, res
}

// TestTargetFileTooBig: a file the target holds over maxFileBytes (a
// commit put it in the index, and the capture took the index's entry) is
// left too_big and not written: the capture after the rollback could not
// record it, so the rollback would not be exact and its undo could not
// bring back what was there (TestRandomTrees seed 536198355). The other
// paths are rolled back, exactly, and the undo restores everything.
func TestTargetFileTooBig(t *testing.T) {
	t.Parallel()
	f, res := rollBackOverBigAtK1(t, func(f *fixture) {
		f.r.Write("a.txt", "two\n")
		f.r.Write("big.bin", "small now\n")
	})
	if want := []rollback.File{{Path: "a.txt", Change: "modify", Class: "turn"}}; !reflect.DeepEqual(res.Repos[0].Files, want) {
		t.Errorf("files %+v, want %+v", res.Repos[0].Files, want)
	}
	if got := f.r.Read("big.bin"); got != "small now\n" {
		t.Errorf("big.bin is %q, want it untouched", got)
	}
	if got := f.r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt is %q, want k1's", got)
	}
	f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if got := f.r.Read("a.txt"); got != "two\n" {
		t.Errorf("after the undo a.txt is %q, want two", got)
	}
}

// TestTargetFileTooBigOverADirectory: a file the target holds over
// maxFileBytes where S has a directory of files is left too_big and not
// written, as over a file of S: the capture after could not record it,
// and the undo would find it in the way of S's directory, in no
// checkpoint, and leave both (TestRandomTrees seed 737533498). The files
// below are deleted as planned, and the undo puts them back.
func TestTargetFileTooBigOverADirectory(t *testing.T) {
	t.Parallel()
	f, res := rollBackOverBigAtK1(t, func(f *fixture) {
		f.r.Git("rm", "-q", "big.bin")
		f.r.Write("big.bin/x", "x\n")
	})
	if want := []rollback.File{{Path: "big.bin/x", Change: "delete", Class: "turn"}}; !reflect.DeepEqual(res.Repos[0].Files, want) {
		t.Errorf("files %+v, want %+v", res.Repos[0].Files, want)
	}
	if _, err := os.Lstat(filepath.Join(f.r.Dir, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("big.bin: %v, want nothing there (its directory emptied, the big file not written)", err)
	}
	f.mustRollback(res.Safety, rollback.Options{Restore: "files"})
	if got := f.r.Read("big.bin/x"); got != "x\n" {
		t.Errorf("after the undo big.bin/x is %q, want x", got)
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
