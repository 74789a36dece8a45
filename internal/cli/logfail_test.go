package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// Issue 13 item 10: a log that cannot take a record (a read-only or full
// log.jsonl; journal.TestFailEnv makes one) fails each command with an RFC
// 11.3 code that says what happened, never failed.internal, and leaves no
// checkpoint ref that no record names. These tests set the variable for
// the process, so they are not parallel (as every cli test).

// venomRefs lists the refs under refs/venom/.
func venomRefs(r *repo) []string {
	var out []string
	for name := range r.Refs() {
		if strings.HasPrefix(name, "refs/venom/") {
			out = append(out, name)
		}
	}
	return out
}

func TestCheckpointLogFailureLeavesNoRef(t *testing.T) {
	r := newRepo(t, false)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.take("manual") // k1, logged
	r.Write("a.txt", "two\n")
	t.Setenv(journal.TestFailEnv, journal.TypeCheckpointTaken)
	data := wantError(t, venom(t, r.Dir, "checkpoint", "--agent", "a1", "--reason", "manual", "--json"), "failed.checkpoint_git")
	if data["reason"] != "log" || data["repo"] != "." {
		t.Errorf("data %v, want reason log", data)
	}
	if refs := venomRefs(r); len(refs) != 1 || refs[0] != "refs/venom/checkpoints/a1/1" {
		t.Errorf("refs after a capture the log refused: %v, want k1's alone", refs)
	}
	res := venom(t, r.Dir, "checkpoint", "--agent", "a1", "--reason", "manual")
	if !strings.Contains(res.stderr, "was deleted again; no checkpoint was taken") {
		t.Errorf("the message does not say the ref was deleted: %q", res.stderr)
	}
	// Once the log takes records again, the next capture is k2.
	os.Unsetenv(journal.TestFailEnv)
	if got := r.take("manual"); got != "k2" {
		t.Errorf("the next capture is %s, want k2", got)
	}
	// A fork's ref goes the same way.
	t.Setenv(journal.TestFailEnv, journal.TypeAgentRegistered)
	wantError(t, venom(t, r.Dir, "checkpoint", "--agent", "b1", "--fork-of", "a1", "--json"), "failed.checkpoint_git")
	for _, ref := range venomRefs(r) {
		if strings.HasPrefix(ref, "refs/venom/checkpoints/b1/") {
			t.Errorf("the refused fork left %s", ref)
		}
	}
}

// A capture whose log append fails while the log lock is held past its
// wait (another process stuck mid-append) deletes its ref too: the
// deletion is not cut short by the capture's own deadline, which has
// passed by then (the append waits as long as the capture may take). The
// bound leaves the capture itself time enough under go test -race on a
// busy machine, where one took over a second.
func TestCheckpointLogLockedLeavesNoRef(t *testing.T) {
	r := newRepo(t, false)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.take("manual")
	r.Write("a.txt", "two\n")
	r.Git("config", "venom.checkpoints.timeout", "4s")
	lk, err := journal.TryLock(filepath.Join(r.GitDir, "venom", "locks", "log.lock"), true)
	if err != nil {
		t.Fatal(err)
	}
	res := venom(t, r.Dir, "checkpoint", "--agent", "a1", "--reason", "manual", "--json")
	lk.Unlock()
	class := wantError(t, res, "failed.checkpoint_git")
	if class["reason"] != "log" {
		t.Errorf("data %v", class)
	}
	if refs := venomRefs(r); len(refs) != 1 {
		t.Errorf("refs after a capture whose log append timed out: %v, want k1's alone", refs)
	}
}

func TestRollbackLogFailures(t *testing.T) {
	r := basic(t, false) // k1 a.txt one, k2 a.txt two
	// rollback.started refused: the safety checkpoint exists, nothing is
	// written, and the code says so.
	p := planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	t.Setenv(journal.TestFailEnv, journal.TypeRollbackStarted)
	data := wantError(t, venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json"), "failed.rollback_undone")
	if reason, _ := data["reason"].(string); data["safety"] != "k3" || !strings.Contains(reason, "logging rollback.started") {
		t.Errorf("data %v", data)
	}
	if got := r.Read("a.txt"); got != "two\n" {
		t.Errorf("a.txt = %q after a rollback that could not start", got)
	}
	os.Unsetenv(journal.TestFailEnv)

	// rollback.ended refused: the files are as planned, and the code is
	// the one the log will hold once the next command closes the record.
	p = planID(t, r.Dir, "--agent", "a1", "k1", "--restore", "files")
	t.Setenv(journal.TestFailEnv, journal.TypeRollbackEnded)
	res := venom(t, r.Dir, "rollback", "--agent", "a1", "k1", "--restore", "files", "--plan", p, "--json")
	data = wantError(t, res, "failed.rollback_interrupted")
	safety, _ := data["safety"].(string)
	if !regexp.MustCompile(`^k[0-9]+$`).MatchString(safety) {
		t.Fatalf("data %v: no safety checkpoint", data)
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q, want the rollback applied", got)
	}
	os.Unsetenv(journal.TestFailEnv)
	res = venom(t, r.Dir, "plan", "--agent", "a1", safety, "--restore", "files")
	if !strings.Contains(res.stderr, "failed.rollback_interrupted") {
		t.Errorf("the next command does not close it as interrupted: %q", res.stderr)
	}
	if ended := endedRecords(t, r); len(ended) == 0 || ended[len(ended)-1].Code != "failed.rollback_interrupted" {
		t.Errorf("rollback.ended: %+v", ended)
	}
}

// TestNoFailedInternalOutsideMain: failed.internal is no RFC 11.3 code;
// the product returns it only from main's recovery of a panic and for an
// error that reached main without a code, both bugs (DESIGN.md section
// 7). No other non-test source names it.
func TestNoFailedInternalOutsideMain(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("grep", "-rln", "--include=*.go", "--exclude=*_test.go", `"failed.internal"`, root).Output()
	if err != nil && len(out) > 0 {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, f)
		if rel != filepath.Join("internal", "cli", "cli.go") && rel != filepath.Join("internal", "rfcerr", "rfcerr.go") {
			t.Errorf("%s returns failed.internal", rel)
		}
	}
}

// TestCleanAfterItsRecordWasRefused: a clean whose agent.archived the log
// refused has deleted the agent's refs already (RFC 5.3 deletes them,
// then logs), so its records name refs that are gone. Running clean again,
// once the log takes records, archives the agent: the refs it would
// delete are gone already, as they are when a person deleted one by hand.
// Before, the update-ref transaction refused the missing refs ("unable to
// resolve reference") and the agent could never be archived.
func TestCleanAfterItsRecordWasRefused(t *testing.T) {
	r := newRepo(t, true)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.take("manual") // k1
	r.Write("a.txt", "two\n")
	r.take("manual") // k2
	r.Write("a.txt", "three\n")
	r.take("manual") // k3
	t.Setenv(journal.TestFailEnv, journal.TypeAgentArchived)
	data := wantError(t, venom(t, r.Dir, "checkpoint", "clean", "--agent", "a1", "--json"), "failed.checkpoint_git")
	if data["reason"] != "log" {
		t.Errorf("data %v, want reason log", data)
	}
	os.Unsetenv(journal.TestFailEnv)
	if refs := venomRefs(r); len(refs) != 0 {
		t.Fatalf("refs after the refused clean: %v, want none (deleted before the record)", refs)
	}
	res := venom(t, r.Dir, "checkpoint", "clean", "--agent", "a1", "--json")
	if res.exit != 0 {
		t.Fatalf("clean again: exit %d: %s%s", res.exit, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, `"removed":["k1","k2","k3"]`) {
		t.Errorf("clean again: %s, want k1 to k3 removed", res.stdout)
	}
	// The agent is archived now: the log says so, once.
	if n := strings.Count(logFile(t, r), `"type":"agent.archived"`); n != 1 {
		t.Errorf("%d agent.archived records, want 1", n)
	}
}

// TestCleanWithARefDeletedByHand: a checkpoint ref a person deleted is
// gone already; clean deletes the others and archives the agent.
func TestCleanWithARefDeletedByHand(t *testing.T) {
	r := newRepo(t, true)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	r.take("manual") // k1
	r.Write("a.txt", "two\n")
	r.take("manual") // k2
	r.Git("update-ref", "-d", "refs/venom/checkpoints/a1/1")
	res := venom(t, r.Dir, "checkpoint", "clean", "--agent", "a1", "--json")
	if res.exit != 0 {
		t.Fatalf("clean: exit %d: %s%s", res.exit, res.stdout, res.stderr)
	}
	if refs := venomRefs(r); len(refs) != 0 {
		t.Errorf("refs after clean: %v", refs)
	}
	if !strings.Contains(res.stdout, `"removed":["k1","k2"]`) {
		t.Errorf("clean: %s, want k1 and k2 removed", res.stdout)
	}
}
