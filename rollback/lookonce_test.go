package rollback_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/rollback"
)

// TestEachParentLookedAtOncePerPass (issue 16): a rollback looks at each
// parent directory of its paths once per pass of checks and moves (a
// pass: up to 128 paths with no git child in the middle), not once per
// path below it per check. 400 files in one deep directory are written
// back, 400 more deleted: the old code looked at each of a, a/b and a/b/c
// 2,815 times (each check of each path walked its parents again), now
// 20 times: 4 passes of deletions, 4 batches of writes with 3 passes
// each (the checks and moves; the links; after git), and 4 passes of
// the plan's checks made again, the bits to record, the baseline.
// Not parallel: the counter is the package's.
func TestEachParentLookedAtOncePerPass(t *testing.T) {
	f := newFixture(t, false)
	r := f.r
	const n = 400
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("a/b/c/f%03d.txt", i), "one\n")
	}
	r.Commit("init")
	k1 := f.take(checkpoint.ReasonTurnStart)
	for i := 0; i < n; i++ {
		r.Write(fmt.Sprintf("a/b/c/f%03d.txt", i), "two\n")
		r.Write(fmt.Sprintf("a/b/c/new%03d.txt", i), "new\n")
	}
	f.take(checkpoint.ReasonTurnEnd)
	var mu sync.Mutex
	looks := map[string]int{}
	rollback.SetLookedAt(func(rel string) {
		mu.Lock()
		looks[rel]++
		mu.Unlock()
	})
	defer rollback.SetLookedAt(nil)
	res := f.mustRollback(k1, rollback.Options{Restore: "files"})
	rollback.SetLookedAt(nil)
	if res.Exact == nil || !*res.Exact {
		t.Fatalf("exact %v, want true", res.Exact)
	}
	for i := 0; i < n; i += 97 {
		if got := r.Read(fmt.Sprintf("a/b/c/f%03d.txt", i)); got != "one\n" {
			t.Fatalf("a/b/c/f%03d.txt = %q after the rollback, want one", i, got)
		}
	}
	// Once a pass is 20; a few more passes are fine, once a path (800
	// paths, a few checks each) is not.
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		if looks[d] == 0 || looks[d] > 24 {
			t.Errorf("%s was looked at %d times for %d paths below it, want once a pass (20)", d, looks[d], 2*n)
		}
	}
}
