package plumbing

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStampsSum: a stamp changes with each part of a file's stat data the
// sum covers, the paths' names and order; a path without an lstat result
// has no sum; settled is whether each file changed strictly before the
// moment given.
func TestStampsSum(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat := func(p string) os.FileInfo {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	if _, _, _, ok := statIdentity(stat(a)); !ok {
		t.Skip("no inode and ctime on this system: no stamps")
	}
	later := time.Now().Add(time.Hour).UnixNano()
	s := stageStamps{fis: []os.FileInfo{stat(a), stat(b)}, sysBefore: later}
	sum, settled, ok := s.sum([]string{"a", "b"})
	if !ok || !settled || len(sum) != 64 {
		t.Fatalf("sum %q settled %v ok %v; want a SHA-256, true, true", sum, settled, ok)
	}
	if again, _, _ := s.sum([]string{"a", "b"}); again != sum {
		t.Fatal("the same stamps gave another sum")
	}
	if other, _, _ := s.sum([]string{"a", "c"}); other == sum {
		t.Fatal("another path name gave the same sum")
	}
	swapped := stageStamps{fis: []os.FileInfo{stat(b), stat(a)}, sysBefore: later}
	if other, _, _ := swapped.sum([]string{"b", "a"}); other == sum {
		t.Fatal("another order gave the same sum")
	}
	// The strict bound: a file changed at the very moment has not settled.
	at := stat(a).ModTime().UnixNano()
	_, _, ctime, _ := statIdentity(stat(a))
	if ctime > at {
		at = ctime
	}
	if _, settled, _ := (stageStamps{fis: []os.FileInfo{stat(a)}, sysBefore: at}).sum([]string{"a"}); settled {
		t.Fatal("a file changed at the moment given counts as settled")
	}
	if _, settled, _ := (stageStamps{fis: []os.FileInfo{stat(a)}, sysBefore: at + 1}).sum([]string{"a"}); !settled {
		t.Fatal("a file changed before the moment given does not count as settled")
	}
	if _, _, ok := (stageStamps{fis: []os.FileInfo{stat(a), nil}, sysBefore: later}).sum([]string{"a", "b"}); ok {
		t.Fatal("a path without an lstat result has a sum")
	}
	if _, _, ok := (stageStamps{fis: []os.FileInfo{stat(a)}, sysBefore: later}).sum([]string{"a", "b"}); ok {
		t.Fatal("fewer lstat results than paths has a sum")
	}
	// Each part: the mode (its ctime too), the size, the mtime alone.
	for _, change := range []func(){
		func() { os.Chmod(a, 0o755) },
		func() { os.WriteFile(a, []byte("xy\n"), 0o755) },
		func() { os.Chtimes(a, time.Unix(1, 0), time.Unix(1, 0)) },
	} {
		before := stat(a)
		change()
		s := stageStamps{fis: []os.FileInfo{stat(a), stat(b)}, sysBefore: later}
		now, _, _ := s.sum([]string{"a", "b"})
		was, _, _ := (stageStamps{fis: []os.FileInfo{before, stat(b)}, sysBefore: later}).sum([]string{"a", "b"})
		if now == was {
			t.Fatalf("a changed (%v -> %v) and its stamp did not", before.Mode(), stat(a).Mode())
		}
	}
}

// TestStampsBefore: a file on the private index's device settled when
// it changed before that index's ctime, strictly; one on another device
// (or with no index known) when it changed stampSettle before the clock.
func TestStampsBefore(t *testing.T) {
	dir := t.TempDir()
	f, idx := filepath.Join(dir, "f"), filepath.Join(dir, "index")
	if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(f)
	dev, _, fctime, ok := statIdentity(fi)
	if !ok {
		t.Skip("no ctime on this system")
	}
	time.Sleep(20 * time.Millisecond) // a tick of the file system's clock
	if err := os.WriteFile(idx, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ifi, _ := os.Stat(idx)
	_, _, ictime, _ := statIdentity(ifi)
	if ictime <= fctime {
		t.Skipf("the file system's clock did not move in 20 ms (%d, %d)", fctime, ictime)
	}
	settled := func(s stageStamps) bool {
		s.fis = []os.FileInfo{fi}
		_, settled, ok := s.sum([]string{"f"})
		if !ok {
			t.Fatal("no sum")
		}
		return settled
	}
	long := time.Unix(0, fctime).Add(-time.Hour) // a clock that says the file is new
	s := stampsBefore(long, idx)
	if !s.fsOK || s.fsDev != dev || s.fsBefore != ictime || s.sysBefore != long.Add(-stampSettle).UnixNano() {
		t.Fatalf("stampsBefore: %+v; want the index's device %d and ctime %d, the clock less 2 s", s, dev, ictime)
	}
	if !settled(s) {
		t.Fatal("a file changed before the index was made has not settled")
	}
	s.fsBefore = fctime
	if settled(s) {
		t.Fatal("a file changed as the index was made counts as settled")
	}
	s.fsDev++
	s.fsBefore = ictime
	if settled(s) {
		t.Fatal("a file on another device than the index settled by the index's clock")
	}
	s.sysBefore = time.Now().UnixNano()
	if !settled(s) {
		t.Fatal("a file on another device, changed before the clock's moment, has not settled")
	}
	if n := stampsBefore(long, filepath.Join(dir, "none")); n.fsOK {
		t.Fatal("stampsBefore without an index knows a file system's clock")
	}
}
