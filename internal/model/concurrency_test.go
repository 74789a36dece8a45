package model_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
	"github.com/venom-org/git-venom/rollback"
)

// TestConcurrentProcesses runs many git-venom processes at once on one
// tree, as several agents' hooks and a person would (issue 6): captures of
// several agents, `git venom-checkpoint edit` records, Claude Code hook
// processes fed the fixture events of harness/testdata, and rollback
// attempts, while a writer keeps changing files. Then it counts: every
// process left exactly the records it should (no torn or lost record), the
// sequence numbers run without a gap, no checkpoint id is used twice, every
// ref a record names holds the logged commit, every refusal is a clean
// conflict.* with exit status 5, and no rollback is left open.
// VENOM_CONC_ROUNDS (default 4) scales it.
func TestConcurrentProcesses(t *testing.T) {
	rounds := 4
	if v := os.Getenv("VENOM_CONC_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("VENOM_CONC_ROUNDS=%q", v)
		}
		rounds = n
	}
	r := gittest.New(t)
	r.Write(".gitignore", ".env\n")
	r.Write(".env", "SECRET=1\n")
	for i := 0; i < 8; i++ {
		r.Write(fmt.Sprintf("src/f%d.txt", i), strings.Repeat("x", i))
	}
	r.Commit("init")
	// The user's index was last written hours ago, as it is while a
	// person lets agents work: private indexes copy its mtime, which must
	// not make one capture take another's live private index for a
	// leftover (plumbing.CleanTmp).
	old := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(filepath.Join(r.GitDir, "index"), old, old); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	copyFile(t, "../../harness/testdata/claude-code/transcript.jsonl", transcript)

	// The first capture of a1 registers it; the rollbacks go back to k1.
	if cr := venom(t, r.Dir, nil, "checkpoint", "--json", "--agent", "a1", "--reason", "turn_end"); cr.Exit != 0 {
		t.Fatalf("first capture: %+v", cr)
	}

	type tally struct {
		captures, edits, rollbacks int
	}
	var mu sync.Mutex
	counts := map[string]*tally{}
	count := func(agent string, f func(*tally)) {
		mu.Lock()
		defer mu.Unlock()
		if counts[agent] == nil {
			counts[agent] = &tally{}
		}
		f(counts[agent])
	}
	count("a1", func(c *tally) { c.captures++ })
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	refusals := map[string]int{}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	// A person's editor, saving all the time.
	var pause atomic.Int64
	pause.Store(int64(15 * time.Millisecond))
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(pause.Load())):
			}
			os.WriteFile(filepath.Join(r.Dir, "src", fmt.Sprintf("f%d.txt", i%8)), []byte(strconv.Itoa(i)), 0o644)
		}
	}()
	// Captures and edit records of three agents.
	for _, agent := range []string{"a1", "a2", "a3"} {
		for _, kind := range []string{"capture", "edit"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 2*rounds; i++ {
					var cr *cliResult
					if kind == "capture" {
						reason := []string{"manual", "turn_start", "turn_end"}[i%3]
						cr = venom(t, r.Dir, nil, "checkpoint", "--json", "--agent", agent, "--reason", reason)
						count(agent, func(c *tally) { c.captures++ })
					} else {
						cr = venom(t, r.Dir, nil, "checkpoint", "edit", "--json", "--agent", agent, "--path", fmt.Sprintf("src/f%d.txt", i%8))
						if cr.Exit == 0 {
							count(agent, func(c *tally) { c.edits++ })
						}
					}
					if cr.Exit != 0 {
						problem("%s %s: exit %d %s %s", kind, agent, cr.Exit, cr.Stdout, cr.Stderr)
					}
				}
				if kind == "capture" {
					// End the turn, so that phase two can roll back.
					if cr := venom(t, r.Dir, nil, "checkpoint", "--json", "--agent", agent, "--reason", "turn_end"); cr.Exit != 0 {
						problem("capture %s: exit %d %s", agent, cr.Exit, cr.Stderr)
					}
					count(agent, func(c *tally) { c.captures++ })
				}
			}()
		}
	}
	// Claude Code hook processes: three sessions, each running turns of
	// UserPromptSubmit, PostToolUse Write, Stop.
	for s := 0; s < 3; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("0d3c8b1e-7f2a-4c39-9a57-%012d", s)
			agent := harness.AgentID("claude", session)
			for i := 0; i < rounds; i++ {
				for _, ev := range []string{"UserPromptSubmit", "PostToolUse-Write", "Stop"} {
					in := hookEvent(t, ev, r.Dir, transcript, session)
					cr := venom(t, r.Dir, in, "hook", "claude-code")
					if cr.Exit != 0 {
						problem("hook %s: exit %d %s", ev, cr.Exit, cr.Stderr)
					}
					if strings.Contains(cr.Stderr, "venom-hook:") {
						problem("hook %s reported: %s", ev, cr.Stderr)
					}
					count(agent, func(c *tally) {
						if ev == "PostToolUse-Write" {
							c.edits++
						} else {
							c.captures++
						}
					})
				}
			}
		}()
	}
	// Wait for the agents, then stop the writer.
	done := make(chan struct{})
	go func() {
		for {
			mu.Lock()
			n := 0
			for _, c := range counts {
				n += c.captures + c.edits
			}
			mu.Unlock()
			if n >= 1+3*(2*rounds+1)+3*2*rounds+3*3*rounds {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Error("the processes did not finish in 5 minutes")
	}
	wg.Wait() // the writer still runs, slower: some plans must hold
	pause.Store(int64(400 * time.Millisecond))

	// Phase two, every turn ended: rollbacks of two agents at once (one
	// tree: at most one runs), while a third captures, the first records
	// edits and the person keeps saving.
	for _, agent := range []string{"a1", "a2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A person retries a refused rollback, a few times.
			ok := 0
			for i := 0; i < 8*rounds && ok < 2; i++ {
				if i == 4*rounds {
					// On a loaded machine the saves can keep every plan
					// stale: the person then stops typing for a while, as
					// one told "the tree changed since the plan" would.
					pause.Store(int64(3 * time.Second))
				}
				time.Sleep(time.Duration(5+10*i%30) * time.Millisecond)
				args := []string{"k1", "--json", "--agent", agent, "--restore", "files", "--outside", "overwrite"}
				cr := venom(t, r.Dir, nil, "plan", args...)
				if refused(cr, "plan", problem, refusals, &mu) {
					continue
				}
				var plan rollback.Result
				if err := json.Unmarshal(cr.Stdout, &plan); err != nil {
					problem("plan: %v %s", err, cr.Stdout)
					continue
				}
				cr = venom(t, r.Dir, nil, "rollback", append(args, "--plan", plan.Plan)...)
				if !refused(cr, "rollback", problem, refusals, &mu) {
					count(agent, func(c *tally) { c.rollbacks++; c.captures += 2 })
					ok++
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 2*rounds; i++ {
			if cr := venom(t, r.Dir, nil, "checkpoint", "--json", "--agent", "a3"); cr.Exit != 0 {
				problem("capture a3: exit %d %s", cr.Exit, cr.Stderr)
			}
			count("a3", func(c *tally) { c.captures++ })
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 2*rounds; i++ {
			cr := venom(t, r.Dir, nil, "checkpoint", "edit", "--json", "--agent", "a1", "--path", "src/f1.txt")
			if cr.Exit != 0 {
				problem("edit a1: exit %d %s", cr.Exit, cr.Stderr)
				continue
			}
			count("a1", func(c *tally) { c.edits++ })
		}
	}()
	wg.Wait()
	close(stop)
	writer.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("refusals: %v; rollbacks: a1 %d, a2 %d", refusals, counts["a1"].rollbacks, counts["a2"].rollbacks)
	if counts["a1"].rollbacks+counts["a2"].rollbacks == 0 {
		t.Error("no rollback went through: the test proves nothing about them")
	}

	// The log: whole, gapless, and what the processes did.
	lg, err := journal.Open(filepath.Join(r.Dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	recs, torn, err := lg.ReadAll()
	if err != nil || torn {
		t.Fatalf("the log: torn %v, %v", torn, err)
	}
	for i, rec := range recs {
		if rec.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i+1, rec.Seq)
		}
	}
	st, err := journal.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	refsNow := r.Refs()
	for agent, c := range counts {
		a := st.Agents[agent]
		if a == nil {
			t.Errorf("no agent %s in the log", agent)
			continue
		}
		if len(a.Captures) != c.captures {
			t.Errorf("%s: %d capture records, %d captures ran", agent, len(a.Captures), c.captures)
		}
		if len(a.Edits) != c.edits {
			t.Errorf("%s: %d edit records, %d edits ran", agent, len(a.Edits), c.edits)
		}
		for _, cp := range a.Captures {
			if cp.Type == journal.TypeCheckpointFailed {
				t.Errorf("%s: a capture failed: %+v", agent, cp)
			}
		}
		if a.OpenRollback != nil {
			t.Errorf("%s: rollback left open: %+v", agent, a.OpenRollback)
		}
		if len(a.Rollbacks) != c.rollbacks || len(a.Ended) != c.rollbacks {
			t.Errorf("%s: %d rollbacks started and %d ended in the log, %d succeeded", agent, len(a.Rollbacks), len(a.Ended), c.rollbacks)
		}
		ids := map[string]bool{}
		for _, sv := range a.Checkpoints {
			if ids[sv.ID()] {
				t.Errorf("%s: checkpoint id %s logged twice", agent, sv.ID())
			}
			ids[sv.ID()] = true
			ref := refs.Checkpoint(agent, sv.N)
			if !sv.Pruned && refsNow[ref] != sv.Rec.Repos[0].Commit {
				t.Errorf("%s is %q, the log says %s", ref, refsNow[ref], sv.Rec.Repos[0].Commit)
			}
			// No file is ever deleted here: every checkpoint holds them all.
			names := strings.Fields(r.Git("ls-tree", "-r", "--name-only", sv.Rec.Repos[0].Tree))
			if len(names) != 9 {
				t.Errorf("%s's %s holds %q, want .gitignore and src/f0..f7", agent, sv.ID(), names)
			}
		}
	}
	for name := range refsNow {
		if strings.HasPrefix(name, "refs/venom/checkpoints/") {
			rest := strings.TrimPrefix(name, "refs/venom/checkpoints/")
			agent, n, _ := strings.Cut(rest, "/")
			if a := st.Agents[agent]; a == nil || a.Checkpoint("k"+n) == nil {
				t.Errorf("ref %s is named by no record", name)
			}
		}
	}
	if got, _ := os.ReadFile(filepath.Join(r.Dir, ".env")); string(got) != "SECRET=1\n" {
		t.Errorf(".env is %q", got)
	}
}

// refused reports whether a plan or rollback was refused, and records a
// problem unless the refusal is a clean conflict.* with exit status 5.
func refused(cr *cliResult, what string, problem func(string, ...any), refusals map[string]int, mu *sync.Mutex) bool {
	if cr.Exit == 0 && cr.Err == nil {
		return false
	}
	switch {
	case cr.Err == nil:
		problem("%s: exit %d with no error object: %s %s", what, cr.Exit, cr.Stdout, cr.Stderr)
	case !strings.HasPrefix(cr.Err.Code, "conflict.") || cr.Exit != 5:
		problem("%s: refused with %s (exit %d), not a conflict.*: %s", what, cr.Err.Code, cr.Exit, cr.Err.Message)
	default:
		mu.Lock()
		refusals[what+" "+cr.Err.Code]++
		mu.Unlock()
	}
	return true
}

// venom runs one git-venom command; a failure to start it fails the test.
func venom(t *testing.T, dir string, stdin []byte, verb string, args ...string) *cliResult {
	cr, err := runVenom(dir, stdin, nil, verb, args...)
	if err != nil {
		t.Errorf("git venom-%s: %v", verb, err)
		return &cliResult{Exit: -1}
	}
	return cr
}

// hookEvent is a Claude Code fixture event with its placeholders filled in
// and its session replaced.
func hookEvent(t *testing.T, name, cwd, transcript, session string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "harness", "testdata", "claude-code", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "{{CWD}}", cwd)
	s = strings.ReplaceAll(s, "{{TRANSCRIPT}}", transcript)
	s = strings.ReplaceAll(s, "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60", session)
	if !json.Valid([]byte(s)) {
		t.Fatalf("fixture %s is not JSON once filled in", name)
	}
	return []byte(s)
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
