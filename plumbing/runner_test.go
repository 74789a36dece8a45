package plumbing_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestOpenErrors: outside a repository, in a bare one, and inside the git
// directory are told apart; a subdirectory opens the whole tree.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	gittest.Setup()
	ctx := context.Background()
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if _, err := plumbing.Open(ctx, outside); !errors.Is(err, plumbing.ErrNoRepo) {
		t.Errorf("outside: %v, want ErrNoRepo", err)
	}
	bare := gittest.New(t)
	bare.Git("init", "-q", "--bare", "b.git")
	if _, err := plumbing.Open(ctx, bare.Path("b.git")); !errors.Is(err, plumbing.ErrBare) {
		t.Errorf("bare: %v, want ErrBare", err)
	}
	r := gittest.New(t)
	r.Write("sub/dir/x", "x\n")
	repo, err := plumbing.Open(ctx, r.Path("sub/dir"))
	if err != nil {
		t.Fatal(err)
	}
	if repo.WorkTree != r.Dir || repo.GitDir != r.GitDir || repo.CommonDir != r.GitDir {
		t.Errorf("from a subdirectory: %+v, want the top %s", repo, r.Dir)
	}
	if _, err := plumbing.Open(ctx, r.GitDir); !errors.Is(err, plumbing.ErrNoRepo) {
		t.Errorf("inside .git: %v, want ErrNoRepo (it is not a bare repository)", err)
	}
}

// TestOpenCanonical: a tree reached through a symlink, or with a trailing
// slash, has one name, its canonical path (BR-54).
func TestOpenCanonical(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("d/x", "x\n")
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(r.Dir, alias); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{alias, alias + "/", alias + "/d", r.Dir + "/d/"} {
		repo, err := plumbing.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if repo.WorkTree != r.Dir || repo.GitDir != r.GitDir {
			t.Errorf("Open(%s): tree %s git dir %s, want %s", dir, repo.WorkTree, repo.GitDir, r.Dir)
		}
	}
}

// TestErrorBoundsTheArgv: a git command with thousands of arguments (an
// update-index with one --cacheinfo per path, as a rollback's staging
// runs) fails with a message that names its first few arguments and counts
// the rest, instead of every path; the error keeps the whole argv, and the
// trace (GIT_VENOM_TRACE) prints it.
func TestErrorBoundsTheArgv(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	const n = 3000
	args := []string{"update-index", "--add"}
	for i := 0; i < n; i++ {
		args = append(args, "--cacheinfo", fmt.Sprintf("100644,%s,bad/../path-%04d", strings.Repeat("0", 40), i))
	}
	_, err = repo.Run(context.Background(), plumbing.Options{}, args...)
	var ge *plumbing.Error
	if !errors.As(err, &ge) {
		t.Fatalf("update-index of invalid paths: %v, want a *plumbing.Error", err)
	}
	msg := err.Error()
	if len(msg) > 2000 {
		t.Errorf("the message is %d bytes long: %.300s...", len(msg), msg)
	}
	more := fmt.Sprintf("(and %d more arguments)", len(args)-shownArgs)
	for _, want := range []string{"git update-index --add --cacheinfo ", "path-0000", more} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %.300q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "path-2999") {
		t.Errorf("the message names the last path: %.300q", msg)
	}
	if len(ge.Args) != len(args) {
		t.Errorf("the error keeps %d arguments, want all %d", len(ge.Args), len(args))
	}
	if !strings.Contains(trace.String(), "path-2999") {
		t.Errorf("the trace does not hold the whole argv")
	}
}

// shownArgs is plumbing.ShownArgs, spelled out so that this test builds
// against a runner without it.
const shownArgs = 8

// TestShortArgv: an argument over ShownArgBytes is cut, never inside a
// UTF-8 sequence; a short argv is shown whole.
func TestShortArgv(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", plumbing.ShownArgBytes) // 2 bytes each
	got := plumbing.ShortArgv([]string{"add", long})
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "...") || len(got) > len("add ")+plumbing.ShownArgBytes+3 {
		t.Errorf("ShortArgv of a long argument = %q", got)
	}
	if got := plumbing.ShortArgv([]string{"diff-tree", "-r", "-z", "a", "b"}); got != "diff-tree -r -z a b" {
		t.Errorf("ShortArgv of a short argv = %q", got)
	}
	if plumbing.ShownArgs != shownArgs {
		t.Errorf("ShownArgs is %d, the test says %d", plumbing.ShownArgs, shownArgs)
	}
}

// TestSubcommand: the git command of an argv is its first word that is
// no option of git itself; -c and -C take the next word with them.
func TestSubcommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-z"}, "status"},
		{[]string{"-c", "core.ignoreStat=false", "rev-parse", "HEAD"}, "rev-parse"},
		{[]string{"-c", "status", "-C", "dir", "--no-pager", "cat-file", "-p"}, "cat-file"},
		{[]string{"-c", "a=b"}, ""},
		{nil, ""},
	} {
		if got := plumbing.Subcommand(c.args); got != c.want {
			t.Errorf("Subcommand(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestTracksBelowPrefix: a directory holds tracked paths when the index
// tracks a path below it at any depth, or a gitlink at it; an untracked
// or ignored folder does not (issue 13 item 14). The index cache answers
// when it holds an entry for the index as it is, with no git started; ls-files
// answers otherwise; both say the same. At the top no git starts.
func TestTracksBelowPrefix(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".gitignore", "build/\n")
	r.Write("src/deep/er/x.go", "package er\n")
	r.Write("src/y.go", "package src\n")
	r.Commit("init")
	r.Write("code/project/main.go", "package main\n")
	r.Write("build/out.o", "o\n")
	r.Write("src/new/untracked.go", "package n\n")
	want := map[string]bool{".": true, "src": true, "src/deep": true, "src/deep/er": true,
		"code": false, "code/project": false, "build": false, "src/new": false}
	check := func(cached bool) {
		for dir, tracked := range want {
			repo, err := plumbing.Open(context.Background(), r.Path(dir))
			if err != nil {
				t.Fatal(err)
			}
			var trace bytes.Buffer
			plumbing.SetTrace(repo, &trace)
			got, err := repo.TracksBelowPrefix(context.Background())
			if err != nil || got != tracked {
				t.Errorf("cached %v, %s (prefix %q): %v %v, want %v", cached, dir, repo.Prefix, got, err, tracked)
			}
			if ran := strings.Contains(trace.String(), "ls-files"); ran != (!cached && dir != ".") {
				t.Errorf("cached %v, %s: ls-files ran %v\n%s", cached, dir, ran, trace.String())
			}
		}
	}
	check(false)
	settle(t, r)
	tracedCapture(t, r, plumbing.CaptureOptions{}) // stores the index's answer
	check(true)
}

// TestCleanEnvTrimThreshold: every git child gets glibc's heap trim
// threshold unless the environment already sets one, in either of glibc's
// two spellings (issue 16), and the value reaches the child.
func TestCleanEnvTrimThreshold(t *testing.T) {
	t.Parallel()
	const want = "MALLOC_TRIM_THRESHOLD_=16777216"
	count := func(env []string, prefix string) int {
		n := 0
		for _, kv := range env {
			if strings.HasPrefix(kv, prefix) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		env  []string
		want int // how many times the default is appended
	}{
		{[]string{"HOME=/h", "PATH=/bin"}, 1},
		{[]string{"MALLOC_TRIM_THRESHOLD_=0"}, 0},
		{[]string{"GLIBC_TUNABLES=glibc.malloc.trim_threshold=4096"}, 0},
		{[]string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, 1},
	} {
		got := plumbing.CleanEnv(c.env)
		if n := count(got, want); n != c.want {
			t.Errorf("CleanEnv(%q) = %q: %d of %q, want %d", c.env, got, n, want, c.want)
		}
		if n := count(got, "MALLOC_TRIM_THRESHOLD_="); n > 1 {
			t.Errorf("CleanEnv(%q) = %q: the threshold is set %d times", c.env, got, n)
		}
		for _, kv := range c.env {
			if count(got, kv) != 1 {
				t.Errorf("CleanEnv(%q) = %q: %q is lost", c.env, got, kv)
			}
		}
	}

	r := gittest.New(t)
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := repo.Run(context.Background(), plumbing.Options{}, "-c", "alias.venom-env=!env", "venom-env")
	if err != nil {
		t.Fatal(err)
	}
	childEnv := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	wantChild := 1
	if plumbing.TrimChosen(os.Environ()) {
		wantChild = 0 // the test's own environment chose a threshold
	}
	if n := count(childEnv, want); n != wantChild {
		t.Errorf("a git child's environment has %s %d times, want %d:\n%s", want, n, wantChild, out)
	}
}
