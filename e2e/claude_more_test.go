//go:build e2e

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/e2e/e2etest"
)

// printIn is turn with Claude Code started in dir, not the repository's
// top.
func (w *claudeWorld) printIn(dir, prompt, want string, args ...string) e2etest.ClaudeResult {
	w.T.Helper()
	argv := append(append([]string{"-p", prompt}, args...), "--permission-mode", "bypassPermissions", "--output-format", "json")
	r := w.Run(e2etest.RunOpts{Dir: dir, Env: w.c.Env}, w.c.Bin, argv...)
	out := e2etest.ClaudeResult{}
	_ = json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &out)
	out.Result = r
	if r.Code != 0 || out.Text != want || out.SessionID == "" {
		w.T.Fatalf("in %s: %s\nresult %q (want %q)\nhooks:\n%s", dir, r, out.Text, want, w.HooksText())
	}
	return out
}

// TestClaudeRewindSubdirectory: the agent's session was started in a
// subdirectory of the tree (with a space in its name), so Claude Code
// keeps its transcript under that directory's project, not the top's. A
// rollback with --restore all, run at the top, still makes the copy, and
// the printed script command, run in the subdirectory, continues it with
// turn one and not turn two.
func TestClaudeRewindSubdirectory(t *testing.T) {
	t.Parallel()
	w := newClaude(t)
	// A folder venom records from holds a tracked file (RFC 3: one that
	// holds none is refused).
	w.WriteFile("sub dir/keep.txt", "keep\n")
	w.Git("add", "-A")
	w.Git("commit", "-qm", "sub dir")
	sub := filepath.Join(w.Repo, "sub dir")
	// The scripted paths hold no space: the script splits at spaces.
	r1 := w.printIn(sub, "Turn one in a subdirectory. [[venom-e2e: write "+w.Repo+"/one.txt one ;; say Turn one done.]]", "Turn one done.")
	S, A := r1.SessionID, agentOf(r1.SessionID)
	w.printIn(sub, "Turn two, to be dropped. [[venom-e2e: write "+w.Repo+"/two.txt two ;; say Turn two done.]]", "Turn two done.", "--resume", S)
	k := one(t, "turn.ended of t1", w.Records("turn.ended", "agent="+A, "turn=t1")).S("checkpoint")
	plan, text := w.rollback(A, k)
	N := plan.Conversation.HarnessSession
	if w.Exists("two.txt") || !w.Exists("one.txt") {
		t.Errorf("after the rollback: two.txt there %v, one.txt there %v", w.Exists("two.txt"), w.Exists("one.txt"))
	}
	_, script := resumeLines(t, text)
	argv := strings.Fields(script)
	if len(argv) < 3 || argv[0] != "claude" || argv[1] != "-p" {
		t.Fatalf("the script command %q is not claude -p ...:\n%s", script, text)
	}
	before := w.Mock.Seq()
	r3 := w.printIn(sub, "Turn three, in the copy. [[venom-e2e: say Turn three done.]]", "Turn three done.", argv[2:]...)
	if r3.SessionID != N {
		t.Errorf("ran as session %s, want the copy %s", r3.SessionID, N)
	}
	cv := w.convo(before)
	if countIn(cv, "Turn one in a subdirectory.") != 1 || countIn(cv, "Turn two, to be dropped.") != 0 {
		t.Errorf("the copy's request from the subdirectory should hold turn one, not turn two:\n%s", cv)
	}
}

// TestClaudeStopFailureRace: a turn that ends in an API error in a tree of
// 300 files (its capture takes a moment), with a StopFailure hook that is
// not held up: it and SessionEnd's hook run at once. Exactly one turn is
// recorded, started and ended once.
//
// Claude Code starts the StopFailure hook without waiting for it, and a
// print-mode run under load can exit before it does (seen once in a full
// `make e2e`: SessionEnd ran, StopFailure never started). Such a run
// does not exercise the race, so the turn is tried again, up to three
// times, before the test fails for want of a StopFailure run.
func TestClaudeStopFailureRace(t *testing.T) {
	t.Parallel()
	var w *claudeWorld
	var A string
	for attempt := 1; ; attempt++ {
		w = newClaude(t)
		for i := 0; i < 300; i++ {
			w.WriteFile(filepath.Join("tree", string(rune('a'+i%26)), strings.Repeat("f", 1+i/26)+".txt"), strings.Repeat("x", 100*i)+"\n")
		}
		w.Git("add", "-A")
		w.Git("commit", "-qm", "tree")
		r := w.c.Print("-p", "A failing turn. [[venom-e2e: write "+w.Repo+"/made.txt made ;; fail 400]]")
		if r.SessionID == "" {
			t.Fatalf("no session: %s", r)
		}
		A = agentOf(r.SessionID)
		e2etest.Eventually(60*time.Second, func() bool {
			h, ok := w.LastHook("SessionEnd")
			return ok && h.Finished
		})
		e2etest.Eventually(10*time.Second, func() bool {
			for _, h := range w.HookRuns("StopFailure") {
				if !h.Finished {
					return false
				}
			}
			return true
		})
		if len(w.HookRuns("StopFailure")) > 0 {
			break
		}
		if attempt == 3 {
			t.Fatalf("no StopFailure run in %d attempts:\n%s", attempt, w.HooksText())
		}
		t.Logf("attempt %d: Claude Code ran no StopFailure hook; again:\n%s", attempt, w.HooksText())
	}
	var turns []string
	for _, r := range w.Records("", "agent="+A) {
		if r.S("type") == "turn.started" || r.S("type") == "turn.ended" {
			turns = append(turns, r.S("type")+" "+r.S("turn"))
		}
	}
	if got := strings.Join(turns, ", "); got != "turn.started t1, turn.ended t1" {
		t.Errorf("turn records %q, want one turn started and ended once:\n%s\nhooks:\n%s", got, e2etest.LogText(w.Records("", "agent="+A)), w.HooksText())
	}
}
