package e2etest

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a running process: its id and its command line.
type Proc struct {
	PID  int
	Args string
}

func (p Proc) String() string { return strconv.Itoa(p.PID) + " " + Cut(p.Args, 200) }

// Leftovers is every process still running whose command line or
// environment names the Env's scratch directory (HOME, CODEX_HOME, the
// repository, a binary under it), other than the test itself: what a
// client or the product left behind, such as the app-server daemon codex
// 0.171's interactive session starts (`codex app-server --listen unix://
// --managed-daemon`, from $CODEX_HOME/packages, in a session of its own)
// and which outlives it. Zombies are not listed. It reads `ps` (Linux
// and macOS), not /proc.
func (e *Env) Leftovers() []Proc {
	e.T.Helper()
	// ps's e shows each process's environment after its command line.
	withEnv := []string{"axeww", "-o", "pid=,stat=,args="}
	if runtime.GOOS == "darwin" {
		withEnv = []string{"-A", "-E", "-ww", "-o", "pid=,stat=,command="}
	}
	out, err := exec.Command("ps", withEnv...).Output()
	if err != nil {
		e.T.Fatalf("ps %s: %v", strings.Join(withEnv, " "), err)
	}
	args, _ := exec.Command("ps", "-A", "-ww", "-o", "pid=,args=").Output()
	argsOf := map[int]string{}
	for _, line := range strings.Split(string(args), "\n") {
		if pid, rest, ok := cutPID(line); ok {
			argsOf[pid] = rest
		}
	}
	mark := e.Work + string(os.PathSeparator)
	var left []Proc
	for _, line := range strings.Split(string(out), "\n") {
		pid, rest, ok := cutPID(line)
		stat, rest, _ := strings.Cut(rest, " ")
		// A zombie (Z) runs nothing: it waits for a parent that may
		// never reap it (here, a PID 1 that does not).
		if !ok || pid == os.Getpid() || strings.HasPrefix(stat, "Z") || !strings.Contains(rest, mark) {
			continue
		}
		if a, ok := argsOf[pid]; ok {
			rest = a
		}
		left = append(left, Proc{pid, rest})
	}
	return left
}

func cutPID(line string) (int, string, bool) {
	f, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	pid, err := strconv.Atoi(f)
	return pid, strings.TrimSpace(rest), err == nil
}

// StopLeftovers ends every process of Leftovers: SIGTERM, then SIGKILL to
// what still runs 5 s later. It returns what it found; the test fails when
// one still runs after that. Every Env does this when its test ends, after
// its terminals are closed: a server a test started stops with it.
func (e *Env) StopLeftovers() []Proc {
	e.T.Helper()
	found := e.Leftovers()
	if len(found) == 0 {
		return nil
	}
	signal := func(sig syscall.Signal) {
		for _, p := range e.Leftovers() {
			_ = syscall.Kill(p.PID, sig)
		}
	}
	signal(syscall.SIGTERM)
	if !Eventually(5*time.Second, func() bool { return len(e.Leftovers()) == 0 }) {
		signal(syscall.SIGKILL)
		Eventually(5*time.Second, func() bool { return len(e.Leftovers()) == 0 })
	}
	for _, p := range e.Leftovers() {
		e.T.Errorf("process %s still runs after SIGKILL", p)
	}
	return found
}
