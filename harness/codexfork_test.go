package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// RFC 8's codex rewind through `codex app-server` (issue 14). These tests
// run the JSON-RPC client against a stand-in server: the test binary
// re-executed with VENOM_TEST_FAKE_CODEX set, speaking codex 0.171's framing
// and replies as recorded from the real binary (one JSON object a line, no
// "jsonrpc" member, notifications between the replies). The real codex is
// run by `make e2e`.

func init() {
	if mode := os.Getenv("VENOM_TEST_FAKE_CODEX"); mode != "" {
		fakeAppServer(mode, os.Getenv("VENOM_TEST_FAKE_CODEX_LOG"))
		os.Exit(0)
	}
}

// The fork's new thread id, as codex 0.171 would choose one (a v7 UUID).
const fakeFork = "01a2315e-dfc3-7601-881e-d2ab51cd21ac"

// fakeAppServer answers initialize, thread/fork and thread/unsubscribe as
// codex 0.171 does, logging every line it reads to logPath. mode ok forks;
// refuse answers thread/fork with codex's error for an unknown thread;
// hang never answers thread/fork; die exits after initialize; crash exits
// at once with codex's error and backtrace.
func fakeAppServer(mode, logPath string) {
	log, _ := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	defer log.Close()
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) { fmt.Fprintln(out, s); out.Flush() }
	fmt.Fprintln(os.Stderr, "WARNING: proceeding, even though we could not create PATH aliases")
	if mode == "crash" {
		// What codex 0.171 prints and does when CODEX_HOME names no
		// directory: an error, then a backtrace, before reading anything.
		fmt.Fprint(os.Stderr, "Error: CODEX_HOME points to \"/h/none\", but that path does not exist\n\nStack backtrace:\n")
		for i := 0; i < 7; i++ {
			fmt.Fprintf(os.Stderr, "   %d: <unknown>\n", i)
		}
		os.Exit(1)
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Fprintln(log, sc.Text())
		var req struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		switch req.Method {
		case "initialize":
			say(fmt.Sprintf(`{"id":%d,"result":{"userAgent":"git-venom/0.171.0","codexHome":"/h/.codex","platformFamily":"unix","platformOs":"linux"}}`, *req.ID))
			if mode == "die" {
				return
			}
		case "thread/fork":
			say(`{"method":"remoteControl/status/changed","params":{"status":"disabled"}}`)
			switch mode {
			case "refuse":
				say(fmt.Sprintf(`{"error":{"code":-32600,"message":"no rollout found for thread id 019dba93-8214-7d50-a089-9690b4ce6b9e"},"id":%d}`, *req.ID))
			case "hang":
				time.Sleep(time.Minute)
			default:
				var p struct {
					ThreadID string `json:"threadId"`
				}
				_ = json.Unmarshal(req.Params, &p)
				say(`{"method":"thread/started","params":{"thread":{"id":"` + fakeFork + `"}}}`)
				say(fmt.Sprintf(`{"id":%d,"result":{"thread":{"id":%q,"forkedFromId":%q,"historyMode":"paginated","turns":[]},"model":"gpt-5.5"}}`,
					*req.ID, fakeFork, p.ThreadID))
			}
		case "thread/unsubscribe":
			say(fmt.Sprintf(`{"id":%d,"result":{"status":"unsubscribed"}}`, *req.ID))
		default:
			say(fmt.Sprintf(`{"error":{"code":-32601,"message":"unknown method %s"},"id":%d}`, req.Method, *req.ID))
		}
	}
}

// fakeCodex writes a `codex` program into a new directory that runs the
// stand-in server in mode, and returns the directory (to go first on PATH)
// and the file the server logs its requests to.
func fakeCodex(t *testing.T, mode string) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "requests.jsonl")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = app-server ] || { echo \"fake codex: $*\" >&2; exit 2; }\nVENOM_TEST_FAKE_CODEX=%s VENOM_TEST_FAKE_CODEX_LOG=%s exec %s\n",
		mode, log, os.Args[0])
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// requests reads what the stand-in server was sent: method and params.
func requests(t *testing.T, log string) []string {
	t.Helper()
	data, _ := os.ReadFile(log)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r.Method+" "+string(r.Params))
		}
	}
	return out
}

func TestCodexForkCallsThreadFork(t *testing.T) {
	t.Parallel()
	dir, log := fakeCodex(t, "ok")
	got, err := harness.CodexFork(context.Background(), t.TempDir(), codexSession, codexTurn,
		[]string{filepath.Join(dir, "codex"), "app-server"}, 20*time.Second)
	if err != nil || got != fakeFork {
		t.Fatalf("CodexFork = %q, %v; want %q", got, err, fakeFork)
	}
	want := []string{
		`initialize {"clientInfo":{"name":"git-venom","version":"1"}}`,
		"initialized ",
		`thread/fork {"excludeTurns":true,"lastTurnId":"` + codexTurn + `","threadId":"` + codexSession + `"}`,
		`thread/unsubscribe {"threadId":"` + fakeFork + `"}`,
	}
	if r := requests(t, log); !reflect.DeepEqual(r, want) {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(r, "\n"), strings.Join(want, "\n"))
	}
}

func TestCodexForkFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode, code, msg string
		timeout         time.Duration
	}{
		{"refuse", "conflict.harness_fork_refused", "no rollout found for thread id", 20 * time.Second},
		{"die", "conflict.harness_fork_refused", "exited without a reply", 20 * time.Second},
		// codex's own error, not the last line of its backtrace.
		{"crash", "conflict.harness_fork_refused", `(codex said: Error: CODEX_HOME points to "/h/none", but that path does not exist)`, 20 * time.Second},
		{"hang", "timeout.harness_request", "did not fork thread " + codexSession + " within 1.5s", 1500 * time.Millisecond},
		{"missing", "conflict.harness_fork_refused", "not on PATH", 20 * time.Second},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			dir, _ := fakeCodex(t, c.mode)
			prog := filepath.Join(dir, "codex")
			if c.mode == "missing" {
				prog = filepath.Join(dir, "no-such-codex")
			}
			start := time.Now()
			got, err := harness.CodexFork(context.Background(), t.TempDir(), codexSession, codexTurn, []string{prog, "app-server"}, c.timeout)
			if e := rfcerr.As(err); got != "" || e == nil || e.Code != c.code || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("CodexFork = %q, %v; want %s containing %q", got, err, c.code, c.msg)
			}
			// A hung server is killed at the deadline, not waited for.
			if el := time.Since(start); el > c.timeout+5*time.Second {
				t.Errorf("took %s with a %s bound", el, c.timeout)
			}
		})
	}
}

// codexTurnEvent is one Codex hook event of the session codexSession in
// dir, for turn id turn.
func codexTurnEvent(dir, name, turn string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": codexSession, "transcript_path": nil, "cwd": dir,
		"hook_event_name": name, "model": "gpt-5.5", "permission_mode": "default", "turn_id": turn,
		"prompt": "p", "stop_hook_active": false, "last_assistant_message": "done"})
	return b
}

// A Codex session of two turns rolled back one with --restore all: the
// plan says the rollback forks the thread; the real call runs `codex
// app-server` (the stand-in on PATH) with thread/fork through t1's
// turn_id, restores the files, binds the agent to the new thread, and
// prints `codex resume` and `codex exec resume` of it; the new thread's
// first event is the same agent. On the old code the plan was
// unsupported.harness_capability.
func TestCodexRewindForksTheThread(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	turns := []string{"019dba93-9a01-7c11-8e2f-0a1b2c3d4e01", "019dba93-9a01-7c11-8e2f-0a1b2c3d4e02"}
	for i, tu := range turns {
		hook(t, repo.Dir, codexTurnEvent(repo.Dir, "UserPromptSubmit", tu), []string{"codex"})
		repo.Write("app.py", fmt.Sprintf("x = %d\n", i+2))
		hook(t, repo.Dir, codexTurnEvent(repo.Dir, "Stop", tu), []string{"codex"})
	}
	s := &ccSession{t: t, repo: repo}
	k := s.ended(codexAgent, "t1")
	dir, log := fakeCodex(t, "ok")
	path := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}

	plan := cliOK(t, "plan", cliRunEnv(t, repo.Dir, path, "plan", "--agent", codexAgent, k, "--json"))
	if c := plan.Conversation; !c.Rewinds || c.Harness != "codex" || !reflect.DeepEqual(c.Drops, []string{"t2"}) || c.HarnessSession != "" || len(c.Resume) != 0 {
		t.Errorf("plan's conversation %+v: want a codex rewind dropping t2, the new thread not known yet", c)
	}
	if r := requests(t, log); len(r) != 0 {
		t.Errorf("the plan called the app-server: %v", r)
	}
	text := cliRunEnv(t, repo.Dir, path, "plan", "--agent", codexAgent, k)
	if !strings.Contains(text.stdout, "forks the codex conversation through t1 first (codex app-server thread/fork)") {
		t.Errorf("plan text:\n%s", text.stdout)
	}

	res := cliOK(t, "rollback", cliRunEnv(t, repo.Dir, path, "rollback", "--agent", codexAgent, k, "--plan", plan.Plan, "--json"))
	c := res.Conversation
	if c.HarnessSession != fakeFork || !reflect.DeepEqual(c.Resume, []string{"codex", "resume", fakeFork}) ||
		!reflect.DeepEqual(c.ResumeExec, []string{"codex", "exec", "resume", fakeFork}) {
		t.Errorf("rollback's conversation %+v", c)
	}
	if got := repo.Read("app.py"); got != "x = 2\n" {
		t.Errorf("app.py = %q after the rollback, want t1's", got)
	}
	if r := requests(t, log); len(r) != 4 || !strings.Contains(r[2], `"lastTurnId":"`+turns[0]+`"`) {
		t.Errorf("app-server requests %v: want a thread/fork through %s", r, turns[0])
	}
	b := ofType(readLog(t, repo), "agent.binding")
	if len(b) != 2 {
		t.Fatalf("bindings %v", b)
	}
	wantRecord(t, b[0], map[string]any{"agent": codexAgent, "harness": "codex", "harness_session": fakeFork,
		"fork_source": codexSession, "fork_at": turns[0]})
	// The old thread is an agent of its own from now on (issue 14 item 7).
	wantRecord(t, b[1], map[string]any{"agent": codexAgent + "-old1", "harness": "codex", "harness_session": codexSession, "confirmed": true})

	// The copy's first turn is the agent's t3.
	ev, _ := json.Marshal(map[string]any{"session_id": fakeFork, "cwd": repo.Dir, "hook_event_name": "UserPromptSubmit",
		"turn_id": "01a2315e-0000-7000-8000-000000000003", "prompt": "go on", "model": "gpt-5.5", "permission_mode": "default", "transcript_path": nil})
	if o := hook(t, repo.Dir, ev, []string{"codex"}); o.stdout != "" {
		t.Errorf("the copy's first prompt got a note: %q", o.stdout)
	}
	started := ofType(readLog(t, repo), "turn.started")
	wantRecord(t, started[len(started)-1], map[string]any{"agent": codexAgent, "turn": "t3", "harness_session": fakeFork})
}

// A failed fork ends the rollback at RFC 7.4 step 3: its code, exit class,
// rollback.ended with the code, and no file touched.
func TestCodexRewindRefusedTouchesNoFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode, code string
		status     int
	}{{"refuse", "conflict.harness_fork_refused", 5}, {"die", "conflict.harness_fork_refused", 5}} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			turns := []string{"019dba93-9a01-7c11-8e2f-0a1b2c3d4e01", "019dba93-9a01-7c11-8e2f-0a1b2c3d4e02"}
			for i, tu := range turns {
				hook(t, repo.Dir, codexTurnEvent(repo.Dir, "UserPromptSubmit", tu), []string{"codex"})
				repo.Write("app.py", fmt.Sprintf("x = %d\n", i+2))
				hook(t, repo.Dir, codexTurnEvent(repo.Dir, "Stop", tu), []string{"codex"})
			}
			k := (&ccSession{t: t, repo: repo}).ended(codexAgent, "t1")
			dir, _ := fakeCodex(t, c.mode)
			env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
			plan := cliOK(t, "plan", cliRunEnv(t, repo.Dir, env, "plan", "--agent", codexAgent, k, "--json"))
			data := cliFails(t, "rollback", cliRunEnv(t, repo.Dir, env, "rollback", "--agent", codexAgent, k, "--plan", plan.Plan, "--json"), c.code, c.status)
			if data["safety"] == nil {
				t.Errorf("error data %v names no safety checkpoint", data)
			}
			if got := repo.Read("app.py"); got != "x = 3\n" {
				t.Errorf("app.py = %q: a refused fork touched a file", got)
			}
			ended := ofType(readLog(t, repo), "rollback.ended")
			if len(ended) != 1 || ended[0].str("code") != c.code || ended[0]["ok"] == true {
				t.Errorf("rollback.ended %v", ended)
			}
			if b := ofType(readLog(t, repo), "agent.binding"); len(b) != 0 {
				t.Errorf("a refused fork logged a binding: %v", b)
			}
		})
	}
}
