//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

// Codex with the real codex 0.171 (issue 14: Codex conversations, items 5
// and 6, per-tool-call checkpoints).

// codexWorld is an Env with Codex set up and the hooks installed.
type codexWorld struct {
	*e2etest.Env
	c *e2etest.Codex
}

func newCodex(t *testing.T) *codexWorld {
	e := e2etest.New(t, "codex")
	w := &codexWorld{Env: e, c: e.Codex()}
	if r := e.Venom("venom-hook", "install", "codex"); r.Code != 0 {
		t.Fatalf("install.codex: %s", r)
	}
	return w
}

// exec runs one `codex exec --json` turn (hook trust bypassed for the run,
// as a script would) and checks it ended with want.
func (w *codexWorld) exec(want string, args ...string) e2etest.CodexResult {
	w.T.Helper()
	r := w.c.Exec(append([]string{"--dangerously-bypass-hook-trust", "--json"}, args...)...)
	if r.Code != 0 || r.LastMessage() != want {
		w.T.Fatalf("%s: last message %q, want %q", r, r.LastMessage(), want)
	}
	return r
}

// venom runs `git venom-...` as a person at the terminal Codex runs in:
// codex on PATH and the same CODEX_HOME, which a Codex rewind needs.
func (w *codexWorld) venom(args ...string) e2etest.Result {
	w.T.Helper()
	return w.Run(e2etest.RunOpts{Env: append(append([]string(nil), w.c.Env...), "GIT_CONFIG_NOSYSTEM=1"), Timeout: 2 * time.Minute}, "git", args...)
}

// convo is the conversation of the last scripted model request after
// request since, one line a part.
func (w *codexWorld) convo(since int) string {
	return mockllm.Text(w.Mock.LastConvo(since, "responses"))
}

// ended is the checkpoint of turn's turn.ended record of agent.
func (w *codexWorld) ended(agent, turn string) string {
	w.T.Helper()
	rs := w.Records("turn.ended", "agent="+agent, "turn="+turn)
	if len(rs) != 1 {
		w.T.Fatalf("turn.ended of %s %s:\n%s", agent, turn, e2etest.LogText(w.Records("turn.ended")))
	}
	return rs[0].S("checkpoint")
}

type planJSON struct {
	Plan         string `json:"plan"`
	Conversation struct {
		Rewinds        bool     `json:"rewinds"`
		Drops          []string `json:"drops"`
		Harness        string   `json:"harness"`
		HarnessSession string   `json:"harness_session"`
		Resume         []string `json:"resume"`
		ResumeExec     []string `json:"resume_exec"`
	} `json:"conversation"`
	Error *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, r e2etest.Result) planJSON {
	t.Helper()
	var p planJSON
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		t.Fatalf("%s: stdout is not JSON: %v\n%s", r, err, r.Stdout)
	}
	return p
}

// TestCodexRewind: RFC 8's codex row with the real codex 0.171. Two
// turns (APPLE, then BANANA), a rollback with --restore all to the first
// turn's end: the rollback forks the thread through t1 with `codex
// app-server` and prints `codex resume <fork>` and `codex exec resume
// <fork>`; resumed as printed, the copy's next model request holds turn
// one and none of turn two; its hooks are the same agent (t3); the old
// thread is untouched (it still holds turn two) and its next prompt gets
// the files-only note. At a terminal, `codex resume <fork>` as printed
// gives the same.
func TestCodexRewind(t *testing.T) {
	w := newCodex(t)
	r1 := w.exec("Turn one done.", "Turn one: remember APPLE. [[venom-e2e: write one.txt apple ;; say Turn one done.]]")
	T := r1.Thread()
	A := harness.AgentID("codex", T)
	w.exec("Turn two done.", "resume", T, "Turn two: remember BANANA. [[venom-e2e: write two.txt banana ;; say Turn two done.]]")
	K := w.ended(A, "t1")

	var plan planJSON
	t.Run("rewind.plan_says_fork", func(t *testing.T) {
		r := w.venom("venom-plan", "--agent", A, K, "--json")
		plan = decode(t, r)
		c := plan.Conversation
		if r.Code != 0 || !c.Rewinds || c.Harness != "codex" || strings.Join(c.Drops, ",") != "t2" || c.HarnessSession != "" {
			t.Fatalf("%s: conversation %+v\n%s", r, c, r.Stdout)
		}
		if txt := w.venom("venom-plan", "--agent", A, K); !strings.Contains(txt.Stdout, "forks the codex conversation through t1 first (codex app-server thread/fork)") {
			t.Errorf("plan text:\n%s", txt.Stdout)
		}
	})
	if plan.Plan == "" {
		t.FailNow()
	}
	// What runs under the scratch directory before the rollback: codex
	// exec's shell snapshots can outlive it for a moment.
	before := map[int]bool{}
	for _, p := range w.Leftovers() {
		before[p.PID] = true
	}
	rb := w.venom("venom-rollback", "--agent", A, K, "--plan", plan.Plan)
	var started []e2etest.Proc
	for _, p := range w.Leftovers() {
		if !before[p.PID] {
			started = append(started, p)
		}
	}
	var F string
	t.Run("rewind.rollback_prints_resume", func(t *testing.T) {
		m := regexp.MustCompile(`(?m)^  codex resume ([0-9a-f-]{36})\n  in a script: codex exec resume ([0-9a-f-]{36}) <prompt>$`).FindStringSubmatch(rb.Stdout)
		if rb.Code != 0 || m == nil || m[1] != m[2] || m[1] == T {
			t.Fatalf("%s\n%s", rb, rb.Stdout)
		}
		F = m[1]
		if w.Exists("two.txt") || !w.Exists("one.txt") {
			t.Errorf("files after the rollback: two.txt there %v, one.txt there %v", w.Exists("two.txt"), w.Exists("one.txt"))
		}
		// The fork's `codex app-server` (stdio) has exited, and started
		// no daemon: the rollback left nothing running with this HOME.
		if len(started) > 0 {
			t.Errorf("the rollback left processes running: %v", started)
		}
		b := w.Records("agent.binding", "agent="+A)
		if len(b) != 1 || b[0].S("harness_session") != F || b[0].S("fork_source") != T {
			t.Errorf("binding:\n%s", e2etest.LogText(b))
		}
	})
	if F == "" {
		t.FailNow()
	}
	t.Run("rewind.exec_resume_holds_kept_turns", func(t *testing.T) {
		since := w.Mock.Seq()
		w.exec("Turn three done.", "resume", F, "Turn three: which words? [[venom-e2e: say Turn three done.]]")
		cv := w.convo(since)
		if !strings.Contains(cv, "remember APPLE") || strings.Contains(cv, "remember BANANA") || !strings.Contains(cv, "Turn three: which words?") {
			t.Errorf("the copy's request:\n%s", cv)
		}
		if strings.Contains(cv, "files were rolled back") {
			t.Errorf("the copy got the files-only note:\n%s", cv)
		}
		if got := w.Records("turn.started", "agent="+A, "turn=t3", "harness_session="+F); len(got) != 1 {
			t.Errorf("the copy's turn is not %s's t3:\n%s", A, e2etest.LogText(w.Records("turn.started")))
		}
	})
	t.Run("rewind.source_untouched_and_told", func(t *testing.T) {
		since := w.Mock.Seq()
		w.exec("Old thread done.", "resume", T, "Old thread. [[venom-e2e: say Old thread done.]]")
		cv := w.convo(since)
		if !strings.Contains(cv, "remember BANANA") || !strings.Contains(cv, "the files were rolled back to their state after turn t1") {
			t.Errorf("the old thread's request:\n%s", cv)
		}
	})
	t.Run("rewind.terminal_codex_resume", func(t *testing.T) {
		e2etest.NeedTmux(t)
		w.codexTerminalTurn(t, []string{"codex", "resume", F}, "Terminal turn: which words. [[venom-e2e: say Terminal done.]]", "Terminal done.",
			func(cv string) {
				if !strings.Contains(cv, "remember APPLE") || strings.Contains(cv, "remember BANANA") {
					t.Errorf("codex resume %s at a terminal sent:\n%s", F, cv)
				}
			})
	})
}

// codexTerminalTurn runs argv (a codex command line as printed) in a tmux
// terminal, answers Codex's first-run questions, types prompt, waits for
// the answer want and hands the model's request to check.
func (w *codexWorld) codexTerminalTurn(t *testing.T, argv []string, prompt, want string, check func(string)) {
	t.Helper()
	// The trust prompts would stop the session: trust the hooks first, as
	// the person would have (this also proves doctor's hash is codex's).
	w.trustHooks(t)
	// Codex 0.171 greets a gpt-5.5 session with a "Meet GPT-6 Sol" choice;
	// this is what it records when "Use existing model" is chosen.
	p := filepath.Join(w.c.Home, "config.toml")
	cfg, _ := os.ReadFile(p)
	if !strings.Contains(string(cfg), "[notice.model_migrations]") {
		cfg = append(cfg, "\n[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n"...)
		if err := os.WriteFile(p, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	term := w.NewTerminal(w.c.Env)
	since := w.Mock.Seq()
	term.Type(e2etest.ShellQuote(append([]string{w.c.Bin}, argv[1:]...)), true)
	// The prompt box shows while codex is still "Resuming session…", and
	// an Enter then is dropped: wait until it is done (Submit presses
	// Enter again anyway, should one be lost).
	ready := e2etest.Eventually(90*time.Second, func() bool {
		s := term.Screen()
		if strings.Contains(s, "Hooks need review") || strings.Contains(s, "Trust this folder") || strings.Contains(s, "Use existing model") {
			t.Fatalf("codex asks a question the set-up answered:\n%s", s)
		}
		return strings.Contains(s, "? for shortcuts") && !strings.Contains(s, "Resuming session")
	})
	if !ready {
		t.Fatalf("codex showed no ready prompt box within 90 s:\n%s", term.SaveScreen("codex-resume"))
	}
	// The screen shows the prompt as typed, script and all: the model's
	// request says it was sent, and then the answer shows.
	got := ""
	sent := term.Submit(e2etest.CodexComposer, prompt, func() bool {
		// Not LastConvo: the title request codex sends after the turn's
		// quotes the prompt too.
		got = mockllm.Text(w.Mock.PromptConvo(since, "responses", prompt))
		return got != ""
	}, 90*time.Second)
	if !sent {
		t.Fatalf("the terminal session sent the model no request for %q within 90 s (the user parts of its last:\n%s); screen:\n%s", prompt, e2etest.UserParts(w.Mock.LastConvo(since, "responses")), term.SaveScreen("codex-resume"))
	}
	if !term.WaitFor("• "+want, 60*time.Second) {
		t.Logf("the answer %q did not show:\n%s", want, term.SaveScreen("codex-resume"))
	}
	check(got)
	term.Type("/quit", true)
	// codex 0.171's interactive session starts an app-server daemon in a
	// session of its own, which outlives it; the Env stops it (and any
	// other process left under its scratch directory) when the test ends.
	// Here, at once, to check that it does.
	if !e2etest.Eventually(30*time.Second, func() bool { return strings.HasSuffix(strings.TrimSpace(term.Screen()), "$") }) {
		t.Logf("codex did not quit within 30 s:\n%s", term.SaveScreen("codex-quit"))
	}
	term.Close()
	left := w.StopLeftovers()
	t.Logf("left running after codex resume quit, stopped: %v", left)
	if again := w.Leftovers(); len(again) > 0 {
		t.Errorf("still running after StopLeftovers: %v", again)
	}
}

// trustHooks records trust of the project's hooks in config.toml as codex
// 0.171 does when a person answers "Trust all and continue"
// ([hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash), with
// the hash git venom-doctor computes: if it were not codex's, codex would
// still ask (and skip them in codex exec).
func (w *codexWorld) trustHooks(t *testing.T) {
	t.Helper()
	p := filepath.Join(w.c.Home, "config.toml")
	cfg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "[hooks.state") {
		return
	}
	var hooks struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int64  `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	file := filepath.Join(w.Repo, ".codex", "hooks.json")
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &hooks) != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	var sb strings.Builder
	sb.Write(cfg)
	sb.WriteString("\n[hooks.state]\n")
	for _, ev := range e2etest.SortedKeys(hooks.Hooks) {
		for gi, g := range hooks.Hooks[ev] {
			for hi, h := range g.Hooks {
				key := fmt.Sprintf("%s:%s:%d:%d", file, snakeCase(ev), gi, hi)
				fmt.Fprintf(&sb, "\n[hooks.state.%q]\ntrusted_hash = %q\n", key, harness.CodexHookHash(ev, g.Matcher, h.Command, h.Timeout))
			}
		}
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestCodexRewindRefused: a fork the real codex refuses (its thread store
// is another CODEX_HOME, so the thread is unknown; CODEX_HOME is missing
// or a file, so codex app-server dies at once) ends the rollback with
// conflict.harness_fork_refused and codex's message, before any file is
// touched (RFC 7.4 step 3); the same rollback then works.
func TestCodexRewindRefused(t *testing.T) {
	w := newCodex(t)
	r1 := w.exec("Turn one done.", "Turn one. [[venom-e2e: write one.txt apple ;; say Turn one done.]]")
	T := r1.Thread()
	A := harness.AgentID("codex", T)
	w.exec("Turn two done.", "resume", T, "Turn two. [[venom-e2e: write two.txt banana ;; say Turn two done.]]")
	K := w.ended(A, "t1")
	plan := decode(t, w.venom("venom-plan", "--agent", A, K, "--json"))
	other := filepath.Join(w.Work, "other-codex-home")
	os.MkdirAll(other, 0o755)
	cfg, _ := os.ReadFile(filepath.Join(w.c.Home, "config.toml"))
	os.WriteFile(filepath.Join(other, "config.toml"), cfg, 0o644)
	r := w.Run(e2etest.RunOpts{Env: append(append([]string(nil), w.c.Env...), "CODEX_HOME="+other, "GIT_CONFIG_NOSYSTEM=1")},
		"git", "venom-rollback", "--agent", A, K, "--plan", plan.Plan, "--json")
	p := decode(t, r)
	if r.Code != 5 || p.Error == nil || p.Error.Code != "conflict.harness_fork_refused" || !strings.Contains(p.Error.Message, "codex") {
		t.Fatalf("%s\n%s", r, r.Stdout)
	}
	t.Logf("codex's refusal: %s", p.Error.Message)
	if !w.Exists("two.txt") {
		t.Errorf("a refused fork touched the files: two.txt is gone")
	}
	if e := w.Records("rollback.ended", "agent="+A); len(e) != 1 || e[0].S("code") != "conflict.harness_fork_refused" {
		t.Errorf("rollback.ended:\n%s", e2etest.LogText(e))
	}
	// A CODEX_HOME that is no directory: codex app-server exits at once
	// with its error, and a backtrace after it when RUST_BACKTRACE is set
	// (as in many a developer's shell); the refusal quotes the error, not
	// the backtrace's last frame.
	file := filepath.Join(w.Work, "codex-home-file")
	if err := os.WriteFile(file, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, home := range []string{filepath.Join(w.Work, "no-such-codex-home"), file} {
		plan := decode(t, w.venom("venom-plan", "--agent", A, K, "--json"))
		r := w.Run(e2etest.RunOpts{Env: append(append([]string(nil), w.c.Env...), "CODEX_HOME="+home, "RUST_BACKTRACE=1", "GIT_CONFIG_NOSYSTEM=1")},
			"git", "venom-rollback", "--agent", A, K, "--plan", plan.Plan, "--json")
		p := decode(t, r)
		if r.Code != 5 || p.Error == nil || p.Error.Code != "conflict.harness_fork_refused" || !strings.Contains(p.Error.Message, "(codex said: Error: CODEX_HOME points to") {
			t.Errorf("CODEX_HOME=%s: %s\n%s", home, r, r.Stdout)
		}
		if !w.Exists("two.txt") {
			t.Fatalf("a refused fork (CODEX_HOME=%s) touched the files: two.txt is gone", home)
		}
	}
	// With the thread store back, the same rollback forks and restores.
	plan = decode(t, w.venom("venom-plan", "--agent", A, K, "--json"))
	if rb := w.venom("venom-rollback", "--agent", A, K, "--plan", plan.Plan); rb.Code != 0 || w.Exists("two.txt") || !strings.Contains(rb.Stdout, "codex resume ") {
		t.Errorf("the rollback after the refusals: %s\n%s", rb, rb.Stdout)
	}
}

// TestCodexHookTrust (item 5): after install, codex exec without the
// bypass flag runs none of the hooks and says nothing; install and doctor
// say so (from config.toml), with the fix; once config.toml records the
// trust doctor expects (codex 0.171's own hash), doctor says ok and codex
// exec runs the hooks without the flag. Item 6: the hook's environment
// has no CODEX_THREAD_ID, the tool shell's has it.
func TestCodexHookTrust(t *testing.T) {
	e := e2etest.New(t, "codex")
	c := e.Codex()
	in := e.Venom("venom-hook", "install", "codex")
	if in.Code != 0 || !strings.Contains(in.Stdout, "codex skips them here, and `codex exec` says nothing about it") ||
		!strings.Contains(in.Stdout, "--dangerously-bypass-hook-trust") {
		t.Errorf("trust.install_says: %s\n%s", in, in.Stdout)
	}
	env := append(append([]string(nil), c.Env...), "GIT_CONFIG_NOSYSTEM=1")
	doctor := func() string {
		r := e.Run(e2etest.RunOpts{Env: env}, "git", "venom-doctor")
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(l, "hooks.codex") {
				return l
			}
		}
		return "no hooks.codex line in:\n" + r.Stdout
	}
	if d := doctor(); !strings.HasPrefix(d, "warn hooks.codex") || !strings.Contains(d, "5 of its 5 hooks are not trusted") {
		t.Errorf("trust.doctor_warns: %s", d)
	}
	r := c.Exec("--json", "Untrusted. [[venom-e2e: say Untrusted done.]]")
	if r.Code != 0 || len(e.Hooks()) != 0 {
		t.Errorf("trust.untrusted_hooks_skipped: %s, %d hook runs", r, len(e.Hooks()))
	}
	w := &codexWorld{Env: e, c: c}
	w.trustHooks(t)
	if d := doctor(); !strings.HasPrefix(d, "ok   hooks.codex") {
		t.Errorf("trust.doctor_ok: %s", d)
	}
	r = c.Exec("--json", "Trusted. [[venom-e2e: bash env | grep -E '^CODEX_THREAD_ID=' > "+e.Work+"/shell-env.txt ;; say Trusted done.]]")
	if r.Code != 0 || r.LastMessage() != "Trusted done." {
		t.Fatalf("%s", r)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop"} {
		if len(e.HookRuns(ev)) == 0 {
			t.Errorf("trust.trusted_hooks_run: no %s run without the bypass flag:\n%s", ev, e.HooksText())
		}
	}
	for _, h := range e.Hooks() {
		if _, ok := h.Env["CODEX_THREAD_ID"]; ok {
			t.Errorf("env.hook_has_no_thread_id: %s has CODEX_THREAD_ID", h.Summary())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.Work, "shell-env.txt")); !strings.Contains(string(b), "CODEX_THREAD_ID="+r.Thread()) {
		t.Errorf("env.shell_has_thread_id: the tool shell's %q", b)
	}
}

// TestCodexToolCallCheckpoints: PreToolUse of the shell tool takes a
// mid-turn checkpoint before each command, labelled with it; a command
// after one that changed nothing is a reuse; the plan can target one with
// --restore files (and refuses --restore all: mid_turn).
func TestCodexToolCallCheckpoints(t *testing.T) {
	w := newCodex(t)
	r := w.exec("Commands done.", "Commands. [[venom-e2e: bash ls ;; bash echo one > made.txt ;; bash echo two >> made.txt ;; say Commands done.]]")
	A := harness.AgentID("codex", r.Thread())
	if n := len(w.HookRuns("PreToolUse")); n != 3 {
		t.Fatalf("PreToolUse runs: %d, want 3:\n%s", n, w.HooksText())
	}
	taken := w.Records("checkpoint.taken", "agent="+A, "reason=manual")
	if len(taken) != 1 || taken[0].S("label") != "before Bash: echo two >> made.txt" || taken[0]["mid_turn"] != true {
		t.Fatalf("tool-call checkpoints:\n%s", e2etest.LogText(w.Records("checkpoint.taken")))
	}
	if reused := w.Records("checkpoint.reused", "agent="+A, "reason=manual"); len(reused) != 2 {
		t.Errorf("reuses before ls and the first echo:\n%s", e2etest.LogText(reused))
	}
	list := w.Venom("venom-checkpoint", "list", "--agent", A)
	if !strings.Contains(list.Stdout, `mid-turn "before Bash: echo two >> made.txt"`) {
		t.Errorf("list:\n%s", list.Stdout)
	}
	K := taken[0].S("checkpoint")
	if p := decode(t, w.venom("venom-plan", "--agent", A, K, "--json")); p.Error == nil || p.Error.Data["why"] != "mid_turn" {
		t.Errorf("--restore all on a mid-turn checkpoint: %+v", p.Error)
	}
	p := decode(t, w.venom("venom-plan", "--agent", A, K, "--restore", "files", "--json"))
	if rb := w.venom("venom-rollback", "--agent", A, K, "--restore", "files", "--plan", p.Plan); rb.Code != 0 {
		t.Fatalf("%s\n%s", rb, rb.Stdout)
	}
	if got, _ := w.ReadFile("made.txt"); got != "one\n" {
		t.Errorf("made.txt after going back to before the second echo: %q", got)
	}
}
