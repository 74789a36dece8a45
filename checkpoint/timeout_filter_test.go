package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
)

// A clean filter that hangs (git-lfs stuck on a lock) must not hold a
// capture past venom.checkpoints.timeout (RFC 3.1): at the deadline git and
// everything it started are killed, the capture fails timeout.checkpoint
// and logs checkpoint.failed, and the filter is not left running. Before,
// the filter kept git's stderr open and the capture waited for it to end.
func TestTakeTimeoutKillsAHangingFilter(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "filter.pid")
	r.Write(".gitattributes", "*.dat filter=slow\n")
	r.Write("a.dat", "one\n")
	r.Commit("a filtered file")
	// The filter is only slow from now on; it says who it is, then hangs.
	r.Git("config", "filter.slow.clean", "echo $$ >"+pidFile+"; exec sleep 600")
	r.Git("config", "venom.checkpoints.timeout", "1s")
	r.Write("a.dat", "two\n")
	tr := openTree(t, r)
	if e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: "a1", Reason: "turn_start"}); e.Code != "timeout.checkpoint" {
		t.Fatalf("capture: %s: %v", e.Code, e)
	}
	if failed := logRecords(t, r, journal.TypeCheckpointFailed); len(failed) != 1 || failed[0]["code"] != "timeout.checkpoint" {
		t.Errorf("checkpoint.failed: %v", failed)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the filter never ran: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the filter (pid %d) is still running after the capture gave up", pid)
	}
}

// zombie reports whether pid has exited and waits to be reaped (its parent,
// git, was killed with it): ps shows state Z.
func zombie(pid int) bool {
	for i := 0; i < 50; i++ {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		if err != nil {
			return true // gone
		}
		if strings.HasPrefix(strings.TrimSpace(string(out)), "Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
