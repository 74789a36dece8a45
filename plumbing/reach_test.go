package plumbing_test

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestOutOfReach: the paths git refuses as pathspecs are named with the
// leading directory in the way, from the root down: below a gitlink the
// index holds (checked out, never checked out, staged only, named with
// glob characters), below a symlink (to a directory in the tree, dangling,
// or below a gitlink); every other path, a path below a plain file or
// below a directory whose name a gitlink's starts with among them, is in
// reach. check-ignore takes every path in reach, and one ls-files asks
// the index about all of them.
func TestOutOfReach(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("e/y", "1\n")
	r.Write("su/x", "1\n")
	r.Write("file", "1\n")
	r.Write("g1/x", "1\n")
	r.Write("deep/er/f", "1\n")
	r.Commit("init")
	head := r.Line("rev-parse", "HEAD")
	// sub is checked out: a nested repository, added as a gitlink.
	n := nested(t, r.Path("sub"))
	n.Write("x", "1\n")
	n.Git("add", "x")
	n.Git("-c", "user.name=N", "-c", "user.email=n@x", "commit", "-q", "-m", "n")
	r.Git("add", "sub")
	// Gitlinks in the index only: never checked out, and with names that
	// are globs ("g[1]" would match g1, "st*r" would match stir) or end in
	// a byte that opens a negated class.
	for _, p := range []string{"gone", "g[1]", "st*r", "no!", "deep/er/link"} {
		r.Git("update-index", "--add", "--cacheinfo", "160000,"+head+","+p)
	}
	r.Write("stir/x", "1\n")
	for name, target := range map[string]string{"d": "e", "dangling": "missing", "sub/inner": "."} {
		if err := os.Symlink(target, r.Path(name)); err != nil {
			t.Fatal(err)
		}
	}

	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var trace bytes.Buffer
	plumbing.SetTrace(repo, &trace)
	paths := []string{
		"sub/x", "sub/deep/y", "sub/inner/x", "gone/x", "g[1]/x", "st*r/a/b", "no!/x", "deep/er/link/f",
		"d/y", "d/z/w", "dangling/x",
		"sub", "d", "e/y", "su/x", "file/x", "g1/x", "stir/x", "deep/er/f", "new/dir/f", "top",
	}
	got, err := repo.OutOfReach(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"sub/x": "sub", "sub/deep/y": "sub", "sub/inner/x": "sub", "gone/x": "gone", "g[1]/x": "g[1]",
		"st*r/a/b": "st*r", "no!/x": "no!", "deep/er/link/f": "deep/er/link",
		"d/y": "d", "d/z/w": "d", "dangling/x": "dangling",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OutOfReach:\n got %q\nwant %q", got, want)
	}
	if c := runs(trace.String(), "ls-files"); c != 1 {
		t.Errorf("%d ls-files children, want 1\n%s", c, trace.String())
	}

	// Each path out of reach is one check-ignore dies on; the ones in
	// reach it answers, one record each.
	for p := range want {
		if _, err := repo.Run(context.Background(), plumbing.Options{}, "check-ignore", "--", "./"+p); !plumbing.IsExit(err, 128) {
			t.Errorf("check-ignore %s: %v, want it to die", p, err)
		}
	}
	var in []string
	for _, p := range paths {
		if _, ok := got[p]; !ok {
			in = append(in, p)
		}
	}
	out, err := repo.Run(context.Background(), plumbing.Options{Stdin: bytes.NewReader(plumbing.NulList(plumbing.DotPaths(in)))},
		"check-ignore", "-z", "--stdin", "--verbose", "--non-matching")
	if err != nil && !plumbing.IsExit(err, 1) {
		t.Errorf("check-ignore on the paths in reach: %v", err)
	}
	if c := strings.Count(string(out), "\x00"); c != 4*len(in) {
		t.Errorf("check-ignore answered %d fields for %d paths: %q", c, len(in), out)
	}

	if got, err := repo.OutOfReach(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("no paths: %v, %v", got, err)
	}
}
