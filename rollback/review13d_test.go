package rollback_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestWayBackKeepsASaveMadeWhileItsBatchWasWritten: a person's editor
// saves into files git has just written, while git is still writing the
// rest of the same batch (in place, by renaming a new file over it, and
// into a file the rollback created), and then the rollback is
// interrupted. The way back must keep those saves: it undoes only what
// git wrote. It used to take the stamp of what git wrote once the whole
// batch was done, so the person's save was taken for git's, and the way
// back put S's file back over it (or removed the created file), saying
// the tree was as before: the saves were on disk nowhere and in no
// checkpoint (found by a Ctrl-C during a 15,000-path rollback with an
// editor saving).
func TestWayBackKeepsASaveMadeWhileItsBatchWasWritten(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"staged", "direct"} {
		for _, sig := range []string{"int", "hup"} {
			t.Run(mode+"/"+sig, func(t *testing.T) {
				t.Parallel()
				wayBackKeepsASave(t, mode, sig)
			})
		}
	}
}

// gitDirElsewhere is a fixture whose git directory is on another file
// system (/dev/shm), where git writes into the tree itself (direct).
func gitDirElsewhere(t *testing.T) *fixture {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gd := otherDevice(t, dir)
	gittest.Setup()
	cmd := exec.Command("git", "init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(gd, "git"), dir)
	cmd.Env = gittest.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r := gittest.At(t, dir)
	r.Git("config", "user.name", "Dev")
	r.Git("config", "user.email", "dev@example.invalid")
	return &fixture{t: t, r: r, agent: "a1"}
}

func wayBackKeepsASave(t *testing.T, mode, sig string) {
	f := newFixture(t, false)
	if mode == "direct" {
		f = gitDirElsewhere(t)
	}
	r := f.r
	aux := t.TempDir()
	// The smudge filter of the batch's last path plays the person:
	// it saves into the paths git wrote before it, in this batch. The
	// batch's filters run once under the stage; where the git dir is
	// elsewhere, linking from it fails and they run again, in the tree.
	nth := 1
	if mode == "direct" {
		nth = 2
	}
	script := fmt.Sprintf(`#!/bin/sh
n=$(cat '%[2]s' 2>/dev/null || echo 0)
[ "$1" = z-last.txt ] && n=$((n+1)) && echo $n > '%[2]s'
if [ "$1" = z-last.txt ] && [ $n -eq %[3]d ]; then
	printf 'saved in place\n' > '%[1]s/a-first.txt'
	printf 'saved by rename\n' > '%[1]s/.b.swp' && mv '%[1]s/.b.swp' '%[1]s/b-renamed.txt'
	printf 'saved into the new file\n' >> '%[1]s/c-created.txt'
fi
exec cat
`, r.Dir, filepath.Join(aux, "count"), nth)
	smudge := filepath.Join(aux, "smudge.sh")
	if err := os.WriteFile(smudge, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "filter.person.smudge", smudge+" %f")
	r.Write(".gitattributes", "*.txt filter=person\n")
	r.Write("a-first.txt", "a one\n")
	r.Write("b-renamed.txt", "b one\n")
	r.Write("c-created.txt", "c one\n")
	r.Write("z-last.txt", "z one\n")
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	r.Write("a-first.txt", "a two\n")
	r.Write("b-renamed.txt", "b two\n")
	os.Remove(r.Path("c-created.txt"))
	r.Write("z-last.txt", "z two\n")
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.written:"+sig)
	out := parseOut(t, real)
	if out.Error == nil {
		t.Fatalf("interrupted rollback: exit %d, no error\n%s%s", real.exit, real.stdout, real.stderr)
	}
	want := map[string]string{
		"a-first.txt":   "saved in place\n",
		"b-renamed.txt": "saved by rename\n",
		"c-created.txt": "c one\nsaved into the new file\n",
	}
	if mode == "staged" {
		// git writes the batch under a stage and links it in after:
		// the save made c-created.txt first.
		want["c-created.txt"] = "saved into the new file\n"
	}
	for p, w := range want {
		got, err := os.ReadFile(r.Path(p))
		if string(got) != w {
			t.Errorf("%s after the way back: %q (%v), want the person's save %q", p, got, err, w)
		}
	}
	kept := fmt.Sprint(out.Error.Data["kept"])
	for p := range want {
		if !strings.Contains(kept, p) {
			t.Errorf("the error's kept (%s) does not name %s", kept, p)
		}
	}
	// z-last.txt is the rollback's own, and goes back.
	if got, _ := os.ReadFile(r.Path("z-last.txt")); string(got) != "z two\n" {
		t.Errorf("z-last.txt after the way back: %q, want S's %q", got, "z two\n")
	}
}
