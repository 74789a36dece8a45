package e2etest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HookRun is one run of git-venom-hook by a client, as the hook recorder
// saw it: what the client handed the hook (argv, cwd, stdin, the
// CLAUDE*/CODEX*/GEMINI*/GIT_VENOM* variables without keys or tokens) and
// what the real hook answered (stdout, stderr, exit status), or, when the
// client killed the hook, Signal and Finished false. Start and End are
// Unix times in seconds. A run the client killed before its stdin was read
// has an empty StdinRaw.
type HookRun struct {
	Argv     []string          `json:"argv"`
	Cwd      string            `json:"cwd"`
	Start    float64           `json:"start"`
	End      float64           `json:"end"`
	RC       *int              `json:"rc"`
	Signal   string            `json:"signal,omitempty"`
	Finished bool              `json:"finished"`
	StdinRaw string            `json:"stdin_raw"`
	Stdin    map[string]any    `json:"stdin"`
	Stdout   string            `json:"stdout"`
	Stderr   string            `json:"stderr"`
	Env      map[string]string `json:"env"`
	file     string
}

// Event is the run's event name: hook_event_name, or the type of Codex's
// legacy notify argument; "?" when neither is there (a run killed before
// it read stdin).
func (h HookRun) Event() string {
	if s, _ := h.Stdin["hook_event_name"].(string); s != "" {
		return s
	}
	for i := len(h.Argv) - 1; i >= 0; i-- {
		var m map[string]any
		if strings.HasPrefix(h.Argv[i], "{") && json.Unmarshal([]byte(h.Argv[i]), &m) == nil {
			if s, _ := m["type"].(string); s != "" {
				return s
			}
		}
	}
	return "?"
}

// Field is the value at a dotted path of the run's stdin JSON ("tool_input.file_path"),
// as a string (JSON for a non-string), "" when absent.
func (h HookRun) Field(path string) string {
	var v any = h.Stdin
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Summary is one line for messages: event, session, status, stdout.
func (h HookRun) Summary() string {
	st := "killed"
	if h.Finished && h.RC != nil {
		st = fmt.Sprintf("rc=%d", *h.RC)
	}
	if h.Signal != "" {
		st += " signal=" + h.Signal
	}
	sess := h.Field("session_id")
	return fmt.Sprintf("%-18s %-38s %s stdout=%q", h.Event(), sess, st, Cut(h.Stdout, 80))
}

// Hooks is every hook run recorded so far, in the order they started.
func (e *Env) Hooks() []HookRun {
	e.T.Helper()
	fs, _ := filepath.Glob(filepath.Join(e.HookLog, "*.json"))
	var out []HookRun
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var h HookRun
		if json.Unmarshal(b, &h) != nil {
			continue
		}
		h.file = f
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// HookRuns is the recorded runs of one event, in order.
func (e *Env) HookRuns(event string) []HookRun {
	var out []HookRun
	for _, h := range e.Hooks() {
		if h.Event() == event {
			out = append(out, h)
		}
	}
	return out
}

// LastHook is the last recorded run of event, and whether there is one.
func (e *Env) LastHook(event string) (HookRun, bool) {
	rs := e.HookRuns(event)
	if len(rs) == 0 {
		return HookRun{}, false
	}
	return rs[len(rs)-1], true
}

// HooksText is every run's Summary, one a line, for messages.
func (e *Env) HooksText() string {
	var sb strings.Builder
	for _, h := range e.Hooks() {
		sb.WriteString(h.Summary())
		sb.WriteByte('\n')
	}
	return sb.String()
}

// writeHookInputs writes Work/hook-inputs.md: every hook input as
// received, abridged, for a person reading the evidence.
func (e *Env) writeHookInputs() {
	var sb strings.Builder
	sb.WriteString("# Hook inputs as received (abridged)\n\n")
	for _, h := range e.Hooks() {
		raw := h.StdinRaw
		if raw == "" {
			raw = fmt.Sprint(h.Argv)
		}
		st := "killed before it finished"
		if h.Finished && h.RC != nil {
			st = fmt.Sprintf("rc=%d", *h.RC)
		}
		fmt.Fprintf(&sb, "## %s (%s)\n\n```json\n%s\n```\n\n", h.Event(), st, Cut(strings.TrimSpace(raw), 3000))
		if h.Stdout != "" {
			fmt.Fprintf(&sb, "stdout: `%s`\n\n", Cut(strings.TrimSpace(h.Stdout), 400))
		}
		if h.Stderr != "" {
			fmt.Fprintf(&sb, "stderr: `%s`\n\n", Cut(strings.TrimSpace(h.Stderr), 400))
		}
		fmt.Fprintf(&sb, "env: %s\n\n", strings.Join(SortedKeys(h.Env), ", "))
	}
	_ = os.WriteFile(filepath.Join(e.Work, "hook-inputs.md"), []byte(sb.String()), 0o644)
}

// IsHookRecorder reports whether this process was started as the hook
// recorder: the test binary, run through the git-venom-hook symlink that
// New puts first on a client's PATH. TestMain calls HookRecorderMain then.
func IsHookRecorder() bool { return filepath.Base(os.Args[0]) == "git-venom-hook" }

// HookRecorderMain stands in for git-venom-hook on a client's PATH: it
// records exactly what the client handed the hook (argv, stdin, the
// client's variables, cwd) in VENOM_E2E_HOOKLOG, runs the real hook
// (VENOM_E2E_REAL_HOOK) with the same input, records its stdout, stderr,
// exit status and any signal the client sent (passing the signal on), and
// passes its output and status on unchanged. The record is written three
// times: at start, once stdin is read (so a hook the client kills still
// leaves what it had), and complete. It returns the exit status.
//
// VENOM_E2E_HOOK_DELAY in the client's environment ("StopFailure=5s,...")
// makes the recorder wait that long, once it has the input, before it runs
// the real hook for that event: a slow hook on purpose.
func HookRecorderMain() int {
	real, logdir := os.Getenv("VENOM_E2E_REAL_HOOK"), os.Getenv("VENOM_E2E_HOOKLOG")
	if real == "" || logdir == "" {
		fmt.Fprintln(os.Stderr, "hook recorder: VENOM_E2E_REAL_HOOK or VENOM_E2E_HOOKLOG unset")
		return 0
	}
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "install", "uninstall", "help", "--help", "-h":
			if err := syscall.Exec(real, append([]string{real}, args...), os.Environ()); err != nil {
				fmt.Fprintln(os.Stderr, "hook recorder:", err)
				return 1
			}
		}
	}
	start := time.Now()
	name := filepath.Join(logdir, fmt.Sprintf("%d.%09d-%d.json", start.Unix(), start.Nanosecond(), os.Getpid()))
	cwd, _ := os.Getwd()
	rec := HookRun{Argv: args, Cwd: cwd, Start: unix(start), Env: map[string]string{}}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "CODEX") || strings.HasPrefix(k, "GEMINI") ||
			strings.HasPrefix(k, "GIT_VENOM") || strings.HasPrefix(k, "CURSOR")) && !strings.Contains(k, "KEY") && !strings.Contains(k, "TOKEN") {
			rec.Env[k] = v
		}
	}
	var mu sync.Mutex
	write := func() {
		mu.Lock()
		defer mu.Unlock()
		rec.End = unix(time.Now())
		b, _ := json.MarshalIndent(rec, "", " ")
		if os.WriteFile(name+".tmp", b, 0o644) == nil {
			_ = os.Rename(name+".tmp", name)
		}
	}
	write()
	// The signals a client sends a hook it gives up on, caught from here
	// on, so each is recorded and passed to the real hook.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var in []byte
	if st, err := os.Stdin.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(os.Stdin)
			got <- b
		}()
		select {
		case in = <-got:
		case <-time.After(15 * time.Second):
		}
	}
	rec.StdinRaw = string(in)
	_ = json.Unmarshal(in, &rec.Stdin)
	write()
	if d := hookDelay(os.Getenv("VENOM_E2E_HOOK_DELAY"), rec.Event()); d > 0 {
		// A slow hook, on purpose: what a client does with one (waits,
		// kills it) is what the test looks at.
		select {
		case s := <-sigs:
			rec.Signal = s.String()
			write()
			return 0
		case <-time.After(d):
		}
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, &errb
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "hook recorder:", err)
		return 0
	}
	go func() {
		for s := range sigs {
			mu.Lock()
			if rec.Signal == "" {
				rec.Signal = s.String()
			}
			mu.Unlock()
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		rc = -1
	}
	mu.Lock()
	rec.RC, rec.Finished, rec.Stdout, rec.Stderr = &rc, true, out.String(), errb.String()
	mu.Unlock()
	write()
	os.Stdout.Write(out.Bytes())
	os.Stderr.Write(errb.Bytes())
	return rc
}

// hookDelay reads VENOM_E2E_HOOK_DELAY, "Event=duration,..." (say
// "StopFailure=5s"): how long the recorder waits before it runs the real
// hook for event, 0 when it is not named.
func hookDelay(spec, event string) time.Duration {
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == event {
			d, _ := time.ParseDuration(v)
			return d
		}
	}
	return 0
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
