package rollback_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
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

// otherDevice is a new directory on another file system than dir's, for a
// worktree whose git directory (the rollback's backups) is elsewhere: a
// tmpfs, /dev/shm, where there is one (the test skips where there is not).
func otherDevice(t *testing.T, dir string) string {
	t.Helper()
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat("/dev/shm", &b) != nil || a.Dev == b.Dev {
		t.Skip("no file system other than the test's temporary directory's (/dev/shm)")
	}
	d, err := os.MkdirTemp("/dev/shm", "venom-xdev-")
	if err != nil {
		t.Skip("/dev/shm is not writable")
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	return d
}

// TestSaveThroughAFileHeldOpenIsRescuedAcrossDevices: as
// TestSaveThroughAFileHeldOpenIsRescued, in a linked worktree on another
// file system than its git directory, where the rollback cannot rename a
// file into its backup directory and copies it instead. A program that
// had the file open writes into the file whose path the rollback removed
// after the copy: it used to be lost, with exact true. The rollback holds
// such a file open until it compares its backups, and keeps the save.
func TestSaveThroughAFileHeldOpenIsRescuedAcrossDevices(t *testing.T) {
	t.Parallel()
	main := gittest.New(t)
	wtDir := filepath.Join(otherDevice(t, main.Dir), "wt")
	aux := t.TempDir()
	started := filepath.Join(aux, "started")
	smudge := filepath.Join(aux, "smudge.sh")
	if err := os.WriteFile(smudge, []byte("#!/bin/sh\n: > '"+started+"'\nsleep 0.02\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("f%02d.txt", i)
		paths = append(paths, p)
		main.Write(p, fmt.Sprintf("one %d\n", i))
	}
	main.Write(".gitattributes", "*.txt filter=slow\n")
	main.Commit("init")
	main.Git("worktree", "add", "-q", wtDir)
	r := gittest.At(t, wtDir)
	r.Git("config", "filter.slow.smudge", smudge)
	f := &fixture{t: t, r: r, agent: "a1"}
	f.take(checkpoint.ReasonTurnStart) // k1
	for i, p := range paths {
		r.Write(p, fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	s := &slowTree{f: f, args: []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}, paths: paths, started: started}
	held := holdOpen(t, r, paths[:6])
	cmd, out := s.start(t)
	saveThrough(t, held)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rollback: %v\n%s", err, out)
	}
	var res rollbackOut
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]rescuedOut{}
	for _, rs := range res.Repos[0].Rescued {
		got[rs.Path] = rs
	}
	for p := range held {
		rs, ok := got[p]
		if !ok {
			t.Errorf("the save to %s through a file held open is not in rescued %v", p, res.Repos[0].Rescued)
			continue
		}
		if show, _ := r.Show(rs.Ref, p); !strings.HasPrefix(show, "held open and saved: "+p+"\n") {
			t.Errorf("%s:%s is %q, not the save", rs.Ref, p, show)
		}
	}
	if res.Exact == nil || *res.Exact {
		t.Errorf("exact is %v with saves through files held open", res.Exact)
	}
}

// TestWayBackIsNotPartialForAnEditItNeverCameTo: a person saves into a
// planned path of a later batch while the rollback writes the first one,
// and the rollback is interrupted before it comes to that path. The way
// back undoes all it did: the result is failed.rollback_undone, the save
// is kept, as it is, and named in kept. It used to judge every planned
// path against S, and called the tree mixed (failed.rollback_partial,
// "not as before: <the saved path>"), whose advice then plans to
// overwrite the save.
func TestWayBackIsNotPartialForAnEditItNeverCameTo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	aux := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = p000.txt ]; then printf 'a save\\n' >> '%s/p299.txt'; fi\nexec cat\n", r.Dir)
	smudge := filepath.Join(aux, "smudge.sh")
	if err := os.WriteFile(smudge, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "filter.person.smudge", smudge+" %f")
	r.Write(".gitattributes", "*.txt filter=person\n")
	for i := 0; i < 300; i++ {
		r.Write(fmt.Sprintf("p%03d.txt", i), fmt.Sprintf("one %d\n", i))
	}
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i := 0; i < 300; i++ {
		r.Write(fmt.Sprintf("p%03d.txt", i), fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT=rollback.batch-written:int")
	out := parseOut(t, real)
	if out.Error == nil || out.Error.Code != "failed.rollback_undone" {
		t.Fatalf("interrupted after its first batch: exit %d, want failed.rollback_undone\n%s%s", real.exit, real.stdout, real.stderr)
	}
	if got := r.Read("p299.txt"); got != "two 299\na save\n" {
		t.Errorf("p299.txt: %q, want the save kept", got)
	}
	if kept := fmt.Sprint(out.Error.Data["kept"]); kept != "[p299.txt]" {
		t.Errorf("kept is %s, want [p299.txt]", kept)
	}
	// The message says the tree is as before but for that save.
	if !strings.Contains(out.Error.Message, "but for 1 path(s) saved while it ran") {
		t.Errorf("the message does not say a save was kept: %q", out.Error.Message)
	}
	for i := 0; i < 299; i++ {
		p := fmt.Sprintf("p%03d.txt", i)
		if got, want := r.Read(p), fmt.Sprintf("two %d\n", i); got != want {
			t.Errorf("%s after the way back: %q, want S's %q", p, got, want)
		}
	}
}

// TestPartialWayBackNamesAFewPaths: a person replaces a directory of 30
// planned files with a symbolic link while git writes them, so the way
// back can put none of them back through it (failed.rollback_partial).
// Its reason names a few and says how many more, as every error does
// (issue 13 item 11); it used to list all 30 ("not putting back ...").
func TestPartialWayBackNamesAFewPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	aux := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = d/f29.txt ] && [ -d '%[1]s/d' ] && [ ! -L '%[1]s/d' ]; then mv '%[1]s/d' '%[1]s/d.mine' && ln -s d.mine '%[1]s/d'; fi\nexec cat\n", r.Dir)
	smudge := filepath.Join(aux, "smudge.sh")
	if err := os.WriteFile(smudge, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "filter.person.smudge", smudge+" %f")
	r.Write(".gitattributes", "*.txt filter=person\n")
	for i := 0; i < 30; i++ {
		r.Write(fmt.Sprintf("d/f%02d.txt", i), fmt.Sprintf("one %d\n", i))
	}
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i := 0; i < 30; i++ {
		r.Write(fmt.Sprintf("d/f%02d.txt", i), fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan)
	out := parseOut(t, real)
	if out.Error == nil || out.Error.Code != "failed.rollback_partial" {
		t.Fatalf("a directory swapped for a link: exit %d, want failed.rollback_partial\n%s%s", real.exit, real.stdout, real.stderr)
	}
	repos, _ := out.Error.Data["repos"].([]any)
	if len(repos) != 1 {
		t.Fatalf("repos: %v", out.Error.Data)
	}
	reason, _ := repos[0].(map[string]any)["reason"].(string)
	if n := strings.Count(reason, "not putting back"); n == 0 || n > 5 {
		t.Errorf("the reason names %d paths not put back, want 1 to 5:\n%s", n, reason)
	}
	if !strings.Contains(reason, "more") {
		t.Errorf("the reason does not say how many more:\n%s", reason)
	}
	// What the rollback had moved away is S's, in the safety checkpoint.
	safety, _ := out.Error.Data["safety"].(string)
	if got, ok := r.Show(f.ref(safety), "d/f07.txt"); !ok || got != "two 7\n" {
		t.Errorf("%s:d/f07.txt is %q (%v), want S's", safety, got, ok)
	}
}
