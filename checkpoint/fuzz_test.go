package checkpoint_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/plumbing"
)

// FuzzRelPath checks the edit record's path check (Tree.RelPath, issue 6)
// on a tree with symlinks that stay inside it, one that leads out, one to
// its parent, one to the filesystem root, one dangling out (absolute and
// relative), one dangling inside, a loop, and a .git:
//
//   - an accepted path is relative, slash-separated, clean (no "", "." or
//     ".." component), not the root, has no .git component, and, where its
//     directories exist, they resolve inside the tree;
//   - it is a fixed point: the accepted path, relative or joined to the
//     root, is accepted as itself;
//   - cleaning never changes the answer: a rejected path is never accepted
//     once cleaned, and the other way round;
//   - whatever leads out of the tree (an absolute path elsewhere, "..", a
//     symlink that resolves outside, dangling or not) is rejected;
//   - git never looks beyond a symlink, so no directory above an accepted
//     path is one (D9 in internal/model).
//
// Seeds are in testdata/fuzz/FuzzRelPath.
func FuzzRelPath(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range []string{"a/b", ".git/objects", "sub dir"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "a", "f"), nil, 0o644)
	os.MkdirAll(filepath.Join(outside, "x"), 0o755)
	for name, target := range map[string]string{
		"in":   "a",
		"out":  outside,
		"up":   "..",
		"abs":  "/",
		"self": ".",
		"dl":   outside + "/missing",
		"du":   "../missing",
		"dm":   "a/new",
		"loop": "loop",
		"a/bk": "../a",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	tr := &checkpoint.Tree{Repo: &plumbing.Repo{WorkTree: root}}

	for _, s := range []string{"a/f", "in/b/new", "out/x", "dl/x", "up/x", "abs/etc/passwd", "../x", "a/../../x",
		"/etc/passwd", "", ".", ".git/config", "A/.GIT/x", "self/self/a", "a//b/", "sub dir/n\xff", "in/../a/f",
		outside + "/x", root + "/a/b", "a/bk/f", "-dash", ":colon", "du/x", "dm/x", "dm/y/z", "loop/x", "loop",
		"in/dm/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := tr.RelPath(p)
		cleaned := p
		if p != "" {
			cleaned = filepath.Clean(p)
		}
		rel2, err2 := tr.RelPath(cleaned)
		if (err == nil) != (err2 == nil) || rel != rel2 {
			t.Fatalf("RelPath(%q) = %q, %v but RelPath(%q) = %q, %v", p, rel, err, cleaned, rel2, err2)
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, abs)
		}
		if strings.HasPrefix(filepath.Clean(abs)+"/", outside+"/") && err == nil {
			t.Fatalf("RelPath(%q) accepted a path outside the tree as %q", p, rel)
		}
		if err != nil {
			return
		}
		if rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "\\") && filepath.Separator == '\\' {
			t.Fatalf("RelPath(%q) = %q", p, rel)
		}
		for _, c := range strings.Split(rel, "/") {
			if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
				t.Fatalf("RelPath(%q) = %q, with component %q", p, rel, c)
			}
		}
		// The directories above it that exist resolve inside the tree.
		dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(rel)))
		for {
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				if r != root && !strings.HasPrefix(r, root+string(filepath.Separator)) {
					t.Fatalf("RelPath(%q) = %q, whose directory %s resolves to %s, outside the tree", p, rel, dir, r)
				}
				break
			}
			dir = filepath.Dir(dir)
		}
		// git never looks beyond a symlink, so no directory above an
		// accepted path is one, dangling or not (D9).
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(strings.Join(parts[:i], "/")))); err == nil && st.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("RelPath(%q) = %q, beyond the symlink %s", p, rel, strings.Join(parts[:i], "/"))
			}
		}
		for _, again := range []string{rel, filepath.Join(root, filepath.FromSlash(rel))} {
			if r3, err := tr.RelPath(again); err != nil || r3 != rel {
				t.Fatalf("RelPath(%q) = %q, but RelPath(%q) = %q, %v", p, rel, again, r3, err)
			}
		}
	})
}
