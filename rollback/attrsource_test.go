package rollback_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestFilterFromEveryAttributesSource: a smudge filter is a program that
// may write elsewhere, so a rollback that writes a filtered file takes its
// rollback checkpoint with a full capture, which sees what the filter
// wrote (RFC 7.4 step 6). The filter attribute is found wherever git finds
// it: a tracked .gitattributes (git is asked with the user's index), an
// untracked one and .git/info/attributes (asked without reading the
// index, which holds no .gitattributes: Snapshot.IndexAttributes).
func TestFilterFromEveryAttributesSource(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"tracked", "untracked", "info/attributes"} {
		t.Run(source, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			r := f.r
			r.Write("model.dat", "one\n")
			if source == "tracked" {
				r.Write(".gitattributes", "*.dat filter=side\n")
			}
			r.Commit("A")
			switch source {
			case "untracked":
				r.Write(".gitattributes", "*.dat filter=side\n")
			case "info/attributes":
				r.Write(".git/info/attributes", "*.dat filter=side\n")
			}
			r.Git("config", "filter.side.clean", "cat")
			r.Git("config", "filter.side.smudge", "echo ran >side-effect.txt && cat")
			f.take(checkpoint.ReasonTurnStart)
			r.Write("model.dat", "two\n")
			f.take(checkpoint.ReasonTurnEnd)
			if _, err := os.Lstat(filepath.Join(r.Dir, "side-effect.txt")); err == nil {
				t.Fatal("test set-up: the filter ran before the rollback")
			}
			res := f.mustRollback("k1", rollback.Options{Restore: "files"})
			if got := r.Read("model.dat"); got != "one\n" {
				t.Fatalf("model.dat = %q", got)
			}
			if got := r.Read("side-effect.txt"); got != "ran\n" {
				t.Fatalf("the smudge filter did not run: side-effect.txt = %q", got)
			}
			names := r.Git("ls-tree", "-r", "--name-only", f.ref(res.After))
			if !strings.Contains(names, "side-effect.txt") {
				t.Errorf("rollback checkpoint %s misses what the filter wrote:\n%s", res.After, names)
			}
		})
	}
}
