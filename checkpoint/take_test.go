package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

func openTree(t *testing.T, r *gittest.Repo) *checkpoint.Tree {
	t.Helper()
	tr, err := checkpoint.OpenTree(context.Background(), r.Dir)
	if err != nil {
		t.Fatalf("open tree: %v", err)
	}
	return tr
}

// take runs Take and checks invariant 1 around it: nothing the user sees
// changes, and the only ref added is the new checkpoint's (none when it
// was reused).
func take(t *testing.T, r *gittest.Repo, o checkpoint.TakeOptions) *checkpoint.Result {
	t.Helper()
	before := r.Snapshot()
	res, err := openTree(t, r).Take(context.Background(), o)
	if err != nil {
		t.Fatalf("take %+v: %v", o, err)
	}
	added := r.AssertUnchanged(before)
	n, err := refs.ParseID(res.Checkpoint.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if !res.Reused {
		want = []string{refs.Checkpoint(o.Agent, n)}
	}
	if !reflect.DeepEqual(added, want) {
		t.Errorf("refs added %v, want %v", added, want)
	}
	return res
}

func takeErr(t *testing.T, r *gittest.Repo, tr *checkpoint.Tree, o checkpoint.TakeOptions) *rfcerr.Error {
	t.Helper()
	before := r.Snapshot()
	res, err := tr.Take(context.Background(), o)
	if err == nil {
		t.Fatalf("take %+v succeeded with %s, want an error", o, res.Checkpoint.Checkpoint)
	}
	if added := r.AssertUnchanged(before); len(added) > 0 {
		t.Errorf("a failed capture added refs %v", added)
	}
	e := rfcerr.As(err)
	if e == nil {
		t.Fatalf("error without an RFC code: %v", err)
	}
	return e
}

// logRecords returns the log's records of one type, decoded as generic
// objects.
func logRecords(t *testing.T, r *gittest.Repo, typ string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.GitDir, "venom", "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, torn, err := journal.Parse(data)
	if err != nil || torn {
		t.Fatalf("log: torn %v err %v", torn, err)
	}
	var out []map[string]any
	for _, rec := range recs {
		if rec.Type == typ {
			var m map[string]any
			if err := json.Unmarshal(rec.Line, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func newRepo(t *testing.T) *gittest.Repo {
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	return r
}

// TestTakeCommitAndRef: the checkpoint is a commit by venom, child of
// HEAD, with the trailers of RFC 4.1 step 5, under
// refs/venom/checkpoints/<agent>/<n>; the record says where and what; the
// repository passes fsck --strict and the refs survive pack-refs and gc
// without showing as branches (BR-17).
func TestTakeCommitAndRef(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	head := r.Line("rev-parse", "HEAD")
	r.Write("a", "changed\n")
	r.Write("new.txt", "n\n")
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonManual, Label: "before risky"})
	c := res.Checkpoint
	if c.Checkpoint != "k1" || res.Reused || c.Agent != "a1" || c.Reason != "manual" || c.Label != "before risky" || c.Turn != nil || c.ThroughTurn != nil || c.MidTurn {
		t.Errorf("record %+v", c)
	}
	if len(c.Repos) != 1 {
		t.Fatalf("repos %+v", c.Repos)
	}
	rs := c.Repos[0]
	ref := r.Line("rev-parse", "refs/venom/checkpoints/a1/1")
	if rs.Commit != ref || rs.Path != r.Dir || rs.Head == nil || *rs.Head != head || rs.Branch != "main" || rs.Repo != "." {
		t.Errorf("repo state %+v (ref at %s)", rs, ref)
	}
	if rs.Tree != r.Line("rev-parse", ref+"^{tree}") {
		t.Errorf("tree %s is not the commit's", rs.Tree)
	}
	if got, _ := r.Show(ref, "a"); got != "changed\n" {
		t.Errorf("a = %q", got)
	}
	raw := r.Git("cat-file", "commit", ref)
	for _, want := range []string{
		"\nparent " + head + "\n",
		"\nauthor venom <venom@localhost> ",
		"\ncommitter venom <venom@localhost> ",
		"\n\nvenom checkpoint a1/k1\n\nVenom-Agent: a1\nVenom-Checkpoint: k1\nVenom-Reason: manual\n",
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("commit lacks %q:\n%s", want, raw)
		}
	}
	if strings.Contains(raw, "gpgsig") {
		t.Errorf("commit is signed:\n%s", raw)
	}
	if typ := r.Line("for-each-ref", "--format=%(objecttype)", "refs/venom"); typ != "commit" {
		t.Errorf("ref object type %q", typ)
	}
	if got := logRecords(t, r, journal.TypeCheckpointTaken); len(got) != 1 || got[0]["checkpoint"] != "k1" {
		t.Errorf("log: %v", got)
	}
	r.Git("fsck", "--strict", "--no-dangling")
	r.Git("pack-refs", "--all")
	r.Git("gc", "-q")
	if got := r.Line("rev-parse", "refs/venom/checkpoints/a1/1"); got != ref {
		t.Errorf("after gc the ref is %q", got)
	}
	if b := r.Git("branch", "-a"); strings.Contains(b, "venom") {
		t.Errorf("checkpoints show as branches:\n%s", b)
	}
}

// TestBR20NoSigningNoHooks: checkpoint commits are never signed, and no hook
// or fsmonitor of the user's runs, whatever the config says.
func TestBR20NoSigningNoHooks(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hooks := filepath.Join(t.TempDir(), "hooks")
	os.MkdirAll(hooks, 0o755)
	script := "#!/bin/sh\necho \"$0\" >> '" + marker + "'\nexit 1\n"
	for _, h := range []string{"reference-transaction", "post-commit", "pre-commit", "fsmonitor", "post-index-change"} {
		os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755)
	}
	r.Git("config", "commit.gpgSign", "true")
	r.Git("config", "gpg.program", "/bin/false")
	r.Git("config", "core.hooksPath", hooks)
	r.Git("config", "core.fsmonitor", filepath.Join(hooks, "fsmonitor"))
	take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	r.Write("a", "b\n")
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if _, err := os.Stat(marker); err == nil {
		b, _ := os.ReadFile(marker)
		t.Errorf("hooks ran:\n%s", b)
	}
	raw := r.Git("cat-file", "commit", res.Checkpoint.Repos[0].Commit)
	if strings.Contains(raw, "gpgsig") || !strings.Contains(raw, "\nauthor venom <venom@localhost> ") {
		t.Errorf("commit:\n%s", raw)
	}
}

// TestDedup covers RFC 3.2: the same tree and HEAD reuse the latest
// checkpoint (checkpoint.reused, no ref, no id), a label lands on the reused
// one, a changed tree or HEAD makes a new one, a deleted ref of the latest
// prevents reuse, ids are never reused, and rollback captures never dedup.
func TestDedup(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	k1 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	again := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual", Label: "keep me"})
	if !again.Reused || again.Checkpoint.Checkpoint != "k1" || again.Checkpoint.Label != "keep me" || again.Checkpoint.Repos[0].Commit != k1.Checkpoint.Repos[0].Commit {
		t.Errorf("second capture: reused %v %+v", again.Reused, again.Checkpoint)
	}
	reused := logRecords(t, r, journal.TypeCheckpointReused)
	if len(reused) != 1 || reused[0]["checkpoint"] != "k1" || reused[0]["label"] != "keep me" || reused[0]["path"] != r.Dir {
		t.Errorf("checkpoint.reused records: %v", reused)
	}
	tr := openTree(t, r)
	st, _ := tr.Log.Load()
	l, err := tr.List(context.Background(), st, "a1", checkpoint.ListOptions{})
	if err != nil || len(l.Checkpoints) != 1 || l.Checkpoints[0].Label != "keep me" {
		t.Errorf("list after a labelled reuse: %+v %v", l, err)
	}
	// Reused without a label keeps the label.
	if res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); !res.Reused || res.Checkpoint.Label != "keep me" {
		t.Errorf("reuse without label: %+v", res.Checkpoint)
	}

	r.Write("a", "two\n")
	k2 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if k2.Reused || k2.Checkpoint.Checkpoint != "k2" {
		t.Errorf("changed tree: %+v", k2.Checkpoint)
	}
	// Back to k1's files: only the latest checkpoint is compared.
	r.Write("a", "a\n")
	if k3 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); k3.Reused || k3.Checkpoint.Checkpoint != "k3" {
		t.Errorf("tree of an older checkpoint: %+v", k3.Checkpoint)
	}
	// Same tree, new HEAD.
	r.Git("commit", "-q", "--allow-empty", "-m", "empty")
	if k4 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); k4.Reused || k4.Checkpoint.Checkpoint != "k4" {
		t.Errorf("moved HEAD: %+v", k4.Checkpoint)
	}
	// The latest's ref is gone: a new checkpoint, with a new id.
	r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/4")
	if k5 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); k5.Reused || k5.Checkpoint.Checkpoint != "k5" {
		t.Errorf("deleted ref: %+v", k5.Checkpoint)
	}
	// The latest's ref moved: no reuse either.
	r.Git("update-ref", "refs/venom/checkpoints/a1/5", k1.Checkpoint.Repos[0].Commit)
	if k6 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); k6.Reused || k6.Checkpoint.Checkpoint != "k6" {
		t.Errorf("moved ref: %+v", k6.Checkpoint)
	}
	// A rollback's own capture is never deduplicated.
	if rb := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonRollback}); rb.Reused || rb.Checkpoint.Checkpoint != "k7" {
		t.Errorf("rollback capture: %+v", rb.Checkpoint)
	}
	// Another agent does not reuse a1's checkpoints.
	if b := take(t, r, checkpoint.TakeOptions{Agent: "b2", Reason: "manual"}); b.Reused || b.Checkpoint.Checkpoint != "k1" {
		t.Errorf("agent b2: %+v", b.Checkpoint)
	}
}

// TestTurns covers RFC 3.3 and the turn bookkeeping: turn and through_turn
// of each reason, mid_turn, the synthetic end when a turn_start comes while
// a turn is open, a turn_end with no open turn, and turn ids never reused.
func TestTurns(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	type step struct {
		reason        string
		edit          bool
		id            string
		reused        bool
		turn, through string
		midTurn       bool
	}
	steps := []step{
		{reason: "turn_start", id: "k1", turn: "t1"},
		{reason: "manual", edit: true, id: "k2", turn: "t1", midTurn: true},
		{reason: "turn_end", edit: true, id: "k3", turn: "t1", through: "t1"},
		{reason: "turn_start", id: "k3", reused: true, turn: "t2", through: "t1"},
		{reason: "manual", id: "k3", reused: true, turn: "t2", through: "t1"},
		// t2 is interrupted: no turn_end. The next turn_start ends it.
		{reason: "turn_start", edit: true, id: "k4", turn: "t3", through: "t2"},
		{reason: "turn_end", id: "k4", reused: true, turn: "t3", through: "t3"},
		// A turn_end with no open turn opens and closes t4.
		{reason: "turn_end", edit: true, id: "k5", turn: "t4", through: "t4"},
		{reason: "manual", id: "k5", reused: true, through: "t4"},
		{reason: "manual", edit: true, id: "k6", through: "t4"},
		{reason: "turn_start", id: "k6", reused: true, turn: "t5", through: "t4"},
	}
	for i, s := range steps {
		if s.edit {
			r.Write("a", "edit "+string(rune('0'+i))+"\n")
		}
		res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: s.reason})
		c := res.Checkpoint
		got := step{reason: s.reason, edit: s.edit, id: c.Checkpoint, reused: res.Reused, turn: deref(res.Turn), through: deref(c.ThroughTurn), midTurn: c.MidTurn}
		if res.Reused {
			// A reused checkpoint's record is the old one; the capture's own
			// turn and through_turn are in the checkpoint.reused record.
			rec := logRecords(t, r, journal.TypeCheckpointReused)
			last := rec[len(rec)-1]
			got.through, _ = last["through_turn"].(string)
			got.midTurn = s.midTurn
		} else if deref(c.Turn) != deref(res.Turn) {
			t.Errorf("step %d: record turn %q, result turn %q", i, deref(c.Turn), deref(res.Turn))
		}
		if got != s {
			t.Errorf("step %d:\n got %+v\nwant %+v", i, got, s)
		}
	}
	tr := openTree(t, r)
	st, _ := tr.Log.Load()
	a := st.Agents["a1"]
	var turns []string
	for _, tt := range a.Turns {
		d := tt.ID() + ":" + tt.Start + "-" + tt.End
		if tt.Synthetic {
			d += ",synthetic"
		}
		if tt.NoStart {
			d += ",nostart"
		}
		turns = append(turns, d)
	}
	want := "t1:k1-k3 t2:k3-,synthetic t3:k4-k4 t4:-k5,nostart t5:k6-"
	if got := strings.Join(turns, " "); got != want {
		t.Errorf("turns %s\nwant  %s", got, want)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestCheckpointIDsNeverReused: a ref the log does not name (a crash
// between ref and record, or a deleted log) is never overwritten; the
// capture takes the next free number.
func TestCheckpointIDsNeverReused(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	head := r.Line("rev-parse", "HEAD")
	r.Git("update-ref", "refs/venom/checkpoints/a1/1", head)
	r.Git("update-ref", "refs/venom/checkpoints/a1/2", head)
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if res.Checkpoint.Checkpoint != "k3" {
		t.Errorf("took %s, want k3 past the refs the log does not name", res.Checkpoint.Checkpoint)
	}
	if got := r.Line("rev-parse", "refs/venom/checkpoints/a1/1"); got != head {
		t.Errorf("an unlogged ref was overwritten: %s", got)
	}
}

// TestStaleRefLock: a <ref>.lock left by an update-ref that was killed (by
// the timeout, say) does not stop the agent's captures: the next number is
// taken, and the lock is left for git's own tools to report.
func TestStaleRefLock(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dir := filepath.Join(r.GitDir, "refs", "venom", "checkpoints", "a1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "1.lock"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "2.lock"), nil, 0o644)
	if res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); res.Checkpoint.Checkpoint != "k3" {
		t.Errorf("took %s, want k3 past the stale locks", res.Checkpoint.Checkpoint)
	}
	r.Write("a", "next\n")
	if res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); res.Checkpoint.Checkpoint != "k4" {
		t.Errorf("then took %s, want k4", res.Checkpoint.Checkpoint)
	}
}

// TestLogDeleted: with the log gone and its refs still there, the next
// capture goes past every ref at once and overwrites none.
func TestLogDeleted(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	for i := 0; i < 4; i++ {
		r.Write("a", fmt.Sprint(i, "\n"))
		take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	}
	r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/2")
	before := r.Refs()
	os.Remove(filepath.Join(r.GitDir, "venom", "log.jsonl"))
	r.Write("a", "after\n")
	if res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); res.Checkpoint.Checkpoint != "k5" {
		t.Errorf("took %s, want k5", res.Checkpoint.Checkpoint)
	}
	for name, oid := range before {
		if r.Refs()[name] != oid {
			t.Errorf("%s moved", name)
		}
	}
}

// TestBR25TooLarge: past maxTotalBytes the capture fails with
// failed.checkpoint_too_large naming the five largest paths, logs
// checkpoint.failed, and writes no object and no ref.
func TestBR25TooLarge(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.Git("config", "venom.checkpoints.maxTotalBytes", "1k")
	for i := 0; i < 7; i++ {
		r.Write("build-out/chunk"+string(rune('0'+i))+".o", strings.Repeat("x", 200+10*i))
	}
	tr := openTree(t, r)
	objs := r.ObjectFiles()
	e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_start"})
	if e.Code != "failed.checkpoint_too_large" {
		t.Fatalf("code %s: %v", e.Code, e)
	}
	want := []string{"build-out/chunk6.o", "build-out/chunk5.o", "build-out/chunk4.o", "build-out/chunk3.o", "build-out/chunk2.o"}
	if got, _ := e.Data["largest"].([]string); !reflect.DeepEqual(got, want) {
		t.Errorf("largest %v, want %v", e.Data["largest"], want)
	}
	if b, _ := e.Data["bytes"].(int64); b != 1610 {
		t.Errorf("bytes %v, want 1610", e.Data["bytes"])
	}
	if got := r.ObjectFiles(); !reflect.DeepEqual(got, objs) {
		t.Errorf("objects written: %d -> %d files", len(objs), len(got))
	}
	failed := logRecords(t, r, journal.TypeCheckpointFailed)
	if len(failed) != 1 || failed[0]["code"] != "failed.checkpoint_too_large" || failed[0]["reason"] != "turn_start" || failed[0]["turn"] != "t1" {
		t.Errorf("checkpoint.failed: %v", failed)
	}
	// The failed turn_start still opened its turn (RFC 3.1: a failure never
	// stops a turn).
	if st := logRecords(t, r, journal.TypeTurnStarted); len(st) != 1 || st[0]["turn"] != "t1" {
		t.Errorf("turn.started: %v", st)
	}
}

// TestTakeTimeout: a capture past venom.checkpoints.timeout, or one that
// waits for the agent's lock that long, fails with timeout.checkpoint and
// logs checkpoint.failed.
func TestTakeTimeout(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.Write("a", "edited\n")
	r.Git("config", "venom.checkpoints.timeout", "1ms")
	tr := openTree(t, r)
	if tr.Config.Timeout != time.Millisecond {
		t.Fatalf("timeout %v", tr.Config.Timeout)
	}
	if e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); e.Code != "timeout.checkpoint" {
		t.Errorf("1ms: %s: %v", e.Code, e)
	}

	r.Git("config", "venom.checkpoints.timeout", "1s")
	tr = openTree(t, r)
	lk, err := journal.LockFile(tr.Log.LockPath(checkpoint.AgentLock("a1")), true)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Pending("a1") {
		t.Error("Pending is false while the agent lock is held")
	}
	if e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_end"}); e.Code != "timeout.checkpoint" {
		t.Errorf("lock held: %s: %v", e.Code, e)
	}
	lk.Unlock()
	failed := logRecords(t, r, journal.TypeCheckpointFailed)
	if len(failed) != 2 || failed[0]["code"] != "timeout.checkpoint" || failed[1]["code"] != "timeout.checkpoint" {
		t.Errorf("checkpoint.failed: %v", failed)
	}
	// A real capture on a loaded machine can take more than 1s: the
	// capture after the timeouts gets the default budget back.
	r.Git("config", "--unset", "venom.checkpoints.timeout")
	if res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"}); res.Checkpoint.Checkpoint != "k1" {
		t.Errorf("after the timeouts: %+v", res.Checkpoint)
	}
}

// TestTakeBadAgent: an agent id that is not a ref component is
// invalid_params.agent (BR-18), before anything is written.
func TestTakeBadAgent(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	tr := openTree(t, r)
	for _, id := range []string{"bad/../name", "", "UPPER", ".hidden", "x.lock", "a..b", strings.Repeat("a", 65), "sp ace", "-dash"} {
		if e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: id, Reason: "manual"}); e.Code != "invalid_params.agent" {
			t.Errorf("agent %q: %s", id, e.Code)
		}
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "venom", "log.jsonl")); err == nil {
		t.Error("a bad agent id wrote to the log")
	}
	long := "agent-with-a-rather-long-but-valid-name-0123456789"
	res := take(t, r, checkpoint.TakeOptions{Agent: long, Reason: "manual"})
	if ref := refs.Checkpoint(long, 1); len(ref) > 100 || res.Checkpoint.Checkpoint != "k1" {
		t.Errorf("long agent: %s %+v", ref, res.Checkpoint)
	}
}

// TestBR21TakeNestedUnborn: the record lists an unborn nested repository
// with commit null and dirty true, and the rest of the tree is current.
func TestBR21TakeNestedUnborn(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("file.txt", "v1\n")
	r.Commit("init")
	take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_start"})
	r.Write("file.txt", "v2\n")
	os.MkdirAll(r.Path("scratch-clone"), 0o755)
	n := &gittest.Repo{T: t, Dir: r.Path("scratch-clone")}
	n.Git("init", "-q")
	n.Write("z", "z\n")
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_end"})
	if got, _ := r.Show(res.Checkpoint.Repos[0].Commit, "file.txt"); got != "v2\n" {
		t.Errorf("file.txt = %q, want v2", got)
	}
	rec := logRecords(t, r, journal.TypeCheckpointTaken)
	subs, _ := json.Marshal(rec[len(rec)-1]["repos"].([]any)[0].(map[string]any)["submodules"])
	if string(subs) != `[{"commit":null,"dirty":true,"path":"scratch-clone"}]` {
		t.Errorf("submodules %s", subs)
	}
}

// TestBR55TakeUnborn: a repository with no commit is captured with no
// parent and head null, HEAD stays unborn, and the empty tree works.
func TestBR55TakeUnborn(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	k0 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_start"})
	if k0.Checkpoint.Repos[0].Head != nil || k0.Checkpoint.Repos[0].Tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("k0: %+v", k0.Checkpoint.Repos[0])
	}
	if raw := r.Git("cat-file", "commit", k0.Checkpoint.Repos[0].Commit); strings.Contains(raw, "\nparent ") {
		t.Errorf("unborn capture has a parent:\n%s", raw)
	}
	r.Write("a.txt", "a\n")
	k1 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_end"})
	os.Remove(r.Path("a.txt"))
	k2 := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if k1.Checkpoint.Checkpoint != "k2" || k2.Checkpoint.Checkpoint != "k3" || k2.Checkpoint.Repos[0].Tree != k0.Checkpoint.Repos[0].Tree {
		t.Errorf("k1 %+v k2 %+v", k1.Checkpoint, k2.Checkpoint)
	}
	if _, err := r.GitErr("rev-parse", "-q", "--verify", "HEAD"); err == nil {
		t.Error("HEAD was born")
	}
}

// TestBR52Subdirectory: a tree opened from a subdirectory is the whole
// worktree.
func TestBR52Subdirectory(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("packages/web/index.ts", "x\n")
	r.Write("top.txt", "t\n")
	r.Commit("init")
	r.Write("top.txt", "edited\n")
	tr, err := checkpoint.OpenTree(context.Background(), r.Path("packages/web"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Path() != r.Dir {
		t.Fatalf("tree %s, want %s", tr.Path(), r.Dir)
	}
	res, err := tr.Take(context.Background(), checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Show(res.Checkpoint.Repos[0].Commit, "top.txt"); got != "edited\n" {
		t.Errorf("top.txt = %q", got)
	}
}

// TestFolderOutsideTheRepositorysWork: a folder of an enclosing
// repository that holds none of the files its index tracks (an untracked
// project inside a dotfiles repository at $HOME, an ignored build
// folder, an empty new folder) is no part of that repository's work:
// OpenTree refuses it with unsupported.checkpoint_no_repo (why
// not_tracked, naming the repository, hints `git init` and -C), so no
// command there captures the whole enclosing tree (RFC 4.1; issue 13
// item 14). A folder that holds tracked files, however deep, is the
// subdirectory convenience (BR-52): the whole tree. Nothing is logged or
// written by a refusal; at the top no git runs for the check.
func TestFolderOutsideTheRepositorysWork(t *testing.T) {
	t.Parallel()
	r := gittest.New(t) // the dotfiles repository at $HOME
	r.Write(".bashrc", "alias ll='ls -l'\n")
	r.Write(".gitignore", "build/\n")
	r.Write("src/deep/er/tracked.go", "package er\n")
	r.Commit("dotfiles")
	r.Write("code/project/main.go", "package main\n")
	r.Write("build/out.o", "object\n")
	if err := os.MkdirAll(r.Path("src/new-empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := r.Snapshot()
	for _, dir := range []string{"code/project", "code", "build", "src/new-empty"} {
		_, err := checkpoint.OpenTree(context.Background(), r.Path(dir))
		e := rfcerr.As(err)
		if e == nil || e.Code != "unsupported.checkpoint_no_repo" || e.Data["why"] != "not_tracked" || e.Data["repository"] != r.Dir {
			t.Errorf("%s: %v, want unsupported.checkpoint_no_repo (not_tracked)", dir, err)
			continue
		}
		if hints := strings.Join(e.Hints, "\n"); !strings.Contains(hints, "git init") || !strings.Contains(hints, "-C "+r.Dir) {
			t.Errorf("%s: hints %q", dir, e.Hints)
		}
	}
	if added := r.AssertUnchanged(before); len(added) > 0 {
		t.Errorf("the refusals made refs %v", added)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "venom", "log.jsonl")); err == nil {
		t.Errorf("a refusal wrote the log")
	}
	for _, dir := range []string{".", "src", "src/deep"} {
		tr, err := checkpoint.OpenTree(context.Background(), r.Path(dir))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if tr.Path() != r.Dir {
			t.Errorf("%s: tree %s, want %s", dir, tr.Path(), r.Dir)
		}
	}
	// The project, once it is a repository of its own, is its own tree.
	p := &gittest.Repo{T: t, Dir: r.Path("code/project")}
	p.Git("init", "-q")
	tr, err := checkpoint.OpenTree(context.Background(), r.Path("code/project"))
	if err != nil || tr.Path() != r.Path("code/project") {
		t.Errorf("after git init: %v", err)
	}
}

// TestOpenTreeErrors: outside a repository and in a bare one the error is
// unsupported.checkpoint_no_repo, saying which.
func TestOpenTreeErrors(t *testing.T) {
	t.Parallel()
	gittest.Setup()
	outside := t.TempDir()
	_, err := checkpoint.OpenTree(context.Background(), outside)
	if e := rfcerr.As(err); e == nil || e.Code != "unsupported.checkpoint_no_repo" {
		t.Errorf("outside: %v", err)
	}
	r := gittest.New(t)
	r.Git("init", "-q", "--bare", "b.git")
	_, err = checkpoint.OpenTree(context.Background(), r.Path("b.git"))
	if e := rfcerr.As(err); e == nil || e.Code != "unsupported.checkpoint_no_repo" || !strings.Contains(e.Message, "bare") {
		t.Errorf("bare: %v", err)
	}
}

// TestNonUTF8Names: names that are not UTF-8 are captured exactly, and the
// log keeps them exactly in skipped[] and submodules[], so a listing names
// the real files.
func TestNonUTF8Names(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	if !gittest.NonUTF8Names(t, r.Dir) {
		t.Skip("the filesystem refuses these names")
	}
	r.Git("config", "venom.checkpoints.maxFileBytes", "100")
	r.Write("caf\xe9.txt", "latin-1 name\n")
	r.Write("\xff.bin", strings.Repeat("x", 101))
	r.Write("\xfe.bin", strings.Repeat("y", 102))
	os.MkdirAll(r.Path("\xfd-repo"), 0o755)
	n := &gittest.Repo{T: t, Dir: r.Path("\xfd-repo")}
	n.Git("init", "-q")
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	if got, _ := r.Show(res.Checkpoint.Repos[0].Commit, "caf\xe9.txt"); got != "latin-1 name\n" {
		t.Errorf("caf\\xe9.txt = %q", got)
	}
	tr := openTree(t, r)
	st, err := tr.Log.Load()
	if err != nil {
		t.Fatal(err)
	}
	l, err := tr.List(context.Background(), st, "a1", checkpoint.ListOptions{})
	if err != nil || len(l.Checkpoints) != 1 {
		t.Fatalf("list: %+v %v", l, err)
	}
	rs := l.Checkpoints[0].Repos[0]
	var skipped []string
	for _, s := range rs.Skipped {
		skipped = append(skipped, s.Path)
	}
	if strings.Join(skipped, "|") != "\xfe.bin|\xff.bin" && strings.Join(skipped, "|") != "\xff.bin|\xfe.bin" {
		t.Errorf("skipped %q", skipped)
	}
	if len(rs.Submodules) != 1 || rs.Submodules[0].Path != "\xfd-repo" {
		t.Errorf("submodules %+v", rs.Submodules)
	}
}

// TestTornLogLine: with half a line at the end of the log (a crash
// mid-append), listing ignores it, the next capture cuts it off and its
// record gets the next seq, and ids continue from the whole records.
func TestTornLogLine(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_start"})
	logPath := filepath.Join(r.GitDir, "venom", "log.jsonl")
	whole, _ := os.ReadFile(logPath)
	recs, _, _ := journal.Parse(whole)
	lastSeq := recs[len(recs)-1].Seq
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":` + fmt.Sprint(lastSeq+1) + `,"ts":"2026-01-02T03:04:05.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k2","rea`)
	f.Close()

	tr := openTree(t, r)
	st, err := tr.Log.Load()
	if err != nil || !st.Torn {
		t.Fatalf("load: torn %v err %v", st != nil && st.Torn, err)
	}
	l, err := tr.List(context.Background(), st, "a1", checkpoint.ListOptions{})
	if err != nil || len(l.Checkpoints) != 1 || l.Checkpoints[0].Checkpoint != "k1" {
		t.Fatalf("list with a torn line: %+v %v", l, err)
	}
	r.Write("a", "edited\n")
	res := take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_end"})
	if res.Checkpoint.Checkpoint != "k2" {
		t.Errorf("took %s, want k2", res.Checkpoint.Checkpoint)
	}
	data, _ := os.ReadFile(logPath)
	if !strings.HasPrefix(string(data), string(whole)) || strings.Contains(string(data), `"rea{`) {
		t.Errorf("the torn line was not cut off:\n%s", data)
	}
	recs, torn, err := journal.Parse(data)
	if err != nil || torn {
		t.Fatalf("after: torn %v err %v", torn, err)
	}
	for i, rec := range recs {
		if rec.Seq != int64(i+1) {
			t.Errorf("record %d has seq %d", i+1, rec.Seq)
		}
	}
}
