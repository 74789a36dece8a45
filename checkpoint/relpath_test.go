package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

// TestRelPathDanglingSymlinks: a dangling symlink above a path is followed
// by the text it holds, as a live one is resolved: one that points out of
// the tree, absolutely or relatively, refuses the path as outside (D9 in
// internal/model), one that points inside gives the path's spelling there,
// and one in a loop refuses it as symlink. No accepted path is beyond a
// symlink, so git can take every one (a plan's check-ignore).
func TestRelPathDanglingSymlinks(t *testing.T) {
	r := newRepo(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.Path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"dl":    filepath.Join(outside, "missing"),
		"du":    "../missing",
		"dm":    "new",
		"in":    "d",
		"d/dd":  "../fresh/deeper",
		"chain": "dm/more",
		"loop":  "loop",
		"l1":    "l2",
		"l2":    "l1",
	} {
		if err := os.Symlink(target, r.Path(name)); err != nil {
			t.Fatal(err)
		}
	}
	tr := openTree(t, r)
	for _, c := range []struct{ path, rel, why string }{
		{"dl/x", "", "outside"},
		{r.Path("dl/x/y"), "", "outside"},
		{"du/x", "", "outside"},
		{"dm/x", "new/x", ""},
		{"dm/x/y", "new/x/y", ""},
		{"in/dd/x", "fresh/deeper/x", ""},
		{"chain/x", "new/more/x", ""},
		{"loop/x", "", "symlink"},
		{"l1/x", "", "symlink"},
		// The last component is the symlink itself, as git tracks it.
		{"dl", "dl", ""},
		{"loop", "loop", ""},
		{"in/dd", "d/dd", ""},
	} {
		rel, err := tr.RelPath(c.path)
		e := rfcerr.As(err)
		switch {
		case c.why == "" && (err != nil || rel != c.rel):
			t.Errorf("RelPath(%q) = %q, %v; want %q", c.path, rel, err, c.rel)
		case c.why != "" && (e == nil || e.Code != "invalid_params.path" || e.Data["why"] != c.why):
			t.Errorf("RelPath(%q) = %q, %v; want invalid_params.path, why %s", c.path, rel, err, c.why)
		}
	}

	// An edit record naming a path below the dangling link out of the tree
	// is refused whole, and nothing is logged.
	_, err = tr.RecordEdit(context.Background(), "a1", []string{"a", "dl/x"})
	e := rfcerr.As(err)
	if e == nil {
		t.Fatalf("RecordEdit through dl: %v, want invalid_params.path", err)
	}
	bad, _ := e.Data["paths"].([]map[string]any)
	if e.Code != "invalid_params.path" || len(bad) != 1 || bad[0]["path"] != "dl/x" || bad[0]["why"] != "outside" {
		t.Errorf("RecordEdit through dl: %v %+v", err, e.Data)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "venom", "log.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a refused edit wrote the log: %v", err)
	}
}
