package harness_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/gittest"
)

// The conversation half of issue 5 (RFC 8, DESIGN.md section 6), end to
// end: a Claude Code session replayed through `git venom-hook claude-code`
// from the fixtures in testdata/claude-code/session (three turns, real file
// edits between the events, a transcript that grows turn by turn), then
// `git venom-plan` and `git venom-rollback` as a person runs them, and the
// resume command run against a fake `claude`.

// init lets the tests run any verb as a separate process, as a person
// does: the test binary re-executed with VENOM_TEST_CLI_VERB=rollback is
// `git venom-rollback`. (TestMain in hook_test.go does the same for the
// hook; init runs before it.)
func init() {
	if verb := os.Getenv("VENOM_TEST_CLI_VERB"); verb != "" {
		os.Exit(cli.Main(verb, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
}

const (
	sessS     = "3f9c2a71-5d4e-4b8a-9c1f-2e7d6b5a4c30"
	sessAgent = "claude-3f9c2a715d4e"
	// The uuid of each turn's last assistant line in transcript-<n>.jsonl.
	sessEnd1 = "9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b13"
	sessEnd2 = "9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b23"
	sessEnd3 = "9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b33"
	sessEnd4 = "9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b43"
	// The note of a files-only rollback to the end of t1 (RFC 8, 11.5).
	noteT1 = "Note: the files were rolled back to their state after turn t1. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them."
)

// fakeClaude is the stand-in for claude that a Claude Code rewind runs in
// these tests (testdata/claude-code/fake-claude: it logs its argv to
// $FAKE_CLAUDE_LOG and answers as claude's print-mode fork does).
var fakeClaude, _ = filepath.Abs("testdata/claude-code/fake-claude")

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// callerEnv are the variables that make a rollback's caller an agent (RFC
// 11.4), or pick an agent; the test process may run under a harness.
var callerEnv = []string{"CLAUDE_CODE_CHILD_SESSION", "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID",
	"GEMINI_CLI", "GEMINI_SESSION_ID", "CURSOR_AGENT", "VENOM_TEST_HOOK_MAIN"}

// cliRun runs `git venom-<verb> args...` in dir as a person would (no
// agent-caller variable set).
func cliRun(t testing.TB, dir, verb string, args ...string) outcome {
	t.Helper()
	return cliRunEnv(t, dir, nil, verb, args...)
}

// cliRunEnv is cliRun with extra environment variables (later ones win).
func cliRunEnv(t testing.TB, dir string, extra []string, verb string, args ...string) outcome {
	t.Helper()
	var env []string
	for _, kv := range gittest.Env() {
		k, _, _ := strings.Cut(kv, "=")
		keep := !strings.HasPrefix(k, "GIT_VENOM_")
		for _, c := range callerEnv {
			keep = keep && k != c
		}
		if keep {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	// A Claude Code rewind runs claude: the stand-in (testdata), never a
	// real one; extra may name another, or where it logs.
	cmd.Env = append(append(append(env, "GIT_VENOM_CLAUDE="+fakeClaude), extra...), "VENOM_TEST_CLI_VERB="+verb)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running git venom-%s: %v", verb, err)
		}
		o.code = ee.ExitCode()
	}
	return o
}

// oldSession is a member of conversation.old_sessions.
type oldSession struct {
	Harness string `json:"harness"`
	Session string `json:"session"`
	Agent   string `json:"agent"`
}

// rollbackJSON is the part of a plan's or rollback's JSON these tests read.
type rollbackJSON struct {
	Plan         string `json:"plan"`
	Restore      string `json:"restore"`
	Conversation struct {
		Rewinds        bool         `json:"rewinds"`
		ThroughTurn    *string      `json:"through_turn"`
		Drops          []string     `json:"drops"`
		HarnessSession string       `json:"harness_session"`
		ForkSource     string       `json:"fork_source"`
		ForkAt         string       `json:"fork_at"`
		Resume         []string     `json:"resume"`
		ResumeExec     []string     `json:"resume_exec"`
		OldSessions    []oldSession `json:"old_sessions"`
		Harness        string       `json:"harness"`
	} `json:"conversation"`
	Repos []struct {
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
			Class  string `json:"class"`
		} `json:"files"`
	} `json:"repos"`
	Safety string `json:"safety"`
	Exact  *bool  `json:"exact"`
	Note   string `json:"note"`
}

func (r *rollbackJSON) files() []string {
	var out []string
	for _, f := range r.Repos[0].Files {
		out = append(out, f.Change+" "+f.Class+" "+f.Path)
	}
	return out
}

// ok decodes a command's JSON result; the command must have exited 0.
func cliOK(t testing.TB, what string, o outcome) *rollbackJSON {
	t.Helper()
	if o.code != 0 {
		t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", what, o.code, o.stdout, o.stderr)
	}
	var r rollbackJSON
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, o.stdout)
	}
	return &r
}

// fails checks that a command failed with code, with the exit status of its
// class (RFC 11.3) and the JSON error object, and returns error.data.
func cliFails(t testing.TB, what string, o outcome, code string, status int) map[string]any {
	t.Helper()
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &e); err != nil {
		t.Fatalf("%s: stdout is not a JSON error: %v\n%s\nstderr %s", what, err, o.stdout, o.stderr)
	}
	if e.Error.Code != code || o.code != status {
		t.Fatalf("%s: %s, exit %d; want %s, exit %d\n%s", what, e.Error.Code, o.code, code, status, o.stdout)
	}
	return e.Error.Data
}

// session is one Claude Code session of the fixtures in a fresh repository.
type ccSession struct {
	t          *testing.T
	repo       *gittest.Repo
	transcript string
	vars       map[string]string
}

func newCCSession(t *testing.T) *ccSession {
	repo := gittest.New(t)
	repo.Write("README.md", "# greet\n")
	repo.Write("greet.py", "def greet(name):\n    return 'hi ' + name\n")
	repo.Commit("init")
	tr := filepath.Join(t.TempDir(), sessS+".jsonl")
	if err := os.WriteFile(tr, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return &ccSession{t: t, repo: repo, transcript: tr, vars: map[string]string{"CWD": repo.Dir, "TRANSCRIPT": tr}}
}

// ev sends one fixture of the session to the hook: exit 0, stdout exactly
// want, and no complaint on stderr.
func (s *ccSession) ev(name, want string) {
	s.t.Helper()
	if o := event(s.t, s.repo.Dir, "claude-code", "session/"+name, s.vars, want); o.stderr != "" {
		s.t.Errorf("%s: stderr %q", name, o.stderr)
	}
}

// grow appends turn n's lines to the transcript, as Claude Code writes them
// while the turn runs.
func (s *ccSession) grow(n int) {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude-code", "session", "transcript-"+string(rune('0'+n))+".jsonl"))
	if err != nil {
		s.t.Fatal(err)
	}
	f, err := os.OpenFile(s.transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		s.t.Fatal(err)
	}
}

// work does turn n's edits, each followed by its tool's hook event: t1
// writes a test, t2 edits greet.py and appends to the changelog through a
// shell command, t3 writes cli.py.
func (s *ccSession) work(n int) {
	s.t.Helper()
	switch n {
	case 1:
		s.repo.Write("tests/test_greet.py", "from greet import greet\n\n\ndef test_greet():\n    assert greet(\"ann\") == \"hi ann\"\n")
		s.ev("PostToolUse-Write-1.json", "")
	case 2:
		s.repo.Write("greet.py", "def greet(name):\n    return 'hello, ' + name + ', pleased to meet you'\n")
		s.ev("PostToolUse-Edit-2.json", "")
		s.repo.Write("CHANGELOG.md", "- greet() is polite\n")
		s.ev("PostToolUse-Bash-2.json", "")
	case 3:
		s.repo.Write("cli.py", "import sys\nfrom greet import greet\n\nprint(greet(sys.argv[1]))\n")
		s.ev("PostToolUse-Write-3.json", "")
	}
}

// turn replays turn n of the session: the prompt, the work, the transcript
// catching up, and Stop.
func (s *ccSession) turn(n int) {
	s.t.Helper()
	c := string(rune('0' + n))
	s.ev("UserPromptSubmit-"+c+".json", "")
	s.work(n)
	s.grow(n)
	s.ev("Stop-"+c+".json", "")
}

// ended returns the checkpoint of turn tN's end, from the log.
func (s *ccSession) ended(agent, turn string) string {
	s.t.Helper()
	for _, r := range ofType(readLog(s.t, s.repo), "turn.ended") {
		if r.str("agent") == agent && r.str("turn") == turn {
			return r.str("checkpoint")
		}
	}
	s.t.Fatalf("no turn.ended of %s %s", agent, turn)
	return ""
}

// A Claude Code session of three turns, rolled back two turns with
// --restore all: the plan and the real call name the same new session and
// the same resume argv; the rollback copies the conversation by running
// claude's print-mode fork with exactly the kept turn's ids (a stand-in
// claude logs its argv), before it touches a file; a fake claude run from
// the printed argv gets it byte for byte; the forked session's start
// confirms the binding, and its next prompt is the same agent, with the
// turn numbering going on.
func TestClaudeCodeRewindTwoTurns(t *testing.T) {
	t.Parallel()
	s := newCCSession(t)
	s.ev("SessionStart.json", "")
	for n := 1; n <= 3; n++ {
		s.turn(n)
	}
	// Each Stop resolved its own turn's last assistant line.
	var ends []string
	for _, r := range ofType(readLog(t, s.repo), "turn.ended") {
		wantRecord(t, r, map[string]any{"agent": sessAgent, "harness_session": sessS})
		ends = append(ends, r.str("turn")+" "+r.str("harness_end"))
	}
	if want := []string{"t1 " + sessEnd1, "t2 " + sessEnd2, "t3 " + sessEnd3}; !reflect.DeepEqual(ends, want) {
		t.Fatalf("turn ends %q, want %q", ends, want)
	}
	k := s.ended(sessAgent, "t1")
	if k != "k2" {
		t.Errorf("t1 ended with %s, want k2 (k1 is its turn_start)", k)
	}

	plan := cliOK(t, "plan", cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, k, "--json"))
	c := plan.Conversation
	if !c.Rewinds || c.ThroughTurn == nil || *c.ThroughTurn != "t1" || !reflect.DeepEqual(c.Drops, []string{"t2", "t3"}) {
		t.Errorf("plan conversation: rewinds %v through %v drops %q; want true, t1, [t2 t3]", c.Rewinds, c.ThroughTurn, c.Drops)
	}
	n := c.HarnessSession
	if !uuidV4.MatchString(n) || n == sessS {
		t.Fatalf("plan harness_session %q: want a new UUID", n)
	}
	resume := []string{"claude", "--resume=" + n}
	if !reflect.DeepEqual(c.Resume, resume) || !reflect.DeepEqual(c.ResumeExec, []string{"claude", "-p", "--resume=" + n}) {
		t.Errorf("plan resume %q, resume_exec %q\nwant %q and claude -p --resume=%s", c.Resume, c.ResumeExec, resume, n)
	}
	if want := []string{"delete turn CHANGELOG.md", "delete agent cli.py", "modify agent greet.py"}; !reflect.DeepEqual(plan.files(), want) {
		t.Errorf("plan files %q, want %q", plan.files(), want)
	}

	forkLog := filepath.Join(t.TempDir(), "fork-argv")
	res := cliOK(t, "rollback", cliRunEnv(t, s.repo.Dir, []string{"FAKE_CLAUDE_LOG=" + forkLog}, "rollback", "--agent", sessAgent, k, "--plan", plan.Plan, "--json"))
	if !reflect.DeepEqual(res.Conversation, plan.Conversation) {
		t.Errorf("rollback conversation %+v\nplan's %+v", res.Conversation, plan.Conversation)
	}
	fork, err := os.ReadFile(forkLog)
	if err != nil {
		t.Fatalf("the rollback ran no claude: %v", err)
	}
	if want := strings.Join([]string{"-p", "--resume=" + sessS, "--resume-session-at=" + sessEnd1, "--fork-session", "--session-id=" + n,
		"--output-format=json", `--settings={"disableAllHooks":true}`, "/rename venom: rewound to after turn t1"}, "\n") + "\n"; string(fork) != want {
		t.Errorf("the rollback's claude argv:\n%s\nwant\n%s", fork, want)
	}
	if res.Exact == nil || !*res.Exact {
		t.Errorf("rollback not exact: %+v", res)
	}
	if got := s.repo.Read("greet.py"); got != "def greet(name):\n    return 'hi ' + name\n" {
		t.Errorf("greet.py after the rollback: %q", got)
	}
	for _, p := range []string{"cli.py", "CHANGELOG.md"} {
		if _, err := os.Lstat(s.repo.Path(p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the rollback (%v)", p, err)
		}
	}
	if _, err := os.Stat(s.repo.Path("tests/test_greet.py")); err != nil {
		t.Errorf("t1's file is gone: %v", err)
	}
	bs := ofType(readLog(t, s.repo), "agent.binding")
	if len(bs) != 2 {
		t.Fatalf("agent.binding records %v", bs)
	}
	wantRecord(t, bs[0], map[string]any{"agent": sessAgent, "harness": "claude-code", "harness_session": n,
		"fork_source": sessS, "fork_at": sessEnd1})
	if _, ok := bs[0]["confirmed"]; ok {
		t.Errorf("the binding is confirmed before its session started: %v", bs[0])
	}
	// The old session is an agent of its own from now on (issue 14 item 7).
	wantRecord(t, bs[1], map[string]any{"agent": sessAgent + "-old1", "harness": "claude-code", "harness_session": sessS, "confirmed": true})
	if want := []oldSession{{"claude-code", sessS, sessAgent + "-old1"}}; !reflect.DeepEqual(res.Conversation.OldSessions, want) {
		t.Errorf("old_sessions %+v, want %+v", res.Conversation.OldSessions, want)
	}

	// The resume command, run as a person would, against a fake claude
	// first on PATH that writes its arguments, each ended by a NUL.
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\nprintf '%s\\0' \"$@\" >\"$CLAUDE_ARGV_FILE\"\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{"-c", `"$@"`, "sh"}, res.Conversation.Resume...)...)
	cmd.Dir = s.repo.Dir
	cmd.Env = append(gittest.Env(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CLAUDE_ARGV_FILE="+argv)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("running %q: %v\n%s", res.Conversation.Resume, err, out)
	}
	got, err := os.ReadFile(argv)
	if err != nil {
		t.Fatalf("the fake claude did not run: %v", err)
	}
	if want := strings.Join(resume[1:], "\x00") + "\x00"; string(got) != want {
		t.Errorf("claude got argv %q\nwant %q", got, want)
	}

	// The forked session starts: the binding is confirmed, and its prompt
	// is the same agent's next turn, t4 (t2 and t3 are dropped, never
	// reused).
	s.vars["SESSION"] = n
	s.ev("SessionStart-fork.json", "")
	bs = ofType(readLog(t, s.repo), "agent.binding")
	if len(bs) != 3 {
		t.Fatalf("agent.binding records after SessionStart: %v", bs)
	}
	wantRecord(t, bs[2], map[string]any{"agent": sessAgent, "harness": "claude-code", "harness_session": n,
		"fork_source": sessS, "fork_at": sessEnd1, "confirmed": true})
	s.ev("UserPromptSubmit-fork.json", "")
	recs := readLog(t, s.repo)
	started := ofType(recs, "turn.started")
	last := started[len(started)-1]
	wantRecord(t, last, map[string]any{"agent": sessAgent, "turn": "t4", "harness": "claude-code", "harness_session": n,
		"harness_turn": "7c1d0e2f-1a2b-4c3d-8e4f-5a6b7c8d9e04"})
	seen := map[string]bool{}
	for _, r := range started {
		if seen[r.str("turn")] {
			t.Errorf("turn %s started twice", r.str("turn"))
		}
		seen[r.str("turn")] = true
	}
	if reg := ofType(recs, "agent.registered"); len(reg) != 1 {
		t.Errorf("the forked session registered another agent: %v", reg)
	}
	if n := len(ofType(recs, "agent.binding")); n != 3 {
		t.Errorf("%d agent.binding records after the fork's prompt, want 3 (confirmed once)", n)
	}
}

// --restore files on the same kind of session: the result carries the
// note, the next prompt prints exactly it once, the one after nothing.
func TestClaudeCodeFilesOnlyNote(t *testing.T) {
	t.Parallel()
	s := newCCSession(t)
	s.ev("SessionStart.json", "")
	for n := 1; n <= 3; n++ {
		s.turn(n)
	}
	k := s.ended(sessAgent, "t1")
	plan := cliOK(t, "plan", cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, k, "--restore", "files", "--json"))
	res := cliOK(t, "rollback", cliRun(t, s.repo.Dir, "rollback", "--agent", sessAgent, k, "--restore", "files", "--plan", plan.Plan, "--json"))
	if res.Restore != "files" || res.Conversation.Rewinds || len(res.Conversation.Drops) != 0 || res.Conversation.Resume != nil {
		t.Errorf("files-only conversation: %+v", res.Conversation)
	}
	if res.Note != noteT1 {
		t.Errorf("note %q\nwant %q", res.Note, noteT1)
	}
	if _, err := os.Lstat(s.repo.Path("cli.py")); !os.IsNotExist(err) {
		t.Errorf("cli.py is still there: %v", err)
	}
	s.ev("UserPromptSubmit-4.json", noteT1+"\n")
	s.grow(4)
	s.ev("Stop-4.json", "")
	s.ev("UserPromptSubmit-5.json", "")
	recs := readLog(t, s.repo)
	pending, delivered := ofType(recs, "note.pending"), ofType(recs, "note.delivered")
	if len(pending) != 1 || len(delivered) != 1 {
		t.Fatalf("note.pending %v, note.delivered %v", pending, delivered)
	}
	wantRecord(t, pending[0], map[string]any{"agent": sessAgent, "text": noteT1})
	wantRecord(t, delivered[0], map[string]any{"agent": sessAgent})
	// The session went on: t4 ended with its own last assistant line.
	for _, r := range ofType(recs, "turn.ended") {
		if r.str("turn") == "t4" && r.str("harness_end") != sessEnd4 {
			t.Errorf("t4 ended with harness_end %q, want %q", r.str("harness_end"), sessEnd4)
		}
	}
}

// conflict.checkpoint_files_only, each reachable why of RFC 8: the plan and
// the real call (whatever its plan) refuse with exit 5 and data.why, and
// change nothing.
func TestClaudeCodeFilesOnlyWhys(t *testing.T) {
	t.Parallel()
	refuse := func(t *testing.T, s *ccSession, agent, k, why string, extra ...string) {
		t.Helper()
		log0, refs0 := readLog(t, s.repo), s.repo.Refs()
		args := append([]string{"--agent", agent, k, "--json"}, extra...)
		data := cliFails(t, "plan "+k, cliRun(t, s.repo.Dir, "plan", args...), "conflict.checkpoint_files_only", 5)
		if data["why"] != why {
			t.Errorf("plan %s: data %v, want why %q", k, data, why)
		}
		data = cliFails(t, "rollback "+k, cliRun(t, s.repo.Dir, "rollback", append(args, "--plan", "p1-0000000000000000")...),
			"conflict.checkpoint_files_only", 5)
		if data["why"] != why {
			t.Errorf("rollback %s: data %v, want why %q", k, data, why)
		}
		if got := readLog(t, s.repo); len(got) != len(log0) {
			t.Errorf("the refusals logged %v", types(got[len(log0):]))
		}
		if got := s.repo.Refs(); !reflect.DeepEqual(got, refs0) {
			t.Errorf("the refusals changed the refs: %v", got)
		}
		// Files only is the way out, and it is offered.
		cliOK(t, "plan --restore files", cliRun(t, s.repo.Dir, "plan", append(args, "--restore", "files")...))
	}

	t.Run("mid_turn", func(t *testing.T) {
		t.Parallel()
		s := newCCSession(t)
		s.turn(1)
		s.ev("UserPromptSubmit-2.json", "")
		s.repo.Write("greet.py", "def greet(name):\n    return 'hello ' + name\n")
		s.ev("PostToolUse-Edit-2.json", "")
		o := cliRun(t, s.repo.Dir, "checkpoint", "--agent", sessAgent, "--json")
		var rec struct {
			Checkpoint  string `json:"checkpoint"`
			MidTurn     bool   `json:"mid_turn"`
			ThroughTurn string `json:"through_turn"`
		}
		if err := json.Unmarshal([]byte(o.stdout), &rec); o.code != 0 || err != nil || !rec.MidTurn || rec.ThroughTurn != "t1" {
			t.Fatalf("the manual checkpoint: exit %d, %v\n%s", o.code, err, o.stdout)
		}
		s.work(2)
		s.grow(2)
		s.ev("Stop-2.json", "")
		s.turn(3)
		refuse(t, s, sessAgent, rec.Checkpoint, "mid_turn")
	})

	t.Run("fork", func(t *testing.T) {
		t.Parallel()
		s := newCCSession(t)
		s.turn(1)
		s.turn(2)
		dir := s.repo.Dir
		cliOK(t, "fork", cliRun(t, dir, "checkpoint", "--agent", "f1", "--fork-of", sessAgent, "--through-turn", "t1", "--json"))
		for _, content := range []string{"fork one\n", "fork two\n"} {
			cliOK(t, "turn_start", cliRun(t, dir, "checkpoint", "--agent", "f1", "--reason", "turn_start", "--json"))
			s.repo.Write("fork.txt", content)
			cliOK(t, "turn_end", cliRun(t, dir, "checkpoint", "--agent", "f1", "--reason", "turn_end", "--json"))
		}
		refuse(t, s, "f1", "k1", "fork", "--outside", "overwrite")
	})

	t.Run("dropped_turn", func(t *testing.T) {
		t.Parallel()
		s := newCCSession(t)
		for n := 1; n <= 3; n++ {
			s.turn(n)
		}
		dir := s.repo.Dir
		k2, k3, k4 := s.ended(sessAgent, "t1"), s.ended(sessAgent, "t2"), s.ended(sessAgent, "t3")
		plan := cliOK(t, "plan", cliRun(t, dir, "plan", "--agent", sessAgent, k2, "--json"))
		cliOK(t, "rollback", cliRun(t, dir, "rollback", "--agent", sessAgent, k2, "--plan", plan.Plan, "--json"))
		// The forked session has a turn of its own, t4.
		s.vars["SESSION"] = plan.Conversation.HarnessSession
		s.vars["TRANSCRIPT"] = filepath.Join(t.TempDir(), "fork.jsonl")
		s.ev("SessionStart-fork.json", "")
		s.ev("UserPromptSubmit-fork.json", "")
		s.repo.Write("greet.py", "def greet(name):\n    \"\"\"Greet name.\"\"\"\n    return 'hi ' + name\n")
		s.ev("Stop-fork.json", "")
		refuse(t, s, sessAgent, k3, "dropped_turn")
		refuse(t, s, sessAgent, k4, "dropped_turn")
	})

	t.Run("no_harness_id", func(t *testing.T) {
		t.Parallel()
		s := newCCSession(t)
		s.turn(1)
		s.ev("UserPromptSubmit-2.json", "")
		s.work(2)
		// Stop comes before the transcript has t2's assistant line (it
		// lags, HARNESS-HOOKS.md 1.3): the last assistant line is t1's,
		// which does not hold t2's last message, so no harness_end.
		o := event(t, s.repo.Dir, "claude-code", "session/Stop-2.json", s.vars, "")
		if !strings.Contains(o.stderr, "harness_end") {
			t.Errorf("Stop-2 with a lagging transcript: stderr %q", o.stderr)
		}
		s.turn(3)
		for _, r := range ofType(readLog(t, s.repo), "turn.ended") {
			if want := map[string]string{"t1": sessEnd1, "t2": "", "t3": sessEnd3}[r.str("turn")]; r.str("harness_end") != want {
				t.Errorf("%s ended with harness_end %q, want %q", r.str("turn"), r.str("harness_end"), want)
			}
		}
		refuse(t, s, sessAgent, s.ended(sessAgent, "t2"), "no_harness_id")
		// t1 has its id: going back to it rewinds.
		plan := cliOK(t, "plan", cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, s.ended(sessAgent, "t1"), "--json"))
		if c := plan.Conversation; c.ForkSource != sessS || c.ForkAt != sessEnd1 ||
			!reflect.DeepEqual(c.Resume, []string{"claude", "--resume=" + c.HarnessSession}) {
			t.Errorf("the plan copies %s through %s and resumes with %q; want %s through %s", c.ForkSource, c.ForkAt, c.Resume, sessS, sessEnd1)
		}
	})
}

// A harness without a rewind: --restore all past a turn is
// unsupported.harness_capability (exit 10) with data.fix, plan and real
// call alike, and nothing changes; --restore files is the way.
func TestUnsupportedHarnessCapability(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ h, start, end, agent string }{
		{"gemini", "BeforeAgent.json", "AfterAgent.json", geminiAgent},
	} {
		t.Run(c.h, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			vars := map[string]string{"CWD": repo.Dir}
			for _, content := range []string{"x = 2\n", "x = 3\n"} {
				event(t, repo.Dir, c.h, c.start, vars, "")
				repo.Write("app.py", content)
				event(t, repo.Dir, c.h, c.end, vars, "")
			}
			s := &ccSession{t: t, repo: repo}
			k := s.ended(c.agent, "t1")
			log0, refs0 := readLog(t, repo), repo.Refs()
			data := cliFails(t, "plan", cliRun(t, repo.Dir, "plan", "--agent", c.agent, k, "--json"), "unsupported.harness_capability", 10)
			if data["fix"] != "--restore=files" || data["harness"] != c.h {
				t.Errorf("plan: data %v", data)
			}
			data = cliFails(t, "rollback", cliRun(t, repo.Dir, "rollback", "--agent", c.agent, k, "--plan", "p1-0000000000000000", "--json"),
				"unsupported.harness_capability", 10)
			if data["fix"] != "--restore=files" {
				t.Errorf("rollback: data %v", data)
			}
			if got := readLog(t, repo); len(got) != len(log0) {
				t.Errorf("the refusals logged %v", types(got[len(log0):]))
			}
			if !reflect.DeepEqual(repo.Refs(), refs0) || repo.Read("app.py") != "x = 3\n" {
				t.Errorf("the refusals changed something: %v %q", repo.Refs(), repo.Read("app.py"))
			}
			plan := cliOK(t, "plan --restore files", cliRun(t, repo.Dir, "plan", "--agent", c.agent, k, "--restore", "files", "--json"))
			if want := []string{"modify turn app.py"}; !reflect.DeepEqual(plan.files(), want) {
				t.Errorf("files-only plan %q, want %q", plan.files(), want)
			}
		})
	}
}

// An interrupt fires no hook: the next prompt closes the open turn
// synthetically. A plan right after an interrupted turn, before any new
// prompt, is conflict.turn_running, and its hint names the command that
// ends the turn; after that command the plan works.
func TestClaudeCodeInterruptThenPlan(t *testing.T) {
	t.Parallel()
	s := newCCSession(t)
	s.turn(1)
	s.ev("UserPromptSubmit-2.json", "")
	s.work(2) // interrupted: no Stop
	s.ev("UserPromptSubmit-3.json", "")
	recs := readLog(t, s.repo)
	ended := ofType(recs, "turn.ended")
	if len(ended) != 2 {
		t.Fatalf("turn.ended records %v", ended)
	}
	wantRecord(t, ended[1], map[string]any{"agent": sessAgent, "turn": "t2", "synthetic": true})
	started := ofType(recs, "turn.started")
	wantRecord(t, started[len(started)-1], map[string]any{"turn": "t3", "harness_turn": "7c1d0e2f-1a2b-4c3d-8e4f-5a6b7c8d9e03"})

	s.work(3) // interrupted again; no prompt after it
	k := s.ended(sessAgent, "t1")
	data := cliFails(t, "plan", cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, k, "--json"), "conflict.turn_running", 5)
	if data["turn"] != "t3" || data["agent"] != sessAgent {
		t.Errorf("turn_running data %v", data)
	}
	o := cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, k)
	hint := "git venom-checkpoint --agent " + sessAgent + " --reason turn_end"
	if o.code != 5 || !strings.Contains(o.stderr, "hint:") || !strings.Contains(o.stderr, hint) || !strings.Contains(o.stderr, "t3") {
		t.Errorf("plan without --json: exit %d, stderr %q; want a hint naming %q", o.code, o.stderr, hint)
	}
	cliOK(t, "the person's turn_end", cliRun(t, s.repo.Dir, "checkpoint", "--agent", sessAgent, "--reason", "turn_end", "--json"))
	// (--outside overwrite: the interrupted t2's own work counts as outside
	// its turns, since its synthetic end has no capture; see t5002.)
	plan := cliOK(t, "plan after the turn_end", cliRun(t, s.repo.Dir, "plan", "--agent", sessAgent, k, "--outside", "overwrite", "--json"))
	if !reflect.DeepEqual(plan.Conversation.Drops, []string{"t2", "t3"}) {
		t.Errorf("drops %q, want [t2 t3]", plan.Conversation.Drops)
	}
}

// TestHarnessGivenAtTurnEndIsKept: a turn opened by a turn_start without
// --harness (a wrapper that learns the harness's ids only when the turn
// ends) and ended with --harness and its ids keeps the harness with the
// turn, as git-venom-checkpoint(1) says: `list` says conversation true,
// and the plan rewinds the conversation with those ids instead of saying
// "no harness" (issue 13 item 15).
func TestHarnessGivenAtTurnEndIsKept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	const agent, sess = "w1", "5b0c1d2e-3f40-4a51-8b62-7c83d94e0f15"
	ends := []string{"e1-uuid", "e2-uuid"}
	for i, content := range []string{"x = 2\n", "x = 3\n"} {
		cliOK(t, "turn_start", cliRun(t, repo.Dir, "checkpoint", "--agent", agent, "--reason", "turn_start", "--json"))
		repo.Write("app.py", content)
		cliOK(t, "turn_end", cliRun(t, repo.Dir, "checkpoint", "--agent", agent, "--reason", "turn_end",
			"--harness", "claude-code", "--harness-session", sess, "--harness-end", ends[i], "--json"))
	}
	var ended string
	for _, r := range readLog(t, repo) {
		if r.str("type") == "turn.ended" && r.str("turn") == "t1" {
			ended = r.str("checkpoint")
			if r.str("harness") != "claude-code" {
				t.Errorf("turn.ended of t1 holds harness %q, want claude-code", r.str("harness"))
			}
		}
	}
	var list struct {
		Checkpoints []struct {
			Checkpoint   string `json:"checkpoint"`
			Conversation bool   `json:"conversation"`
		} `json:"checkpoints"`
	}
	lo := cliRun(t, repo.Dir, "checkpoint", "list", "--agent", agent, "--json")
	if err := json.Unmarshal([]byte(lo.stdout), &list); err != nil {
		t.Fatalf("list: %v\n%s", err, lo.stdout)
	}
	for _, c := range list.Checkpoints {
		if c.Checkpoint == ended && !c.Conversation {
			t.Errorf("list says %s cannot bring the conversation back", ended)
		}
	}
	plan := cliOK(t, "plan", cliRun(t, repo.Dir, "plan", "--agent", agent, ended, "--json"))
	if !plan.Conversation.Rewinds || !reflect.DeepEqual(plan.Conversation.Drops, []string{"t2"}) {
		t.Errorf("conversation %+v, want a rewind dropping t2", plan.Conversation)
	}
	if c := plan.Conversation; c.Harness != "claude-code" || c.ForkSource != sess || c.ForkAt != ends[0] ||
		!reflect.DeepEqual(c.Resume, []string{"claude", "--resume=" + c.HarnessSession}) {
		t.Errorf("the plan copies %s (%s) through %s and resumes with %q; want claude-code's %s through %s",
			c.ForkSource, c.Harness, c.ForkAt, c.Resume, sess, ends[0])
	}
}
