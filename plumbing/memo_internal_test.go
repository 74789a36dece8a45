package plumbing

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/gittest"
)

// TestMemoDeltaMatchesEdit: for random base trees (empty trees in some)
// and random pairs of change sets, the second mostly the first with a few
// paths changed, given back or removed, any path a file or a directory of
// base or new, a file above another's directory included: wherever
// memoDelta says its changes serve, the tree of base with the first set,
// edited with them, is the tree of base with the second. Where it says
// they do not, nothing is asserted but that both outcomes occur over the
// seeds, so that the test is not empty either way.
func TestMemoDeltaMatchesEdit(t *testing.T) {
	t.Parallel()
	first, n := testSeeds(t, 120)
	ctx := context.Background()
	g := gittest.New(t)
	names := []string{"a", "b", "a.b", "a-b", "c d", "ü"}
	pick := func(rng *rand.Rand, depth int) string {
		var parts []string
		for d := 0; d <= depth; d++ {
			parts = append(parts, names[rng.Intn(len(names))])
		}
		return strings.Join(parts, "/")
	}
	r := openRepo(t, g)
	var blobs []OID
	for i := 0; i < 4; i++ {
		oid, err := r.Line(ctx, Options{Stdin: strings.NewReader(fmt.Sprintf("blob %d\n", i))}, "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, OID(oid))
	}
	empty, err := r.Line(ctx, Options{}, "mktree")
	if err != nil {
		t.Fatal(err)
	}
	used, refused := 0, 0
	for i := 0; i < n; i++ {
		seed := first + int64(i)
		rng := rand.New(rand.NewSource(seed))
		entry := func() *Entry {
			if rng.Intn(5) == 0 {
				return nil
			}
			return &Entry{Mode: []string{"100644", "100755", "120000"}[rng.Intn(3)], OID: blobs[rng.Intn(len(blobs))]}
		}
		// Base: random files, and an empty tree or two in some.
		start := map[string]*Entry{}
		for k := 0; k < 30; k++ {
			p := pick(rng, rng.Intn(4))
			_, clash := start[p]
			clash = clash || !dirFree(map[string]*Entry{p: nil}, start)
			for q := range start {
				clash = clash || strings.HasPrefix(q, p+"/")
			}
			if clash {
				continue
			}
			start[p] = &Entry{Mode: "100644", OID: blobs[rng.Intn(len(blobs))]}
		}
		base, err := r.EditTree(ctx, OID(empty), start)
		if err != nil {
			continue // a path both a file and a directory: another seed
		}
		if rng.Intn(2) == 0 {
			withEmpty, err := r.EditTree(ctx, base, map[string]*Entry{pick(rng, rng.Intn(3)): {Mode: "40000", OID: OID(empty)}})
			if err == nil {
				base = withEmpty
			}
		}
		// The sets: paths of base's files and directories, and new ones.
		var pool []string
		for p := range start {
			pool = append(pool, p)
			if j := strings.LastIndexByte(p, '/'); j > 0 {
				pool = append(pool, p[:j])
			}
		}
		for k := 0; k < 20; k++ {
			pool = append(pool, pick(rng, rng.Intn(5)))
		}
		// A set that does not contradict itself (no entry below
		// another's path), as a capture's never does.
		add := func(m map[string]*Entry, p string, e *Entry) {
			if e != nil {
				for q, f := range m {
					if f != nil && q != p && (strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/")) {
						return
					}
				}
			}
			m[p] = e
		}
		prev := map[string]*Entry{}
		for k := 0; k < 12+rng.Intn(20); k++ {
			add(prev, pool[rng.Intn(len(pool))], entry())
		}
		now := map[string]*Entry{}
		for p, e := range prev {
			if rng.Intn(8) != 0 {
				now[p] = e
			}
		}
		for k := rng.Intn(4); k > 0; k-- {
			add(now, pool[rng.Intn(len(pool))], entry())
		}
		want, err := r.EditTree(ctx, base, now)
		if err != nil {
			continue // contradicting itself: not a capture's
		}
		prevTree, err := r.EditTree(ctx, base, prev)
		if err != nil {
			continue
		}
		ed, err := r.editTree(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		delta, ok, err := ed.memoDelta(base, prev, now, len(prev)+len(now))
		ed.close()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !ok {
			refused++
			continue
		}
		used++
		got, err := r.EditTree(ctx, prevTree, delta)
		if err != nil {
			t.Fatalf("seed %d: editing the first set's tree with %v: %v", seed, delta, err)
		}
		if got != want {
			t.Fatalf("seed %d: base %s, first set %v, second %v: delta %v made %s, want %s", seed, base, prev, now, delta, got, want)
		}
	}
	t.Logf("%d cases edited the first set's tree, %d did not", used, refused)
	if n > 1 && (used == 0 || refused == 0) {
		t.Fatalf("%d cases edited the first set's tree and %d did not: the test did not try both", used, refused)
	}
}

// TestMemoDeltaRefuses: the shapes memoDelta cannot edit from the last
// tree, each of which, edited so, loses or keeps what base with the new
// changes would not.
func TestMemoDeltaRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gittest.New(t)
	g.Write("dir/x", "x\n")
	g.Write("file", "f\n")
	g.Write("keep", "k\n")
	g.Commit("init")
	r := openRepo(t, g)
	base := OID(g.Line("rev-parse", "HEAD^{tree}"))
	oid, err := r.Line(ctx, Options{Stdin: strings.NewReader("new\n")}, "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	blob := &Entry{Mode: "100644", OID: OID(oid)}
	empty, err := r.Line(ctx, Options{}, "mktree")
	if err != nil {
		t.Fatal(err)
	}
	withEmpty, err := r.EditTree(ctx, base, map[string]*Entry{"e": {Mode: "40000", OID: OID(empty)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		base      OID
		prev, now map[string]*Entry
	}{
		// A file over base's directory (its entries skip-worktree, so
		// status did not list them), then gone: dir/x comes back.
		{"file over a directory, given back", base, map[string]*Entry{"dir": blob}, map[string]*Entry{}},
		{"file over a directory, removed", base, map[string]*Entry{"dir": blob}, map[string]*Entry{"dir": nil}},
		// A directory over base's file, then gone: file comes back.
		{"directory over a file, given back", base, map[string]*Entry{"file/y": blob}, map[string]*Entry{}},
		// A file in base's empty tree, then gone: the empty tree stays.
		{"file in an empty tree, given back", withEmpty, map[string]*Entry{"e/y": blob}, map[string]*Entry{}},
		// One path a directory above another, in either set.
		{"a path above another", base, map[string]*Entry{"n": nil, "n/y": blob}, map[string]*Entry{"n/y": blob}},
		{"a path above another of the other set", base, map[string]*Entry{"n": blob}, map[string]*Entry{"n/y": blob}},
	} {
		ed, err := r.editTree(ctx, c.base)
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := ed.memoDelta(c.base, c.prev, c.now, 100)
		ed.close()
		if err != nil || ok {
			t.Errorf("%s: ok %v, err %v; want refused", c.name, ok, err)
		}
	}
	// And the plain case: one changed, one given back, one removed, one
	// new, and one the same.
	other := &Entry{Mode: "100755", OID: blob.OID}
	prev := map[string]*Entry{"keep": blob, "file": blob, "dir/x": blob, "same": blob}
	now := map[string]*Entry{"keep": other, "dir/x": nil, "same": blob, "dir/z": blob}
	ed, err := r.editTree(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ed.memoDelta(base, prev, now, 3); err != nil || ok {
		t.Errorf("plain changes, 4 of them, at most 3: ok %v, err %v; want refused", ok, err)
	}
	delta, ok, err := ed.memoDelta(base, prev, now, 4)
	ed.close()
	if err != nil || !ok {
		t.Fatalf("plain changes: ok %v, err %v", ok, err)
	}
	fileEntry := g.Tree("HEAD")["file"]
	wantDelta := map[string]*Entry{"keep": other, "dir/x": nil, "dir/z": blob, "file": {Mode: fileEntry.Mode, OID: OID(fileEntry.OID)}}
	if len(delta) != len(wantDelta) {
		t.Fatalf("delta %v, want %v", delta, wantDelta)
	}
	for p, e := range wantDelta {
		if d, in := delta[p]; !in || !sameEntry(d, e) {
			t.Errorf("delta[%s] = %v, want %v", p, d, e)
		}
	}
}

// TestChangesRecordsRoundTrip: the records kept beside a memo read back
// as the changes they were made of, and what is not such records is not
// read.
func TestChangesRecordsRoundTrip(t *testing.T) {
	changes := map[string]*Entry{
		"a":        {Mode: "100644", OID: OID(strings.Repeat("1", 40))},
		"b/c d":    nil,
		"x\ny/ü":   {Mode: "120000", OID: OID(strings.Repeat("2", 40))},
		"sub/mod":  {Mode: "160000", OID: OID(strings.Repeat("3", 64))},
		"ex/e.sh":  {Mode: "100755", OID: OID(strings.Repeat("a", 40))},
		"gone/too": nil,
	}
	rec := changesRecords(changes, sortedChanges(changes))
	got, ok := parseChangesRecords(rec)
	if !ok || len(got) != len(changes) {
		t.Fatalf("read back %v (ok %v), want %v", got, ok, changes)
	}
	for p, e := range changes {
		if g, in := got[p]; !in || !sameEntry(g, e) {
			t.Errorf("%q: %v, want %v", p, g, e)
		}
	}
	for _, bad := range []string{
		"a\x00100644\x00",       // cut short
		"a\x00dropTree\x00\x00", // a dropTree
		"a\x00-\x001111111111111111111111111111111111111111\x00", // a removal with an object
		"/a\x00-\x00\x00",              // not a tree's path
		"a\x00-\x00\x00a\x00-\x00\x00", // twice
		"a\x00100644\x00zz\x00",        // no object name
	} {
		if _, ok := parseChangesRecords([]byte(bad)); ok {
			t.Errorf("%q read as records", bad)
		}
	}
}
