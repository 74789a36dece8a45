package rollback_test

import (
	"fmt"
	"strings"
	"testing"
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
	p := tracedRollbackOfTwos(t, f, paths)
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
