package plumbing_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

// A private index copied a moment ago from a user's index last written
// hours ago keeps that old mtime (racy-git). CleanTmp, which every capture
// runs while others may be capturing the same tree, must not take it for a
// leftover: it goes by when the copy was made.
func TestCleanTmpKeepsAFreshCopyOfAnOldIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	old := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(r.Path(".git/index"), old, old); err != nil {
		t.Fatal(err)
	}
	repo, err := plumbing.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := repo.PrivateIndex("capture")
	if err != nil {
		t.Fatal(err)
	}
	if err := plumbing.CopyKeepMtime(repo.RealIndex(), idx); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Before(time.Now().Add(-2 * time.Hour)) {
		t.Fatalf("the copy's mtime is %v, want the index's, hours ago", st.ModTime())
	}
	repo.CleanTmp()
	if _, err := os.Stat(idx); err != nil {
		t.Errorf("CleanTmp removed a private index copied just now: %v", err)
	}
}

// TestCleanTmpLinkedLeftovers: killed captures can leave several names of
// one file in venom/tmp (private indexes are hard links to the kept
// status index). CleanTmp removes every leftover made before its cut,
// although removing one name makes the file's ctime new under the others
// (t0006 found the second left behind).
func TestCleanTmpLinkedLeftovers(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "one\n")
	r.Commit("init")
	t.Setenv("GIT_VENOM_TEST_TMP_AGE", "0s") // after New, which clears GIT_VENOM_*
	repo, err := plumbing.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 3; i++ {
		idx, err := repo.PrivateIndex("capture")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			err = plumbing.CopyKeepMtime(repo.RealIndex(), idx)
		} else {
			err = os.Link(names[0], idx)
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, idx)
	}
	time.Sleep(10 * time.Millisecond)
	repo.CleanTmp()
	for _, n := range names {
		if _, err := os.Lstat(n); err == nil {
			t.Errorf("CleanTmp left %s", n)
		}
	}
}
