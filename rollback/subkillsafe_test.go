package rollback_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// Issue 18 with issue 13: a submodule's files are written by the same
// kill-safe path as the top's (rollback/writes.go, one applier per
// repository): what a rollback replaces in a submodule goes to a backup
// in the submodule's own git dir, a save made there while the rollback
// runs is left (changed_during_rollback) or rescued under the
// submodule's refs/venom/rescued/, a killed rollback's backups there are
// looked at by the next command, and an interruption anywhere undoes
// every repository.

// subState is the files of the whole tree (every repository's work
// tree, the top's disk walk) and each submodule's HEAD.
type subState struct {
	files map[string]entry
	heads map[string]string
}

func subStateOf(t testing.TB, f *fixture, subs ...*gittest.Repo) subState {
	t.Helper()
	s := subState{files: files(disk(t, f.r.Dir)), heads: map[string]string{}}
	for _, r := range append([]*gittest.Repo{f.r}, subs...) {
		s.heads[r.Dir], _ = head(r)
	}
	return s
}

func (s subState) changes(t testing.TB, f *fixture, subs ...*gittest.Repo) string {
	t.Helper()
	var out []string
	if d := diffEntries(s.files, files(disk(t, f.r.Dir))); d != "" {
		out = append(out, "files:\n"+d)
	}
	for _, r := range append([]*gittest.Repo{f.r}, subs...) {
		if h, _ := head(r); h != s.heads[r.Dir] {
			out = append(out, fmt.Sprintf("%s: HEAD is %s, was %s", r.Dir, h, s.heads[r.Dir]))
		}
	}
	return strings.Join(out, "\n")
}

// TestInterruptedRollbackOfSubmodulesGoesBackToS is
// TestInterruptedRollbackGoesBackToS for a rollback of three
// repositories interrupted (SIGINT, SIGHUP) at a submodule's own steps:
// after the top's writes and lib's (so both must go back), and after
// lib's HEAD moved. failed.rollback_undone, every repository's files and
// HEAD as before.
func TestInterruptedRollbackOfSubmodulesGoesBackToS(t *testing.T) {
	t.Parallel()
	for _, guarded := range []bool{false, true} {
		for _, at := range []string{"rollback.sub-deleted", "rollback.sub-written", "rollback.sub-head-moved"} {
			if guarded && at == "rollback.sub-head-moved" {
				continue // a guarded tree never moves HEAD
			}
			for _, sig := range []string{"int", "hup"} {
				t.Run(fmt.Sprintf("%s:%s/guarded=%v", at, sig, guarded), func(t *testing.T) {
					t.Parallel()
					f, args, subs := subCrashScenario(t, guarded)
					before := subStateOf(t, f, subs...)
					interruptIsUndone(t, f, args, at+":"+sig)
					if d := before.changes(t, f, subs...); d != "" {
						t.Errorf("interrupted at %s, the tree is not as it was:\n%s", at, d)
					}
				})
			}
		}
	}
}

// TestSaveInASubmoduleDuringRollbackIsLeft: a person saves a planned
// file of lib just before the rollback comes to lib's writes (the exec
// action at rollback.sub-deleted, which fires once: lib's). The save is
// kept as it is, lib's entry in the result lists it in left with reason
// changed_during_rollback (and not in files), the rest of every
// repository is rolled back, and exact is false.
func TestSaveInASubmoduleDuringRollbackIsLeft(t *testing.T) {
	t.Parallel()
	for _, guarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("guarded=%v", guarded), func(t *testing.T) {
			t.Parallel()
			f, lib, in := subFixture(t, guarded)
			k1, _ := agentTurn(t, f, lib, in)
			args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
			plan := planOf(t, f.r, args)
			real := realCall(t, f.r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.sub-deleted:exec",
				"GIT_VENOM_TEST_FAILPOINT_EXEC=printf 'saved by a person\\n' > lib/l")
			var res rollbackOut
			if err := json.Unmarshal([]byte(real.stdout), &res); err != nil || real.exit != 0 {
				t.Fatalf("rollback: exit %d, %v\n%s%s", real.exit, err, real.stdout, real.stderr)
			}
			if got := lib.Read("l"); got != "saved by a person\n" {
				t.Errorf("lib/l is %q: the save made during the rollback was not kept", got)
			}
			if len(res.Repos) != 3 {
				t.Fatalf("repos: %d, want 3", len(res.Repos))
			}
			found := false
			for _, l := range res.Repos[1].Left {
				found = found || (l.Path == "l" && l.Reason == "changed_during_rollback")
			}
			if !found {
				t.Errorf("lib's left %v does not list l as changed_during_rollback", res.Repos[1].Left)
			}
			for _, fl := range res.Repos[1].Files {
				if fl.Path == "l" {
					t.Errorf("l is still in lib's files")
				}
			}
			if res.Exact == nil || *res.Exact {
				t.Errorf("exact is %v with a path left as saved", res.Exact)
			}
			// The rest went back: the top's file, lib's deletion, lib/in's.
			if got := f.r.Read("a"); got != "a1\n" {
				t.Errorf("a is %q, want a1", got)
			}
			if got := lib.Read("gone"); got != "g\n" {
				t.Errorf("lib/gone is %q, want it back", got)
			}
			if got := in.Read("i"); got != "i1\n" {
				t.Errorf("lib/in/i is %q, want i1", got)
			}
			if _, err := os.Lstat(in.Path("made")); !os.IsNotExist(err) {
				t.Errorf("lib/in/made is still there: %v", err)
			}
		})
	}
}

// slowSubTree is newSlowTree's rollback inside the submodule lib: k1 to
// k2 rewrites n files of lib through lib's slow smudge filter.
func slowSubTree(t *testing.T, n int) (*slowTree, *gittest.Repo) {
	t.Helper()
	f, lib, _ := subFixture(t, false)
	started := slowFilter(t, lib)
	var paths []string
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		paths = append(paths, p)
		lib.Write(p, fmt.Sprintf("one %d\n", i))
	}
	lib.Commit("slow files")
	f.r.Commit("lib moved")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i, p := range paths {
		lib.Write(p, fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	return &slowTree{f: f, args: args, paths: paths, started: started}, lib
}

// TestSaveThroughAHeldOpenFileInASubmoduleIsRescued is
// TestSaveThroughAFileHeldOpenIsRescued inside the submodule lib: the
// saves are in lib's entry of the result, rescued[] with repo lib, their
// bytes under a ref of lib's own (git -C lib show), whose parent is lib's
// commit of the safety checkpoint.
func TestSaveThroughAHeldOpenFileInASubmoduleIsRescued(t *testing.T) {
	t.Parallel()
	s, lib := slowSubTree(t, 40)
	held := holdOpen(t, lib, s.paths[:6])
	cmd, out := s.start(t)
	saveThrough(t, held)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rollback: %v\n%s", err, out)
	}
	var res struct {
		Exact *bool `json:"exact"`
		Repos []struct {
			Repo    string `json:"repo"`
			Rescued []struct {
				Repo string `json:"repo"`
				Path string `json:"path"`
				Ref  string `json:"ref"`
			} `json:"rescued"`
		} `json:"repos"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Repos) < 2 || res.Repos[1].Repo != "lib" {
		t.Fatalf("repos: %+v", res.Repos)
	}
	if len(res.Repos[0].Rescued) != 0 {
		t.Errorf("the top's entry lists saves: %+v", res.Repos[0].Rescued)
	}
	got := map[string]string{}
	for _, rs := range res.Repos[1].Rescued {
		if rs.Repo != "lib" {
			t.Errorf("rescued %s has repo %q, want lib", rs.Path, rs.Repo)
		}
		got[rs.Path] = rs.Ref
	}
	for p := range held {
		ref, ok := got[p]
		if !ok {
			t.Errorf("the save to lib/%s is not in lib's rescued %+v", p, res.Repos[1].Rescued)
			continue
		}
		if show, ok := lib.Show(ref, p); !ok || !strings.HasPrefix(show, "held open and saved: "+p+"\n") {
			t.Errorf("git -C lib show %s:%s is %q (%v)", ref, p, show, ok)
		}
		if _, err := s.f.r.GitErr("rev-parse", "-q", "--verify", ref); err == nil {
			t.Errorf("%s is in the top repository; it belongs to lib's", ref)
		}
	}
	if len(got) > 0 {
		ref := res.Repos[1].Rescued[0].Ref
		if parent := lib.Line("rev-parse", ref+"^"); parent != lib.Line("rev-parse", s.f.ref("k3")) {
			t.Errorf("%s's parent is %s, not lib's commit of the safety checkpoint k3", ref, parent)
		}
		if ended := records(t, s.f.r, "rollback.ended"); len(ended) != 1 || ended[0]["rescued"] != ref {
			t.Errorf("rollback.ended does not name %s: %v", ref, ended)
		}
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with saves rescued", res.Exact)
	}
	if left, _ := filepath.Glob(filepath.Join(lib.GitDir, "venom", "tmp", "backup-*")); len(left) != 0 {
		t.Errorf("backup directories left in lib's git dir: %v", left)
	}
}

// TestSaveInAKilledRollbacksSubmoduleBackupIsRescued: the same saves,
// and the rollback is killed before it compared its backups, which are
// in lib's git dir. The next command finds them from their manifest and
// keeps the saves under lib's refs/venom/rescued/, named in its warning
// (git -C lib show ...) and in rollback.ended; the backup directory goes.
func TestSaveInAKilledRollbacksSubmoduleBackupIsRescued(t *testing.T) {
	t.Parallel()
	s, lib := slowSubTree(t, 40)
	killedSavesAreRescued(t, s, lib, "git -C lib show ")
}

// TestPartialFailureNamesTheRepository: the way back fails in lib/in,
// the last repository (its required smudge filter fails and first puts a
// symlink where the directory sub was, which the rollback emptied; the
// way back never writes through it). failed.rollback_partial, whose
// data.repos says which repository is in which state: the top and lib
// went back ("as before"), lib/in is "mixed" with the reason.
func TestPartialFailureNamesTheRepository(t *testing.T) {
	t.Parallel()
	f, lib, in := subFixture(t, true)
	in.Write(".gitattributes", "*.dat filter=x\n")
	in.Write("model.dat", "v1\n")
	in.Commit("attrs")
	lib.Commit("in moved")
	f.r.Commit("lib moved")
	k1 := f.take(checkpoint.ReasonTurnStart)
	f.r.Write("a", "a2 (the agent's)\n")
	lib.Write("l", "l2 (the agent's)\n")
	in.Write("model.dat", "v2\n")
	in.Write("sub/extra.dat", "made by the agent\n")
	f.take(checkpoint.ReasonTurnEnd)
	in.Git("config", "filter.x.clean", "cat")
	in.Git("config", "filter.x.smudge", "ln -s .git sub; exit 1")
	in.Git("config", "filter.x.required", "true")
	args := []string{"--agent", f.agent, k1, "--restore", "files", "--json"}
	plan := planOf(t, f.r, args)
	real := realCall(t, f.r, args, plan.Plan)
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil || out.Error.Code != "failed.rollback_partial" {
		t.Fatalf("rollback: exit %d, want failed.rollback_partial\n%s%s", real.exit, real.stdout, real.stderr)
	}
	repos, _ := out.Error.Data["repos"].([]any)
	state := map[string]string{}
	for _, x := range repos {
		m, _ := x.(map[string]any)
		repo, _ := m["repo"].(string)
		st, _ := m["state"].(string)
		state[repo] = st
		if repo == "lib/in" && !strings.Contains(fmt.Sprint(m["reason"]), "sub") {
			t.Errorf("lib/in's reason does not say what was not put back: %v", m["reason"])
		}
	}
	want := map[string]string{".": "as before", "lib": "as before", "lib/in": "mixed"}
	if fmt.Sprint(state) != fmt.Sprint(want) {
		t.Errorf("data.repos states %v, want %v (%v)", state, want, out.Error.Data)
	}
	if got := f.r.Read("a"); got != "a2 (the agent's)\n" {
		t.Errorf("a is %q: the top was not put back", got)
	}
	if got := lib.Read("l"); got != "l2 (the agent's)\n" {
		t.Errorf("lib/l is %q: lib was not put back", got)
	}
	// The safety checkpoint is whole in lib/in.
	if got, _ := in.Show(f.ref("k3"), "sub/extra.dat"); got != "made by the agent\n" {
		t.Errorf("lib/in's safety checkpoint sub/extra.dat = %q", got)
	}
	if ended := records(t, f.r, "rollback.ended"); len(ended) != 1 || ended[0]["code"] != "failed.rollback_partial" {
		t.Errorf("rollback.ended: %v", ended)
	}
}
