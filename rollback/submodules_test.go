package rollback_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

// subFixture is a fixture whose tree has the submodules lib and lib/in,
// nested two deep, checked out (gittest.Repo.Submodules), and a file a of
// its own.
func subFixture(t *testing.T, guarded bool) (f *fixture, lib, in *gittest.Repo) {
	t.Helper()
	f = newFixture(t, guarded)
	f.r.Write("a", "a1\n")
	f.r.Commit("init")
	lib, in = f.r.Submodules()
	return f, lib, in
}

// agentTurn is one turn of the agent that edits in every repository: a
// file of the top, of lib and of lib/in modified, one created in lib/in
// and one deleted in lib. It returns the turn's start and end.
func agentTurn(t *testing.T, f *fixture, lib, in *gittest.Repo) (k1, k2 string) {
	t.Helper()
	lib.Write("gone", "g\n")
	lib.Commit("gone")
	f.r.Commit("lib moved") // the top's gitlink follows
	k1 = f.take(checkpoint.ReasonTurnStart)
	f.r.Write("a", "a2 (the agent's)\n")
	lib.Write("l", "l2 (the agent's)\n")
	os.Remove(lib.Path("gone"))
	in.Write("i", "i2 (the agent's)\n")
	in.Write("made", "by the agent\n")
	k2 = f.take(checkpoint.ReasonTurnEnd)
	return k1, k2
}

// repoFiles is the path of each file a result lists per repository.
func repoFiles(res *rollback.Result) map[string][]string {
	out := map[string][]string{}
	for _, r := range res.Repos {
		ps := []string{}
		for _, f := range r.Files {
			ps = append(ps, f.Change+" "+f.Path)
		}
		out[r.Repo] = ps
	}
	return out
}

// TestAgentsEditsInSubmodulesRollBack pins issue 18: an agent's edits
// inside submodules, two deep, are rolled back exactly with the top's
// files, each repository planned in repos order with its own files, in
// a guarded tree (HEAD and every index stay) and in an unguarded one; and
// the undo, the rollback to the safety checkpoint, gives every
// repository back as it was.
func TestAgentsEditsInSubmodulesRollBack(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		t.Run(fmt.Sprintf("guarded=%v", guarded), func(t *testing.T) {
			f, lib, in := subFixture(t, guarded)
			start := disk(t, f.r.Dir)
			k1, _ := agentTurn(t, f, lib, in)
			start = disk(t, f.r.Dir)
			_ = start
			f.r.Git("stash", "list") // nothing
			before := disk(t, f.r.Dir)
			idx := map[string]string{".": indexBytes(t, f.r), "lib": indexBytes(t, lib), "lib/in": indexBytes(t, in)}
			heads := map[string]string{".": f.r.Line("rev-parse", "HEAD"), "lib": lib.Line("rev-parse", "HEAD"), "lib/in": in.Line("rev-parse", "HEAD")}
			o := rollback.Options{Restore: "files"}
			plan, res, err := f.rollback(k1, o)
			if err != nil {
				t.Fatalf("rollback: %s", describe(err))
			}
			want := map[string][]string{
				".":      {"modify a"},
				"lib":    {"create gone", "modify l"},
				"lib/in": {"modify i", "delete made"},
			}
			for _, got := range []map[string][]string{repoFiles(plan), repoFiles(res)} {
				for k, v := range got {
					sortStrings(v)
					got[k] = v
				}
				for k, v := range want {
					sortStrings(v)
					want[k] = v
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("files by repository %v, want %v", got, want)
				}
			}
			var names []string
			for _, r := range res.Repos {
				names = append(names, r.Repo)
			}
			if strings.Join(names, " ") != ". lib lib/in" {
				t.Errorf("repos %v, want . lib lib/in in that order", names)
			}
			if res.Exact == nil || !*res.Exact {
				t.Errorf("exact %v, want true", res.Exact)
			}
			for rel, r := range map[string]*gittest.Repo{".": f.r, "lib": lib, "lib/in": in} {
				if h := r.Line("rev-parse", "HEAD"); h != heads[rel] {
					t.Errorf("%s: HEAD moved from %s to %s", rel, heads[rel], h)
				}
				if guarded && indexBytes(t, r) != idx[rel] {
					t.Errorf("%s: the index of a guarded tree changed", rel)
				}
			}
			for p, want := range map[string]string{"a": "a1\n", "lib/l": "l1\n", "lib/gone": "g\n", "lib/in/i": "i1\n"} {
				if got := f.r.Read(p); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			if _, err := os.Lstat(f.r.Path("lib/in/made")); !os.IsNotExist(err) {
				t.Errorf("lib/in/made is still there: %v", err)
			}
			// The undo restores every repository.
			undo := rollback.Options{Restore: "files"}
			if guarded {
				undo.Outside = "overwrite"
			}
			if _, _, err := f.rollback(res.Safety, undo); err != nil {
				t.Fatalf("undo: %s", describe(err))
			}
			if d := diffEntries(before, disk(t, f.r.Dir)); d != "" {
				t.Errorf("after the undo, the tree differs from before the rollback:\n%s", d)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestPersonsEditInASubmoduleIsOutside pins RFC 7.3 per repository: a
// person's edit inside a submodule between turns is outside, refused in a
// guarded tree (conflict.outside_edits naming the submodule) and kept
// with --outside keep while the rest is restored.
func TestPersonsEditInASubmoduleIsOutside(t *testing.T) {
	f, lib, in := subFixture(t, true)
	k1, _ := agentTurn(t, f, lib, in)
	in.Write("i", "the person's\n")
	_, err := f.plan(k1, rollback.Options{Restore: "files"})
	e := rfcerr.As(err)
	if e == nil || e.Code != "conflict.outside_edits" {
		t.Fatalf("plan: %s, want conflict.outside_edits", describe(err))
	}
	if got := fmt.Sprint(e.Data["repos"]); got != "[map[changes:[modify] paths:[i] repo:lib/in]]" {
		t.Errorf("data.repos %s, want lib/in's i", got)
	}
	_, res, err := f.rollback(k1, rollback.Options{Restore: "files", Outside: "keep"})
	if err != nil {
		t.Fatalf("rollback --outside keep: %s", describe(err))
	}
	if got := f.r.Read("lib/in/i"); got != "the person's\n" {
		t.Errorf("lib/in/i = %q, want the person's edit kept", got)
	}
	if got := f.r.Read("lib/l"); got != "l1\n" {
		t.Errorf("lib/l = %q, want it restored", got)
	}
	var left []rollback.Left
	for _, r := range res.Repos {
		if r.Repo == "lib/in" {
			left = r.Left
		}
	}
	if len(left) != 1 || left[0].Path != "i" || left[0].Reason != "outside" {
		t.Errorf("lib/in's left %+v, want i outside", left)
	}
}

// TestSubmoduleHeadGoesBackOnlyUnguarded pins RFC 7.5 per repository: a
// commit the agent made inside a submodule is dropped (the submodule's
// HEAD goes back, and the top leaves no gitlink for it) in an unguarded
// tree; in a guarded one the submodule's HEAD stays, its files go back,
// and the top leaves its gitlink with the target's commit in detail.
func TestSubmoduleHeadGoesBackOnlyUnguarded(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("guarded=%v", guarded), func(t *testing.T) {
			f, lib, _ := subFixture(t, guarded)
			k1 := f.take(checkpoint.ReasonTurnStart)
			l0 := lib.Line("rev-parse", "HEAD")
			lib.Write("l", "l2, committed by the agent\n")
			l1 := lib.Commit("agent")
			f.take(checkpoint.ReasonTurnEnd)
			_, res, err := f.rollback(k1, rollback.Options{Restore: "files"})
			if err != nil {
				t.Fatalf("rollback: %s", describe(err))
			}
			if got := f.r.Read("lib/l"); got != "l1\n" {
				t.Errorf("lib/l = %q, want l1", got)
			}
			var top, sub rollback.Repo
			for _, r := range res.Repos {
				switch r.Repo {
				case ".":
					top = r
				case "lib":
					sub = r
				}
			}
			h := lib.Line("rev-parse", "HEAD")
			if guarded {
				if h != l1 || sub.Head.Moves {
					t.Errorf("guarded: lib's HEAD %s (moves %v), want it to stay at %s", h, sub.Head.Moves, l1)
				}
				if len(top.Left) != 1 || top.Left[0].Path != "lib" || top.Left[0].Reason != "gitlink" || top.Left[0].Detail != l0 {
					t.Errorf("guarded: the top's left %+v, want lib gitlink %s", top.Left, l0)
				}
				return
			}
			if h != l0 || !sub.Head.Moves || sub.Head.Commits != 1 {
				t.Errorf("unguarded: lib's HEAD %s (head %+v), want it back at %s over 1 commit", h, sub.Head, l0)
			}
			if len(top.Left) != 0 {
				t.Errorf("unguarded: the top's left %+v, want none (lib's HEAD went back)", top.Left)
			}
			if st := lib.Git("status", "--porcelain"); st != "" {
				t.Errorf("lib's status after its HEAD went back: %q", st)
			}
			if res.Exact == nil || !*res.Exact {
				t.Errorf("exact %v", res.Exact)
			}
		})
	}
}

// TestFailureInASubmoduleUndoesEveryRepository pins RFC 7.6 across
// repositories: a write that fails in the last repository (a required
// smudge filter that fails, in lib/in) undoes the writes already done in
// the top and in lib: failed.rollback_undone, every repository as before.
func TestFailureInASubmoduleUndoesEveryRepository(t *testing.T) {
	f, lib, in := subFixture(t, false)
	in.Write(".gitattributes", "i filter=boom\n")
	in.Commit("attrs")
	lib.Commit("in moved")
	f.r.Commit("lib moved")
	k1, _ := agentTurn(t, f, lib, in)
	before := disk(t, f.r.Dir)
	in.Git("config", "filter.boom.smudge", "false")
	in.Git("config", "filter.boom.clean", "cat")
	in.Git("config", "filter.boom.required", "true")
	_, _, err := f.rollback(k1, rollback.Options{Restore: "files"})
	if code(err) != "failed.rollback_undone" {
		t.Fatalf("rollback: %s, want failed.rollback_undone", describe(err))
	}
	if d := diffEntries(before, disk(t, f.r.Dir)); d != "" {
		t.Errorf("after the failure, the tree differs from before:\n%s", d)
	}
}
