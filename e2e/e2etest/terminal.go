package e2etest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/e2e/mockllm"
)

// Terminal is a shell in a tmux session of its own (a private socket
// under the Env's scratch directory), for driving a client as a person
// at a terminal would: type a command line, read the screen.
type Terminal struct {
	e      *Env
	sock   string
	name   string
	closed bool
}

// NeedTmux skips the test when tmux is missing: a terminal test cannot run
// without it. .ci/run installs it.
func NeedTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal test cannot run (apt-get install tmux; .ci/run installs it)")
	}
}

// NewTerminal starts a 200x50 bash (no rc files) in the repository, with
// exactly env exported (the client's environment, TERM added), and closes
// it when the test ends.
func (e *Env) NewTerminal(env []string) *Terminal {
	e.T.Helper()
	NeedTmux(e.T)
	term := &Terminal{e: e, sock: filepath.Join(e.Work, "tmux.sock"), name: "venom-e2e"}
	rc := filepath.Join(e.Work, "terminal.env")
	var sb strings.Builder
	for _, kv := range append(env, "TERM=xterm-256color") {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&sb, "export %s=%s\n", k, shellQuote([]string{v}))
	}
	fmt.Fprintf(&sb, "cd %s\nPS1='$ '\n", shellQuote([]string{e.Repo}))
	if err := os.WriteFile(rc, []byte(sb.String()), 0o644); err != nil {
		e.T.Fatal(err)
	}
	term.tmux("new-session", "-d", "-s", term.name, "-x", "200", "-y", "50", "env", "-i", "PATH="+systemPath(), "HOME="+e.Home,
		"TERM=xterm-256color", "bash", "--noprofile", "--rcfile", rc, "-i")
	e.T.Cleanup(term.Close)
	return term
}

func (term *Terminal) tmux(args ...string) string {
	term.e.T.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", term.sock}, args...)...).CombinedOutput()
	if err != nil {
		term.e.T.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Type types text into the terminal, then Enter when enter is set.
func (term *Terminal) Type(text string, enter bool) {
	term.e.T.Helper()
	term.tmux("send-keys", "-t", term.name, "-l", text)
	if enter {
		// A separate key: some clients read a pasted newline as text.
		time.Sleep(300 * time.Millisecond)
		term.tmux("send-keys", "-t", term.name, "Enter")
	}
}

// The marker at the start of a client's prompt box (its composer), on the
// screen's last line that starts with it: the history above shows earlier
// prompts with the same marker.
const (
	CodexComposer  = "›" // codex 0.171
	ClaudeComposer = "❯" // Claude Code 2.1.332
)

// SubmitRetry is how long Submit waits for a prompt to be sent before it
// presses Enter again, while the prompt box still holds the prompt.
const SubmitRetry = 5 * time.Second

// Composer is the line of the client's prompt box, as the screen shows it
// now: ComposerLine of the screen.
func (term *Terminal) Composer(marker string) string {
	term.e.T.Helper()
	return ComposerLine(term.Screen(), marker)
}

// ComposerLine is the text after marker (CodexComposer, ClaudeComposer) on
// the last line of screen that starts with it (after spaces), trimmed; ""
// when no line does.
func ComposerLine(screen, marker string) string {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(lines[i], " "), marker); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// Submit types prompt into the prompt box of the client running in the
// terminal (its line starts with marker) as literal text, waits until the
// box shows it, and presses Enter; then, until sent reports that the
// client sent it (the model server received it) or timeout passes, it
// presses Enter again every SubmitRetry while the box still holds the
// prompt: a client that is still loading (codex's "Resuming session…")
// drops an Enter, and a slow one can read the text and the Enter as one
// paste. It reports whether the prompt was sent; the test fails at once
// when the box never shows it.
//
// prompt must hold no key the clients bind in their prompt box (a typed
// "?" opens codex's shortcuts when it thinks the box is empty, "@" and "$"
// open file and skill pickers that take the Enter, "/", "!" and "#" at the
// start are commands, shell and memory): CheckPrompt says which.
func (term *Terminal) Submit(marker, prompt string, sent func() bool, timeout time.Duration) bool {
	term.e.T.Helper()
	if err := CheckPrompt(prompt); err != nil {
		term.e.T.Fatal(err)
	}
	head := prompt
	if len(head) > 24 {
		head = head[:24]
	}
	tail := prompt[len(prompt)-min(len(prompt), 12):]
	holds := func() bool { return strings.HasPrefix(term.Composer(marker), head) }
	term.tmux("send-keys", "-t", term.name, "-l", prompt)
	if !Eventually(timeout, func() bool { return holds() && strings.Contains(term.Screen(), tail) }) {
		term.e.T.Fatalf("the prompt box (%s) never showed %q; screen:\n%s", marker, prompt, term.SaveScreen("submit"))
	}
	// A separate key, a moment later: a pasted newline is text.
	time.Sleep(300 * time.Millisecond)
	deadline := time.Now().Add(timeout)
	for {
		term.tmux("send-keys", "-t", term.name, "Enter")
		if Eventually(SubmitRetry, sent) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if !holds() {
			// Submitted, and the client is slow to send it.
			return Eventually(time.Until(deadline), sent)
		}
		term.e.T.Logf("the prompt was not sent %s after Enter and the prompt box still holds it: Enter again", SubmitRetry)
	}
}

// CheckPrompt says why prompt cannot be typed into a client's prompt box
// as text (see Submit), nil when it can.
func CheckPrompt(prompt string) error {
	if i := strings.IndexAny(prompt, "?@$\n"); i >= 0 {
		return fmt.Errorf("prompt %q holds %q, which the clients' prompt boxes read as a key, not text: reword it", prompt, prompt[i])
	}
	if prompt == "" || strings.ContainsRune("/!#", rune(prompt[0])) {
		return fmt.Errorf("prompt %q starts with a command key of the clients' prompt boxes (/, !, #) or is empty: reword it", prompt)
	}
	return nil
}

// UserParts is the user parts of a conversation, one line each (cut at 200
// bytes), for a failure message: the rest is the client's instructions.
func UserParts(parts []mockllm.Part) string {
	var sb strings.Builder
	for _, p := range parts {
		if p.Role == "user" {
			fmt.Fprintf(&sb, "user\t%s\n", Cut(strings.ReplaceAll(p.Text, "\n", `\n`), 200))
		}
	}
	return sb.String()
}

// Screen is what the terminal shows now, with its scrollback.
func (term *Terminal) Screen() string {
	term.e.T.Helper()
	return term.tmux("capture-pane", "-p", "-t", term.name, "-S", "-200")
}

// WaitFor waits up to timeout until the screen holds text, and reports
// whether it did.
func (term *Terminal) WaitFor(text string, timeout time.Duration) bool {
	return Eventually(timeout, func() bool { return strings.Contains(term.Screen(), text) })
}

// SaveScreen writes the screen to Work/<name>.screen.txt, as evidence.
func (term *Terminal) SaveScreen(name string) string {
	s := term.Screen()
	_ = os.WriteFile(filepath.Join(term.e.Work, name+".screen.txt"), []byte(s), 0o644)
	return s
}

// Close ends the tmux server of the terminal and everything it runs.
func (term *Terminal) Close() {
	if term.closed {
		return
	}
	term.closed = true
	_ = exec.Command("tmux", "-S", term.sock, "kill-server").Run()
}
