package plumbing_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// TestPathspecMagic: the magic words of an element, long and short form,
// as gitglossary(7) spells them; an element not starting with ':' has none.
func TestPathspecMagic(t *testing.T) {
	for arg, want := range map[string]string{
		"a":                     "",
		"./:!a":                 "",
		"*.go":                  "",
		":a":                    "",
		"::a":                   "",
		":!a":                   "exclude",
		":^a":                   "exclude",
		":/a":                   "top",
		":/!a":                  "top exclude",
		":!/:a":                 "exclude top",
		":(top,icase)x":         "top icase",
		":(glob)**/x":           "glob",
		":(literal)*":           "literal",
		":(attr:foo bar)x":      "attr",
		":(exclude,attr:a=b)x":  "exclude attr",
		":( icase , literal )x": "icase literal",
	} {
		if got := strings.Join(plumbing.PathspecMagic(arg), " "); got != want {
			t.Errorf("PathspecMagic(%q) = %q, want %q", arg, got, want)
		}
	}
}

// TestSplitPathspecRefusesAttrIntoASubmodule: every repository gets the
// pathspec with its path from the top as prefix, in repos order; attr
// magic is refused where a submodule is in the list, and kept where the
// top is alone.
func TestSplitPathspecRefusesAttrIntoASubmodule(t *testing.T) {
	ps := &plumbing.Pathspec{Args: []string{"src", ":(attr:text)a"}, Dir: "/x"}
	_, err := plumbing.SplitPathspec(nil, ps, []string{".", "lib", "lib/in"})
	var me *plumbing.MagicError
	if !errors.As(err, &me) || *me != (plumbing.MagicError{Arg: ":(attr:text)a", Magic: "attr", Repo: "lib"}) {
		t.Fatalf("attr with submodules: %v, want a MagicError for lib", err)
	}
	if _, err := plumbing.SplitPathspec(nil, ps, []string{"."}); err != nil {
		t.Errorf("attr in the top alone: %v", err)
	}
	ps.Args = []string{":(top,icase)a", ":!b", "c"}
	split, err := plumbing.SplitPathspec(nil, ps, []string{".", "lib", "lib/in"})
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, rp := range split {
		if rp.Spec != ps {
			t.Errorf("%q: the pathspec is not the one typed", rp.Prefix)
		}
		prefixes = append(prefixes, rp.Prefix)
	}
	if got := fmt.Sprint(prefixes); got != "[ lib/ lib/in/]" {
		t.Errorf("prefixes %s, want [ lib/ lib/in/]", got)
	}
}

// TestRepoPathspecMatchesPathsFromTheTop: a submodule's paths (relative
// to its root) match as git's --recurse-submodules commands match them,
// by their whole path from the top, the pathspec relative to where it was
// typed; Names says which submodules the pathspec names as gitlinks.
func TestRepoPathspecMatchesPathsFromTheTop(t *testing.T) {
	r, _, _ := subTree(t, "docs/x")
	ctx := context.Background()
	top, _, _ := openSubTree(t, r)
	rels := []string{".", "lib", "lib/in"}
	paths := [][]string{{"a", "docs/x"}, {"l", "gone", "d/x.c"}, {"i", "made"}}
	docs := filepath.Join(r.Dir, "docs")
	for _, tc := range []struct {
		dir   string
		args  []string
		want  string // per repository, "|" between
		names string // which of lib, lib/in the pathspec names
	}{
		{r.Dir, []string{"lib/l"}, "||l||", ""},
		{r.Dir, []string{":(glob)**/[ail]"}, "|a|l|i|", ""},
		{r.Dir, []string{"*e"}, "||gone|made|", ""},
		{r.Dir, []string{".", ":!lib/in"}, "|a docs/x|d/x.c gone l||", "lib"},
		{r.Dir, []string{":(icase)LIB/IN/I"}, "|||i|", ""},
		{r.Dir, []string{":(literal)lib/*"}, "||||", ""},
		{r.Dir, []string{"lib"}, "||d/x.c gone l|i made|", "lib lib/in"},
		{r.Dir, []string{"lib/"}, "||d/x.c gone l|i made|", "lib lib/in"},
		{r.Dir, []string{"lib/in", "a"}, "|a||i made|", "lib/in"},
		{docs, []string{"../lib/d"}, "||d/x.c||", ""},
		{docs, []string{"x", ":/lib/in/i"}, "|docs/x||i|", ""},
		// Excludes only: the whole tree but them, from a subdirectory too
		// (git diff's reading; ls-files alone would take docs/ only).
		{docs, []string{":!x"}, "|a|d/x.c gone l|i made|", "lib lib/in"},
		{docs, []string{":!x", ":(exclude)../lib/d"}, "|a|gone l|i made|", "lib lib/in"},
		{r.Dir, []string{":!lib"}, "|a docs/x|||", ""},
	} {
		ps := &plumbing.Pathspec{Args: tc.args, Dir: tc.dir}
		split, err := plumbing.SplitPathspec(top, ps, rels)
		if err != nil {
			t.Fatal(err)
		}
		got := "|"
		var names []string
		for i, rp := range split {
			in, err := rp.Match(ctx, paths[i])
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			var ms []string
			for p := range in {
				ms = append(ms, p)
			}
			sort.Strings(ms)
			got += strings.Join(ms, " ") + "|"
			named, err := rp.Names(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 && named {
				names = append(names, rels[i])
			}
		}
		if got != tc.want {
			t.Errorf("%q from %s: matched %s, want %s", tc.args, tc.dir, got, tc.want)
		}
		if n := strings.Join(names, " "); n != tc.names {
			t.Errorf("%q from %s: names %q, want %q", tc.args, tc.dir, n, tc.names)
		}
	}
}

// TestFlattenGraftsSubmodules: the flattened tree holds each submodule's
// files at its path, a nested one inside its parent's, no gitlink of a
// grafted submodule, and git reads its blobs with the environment given.
func TestFlattenGraftsSubmodules(t *testing.T) {
	r, lib, in := subTree(t)
	ctx := context.Background()
	top, libR, inR := openSubTree(t, r)
	flat, env, err := top.Flatten(ctx, "HEAD^{tree}", []plumbing.Graft{
		{Path: "lib", Repo: libR, Tree: lib.Line("rev-parse", "HEAD")},
		{Path: "lib/in", Repo: inR, Tree: in.Line("rev-parse", "HEAD^{tree}")},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.GitEnv(env, "ls-tree", "-r", "--format=%(objectmode) %(path)", string(flat))
	if err != nil {
		// git before 2.36 has no --format
		out, err = r.GitEnv(env, "ls-tree", "-r", "--name-only", string(flat))
	}
	if err != nil {
		t.Fatal(err)
	}
	want := "100644 .gitmodules\n100644 a\n100644 lib/.gitmodules\n100644 lib/in/i\n100644 lib/l\n"
	if !strings.Contains(out, " ") {
		want = ".gitmodules\na\nlib/.gitmodules\nlib/in/i\nlib/l\n"
	}
	if out != want {
		t.Errorf("flattened tree:\n%swant:\n%s", out, want)
	}
	if got, err := r.GitEnv(env, "cat-file", "blob", string(flat)+":lib/in/i"); err != nil || got != "i1\n" {
		t.Errorf("lib/in/i through the alternates: %q, %v", got, err)
	}
	if same, env, err := top.Flatten(ctx, "HEAD", nil); err != nil || same != "HEAD" || env != nil {
		t.Errorf("no grafts: %s %v %v, want the tree itself", same, env, err)
	}
}

// TestCheckPathspec: git decides what it reads. Unknown magic and an
// element outside the work tree are PathspecErrors with git's reason; a
// pathspec that parses is nil whether it matches anything or not, from the
// top or a subdirectory; so is an empty one.
func TestCheckPathspec(t *testing.T) {
	g := gittest.New(t)
	g.Write("src/a", "a\n")
	g.Commit("init")
	r, err := plumbing.Open(context.Background(), g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		dir    string
		args   []string
		reason string // "" for a pathspec git reads
	}{
		{"", []string{"src", ":(glob)**/a", ":!src/b", ":/src", ":(icase)SRC"}, ""},
		{"", []string{"no/such/path"}, ""},
		{"src", []string{"../src/a", "."}, ""},
		{"", []string{"src", ":(foo)x"}, "Invalid pathspec magic 'foo'"},
		{"src", []string{"../../x"}, "is outside repository"},
	} {
		ps := &plumbing.Pathspec{Args: tc.args, Dir: filepath.Join(g.Dir, tc.dir)}
		err := r.CheckPathspec(ctx, ps)
		var pe *plumbing.PathspecError
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("%v in %q: %v, want nil", tc.args, tc.dir, err)
		case tc.reason != "" && (!errors.As(err, &pe) || !strings.Contains(pe.Reason, tc.reason) || fmt.Sprint(pe.Args) != fmt.Sprint(tc.args)):
			t.Errorf("%v in %q: %v, want a PathspecError saying %q", tc.args, tc.dir, err, tc.reason)
		}
	}
	if err := r.CheckPathspec(ctx, nil); err != nil {
		t.Errorf("no pathspec: %v", err)
	}
}
