package checkpoint_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// TestListAndFind: agent.checkpoints is newest first with the --turn,
// --before and --limit filters; a ref that is gone or moved marks its
// checkpoint missing in the list and makes Find not_found.checkpoint, as a
// checkpoint from another tree or one never taken does.
func TestListAndFind(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	// k1 t1 start, k2 t1 end, k3 t2 start, k4 manual mid t2, k5 t2 end.
	for i, reason := range []string{"turn_start", "turn_end", "turn_start", "manual", "turn_end"} {
		r.Write("a", strings.Repeat("x", i+1)+"\n")
		take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: reason})
	}
	tr := openTree(t, r)
	ctx := context.Background()
	list := func(o checkpoint.ListOptions) string {
		t.Helper()
		st, err := tr.Log.Load()
		if err != nil {
			t.Fatal(err)
		}
		l, err := tr.List(ctx, st, "a1", o)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range l.Checkpoints {
			id := c.Checkpoint
			if c.Missing {
				id += "!"
			}
			ids = append(ids, id)
		}
		return strings.Join(ids, " ")
	}
	for _, tc := range []struct {
		o    checkpoint.ListOptions
		want string
	}{
		{checkpoint.ListOptions{}, "k5 k4 k3 k2 k1"},
		{checkpoint.ListOptions{Turn: "t2"}, "k5 k4 k3"},
		{checkpoint.ListOptions{Turn: "t9"}, ""},
		{checkpoint.ListOptions{Before: "k4"}, "k3 k2 k1"},
		{checkpoint.ListOptions{Before: "k4", Limit: 2}, "k3 k2"},
		{checkpoint.ListOptions{Limit: 1}, "k5"},
	} {
		if got := list(tc.o); got != tc.want {
			t.Errorf("list %+v = %q, want %q", tc.o, got, tc.want)
		}
	}
	st, _ := tr.Log.Load()
	if _, err := tr.List(ctx, st, "a1", checkpoint.ListOptions{Before: "x"}); rfcerr.Code(err) != "invalid_params.checkpoint" {
		t.Errorf("bad --before: %v", err)
	}
	if l, err := tr.List(ctx, st, "nobody", checkpoint.ListOptions{}); err != nil || len(l.Checkpoints) != 0 || l.Agent != "nobody" {
		t.Errorf("unknown agent: %+v %v", l, err)
	}

	k1 := r.Line("rev-parse", "refs/venom/checkpoints/a1/1")
	r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/2")
	r.Git("update-ref", "refs/venom/checkpoints/a1/3", k1)
	if got := list(checkpoint.ListOptions{}); got != "k5 k4 k3! k2! k1" {
		t.Errorf("list with a gone and a moved ref = %q", got)
	}
	st, _ = tr.Log.Load()
	for id, want := range map[string]string{
		"k1": "", "k2": "not_found.checkpoint", "k3": "not_found.checkpoint", "k9": "not_found.checkpoint", "kx": "invalid_params.checkpoint",
	} {
		_, err := tr.Find(ctx, st, "a1", id)
		if got := map[bool]string{true: "", false: rfcerr.Code(err)}[err == nil]; got != want {
			t.Errorf("Find(%s) = %v, want %q", id, err, want)
		}
	}

	// From another worktree of the same repository: the refs are shared,
	// the checkpoint is not (BR-51).
	wt := filepath.Join(t.TempDir(), "wt")
	r.Git("worktree", "add", "-q", "--detach", wt)
	other, err := checkpoint.OpenTree(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Find(ctx, st, "a1", "k1")
	if e := rfcerr.As(err); e == nil || e.Code != "not_found.checkpoint" || e.Data["tree"] != r.Dir {
		t.Errorf("Find from another worktree: %v", err)
	}
	if l, _ := other.List(ctx, st, "a1", checkpoint.ListOptions{}); len(l.Checkpoints) != 5 {
		t.Errorf("list from another worktree: %d checkpoints", len(l.Checkpoints))
	}
}

// TestResolveAgent: the flag, else the only agent with checkpoints in this
// tree, else "default"; several are invalid_params.agent with candidates.
func TestResolveAgent(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	tr := openTree(t, r)
	st, _ := tr.Log.Load()
	if id, err := tr.ResolveAgent("", st); err != nil || id != "default" {
		t.Errorf("no agents: %q %v", id, err)
	}
	take(t, r, checkpoint.TakeOptions{Agent: "solo", Reason: "manual"})
	st, _ = tr.Log.Load()
	if id, err := tr.ResolveAgent("", st); err != nil || id != "solo" {
		t.Errorf("one agent: %q %v", id, err)
	}
	take(t, r, checkpoint.TakeOptions{Agent: "b2", Reason: "manual"})
	st, _ = tr.Log.Load()
	_, err := tr.ResolveAgent("", st)
	if e := rfcerr.As(err); e == nil || e.Code != "invalid_params.agent" || strings.Join(e.Data["candidates"].([]string), ",") != "b2,solo" {
		t.Errorf("two agents: %v", err)
	}
	if id, err := tr.ResolveAgent("b2", st); err != nil || id != "b2" {
		t.Errorf("flag: %q %v", id, err)
	}
	if _, err := tr.ResolveAgent("Bad", st); rfcerr.Code(err) != "invalid_params.agent" {
		t.Errorf("bad flag: %v", err)
	}
}
