// Package e2etest is the framework of `make e2e`: the real, unmodified
// agent clients (Claude Code, Codex, Gemini CLI, installed at pinned
// versions into e2e/clients by e2e/install-clients.sh) run against the
// scripted model server of package mockllm, in a throwaway repository
// with the real git-venom-hook installed, and a test checks what venom
// recorded and what the model was sent. How to add a test:
// e2e/README.md.
//
// Everything a client runs with is made here, not inherited: its HOME,
// its PATH (a hook recorder standing in for git-venom-hook first, then
// the git-venom binaries under test, then the clients), and a short list
// of variables, so that nothing of an enclosing agent session (CLAUDECODE,
// CODEX_THREAD_ID, ...) leaks into the client or its hooks.
//
// The environment of the test process says where things are:
//
//	VENOM_BIN          the git-venom-* binaries under test (make e2e: ./bin)
//	VENOM_E2E_CLIENTS  the clients' bin directory (make e2e: e2e/clients/node_modules/.bin)
//	VENOM_E2E_KEEP=1   keep every scratch directory (a failed test's is always kept)
package e2etest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/e2e/mockllm"
)

// ClientTimeout bounds one run of a client. It is generous: a client that
// takes long on a loaded machine is slow, not wrong; a hung one still
// fails the test.
const ClientTimeout = 4 * time.Minute

// Env is one test's world: a scratch directory Work holding the
// repository Repo (one commit, README.md), the client's home Home, the
// hook records HookLog, and a mock model server Mock (stopped when the
// test ends; its requests also in Work/mock).
type Env struct {
	T        *testing.T
	Work     string
	Repo     string
	Home     string
	HookLog  string
	Mock     *mockllm.Server
	VenomBin string
	// Clients is the clients' bin directory.
	Clients string
	// Path is the PATH a client runs with.
	Path string
}

// VenomBin is the directory of the git-venom binaries under test; the test
// fails when it holds no git-venom-hook.
func venomBin(t *testing.T) string {
	t.Helper()
	d := os.Getenv("VENOM_BIN")
	if d == "" {
		t.Fatal("VENOM_BIN is not set: run the tests with make e2e (or set it to the project's bin after make build)")
	}
	if _, err := os.Stat(filepath.Join(d, "git-venom-hook")); err != nil {
		t.Fatalf("VENOM_BIN=%s holds no git-venom-hook: run make build", d)
	}
	return d
}

// ClientBin is the path of a client's binary (claude, codex, gemini) in
// VENOM_E2E_CLIENTS. A missing client fails the test: make e2e installs
// all three, so a missing one is a broken install, not a reason to skip.
func ClientBin(t *testing.T, name string) string {
	t.Helper()
	d := os.Getenv("VENOM_E2E_CLIENTS")
	if d == "" {
		t.Fatal("VENOM_E2E_CLIENTS is not set: run the tests with make e2e, which installs the clients into e2e/clients")
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no %s in VENOM_E2E_CLIENTS=%s (make e2e installs it: e2e/install-clients.sh)", name, d)
	}
	return p
}

// New makes the Env of test t: the scratch directory, the repository, the
// hook recorder on PATH and a started mock. The scratch directory is
// removed when the test passes, unless VENOM_E2E_KEEP=1; a failed test's
// is kept and named in the log.
func New(t *testing.T, name string) *Env {
	t.Helper()
	vb := venomBin(t)
	clients := os.Getenv("VENOM_E2E_CLIENTS")
	work, err := os.MkdirTemp("", "venom-e2e-"+name+".")
	if err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.EvalSymlinks(work)
	e := &Env{T: t, Work: work, Repo: filepath.Join(work, "repo"), Home: filepath.Join(work, "home"),
		HookLog: filepath.Join(work, "hooks"), VenomBin: vb, Clients: clients}
	for _, d := range []string{e.Repo, e.Home, e.HookLog, filepath.Join(work, "bin"), filepath.Join(work, "noglobal")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(work, "bin", "git-venom-hook")); err != nil {
		t.Fatal(err)
	}
	e.shadowGlobalClients()
	e.Path = strings.Join([]string{filepath.Join(work, "bin"), vb, clients, e.noGlobal(), systemPath()}, string(os.PathListSeparator))
	e.Mock, err = mockllm.Start(mockllm.Options{LogDir: filepath.Join(work, "mock"), Lifetime: 30 * time.Minute, MaxRequests: 2000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scratch directory %s; mock model server on %s", work, e.Mock.URL())
	t.Cleanup(func() {
		if left := e.StopLeftovers(); len(left) > 0 {
			var sb strings.Builder
			for _, p := range left {
				sb.WriteString("\n\t" + p.String())
			}
			t.Logf("stopped what was left running under %s:%s", work, sb.String())
		}
		e.Mock.Close()
		e.writeHookInputs()
		if t.Failed() || os.Getenv("VENOM_E2E_KEEP") == "1" {
			t.Logf("evidence kept in %s: hook-inputs.md (every hook input as received), hooks/ (one JSON per hook run), mock/ (every model request), repo/.git/venom/log.jsonl", work)
			return
		}
		os.RemoveAll(work)
	})
	e.Git("init", "-q")
	e.Git("config", "user.email", "e2e@example.invalid")
	e.Git("config", "user.name", "e2e")
	e.Git("config", "commit.gpgsign", "false")
	e.WriteFile("README.md", "hello\n")
	e.Git("add", "README.md")
	e.Git("commit", "-qm", "init")
	return e
}

// ClientNames are the clients make e2e installs, by their program names.
var ClientNames = []string{"claude", "codex", "gemini"}

// noGlobal is the directory of stand-ins that hide a global install of a
// client (npm i -g puts claude, codex and gemini in /usr/bin): it comes
// right after the clients' directory on every PATH the framework makes,
// before the system's, so a command that runs a client by name finds the
// pinned one, or, on a PATH that lacks the clients' directory, a stand-in
// that fails and says so; never a global one of another version. Without
// it, a PATH without the clients passes here and fails on a clean machine.
func (e *Env) noGlobal() string { return filepath.Join(e.Work, "noglobal") }

// shadowGlobalClients writes the stand-ins of noGlobal: each prints what
// happened on stderr and exits 127.
func (e *Env) shadowGlobalClients() {
	e.T.Helper()
	for _, name := range ClientNames {
		script := "#!/bin/sh\necho \"e2e: $0 stands in for a global " + name + ": this PATH lacks the pinned clients (VENOM_E2E_CLIENTS)\" >&2\nexit 127\n"
		if err := os.WriteFile(filepath.Join(e.noGlobal(), name), []byte(script), 0o755); err != nil {
			e.T.Fatal(err)
		}
	}
}

// systemPath is the PATH entries a client needs for its tools (sh, git,
// env): the test process's PATH, which under make holds them.
func systemPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return "/usr/local/bin:/usr/bin:/bin"
}

// BaseEnv is the environment every client runs with, before the client's
// own variables: PATH, HOME, the hook recorder's two variables, and a few
// a shell and a terminal need. Nothing else of the test process passes.
func (e *Env) BaseEnv() []string {
	env := []string{
		"PATH=" + e.Path,
		"HOME=" + e.Home,
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"USER=" + userName(),
		"TMPDIR=" + os.TempDir(),
		"VENOM_E2E_REAL_HOOK=" + filepath.Join(e.VenomBin, "git-venom-hook"),
		"VENOM_E2E_HOOKLOG=" + e.HookLog,
	}
	if os.Getenv("GIT_VENOM_TRACE") != "" {
		env = append(env, "GIT_VENOM_TRACE=1")
	}
	return env
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// WriteFile writes a file of the repository.
func (e *Env) WriteFile(rel, content string) {
	e.T.Helper()
	p := filepath.Join(e.Repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
}

// ReadFile reads a file of the repository; "" and false when it is missing.
func (e *Env) ReadFile(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.Repo, rel))
	return string(b), err == nil
}

// Exists reports whether a path of the repository exists.
func (e *Env) Exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.Repo, rel))
	return err == nil
}

// Git runs git in the repository and returns its stdout; a failure fails
// the test.
func (e *Env) Git(args ...string) string {
	e.T.Helper()
	r := e.Run(RunOpts{Dir: e.Repo, Env: e.gitEnv(), Timeout: time.Minute}, "git", args...)
	if r.Code != 0 {
		e.T.Fatalf("git %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.Stdout
}

func (e *Env) gitEnv() []string {
	return append(e.BaseEnv(), "PATH="+strings.Join([]string{e.VenomBin, e.Clients, e.noGlobal(), systemPath()}, string(os.PathListSeparator)),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
}

// Venom runs `git <args...>` in the repository with the binaries under
// test first on PATH, then the pinned clients (a Claude Code rewind runs
// claude), as a person at the agent's terminal would (no agent
// variables), and returns
// its result whatever the exit status: git venom-plan, venom-rollback and
// friends.
func (e *Env) Venom(args ...string) Result {
	e.T.Helper()
	return e.Run(RunOpts{Dir: e.Repo, Env: e.gitEnv(), Timeout: 2 * time.Minute}, "git", args...)
}

// VenomJSON runs e.Venom(args...) and decodes its stdout, one JSON value,
// into v; it fails the test when stdout is not JSON. It returns the exit
// status.
func (e *Env) VenomJSON(v any, args ...string) Result {
	e.T.Helper()
	r := e.Venom(args...)
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		e.T.Fatalf("git %s: exit %d, stdout is not JSON (%v):\n%s\nstderr: %s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
	}
	return r
}

// RunOpts say how to run a program: in Dir, with exactly Env (nil: the
// Env's BaseEnv), Stdin (nil: /dev/null), for at most Timeout
// (0: ClientTimeout).
type RunOpts struct {
	Dir     string
	Env     []string
	Stdin   []byte
	Timeout time.Duration
}

// Result is what a program did: its output, its exit status (-1 when it
// was killed at the timeout or could not start), how long it took, and
// the command line for messages.
type Result struct {
	Stdout, Stderr string
	Code           int
	Dur            time.Duration
	Cmd            string
	TimedOut       bool
}

// String is the result for a failure message: the command, the status,
// the start of stderr.
func (r Result) String() string {
	s := fmt.Sprintf("%s: exit %d after %s", r.Cmd, r.Code, r.Dur.Round(time.Millisecond))
	if r.TimedOut {
		s += " (killed at the timeout)"
	}
	if r.Stderr != "" {
		s += "; stderr: " + Cut(r.Stderr, 600)
	}
	return s
}

// Run runs name with args as RunOpts say. A program still running at the
// timeout is killed with its whole process group.
func (e *Env) Run(o RunOpts, name string, args ...string) Result {
	if o.Timeout == 0 {
		o.Timeout = ClientTimeout
	}
	if o.Env == nil {
		o.Env = e.BaseEnv()
	}
	if o.Dir == "" {
		o.Dir = e.Repo
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if o.Stdin != nil {
		cmd.Stdin = bytes.NewReader(o.Stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Dur: time.Since(start), Cmd: shellQuote(append([]string{name}, args...))}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		r.Code = -1
		r.Stderr += err.Error()
	}
	if ctx.Err() != nil {
		r.TimedOut, r.Code = true, -1
	}
	return r
}

// shellQuote is argv as a shell would read it back.
func shellQuote(argv []string) string {
	var parts []string
	for _, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '@' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			parts = append(parts, a)
			continue
		}
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}

// ShellQuote is argv as one shell command line, each word quoted when it
// needs it: what a person would type to run argv.
func ShellQuote(argv []string) string { return shellQuote(argv) }

// Cut is s cut to n bytes, with "..." when cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Record is one record of the venom log (.git/venom/log.jsonl), decoded.
type Record map[string]any

// S is the string value of a top-level key ("" when absent or not a
// string).
func (r Record) S(key string) string {
	s, _ := r[key].(string)
	return s
}

// Log is every record of the repository's venom log, in order.
func (e *Env) Log() []Record {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Repo, ".git", "venom", "log.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.T.Fatal(err)
	}
	var out []Record
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			e.T.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// Records are the log's records of type typ ("" for any) whose string
// fields match each "key=value" in kv ("key=" matches an absent key).
func (e *Env) Records(typ string, kv ...string) []Record {
	e.T.Helper()
	var out []Record
	for _, r := range e.Log() {
		if typ != "" && r.S("type") != typ {
			continue
		}
		ok := true
		for _, c := range kv {
			k, v, _ := strings.Cut(c, "=")
			if fmt.Sprint(valueOr(r[k])) != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func valueOr(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// LogText is the log's records as JSON lines, for failure messages.
func LogText(rs []Record) string {
	var sb strings.Builder
	for _, r := range rs {
		b, _ := json.Marshal(r)
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Eventually polls cond every 200 ms until it is true or timeout passes,
// and reports which. For waiting on another process (a terminal, a hook
// that finishes after its client): never a fixed sleep.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// SortedKeys is m's keys, sorted.
func SortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
