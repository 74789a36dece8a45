package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
)

func TestRecordEdit(t *testing.T) {
	r := newRepo(t)
	r.Write(".gitignore", "*.log\n")
	r.Commit("ignore logs")
	tr := openTree(t, r)
	ctx := context.Background()

	// Between turns: recorded, with no turn.
	rec, err := tr.RecordEdit(ctx, "a1", []string{r.Path("a")})
	if err != nil || rec.Turn != "" || !reflect.DeepEqual(rec.Paths, []string{"a"}) {
		t.Fatalf("edit between turns: %+v, %v", rec, err)
	}

	take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonTurnStart})
	// Another spelling of the tree (a symlink to it), a relative path, a
	// path with dot components, a duplicate, a file in a directory that does
	// not exist yet, and an ignored file (kept for ignored_edits).
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(r.Dir, alias); err != nil {
		t.Fatal(err)
	}
	rec, err = tr.RecordEdit(ctx, "a1", []string{
		filepath.Join(alias, "src", "new", "file.go"),
		"b.txt",
		r.Path("x/../a"),
		r.Path("a"),
		r.Path("build.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b.txt", "build.log", "src/new/file.go"}
	if rec.Turn != "t1" || !reflect.DeepEqual(rec.Paths, want) || rec.Path != r.Dir {
		t.Errorf("edit %+v, want turn t1, paths %q, path %s", rec, want, r.Dir)
	}
	edits := logRecords(t, r, journal.TypeEdit)
	if len(edits) != 2 || edits[0]["turn"] != "" || edits[1]["turn"] != "t1" {
		t.Errorf("edit records %v", edits)
	}
}

// A path outside the tree, the root itself or a .git directory refuses the
// whole record, so a caller never half-records a list.
func TestRecordEditRefusals(t *testing.T) {
	r := newRepo(t)
	tr := openTree(t, r)
	ctx := context.Background()
	for _, c := range []struct {
		paths []string
		why   string
	}{
		{[]string{"/etc/hosts"}, "outside"},
		{[]string{r.Path("a"), filepath.Join(r.Dir, "..", "sibling")}, "outside"},
		{[]string{r.Dir}, "root"},
		{[]string{"."}, "root"},
		{[]string{".git/config"}, "git_dir"},
		{[]string{r.Path("vendor/lib/.git/HEAD")}, "git_dir"},
	} {
		_, err := tr.RecordEdit(ctx, "a1", c.paths)
		e := rfcerr.As(err)
		if e == nil || e.Code != "invalid_params.path" {
			t.Errorf("%q: err %v, want invalid_params.path", c.paths, err)
			continue
		}
		bad, _ := e.Data["paths"].([]map[string]any)
		if len(bad) != 1 || bad[0]["why"] != c.why {
			t.Errorf("%q: data %v, want why %s", c.paths, e.Data, c.why)
		}
	}
	if _, err := tr.RecordEdit(ctx, "a1", nil); rfcerr.Code(err) != "invalid_params.path" {
		t.Errorf("no paths: %v", err)
	}
	if _, err := tr.RecordEdit(ctx, "Bad/Agent", []string{"a"}); rfcerr.Code(err) != "invalid_params.agent" {
		t.Errorf("bad agent: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "venom", "log.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a refused edit wrote the log: %v", err)
	}
}

// An edit that arrives while a capture of its agent runs waits for it, so
// it lands after the capture's turn records and names the right turn (here
// none: the capture was the turn's end). A capture that outlasts
// venom.checkpoints.timeout makes the edit time out instead of hanging.
func TestRecordEditWaitsForCapture(t *testing.T) {
	r := newRepo(t)
	take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: checkpoint.ReasonTurnStart})
	tr := openTree(t, r)
	lk, err := journal.LockFile(tr.Log.LockPath(checkpoint.AgentLock("a1")), true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *journal.Edit)
	go func() {
		rec, err := tr.RecordEdit(context.Background(), "a1", []string{"a"})
		if err != nil {
			t.Error(err)
		}
		done <- rec
	}()
	time.Sleep(100 * time.Millisecond)
	// What Take does at the end of a turn_end capture, under the lock.
	if _, err := tr.Log.Append(journal.Entry{Type: journal.TypeTurnEnded, Body: journal.TurnEnded{Agent: "a1", Turn: "t1"}}); err != nil {
		t.Fatal(err)
	}
	lk.Unlock()
	if rec := <-done; rec == nil || rec.Turn != "" {
		t.Errorf("edit after the turn's end names turn %+v", rec)
	}

	lk, _ = journal.LockFile(tr.Log.LockPath(checkpoint.AgentLock("a1")), true)
	defer lk.Unlock()
	tr.Config.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err = tr.RecordEdit(context.Background(), "a1", []string{"a"})
	if rfcerr.Code(err) != "timeout.checkpoint" || time.Since(start) > 5*time.Second {
		t.Errorf("edit during a stuck capture: %v after %v", err, time.Since(start))
	}
}

// OpenTurn reads only the log's tail; it must agree with a full replay
// through every turn pattern Take writes, with two agents whose ids share
// a prefix, and past a torn last line.
func TestOpenTurnMatchesReplay(t *testing.T) {
	r := newRepo(t)
	tr := openTree(t, r)
	check := func(step string) {
		t.Helper()
		st, err := tr.Log.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, agent := range []string{"a", "a1", "never"} {
			want := ""
			if ag := st.Agents[agent]; ag != nil && ag.OpenTurn() != nil {
				want = ag.OpenTurn().ID()
			}
			got, err := tr.OpenTurn(agent)
			if err != nil || got != want {
				t.Errorf("after %s: OpenTurn(%s) = %q, %v; replay says %q", step, agent, got, err, want)
			}
		}
	}
	check("nothing")
	for i, s := range []struct{ agent, reason string }{
		{"a", checkpoint.ReasonTurnStart},
		{"a1", checkpoint.ReasonTurnStart},
		{"a", checkpoint.ReasonManual},
		{"a", checkpoint.ReasonTurnEnd},
		{"a", checkpoint.ReasonTurnEnd},    // no open turn: opens and closes one
		{"a1", checkpoint.ReasonTurnStart}, // synthetic end, then t2
		{"a", checkpoint.ReasonTurnStart},
		{"a1", checkpoint.ReasonTurnEnd},
	} {
		r.Write("f", fmt.Sprint(i))
		take(t, r, checkpoint.TakeOptions{Agent: s.agent, Reason: s.reason})
		if _, err := tr.RecordEdit(context.Background(), s.agent, []string{"f"}); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("step %d (%s %s)", i, s.agent, s.reason))
	}
	f, err := os.OpenFile(tr.Log.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `{"seq":99,"type":"turn.started","agent":"a1","turn":"t9"`)
	f.Close()
	check("a torn line")
}
