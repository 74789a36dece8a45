package rollback_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestKilledWhileResettingIndexLeavesNoLock (a fuzzer's find, 2026-12-06):
// a rollback that moves HEAD resets the user's index, and is killed with
// SIGKILL while git refreshes the new index (a slow clean filter keeps
// the refresh going, and marks its first run there: on the real index,
// or on the reset's own private one). No index.lock is left: the new
// index is made in a private file and put in place by a link and a
// rename (plumbing.Repo.ResetIndex). Before, git refreshed the real index
// under index.lock and died of SIGKILL with its parent, the lock stayed,
// and the documented way back refused with conflict.index_locked until
// a person removed it. The way back, run next, then works. Linux only:
// elsewhere there is no parent-death signal, and git finishes.
func TestKilledWhileResettingIndexLeavesNoLock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal is Linux's")
	}
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	aux := t.TempDir()
	refreshing := filepath.Join(aux, "refreshing")
	clean := filepath.Join(aux, "clean.sh")
	script := "#!/bin/sh\ncase \"${GIT_INDEX_FILE:-real}\" in real|*/reset-*) if [ -f '" + aux + "/armed' ]; then : > '" + refreshing + "'; fi;; esac\nsleep 0.01\nexec cat\n"
	if err := os.WriteFile(clean, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "filter.slow.clean", clean)
	r.Git("config", "filter.slow.smudge", "cat")
	r.Write(".gitattributes", "*.txt filter=slow\n")
	for i := 0; i < 60; i++ {
		r.Write(fmt.Sprintf("d%d/f%03d.txt", i%5, i), fmt.Sprintf("one %d\n", i))
	}
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("d0/f000.txt", "two\n")
	r.Commit("agent")
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if err := os.WriteFile(filepath.Join(aux, "armed"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, out := startRollback(t, r.Dir, args, plan.Plan)
	lock := filepath.Join(r.Dir, ".git", "index.lock")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(refreshing); err == nil {
			time.Sleep(20 * time.Millisecond) // well into the refresh
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the rollback never refreshed the reset index:\n%s", out.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Lstat(lock); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("index.lock is still there 5 s after the rollback was killed")
		}
	}
	os.Remove(filepath.Join(aux, "armed"))
	// The way back, as the interrupted rollback's warning prints it.
	st, err := f.tree().Log.Load()
	if err != nil {
		t.Fatal(err)
	}
	safety := st.Agents[f.agent].Rollbacks[0].Safety
	back := []string{"--agent", f.agent, safety, "--restore", "files", "--outside", "overwrite", "--json"}
	p := realCall(t, r, back, planOf(t, r, back).Plan)
	if res := parseOut(t, p); p.exit != 0 || !exactOut(res) {
		t.Fatalf("the way back: exit %d\n%s%s", p.exit, p.stdout, p.stderr)
	}
	if got := r.Read("d0/f000.txt"); got != "two\n" {
		t.Errorf("after the way back d0/f000.txt = %q", got)
	}
}

// exactOut reports whether a command's result says exact: true.
func exactOut(o cliOut) bool { return o.Exact != nil && *o.Exact }
