package checkpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// TestFindSaysARefMovedToABlobOrTree: a checkpoint ref someone pointed at
// a blob, a tree or another commit has moved, and Find says so and what it
// points at now; only a ref that is not there is gone. The doctor's line
// and the listing tell the two apart the same way.
func TestFindSaysARefMovedToABlobOrTree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	for i := 0; i < 5; i++ {
		r.Write("a", strings.Repeat("x", i+1)+"\n")
		take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: "manual"})
	}
	blob := r.Line("hash-object", "-w", "--stdin")
	tree := r.Line("rev-parse", "refs/venom/checkpoints/a1/1^{tree}")
	commit := r.Line("rev-parse", "refs/venom/checkpoints/a1/1")
	r.Git("update-ref", "refs/venom/checkpoints/a1/2", blob)
	r.Git("update-ref", "refs/venom/checkpoints/a1/3", tree)
	r.Git("update-ref", "refs/venom/checkpoints/a1/4", commit)
	r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/5")
	tr := openTree(t, r)
	ctx := context.Background()
	st, err := tr.Log.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, want, actual string
	}{
		{"k2", "has moved: it points at blob " + blob + " now", blob},
		{"k3", "has moved: it points at tree " + tree + " now", tree},
		{"k4", "has moved: it points at commit " + commit + " now", commit},
		{"k5", "is gone", ""},
	} {
		_, err := tr.Find(ctx, st, "a1", tc.id)
		e := rfcerr.As(err)
		if e == nil || e.Code != "not_found.checkpoint" {
			t.Fatalf("Find(%s) = %v, want not_found.checkpoint", tc.id, err)
		}
		if !strings.Contains(e.Message, tc.want) {
			t.Errorf("Find(%s): %q, want it to say %q", tc.id, e.Message, tc.want)
		}
		if tc.id != "k5" && strings.Contains(e.Message, "gone") {
			t.Errorf("Find(%s) says the ref is gone: %q", tc.id, e.Message)
		}
		actual, _ := e.Data["actual"].(*string)
		if (actual == nil) != (tc.actual == "") || (actual != nil && *actual != tc.actual) {
			t.Errorf("Find(%s): data.actual %v, want %q", tc.id, e.Data["actual"], tc.actual)
		}
	}
	// The listing tells them apart too: missing for both (no plan can
	// use either), moved only where the ref is there, holding another
	// object.
	l, err := tr.List(ctx, st, "a1", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string][2]bool{}
	for _, it := range l.Checkpoints {
		moved[it.Checkpoint] = [2]bool{it.Missing, it.Moved}
	}
	for id, want := range map[string][2]bool{"k1": {false, false}, "k2": {true, true}, "k3": {true, true}, "k4": {true, true}, "k5": {true, false}} {
		if moved[id] != want {
			t.Errorf("List: %s missing, moved = %v, want %v", id, moved[id], want)
		}
	}
	var refsLine string
	for _, c := range tr.Doctor(ctx) {
		if c.ID == "checkpoints.refs" {
			refsLine = c.Message
		}
	}
	for _, want := range []string{
		"1 checkpoint(s) whose ref is gone (not_found.checkpoint): a1/k5",
		"a1/k2 (now a blob " + blob[:10] + ")",
		"a1/k3 (now a tree " + tree[:10] + ")",
		"a1/k4 (now another commit " + commit[:10] + ")",
	} {
		if !strings.Contains(refsLine, want) {
			t.Errorf("doctor: %q, want it to say %q", refsLine, want)
		}
	}
}
