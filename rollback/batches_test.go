package rollback_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestStagedBatchesGrow (issue 16): git writes a big rollback's files
// under the stage in batches that double from 128 (a git left alive
// after venom died writes nothing into the tree there, whatever the
// batch), so 1,000 files back take four checkout-index children of 128,
// 256, 512 and 104 paths, not eight of 128; the files are back and the
// rollback is exact.
func TestStagedBatchesGrow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.r
	var paths []string
	for i := 0; i < 1000; i++ {
		p := fmt.Sprintf("d%02d/f%04d.txt", i%40, i)
		paths = append(paths, p)
		r.Write(p, fmt.Sprintf("one %d\n", i))
	}
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i, p := range paths {
		r.Write(p, fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	plan := planOf(t, r, args)
	p := runBin(t, r.Dir, "git-venom-rollback", []string{"GIT_VENOM_TRACE=1"}, append(args, "--plan", plan.Plan)...)
	out := parseOut(t, p)
	if p.exit != 0 || out.Exact == nil || !*out.Exact {
		t.Fatalf("rollback: exit %d, not exact:\n%s\n%s", p.exit, p.stdout, p.stderr)
	}
	for i, path := range paths {
		if got, want := r.Read(path), fmt.Sprintf("one %d\n", i); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	var checkouts int
	for _, l := range strings.Split(p.stderr, "\n") {
		if strings.HasPrefix(l, "venom trace: git checkout-index ") {
			checkouts++
		}
	}
	if checkouts != 4 {
		t.Errorf("%d checkout-index children for 1,000 files, want 4 (128, 256, 512, 104)", checkouts)
	}
}
