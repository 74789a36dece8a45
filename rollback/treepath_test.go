package rollback_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
)

// TestTreeAtAPathNotUTF8RollsBack: a tree whose directory name is not
// UTF-8 (a Latin-1 name on Linux) is found again in its own records: its
// checkpoints are planned and rolled back, and the undo's safety
// checkpoint is listed. The log used to hold such a path as U+FFFD, so
// the plan said the checkpoint "was taken in another tree" (the same name
// printed twice).
func TestTreeAtAPathNotUTF8RollsBack(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !gittest.NonUTF8Names(t, base) {
		t.Skip("this filesystem refuses names that are not UTF-8")
	}
	dir := filepath.Join(base, "caf\xe9")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	init := exec.Command("git", "init", "-q", "-b", "main", dir)
	init.Env = gittest.Env()
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r := gittest.At(t, dir)
	r.Git("config", "user.name", "Dev")
	r.Git("config", "user.email", "dev@example.invalid")
	r.Write("a.txt", "one\n")
	r.Commit("init")
	take := func(reason string) {
		t.Helper()
		if c := runBin(t, dir, "git-venom-checkpoint", nil, "--agent", "a1", "--reason", reason); c.exit != 0 {
			t.Fatalf("checkpoint %s: exit %d\n%s", reason, c.exit, c.stderr)
		}
	}
	take("turn_start") // k1
	r.Write("a.txt", "two\n")
	r.Write("new.txt", "made by the agent\n")
	take("turn_end") // k2
	args := []string{"--agent", "a1", "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	if real := realCall(t, r, args, plan.Plan); real.exit != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("a.txt"); got != "one\n" {
		t.Errorf("a.txt is %q after the rollback, want k1's", got)
	}
	if _, err := os.Lstat(r.Path("new.txt")); err == nil {
		t.Errorf("new.txt, made after k1, is still there")
	}
	list := runBin(t, dir, "git-venom-checkpoint", nil, "list", "--agent", "a1")
	if list.exit != 0 || !strings.Contains(list.stdout, "k3") {
		t.Errorf("list: exit %d, want the safety checkpoint k3\n%s%s", list.exit, list.stdout, list.stderr)
	}
}
