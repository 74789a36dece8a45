package rollback_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// SeedEnv sets the seed of TestRandomTrees: with it, the one iteration of
// that seed runs (the seed every failure prints).
const SeedEnv = "GIT_VENOM_TEST_SEED"

// IterationsEnv overrides the number of iterations of TestRandomTrees.
const IterationsEnv = "GIT_VENOM_TEST_ITERATIONS"

// Read before TestMain's gittest.Setup, which clears GIT_* variables.
var seedFromEnv, iterationsFromEnv = os.Getenv(SeedEnv), os.Getenv(IterationsEnv)

// maxFileBytes is venom.checkpoints.maxFileBytes in the random trees, so
// some files are too big to capture (left: too_big).
const maxFileBytes = 3000

// TestRandomTrees builds repositories with random files across several
// turns of random edits, then plans and rolls back to a random earlier
// checkpoint K and checks issue 3's first "Done when":
//
//   - a capture after the rollback has K's tree exactly, except the paths the
//     plan put in left (which keep S's entries), and every file on disk has
//     the bytes and mode of K's blob;
//   - ignored files are byte-identical and none is deleted;
//   - in a guarded tree HEAD and the user's index are byte-identical; in an
//     unguarded one HEAD goes to K's head (unless --keep-head) and the index
//     follows it;
//   - the safety checkpoint holds S, and rolling back to it (the undo the
//     rollback prints) restores every file, ignored ones included, and HEAD.
//
// Each iteration has its own seed, printed with every failure; set
// GIT_VENOM_TEST_SEED to run one again.
func TestRandomTrees(t *testing.T) {
	t.Parallel()
	iterations := 16
	if testing.Short() {
		iterations = 5
	}
	if v := iterationsFromEnv; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", IterationsEnv, v, err)
		}
		iterations = n
	}
	base := time.Now().UnixNano() % 1_000_000_000
	if v := seedFromEnv; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, v, err)
		}
		base, iterations = n, 1
	}
	t.Logf("seeds %d to %d (%s=<seed> reruns one)", base, base+int64(iterations)-1, SeedEnv)
	nonUTF8 := canNameNonUTF8(t)
	var mu sync.Mutex
	undoRefused := 0
	t.Run("seeds", func(t *testing.T) {
		for i := 0; i < iterations; i++ {
			seed := base + int64(i)
			t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
				t.Parallel()
				it := &iteration{t: t, seed: seed, rng: rand.New(rand.NewSource(seed)), nonUTF8: nonUTF8}
				if it.run() {
					mu.Lock()
					undoRefused++
					mu.Unlock()
				}
			})
		}
	})
	if undoRefused > 0 {
		t.Errorf("in %d iteration(s), the undo of a rollback that moved HEAD (plan to the safety checkpoint, "+
			"--restore files) was refused with conflict.head_moved, so HEAD could not be restored", undoRefused)
	}
}

// canNameNonUTF8 reports whether this filesystem takes a file name that
// is not UTF-8 (Linux does; APFS refuses).
func canNameNonUTF8(t *testing.T) bool {
	p := filepath.Join(t.TempDir(), "n\xff\xfe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Logf("no non-UTF-8 names on this filesystem: %v", err)
		return false
	}
	return true
}

// iteration is one random repository, its turns and its rollback.
type iteration struct {
	t       *testing.T
	seed    int64
	rng     *rand.Rand
	nonUTF8 bool
	f       *fixture
	ids     []string // checkpoints taken, in order, without repeats
	flipped string   // the file turned into a directory, to turn back
}

func (it *iteration) fatalf(format string, args ...any) {
	it.t.Helper()
	it.t.Fatalf("seed %d (%s=%d): %s", it.seed, SeedEnv, it.seed, fmt.Sprintf(format, args...))
}

func (it *iteration) errorf(format string, args ...any) {
	it.t.Helper()
	it.t.Errorf("seed %d (%s=%d): %s", it.seed, SeedEnv, it.seed, fmt.Sprintf(format, args...))
}

// Name parts: spaces, a newline, leading ':' and '-', quotes, a backslash,
// and (where the filesystem takes it) bytes that are not UTF-8. All lower
// case, so a case-insensitive filesystem sees the same tree.
var nameParts = []string{"a", "b", "c", "src", "lib", "x y", "-dash", ":colon", "new\nline", "tab\tx", "q\"t", "back\\s", "dot.txt", "e f "}

func (it *iteration) name() string {
	if it.nonUTF8 && it.rng.Intn(12) == 0 {
		return "bin\xff\xfe" + strconv.Itoa(it.rng.Intn(3))
	}
	s := nameParts[it.rng.Intn(len(nameParts))]
	if it.rng.Intn(2) == 0 {
		s += strconv.Itoa(it.rng.Intn(4))
	}
	return s
}

func (it *iteration) path() string {
	depth := 1 + it.rng.Intn(3)
	parts := make([]string, depth)
	for i := range parts {
		parts[i] = it.name()
	}
	return strings.Join(parts, "/")
}

func (it *iteration) content() []byte {
	n := it.rng.Intn(120)
	b := make([]byte, n)
	switch it.rng.Intn(4) {
	case 0: // binary
		it.rng.Read(b)
	default:
		for i := range b {
			const alphabet = "abc \n\r\t\x00xyz"
			b[i] = alphabet[it.rng.Intn(len(alphabet))]
			if it.rng.Intn(3) > 0 {
				b[i] = byte('a' + it.rng.Intn(26))
			}
		}
	}
	return b
}

func (it *iteration) mode() fs.FileMode {
	if it.rng.Intn(4) == 0 {
		return 0o755
	}
	return 0o644
}

// existing lists the tracked-or-untracked (not ignored) files, symlinks
// and directories on disk.
func (it *iteration) existing() (regular, links, dirs []string) {
	for p, e := range disk(it.t, it.f.r.Dir) {
		if isIgnoredName(p) {
			continue
		}
		switch e.Kind {
		case "file", "exec":
			regular = append(regular, p)
		case "link":
			links = append(links, p)
		case "dir":
			dirs = append(dirs, p)
		}
	}
	sort.Strings(regular)
	sort.Strings(links)
	sort.Strings(dirs)
	return
}

// isIgnoredName matches the fixed .gitignore of the random trees.
func isIgnoredName(p string) bool {
	if p == ".gitignore" {
		return true // the rules stay fixed; TestIgnoredAtTarget changes them
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".env" || c == "build" || strings.HasSuffix(c, ".log") {
			return true
		}
	}
	return false
}

func pick(rng *rand.Rand, s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[rng.Intn(len(s))]
}

// edit makes one random change, as an agent or a person would.
func (it *iteration) edit(mayCommit bool) {
	root := it.f.r.Dir
	regular, links, dirs := it.existing()
	switch op := it.rng.Intn(14); {
	case op <= 2: // create
		write(it.t, root, it.path(), it.content(), it.mode())
	case op <= 4: // modify
		if p := pick(it.rng, regular); p != "" {
			write(it.t, root, p, it.content(), it.modeOf(p))
		}
	case op == 5: // delete
		if p := pick(it.rng, append(regular, links...)); p != "" {
			os.Remove(filepath.Join(root, filepath.FromSlash(p)))
		}
	case op == 6: // exec bit
		if p := pick(it.rng, regular); p != "" {
			m := fs.FileMode(0o755)
			if it.modeOf(p) == 0o755 {
				m = 0o644
			}
			os.Chmod(filepath.Join(root, filepath.FromSlash(p)), m)
		}
	case op == 7: // symlink
		target := pick(it.rng, []string{"a", "../outside", "x y/z", "dangling", "src"})
		symlink(it.t, root, it.path(), target)
	case op == 8: // a file becomes a directory
		if p := pick(it.rng, regular); p != "" {
			write(it.t, root, p+"/"+it.name(), it.content(), it.mode())
		}
	case op == 9: // a directory becomes a file
		if d := pick(it.rng, dirs); d != "" {
			write(it.t, root, d, it.content(), it.mode())
		}
	case op == 10: // ignored files, also inside tracked directories
		p := pick(it.rng, []string{".env", "build/out.bin", "run.log"})
		if d := pick(it.rng, dirs); d != "" && it.rng.Intn(2) == 0 {
			p = d + "/" + pick(it.rng, []string{".env", "x.log", "build/cache"})
		}
		write(it.t, root, p, it.content(), 0o644)
	case op == 11: // too big to capture
		b := make([]byte, maxFileBytes+1+it.rng.Intn(100))
		it.rng.Read(b)
		write(it.t, root, "big"+strconv.Itoa(it.rng.Intn(2))+".bin", b, 0o644)
	case op == 12: // stage one path
		if p := pick(it.rng, regular); p != "" {
			it.f.r.GitErr("add", "--", ":(literal)"+p)
		}
	case op == 13 && mayCommit:
		it.f.r.Git("add", "-A")
		it.f.r.Git("commit", "-q", "--allow-empty", "-m", "agent commit")
	}
}

func (it *iteration) modeOf(p string) fs.FileMode {
	st, err := os.Lstat(filepath.Join(it.f.r.Dir, filepath.FromSlash(p)))
	if err == nil && st.Mode()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func (it *iteration) take(reason string) {
	k := it.f.take(reason)
	if len(it.ids) == 0 || it.ids[len(it.ids)-1] != k {
		it.ids = append(it.ids, k)
	}
}

// build makes the repository and its history of turns.
func (it *iteration) build() {
	it.f = newFixture(it.t, it.rng.Intn(2) == 0)
	r := it.f.r
	r.Git("config", "venom.checkpoints.maxFileBytes", strconv.Itoa(maxFileBytes))
	r.Write(".gitignore", ".env\n*.log\nbuild/\n")
	for i := 0; i < 8+it.rng.Intn(8); i++ {
		write(it.t, r.Dir, it.path(), it.content(), it.mode())
	}
	symlink(it.t, r.Dir, "link", "a")
	r.Git("add", "-A")
	r.Git("commit", "-q", "-m", "init")
	for i := 0; i < 2+it.rng.Intn(4); i++ {
		write(it.t, r.Dir, it.path(), it.content(), it.mode()) // untracked
	}
	write(it.t, r.Dir, ".env", []byte("SECRET=1\n"), 0o600)
	write(it.t, r.Dir, "build/app", []byte("\x7fELF"), 0o755)
	if it.rng.Intn(2) == 0 {
		it.take(checkpoint.ReasonManual)
	}
	turns := 2 + it.rng.Intn(3)
	for n := 1; n <= turns; n++ {
		if it.rng.Intn(3) == 0 { // a person between turns: a gap
			for i := 0; i < 1+it.rng.Intn(2); i++ {
				it.edit(false)
			}
		}
		it.take(checkpoint.ReasonTurnStart)
		for i := 0; i < 2+it.rng.Intn(6); i++ {
			it.edit(true)
		}
		switch {
		case n == 1: // a file replaced by a directory ...
			if regular, _, _ := it.existing(); len(regular) > 0 {
				it.flipped = pick(it.rng, regular)
				write(it.t, r.Dir, it.flipped+"/inner", it.content(), 0o644)
				write(it.t, r.Dir, it.flipped+"/"+it.name()+"/deep", it.content(), 0o755)
			}
		case n == turns && it.flipped != "": // ... and back
			write(it.t, r.Dir, it.flipped, it.content(), 0o644)
			// Another file becomes a directory holding an ignored file, in
			// the way of any rollback to before.
			if regular, _, _ := it.existing(); len(regular) > 0 && it.rng.Intn(2) == 0 {
				p := pick(it.rng, regular)
				write(it.t, r.Dir, p+"/debug.log", it.content(), 0o644)
				write(it.t, r.Dir, p+"/"+it.name(), it.content(), 0o644)
			}
		}
		if it.rng.Intn(3) == 0 {
			it.take(checkpoint.ReasonManual) // mid-turn
			it.edit(true)
		}
		it.take(checkpoint.ReasonTurnEnd)
	}
	for i := 0; i < it.rng.Intn(3); i++ { // after the last checkpoint
		it.edit(false)
	}
}

// run builds, rolls back and checks. It returns true when the undo of a
// rollback that moved HEAD was refused (reported once by the parent).
func (it *iteration) run() (undoRefused bool) {
	it.build()
	f, r := it.f, it.f.r
	k := it.ids[it.rng.Intn(len(it.ids))]
	o := rollback.Options{Restore: "files"}
	if f.guarded {
		o.Outside = pick(it.rng, []string{"", "keep", "overwrite"})
	} else {
		o.Outside = pick(it.rng, []string{"", "", "keep", "overwrite"})
		o.KeepHead = it.rng.Intn(5) == 0
	}
	it.t.Logf("seed %d: guarded %v, checkpoints %v, rollback to %s %+v", it.seed, f.guarded, it.ids, k, o)

	// Before: S, the files, the ignored files, HEAD, the index.
	ctx := context.Background()
	sSnap, err := f.tree().CurrentTree(ctx)
	if err != nil {
		it.fatalf("capturing S: %v", err)
	}
	before := disk(it.t, r.Dir)
	ign := ignored(it.t, r)
	headBefore, symBefore := head(r)
	indexBefore := indexBytes(it.t, r)
	refsBefore := r.Refs()
	logBefore := logBytes(it.t, r)

	plan, err := f.plan(k, o)
	if code(err) == "conflict.outside_edits" && f.guarded && o.Outside == "" {
		o.Outside = "keep" // refused until the person chooses (RFC 7.3)
		plan, err = f.plan(k, o)
	}
	if err != nil {
		it.fatalf("plan to %s: %s", k, describe(err))
	}
	if d := diffEntries(before, disk(it.t, r.Dir)); d != "" {
		it.errorf("the dry run changed files:\n%s", d)
	}
	if got := logBytes(it.t, r); got != logBefore {
		it.errorf("the dry run wrote to the log:\n%s", strings.TrimPrefix(got, logBefore))
	}
	if got := r.Refs(); fmt.Sprint(got) != fmt.Sprint(refsBefore) {
		it.errorf("the dry run changed refs")
	}
	o.Agent, o.Checkpoint, o.DryRun, o.Plan = f.agent, k, false, plan.Plan
	res, err := rollback.Run(ctx, f.tree(), o)
	if err != nil {
		it.fatalf("rollback to %s with plan %s: %s", k, plan.Plan, describe(err))
	}
	if res.Exact == nil || !*res.Exact || res.After == "" {
		it.errorf("exact is %v, rollback checkpoint %q; converted %v", deref2(res.Exact), res.After, res.Repos[0].Converted)
	}
	left := map[string]string{}
	for _, l := range res.Repos[0].Left {
		left[l.Path] = l.Reason
	}
	if fmt.Sprint(plan.Repos[0].Left) != fmt.Sprint(res.Repos[0].Left) || fmt.Sprint(plan.Repos[0].Files) != fmt.Sprint(res.Repos[0].Files) {
		it.errorf("the real call did other than the plan:\nplan files %v left %v\nreal files %v left %v",
			plan.Repos[0].Files, plan.Repos[0].Left, res.Repos[0].Files, res.Repos[0].Left)
	}

	// The safety checkpoint is S, whose parent is the old HEAD.
	if got := r.Line("rev-parse", f.ref(res.Safety)+"^{tree}"); got != string(sSnap.Tree) {
		it.errorf("safety checkpoint %s has tree %s, S was %s", res.Safety, got, sSnap.Tree)
	}

	// Every ignored_in_the_way has something S does not hold in the way
	// (RFC 7.4): its detail is on disk and not in S, or is itself left.
	kTree := r.Tree(f.ref(k))
	sTree := r.Tree(string(sSnap.Tree))
	for _, l := range res.Repos[0].Left {
		if l.Reason != "ignored_in_the_way" {
			continue
		}
		_, onDisk := before[l.Detail]
		_, inS := sTree[l.Detail]
		_, isLeft := left[l.Detail]
		if !(onDisk && !inS) && (!isLeft || l.Detail == l.Path) {
			it.errorf("%q left as ignored_in_the_way (detail %q), but nothing S lacks is in its way (on disk before: %v, in S: %v)",
				l.Path, l.Detail, onDisk, inS)
		}
	}

	// The tree now is K's, except what was left, which keeps S's entry.
	// A too_big path has no content of its own in any capture (the index's
	// entry stands for it), so it is left out of the comparison.
	tooBig := map[string]bool{}
	for p, why := range left {
		if why == "too_big" {
			tooBig[p] = true
		}
	}
	want := map[string]string{}
	for p, e := range kTree {
		want[p] = e.Mode + " " + e.OID
	}
	for p, why := range left {
		delete(want, p)
		if e, ok := sTree[p]; ok && why != "ignored_at_target" {
			want[p] = e.Mode + " " + e.OID
		}
	}
	after, err := f.tree().CurrentTree(ctx)
	if err != nil {
		it.fatalf("capturing after: %v", err)
	}
	// A file the rollback wrote (a big file K took from the index, where
	// nothing was) that is too big for the capture after has no entry of
	// its own there either; its bytes are checked on disk below.
	for _, sk := range after.Skipped {
		if sk.Reason == "too_big" {
			tooBig[sk.Path] = true
		}
	}
	got := r.Tree(string(after.Tree))
	if d := diffStrings(without(want, tooBig), without(modes(got), tooBig)); d != "" {
		it.errorf("tree after the rollback to %s is not K's (left %v):\n%s", k, left, d)
	}
	if res.After != "" {
		at := r.Tree(f.ref(res.After))
		if d := diffStrings(without(modes(got), tooBig), without(modes(at), tooBig)); d != "" {
			it.errorf("the rollback checkpoint %s does not hold the files as they are:\n%s", res.After, d)
		}
	}

	// On disk: K's bytes and modes, left and ignored paths as they were,
	// nothing else.
	now := files(disk(it.t, r.Dir))
	wantDisk := treeEntries(it.t, r, kTree)
	for p := range wantDisk {
		if _, ok := left[p]; ok {
			delete(wantDisk, p)
		}
	}
	// A left path keeps what was there, below it too, except paths the
	// plan itself changes (a turn's file inside a folder an outside path
	// kept is still the turn's to undo).
	planned := map[string]bool{}
	for _, fc := range res.Repos[0].Files {
		planned[fc.Path] = true
	}
	for p, e := range files(before) {
		if underLeft(p, left) && !planned[p] {
			wantDisk[p] = e
		}
	}
	for p, e := range ign {
		wantDisk[p] = e
	}
	if d := diffEntries(wantDisk, now); d != "" {
		it.errorf("files on disk after the rollback to %s (left %v):\n%s", k, left, d)
	}
	// Deletions removed their parents that became empty (RFC 7.4 recipe
	// step 2): a directory with nothing in it now had no file below it
	// before either. (One that holds only an empty directory that was
	// there before is not empty, and stays.)
	nowAll := disk(it.t, r.Dir)
	for d, e := range nowAll {
		if e.Kind == "dir" && empty(nowAll, d) && !(before[d].Kind == "dir" && fileless(before, d)) {
			it.errorf("directory %q is empty after the rollback, and was not before", d)
		}
	}
	for p, e := range ign {
		if now[p] != e {
			it.errorf("ignored file %q changed: %s %.30q -> %s %.30q", p, e.Kind, e.Data, now[p].Kind, now[p].Data)
		}
	}

	// HEAD and the index.
	headNow, symNow := head(r)
	kHead := r.Line("rev-parse", f.ref(k)+"^")
	switch {
	case f.guarded || o.KeepHead || !res.Repos[0].Head.Moves:
		if headNow != headBefore || symNow != symBefore {
			it.errorf("HEAD moved: %s %s -> %s %s", symBefore, headBefore, symNow, headNow)
		}
		if indexBytes(it.t, r) != indexBefore {
			it.errorf("the index was written (guarded %v, keep-head %v, head.moves %v)", f.guarded, o.KeepHead, res.Repos[0].Head.Moves)
		}
		if !f.guarded && !o.KeepHead && headBefore != kHead {
			it.errorf("HEAD %s did not go back to K's %s", headBefore, kHead)
		}
	default:
		if headNow != kHead || symNow != symBefore {
			it.errorf("HEAD is %s %s, want %s %s", symNow, headNow, symBefore, kHead)
		}
		if _, err := r.GitErr("diff-index", "--cached", "--quiet", "HEAD"); err != nil {
			it.errorf("the index does not follow HEAD: %s", r.Git("diff-index", "--cached", "--name-status", "HEAD"))
		}
		if _, err := r.GitErr("merge-base", "--is-ancestor", headBefore, f.ref(res.Safety)); err != nil {
			it.errorf("the dropped commits are not reachable from the safety checkpoint")
		}
	}

	// The undo: back to the safety checkpoint, as the rollback prints it.
	undo := rollback.Options{Restore: "files"}
	_, ures, err := f.rollback(res.Safety, undo)
	if code(err) == "conflict.head_moved" && res.Repos[0].Head.Moves {
		undoRefused = true
		undo.KeepHead = true
		_, ures, err = f.rollback(res.Safety, undo)
	}
	if err != nil {
		it.fatalf("undo (rollback to the safety checkpoint %s): %s", res.Safety, describe(err))
	}
	if ures.Exact == nil || !*ures.Exact {
		it.errorf("undo: exact is false")
	}
	// But for a big file the rollback wrote where nothing was (K took it
	// from the index): no capture after could record it, so the undo
	// leaves it (too_big), with K's bytes, checked on disk above.
	wantUndo, gotUndo := files(before), files(disk(it.t, r.Dir))
	for _, l := range ures.Repos[0].Left {
		if _, was := wantUndo[l.Path]; l.Reason == "too_big" && !was && planned[l.Path] {
			if e, ok := gotUndo[l.Path]; ok {
				wantUndo[l.Path] = e
			}
		}
	}
	if d := diffEntries(wantUndo, gotUndo); d != "" {
		it.errorf("after the undo, files differ from before the rollback:\n%s", d)
	}
	headNow, symNow = head(r)
	if !undoRefused && (headNow != headBefore || symNow != symBefore) {
		it.errorf("after the undo HEAD is %s %s, was %s %s", symNow, headNow, symBefore, headBefore)
	}
	if f.guarded && indexBytes(it.t, r) != indexBefore {
		it.errorf("after the undo the index of a guarded tree is not byte-identical")
	}
	if final, err := f.tree().CurrentTree(ctx); err != nil || (final.Tree != sSnap.Tree && !undoRefused) {
		it.errorf("after the undo the capture is %v (err %v), S was %s", final, err, sSnap.Tree)
	}
	return undoRefused
}

func underLeft(p string, left map[string]string) bool {
	for l := range left {
		if p == l || strings.HasPrefix(p, l+"/") {
			return true
		}
	}
	return false
}

// empty reports whether no entry of m is below directory d.
func empty(m map[string]entry, d string) bool {
	for p := range m {
		if strings.HasPrefix(p, d+"/") {
			return false
		}
	}
	return true
}

// fileless reports whether no file or symlink of m is below directory d.
func fileless(m map[string]entry, d string) bool {
	for p, e := range m {
		if e.Kind != "dir" && strings.HasPrefix(p, d+"/") {
			return false
		}
	}
	return true
}

// modes renders a tree listing as "mode oid" per path.
func modes(tree map[string]gittest.Entry) map[string]string {
	m := map[string]string{}
	for p, e := range tree {
		m[p] = e.Mode + " " + e.OID
	}
	return m
}

// without is m less the paths in drop.
func without(m map[string]string, drop map[string]bool) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !drop[k] {
			out[k] = v
		}
	}
	return out
}

func diffStrings(want, got map[string]string) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if want[k] != got[k] {
			fmt.Fprintf(&b, "  %q: %q, want %q\n", k, got[k], want[k])
		}
	}
	return b.String()
}
