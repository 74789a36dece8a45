package e2etest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
