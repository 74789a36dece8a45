package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
)

// takeOut is the part of `git venom-checkpoint --json` these tests read.
type takeOut struct {
	Agent      string `json:"agent"`
	Checkpoint string `json:"checkpoint"`
	Reused     bool   `json:"reused"`
	Repos      []struct {
		Commit string `json:"commit"`
		Path   string `json:"path"`
	} `json:"repos"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// runBin runs a built binary in dir with env (nil: the clean test
// environment) and returns stdout, stderr and the exit code.
func runBin(t *testing.T, bin, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if env == nil {
		env = gittest.Env()
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestConcurrentCaptures spawns captures as separate processes at once: two
// agents several times each, while a file keeps changing. Every capture is
// recorded (checkpoint.taken) or deduplicated (checkpoint.reused, naming a
// checkpoint of its own agent), the log has no torn or interleaved line, no
// checkpoint id is used twice, and every ref points to the commit the log
// names for it.
func TestConcurrentCaptures(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(gittest.Build(t, "git-venom-checkpoint"), "git-venom-checkpoint")
	for _, tc := range []struct {
		name      string
		agents    []string
		edit      bool
		worktrees bool
	}{
		{"two agents, same tree", []string{"a1", "a1", "a1", "a2", "a2", "a2"}, false, false},
		{"two agents, changing tree", []string{"a1", "a1", "a1", "a1", "a2", "a2", "a2", "a2"}, true, false},
		{"one agent, several at once", []string{"solo", "solo", "solo", "solo", "solo", "solo"}, true, false},
		{"two agents in two worktrees", []string{"a1", "a1", "a1", "w2", "w2", "w2"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			dirs := map[string]string{}
			if tc.worktrees {
				// Each agent in its own linked worktree: one log, two trees.
				for _, a := range tc.agents {
					if _, ok := dirs[a]; !ok {
						d := filepath.Join(t.TempDir(), a)
						r.Git("worktree", "add", "-q", "-b", "wt-"+a, d)
						dirs[a], _ = filepath.EvalSymlinks(d)
					}
				}
			}
			stop := make(chan struct{})
			var editor sync.WaitGroup
			if tc.edit {
				editor.Add(1)
				scratch := t.TempDir()
				go func() {
					defer editor.Done()
					// An agent's writes: whole files replaced by rename, all
					// the same size, so git never sees one shrink while it
					// reads it (TestCaptureRetriesShortRead covers that).
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
						tmp := filepath.Join(scratch, "busy.tmp")
						os.WriteFile(tmp, []byte(fmt.Sprintf("edit %08d\n", i)), 0o644)
						os.Rename(tmp, r.Path("busy.txt"))
					}
				}()
			}
			outs := make([]takeOut, len(tc.agents))
			var wg sync.WaitGroup
			for i, agent := range tc.agents {
				wg.Add(1)
				go func(i int, agent string) {
					defer wg.Done()
					dir := r.Dir
					if d, ok := dirs[agent]; ok {
						dir = d
					}
					stdout, stderr, code := runBin(t, bin, dir, nil, "--agent", agent, "--reason", "manual", "--json")
					if code != 0 {
						t.Errorf("capture %d (%s): exit %d\n%s%s", i, agent, code, stdout, stderr)
						return
					}
					if err := json.Unmarshal([]byte(stdout), &outs[i]); err != nil {
						t.Errorf("capture %d: %v: %q", i, err, stdout)
					}
				}(i, agent)
			}
			wg.Wait()
			close(stop)
			editor.Wait()
			if t.Failed() {
				return
			}

			data, err := os.ReadFile(filepath.Join(r.GitDir, "venom", "log.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			recs, torn, err := journal.Parse(data)
			if err != nil || torn {
				t.Fatalf("log: torn %v, err %v", torn, err)
			}
			commits := map[string]string{} // agent/k -> commit, from checkpoint.taken
			captures := map[string]int{}   // agent -> captures logged
			for i, rec := range recs {
				if rec.Seq != int64(i+1) {
					t.Errorf("record %d has seq %d", i+1, rec.Seq)
				}
				switch rec.Type {
				case journal.TypeCheckpointTaken:
					var c journal.Checkpoint
					rec.Decode(&c)
					key := c.Agent + "/" + c.Checkpoint
					if _, dup := commits[key]; dup {
						t.Errorf("checkpoint %s taken twice", key)
					}
					commits[key] = c.Repos[0].Commit
					captures[c.Agent]++
				case journal.TypeCheckpointReused:
					var c journal.Reused
					rec.Decode(&c)
					if _, ok := commits[c.Agent+"/"+c.Checkpoint]; !ok {
						t.Errorf("reused %s/%s before it was taken", c.Agent, c.Checkpoint)
					}
					captures[c.Agent]++
				case journal.TypeCheckpointFailed:
					t.Errorf("a capture failed: %s", rec.Line)
				}
			}
			want := map[string]int{}
			for _, a := range tc.agents {
				want[a]++
			}
			if fmt.Sprint(captures) != fmt.Sprint(want) {
				t.Errorf("captures logged %v, want %v", captures, want)
			}
			for i, o := range outs {
				key := o.Agent + "/" + o.Checkpoint
				if c, ok := commits[key]; !ok || len(o.Repos) != 1 || o.Repos[0].Commit != c {
					t.Errorf("capture %d printed %s at %v, the log says %q", i, key, o.Repos, c)
				}
			}
			refsNow := r.Refs()
			n := 0
			for name, oid := range refsNow {
				rest, ok := strings.CutPrefix(name, "refs/venom/checkpoints/")
				if !ok {
					continue
				}
				n++
				agent, num, _ := strings.Cut(rest, "/")
				if c := commits[agent+"/k"+num]; c != oid {
					t.Errorf("ref %s at %s, the log says %q", name, oid, c)
				}
				if typ := r.Line("cat-file", "-t", oid); typ != "commit" {
					t.Errorf("ref %s names a %s", name, typ)
				}
			}
			if n != len(commits) {
				t.Errorf("%d refs for %d checkpoints", n, len(commits))
			}
			r.Git("fsck", "--strict", "--no-dangling")
		})
	}
}

// TestHookEnvironment: a hook (or `git rebase -x`) exports GIT_INDEX_FILE,
// and in a linked worktree GIT_DIR too. The capture uses the real index of
// the real repository and the whole tree, whatever they point at and
// wherever in the tree it runs.
func TestHookEnvironment(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(gittest.Build(t, "git-venom-checkpoint"), "git-venom-checkpoint")

	setup := func(t *testing.T) (*gittest.Repo, string) {
		r := gittest.New(t)
		r.Write(".gitignore", "*.log\n")
		r.Write("a", "a\n")
		r.Write("sub/dir/s", "s\n")
		r.Write("tracked.log", "v1\n")
		r.Git("add", "-f", "tracked.log")
		r.Commit("init")
		r.Write("a", "edited\n")
		r.Write("tracked.log", "v2\n") // tracked, though ignored: only the real index knows
		// Another index, as a hook's GIT_INDEX_FILE: a skip-worktree entry
		// the real index does not have, and none of the real ones.
		other := filepath.Join(t.TempDir(), "other.index")
		blob := r.HashBlob("ghost\n")
		r.GitEnv([]string{"GIT_INDEX_FILE=" + other}, "hash-object", "-w", "--stdin")
		if _, err := r.GitEnv([]string{"GIT_INDEX_FILE=" + other}, "update-index", "--add", "--cacheinfo", "100644,"+blob+",ghost.txt"); err != nil {
			t.Fatal(err)
		}
		r.GitEnv([]string{"GIT_INDEX_FILE=" + other}, "update-index", "--skip-worktree", "ghost.txt")
		return r, other
	}
	check := func(t *testing.T, r *gittest.Repo, other string, stdout, stderr string, code int) {
		t.Helper()
		var o takeOut
		if code != 0 || json.Unmarshal([]byte(stdout), &o) != nil || len(o.Repos) != 1 {
			t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
		}
		if o.Repos[0].Path != r.Dir {
			t.Errorf("captured tree %s, want %s", o.Repos[0].Path, r.Dir)
		}
		w := map[string]string{".gitignore": "*.log\n", "a": "edited\n", "sub/dir/s": "s\n", "tracked.log": "v2\n"}
		tree := r.Tree(o.Repos[0].Commit)
		for p, c := range w {
			if got, _ := r.Show(o.Repos[0].Commit, p); got != c {
				t.Errorf("%s = %q, want %q", p, got, c)
			}
		}
		if len(tree) != len(w) {
			t.Errorf("tree has %d paths, want %d: %v", len(tree), len(w), tree)
		}
	}

	for _, tc := range []struct {
		name, dir string
		env       func(r *gittest.Repo, other string) []string
	}{
		{"GIT_INDEX_FILE elsewhere", ".", func(r *gittest.Repo, other string) []string {
			return []string{"GIT_INDEX_FILE=" + other}
		}},
		{"relative GIT_DIR and GIT_INDEX_FILE", ".", func(r *gittest.Repo, other string) []string {
			return []string{"GIT_DIR=.git", "GIT_INDEX_FILE=" + other}
		}},
		{"absolute GIT_DIR from a subdirectory", "sub/dir", func(r *gittest.Repo, other string) []string {
			return []string{"GIT_DIR=" + r.GitDir, "GIT_INDEX_FILE=" + other, "GIT_PREFIX=sub/dir/"}
		}},
		{"relative GIT_DIR from a subdirectory", "sub", func(r *gittest.Repo, other string) []string {
			return []string{"GIT_DIR=../.git", "GIT_INDEX_FILE=" + other}
		}},
		{"GIT_WORK_TREE and GIT_DIR explicit", "sub", func(r *gittest.Repo, other string) []string {
			return []string{"GIT_DIR=" + r.GitDir, "GIT_WORK_TREE=" + r.Dir, "GIT_INDEX_FILE=" + other}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, other := setup(t)
			before := r.Snapshot()
			otherBytes, _ := os.ReadFile(other)
			stdout, stderr, code := runBin(t, bin, r.Path(tc.dir), gittest.Env(tc.env(r, other)...), "--agent", "a1", "--json")
			check(t, r, other, stdout, stderr, code)
			r.AssertUnchanged(before)
			if now, _ := os.ReadFile(other); !bytes.Equal(now, otherBytes) {
				t.Error("the exported index was written")
			}
		})
	}

	// A real pre-commit hook, run by `git commit -a` while git holds
	// index.lock and exports GIT_INDEX_FILE pointing at it.
	t.Run("pre-commit hook", func(t *testing.T) {
		t.Parallel()
		r, _ := setup(t)
		out := filepath.Join(t.TempDir(), "capture.json")
		hook := fmt.Sprintf("#!/bin/sh\nenv > %q.env\n%q --agent a1 --json > %q 2>&1\n", out, bin, out)
		os.WriteFile(filepath.Join(r.GitDir, "hooks", "pre-commit"), []byte(hook), 0o755)
		r.Git("commit", "-q", "-a", "-m", "with hook")
		stdout, _ := os.ReadFile(out)
		env, _ := os.ReadFile(out + ".env")
		if !strings.Contains(string(env), "GIT_INDEX_FILE=") {
			t.Logf("this git exported no GIT_INDEX_FILE to the hook")
		}
		check(t, r, "", string(stdout), "", 0)
	})
}

// TestNoUserIdentity: a capture needs neither HOME nor a user identity
// (BR-20), since the commit's identity is venom's own.
func TestNoUserIdentity(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(gittest.Build(t, "git-venom-checkpoint"), "git-venom-checkpoint")
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	r.Git("config", "--unset", "user.name")
	r.Git("config", "--unset", "user.email")
	r.Write("a", "b\n")
	var env []string
	for _, kv := range gittest.Env() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "USER" && k != "LOGNAME" && !strings.HasPrefix(k, "GIT_AUTHOR") && !strings.HasPrefix(k, "GIT_COMMITTER") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_CONFIG_GLOBAL=/dev/null")
	stdout, stderr, code := runBin(t, bin, r.Dir, env, "--agent", "a1", "--json")
	var o takeOut
	if code != 0 || json.Unmarshal([]byte(stdout), &o) != nil || o.Checkpoint != "k1" {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	raw := r.Git("cat-file", "commit", o.Repos[0].Commit)
	if !strings.Contains(raw, "\nauthor venom <venom@localhost> ") || !strings.Contains(raw, "\ncommitter venom <venom@localhost> ") {
		t.Errorf("commit:\n%s", raw)
	}
}

// TestCaptureRetriesShortRead: a file that shrinks while update-index hashes
// it makes git die with "short read while indexing"; the capture runs the
// step again instead of failing, and fails loudly only when it keeps
// happening. A git wrapper makes the first update-index calls fail so.
func TestCaptureRetriesShortRead(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(gittest.Build(t, "git-venom-checkpoint"), "git-venom-checkpoint")
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	for _, fails := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(fails, " failures"), func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			r.Write("busy.txt", "being rewritten\n")
			dir := t.TempDir()
			count := filepath.Join(dir, "count")
			wrapper := filepath.Join(dir, "git")
			os.WriteFile(wrapper, []byte(fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
	if [ "$a" = --replace ]; then
		n=$(cat %[1]q 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]q
		if [ $n -le %[2]d ]; then
			cat >/dev/null
			echo "error: short read while indexing busy.txt" >&2
			echo "fatal: Unable to process path busy.txt" >&2
			exit 128
		fi
	fi
done
exec %[3]q "$@"
`, count, fails, git)), 0o755)
			stdout, stderr, code := runBin(t, bin, r.Dir, gittest.Env("GIT_VENOM_GIT="+wrapper), "--agent", "a1", "--json")
			calls, _ := os.ReadFile(count)
			var o takeOut
			json.Unmarshal([]byte(stdout), &o)
			if fails < 3 {
				if code != 0 || o.Checkpoint != "k1" {
					t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
				}
				if got, _ := r.Show(o.Repos[0].Commit, "busy.txt"); got != "being rewritten\n" {
					t.Errorf("busy.txt = %q", got)
				}
			} else {
				if code != 1 || o.Error == nil || o.Error.Code != "failed.checkpoint_git" {
					t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
				}
				if refs := r.Git("for-each-ref", "refs/venom"); refs != "" {
					t.Errorf("a failed capture made %s", refs)
				}
			}
			if want := fmt.Sprint(min(fails+1, 3)); strings.TrimSpace(string(calls)) != want {
				t.Errorf("update-index ran %s times, want %s", calls, want)
			}
		})
	}
}

// TestReuseReadsTheRefWithHEAD (issue 16): a capture that reuses the
// latest checkpoint (RFC 3.2) finds its ref still naming the logged
// commit in the child that reads HEAD, under the locks, and starts no
// git of its own for it; a capture after the ref was deleted reads it
// there too, finds it gone and makes a new checkpoint.
func TestReuseReadsTheRefWithHEAD(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(gittest.Build(t, "git-venom-checkpoint"), "git-venom-checkpoint")
	r := newRepo(t)
	env := append(gittest.Env(), "GIT_VENOM_TRACE=1")
	capture := func() (takeOut, []string) {
		t.Helper()
		stdout, stderr, code := runBin(t, bin, r.Dir, env, "--agent", "a1", "--json")
		var out takeOut
		if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
			t.Fatalf("capture: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
		}
		var reads []string
		for _, l := range strings.Split(stderr, "\n") {
			if args, ok := strings.CutPrefix(l, "venom trace: git "); ok && strings.Contains(args, "refs/venom/checkpoints/") {
				reads = append(reads, args)
			}
		}
		return out, reads
	}
	k1, reads := capture()
	if k1.Checkpoint != "k1" || k1.Reused || len(reads) != 1 || !strings.HasPrefix(reads[0], "update-ref") {
		t.Fatalf("first capture: %+v, ref children %q, want k1 made by one update-ref", k1, reads)
	}
	const ref = "refs/venom/checkpoints/a1/1"
	again, reads := capture()
	if !again.Reused || again.Checkpoint != "k1" || len(again.Repos) != 1 || again.Repos[0].Commit != k1.Repos[0].Commit {
		t.Errorf("second capture: %+v, want k1 reused", again)
	}
	if len(reads) != 1 || !strings.HasPrefix(reads[0], "rev-parse HEAD HEAD^{tree} ") || !strings.Contains(reads[0], ref+"^{commit}") {
		t.Errorf("the reuse read the ref in %q, want one child, the one that reads HEAD", reads)
	}
	r.Git("update-ref", "-d", ref)
	k2, reads := capture()
	if k2.Reused || k2.Checkpoint != "k2" {
		t.Errorf("after the ref's deletion: %+v, want a new k2", k2)
	}
	if len(reads) < 1 || !strings.Contains(reads[0], ref+"^{commit}") {
		t.Errorf("after the ref's deletion, the ref children %q, want the first to read %s with HEAD", reads, ref)
	}
}
