package model_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// Environment variables of TestModel (doc.go).
const (
	seedEnv   = "VENOM_MODEL_SEED"
	seqsEnv   = "VENOM_MODEL_SEQS"
	budgetEnv = "VENOM_MODEL_BUDGET"
	stepsEnv  = "VENOM_MODEL_STEPS"
)

// maxFile is venom.checkpoints.maxFileBytes in the model's repositories,
// lowered so that some files are too big to capture.
const maxFile = 2048

// TestModel runs random sequences against the model (doc.go). The default
// run fits a short budget; VENOM_MODEL_SEQS asks for an exact count.
func TestModel(t *testing.T) {
	base := time.Now().UnixNano() % 1_000_000_000
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
		base = n
	}
	seqs := -1
	if v := os.Getenv(seqsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive count", seqsEnv, v)
		}
		seqs = n
	}
	budget := 4 * time.Second
	if v := os.Getenv(budgetEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", budgetEnv, v, err)
		}
		budget = d
	}
	steps := 40
	if v := os.Getenv(stepsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive count", stepsEnv, v)
		}
		steps = n
	}
	nonUTF8 := canNameNonUTF8(t)
	workers := runtime.GOMAXPROCS(0)
	if seqs > 0 && seqs < workers {
		workers = seqs
	}
	start := time.Now()
	var next, done, failed atomic.Int64
	next.Store(base)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed := next.Add(1) - 1
				if seqs > 0 && seed >= base+int64(seqs) {
					return
				}
				// The default run stops at its budget, but always runs at
				// least two sequences.
				if seqs < 0 && seed >= base+2 && time.Since(start) > budget {
					return
				}
				ok := t.Run("seed="+strconv.FormatInt(seed, 10), func(t *testing.T) {
					s := newSeq(t, seed, nonUTF8)
					s.run(steps)
				})
				n := done.Add(1)
				if !ok {
					failed.Add(1)
				}
				if out := os.Getenv("VENOM_MODEL_REPORT"); out != "" && n%100 == 0 {
					progress(out, "progress: %d sequences done, %d failed, %s", n, failed.Load(), time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()
	last := base + done.Load() - 1
	t.Logf("%d sequences of %d steps, seeds %d to %d, in %s (%d failed); rerun one with %s=<seed> %s=1",
		done.Load(), steps, base, last, time.Since(start).Round(time.Millisecond), failed.Load(), seedEnv, seqsEnv)
	if out := os.Getenv("VENOM_MODEL_REPORT"); out != "" {
		progress(out, "seeds %d..%d sequences %d steps %d failed %d time %s", base, last, done.Load(), steps, failed.Load(), time.Since(start).Round(time.Second))
	}
}

// progress appends a line to VENOM_MODEL_REPORT, for long runs.
func progress(path, format string, args ...any) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

// canNameNonUTF8 reports whether the filesystem takes a file name that is
// not UTF-8 (Linux does; APFS refuses).
func canNameNonUTF8(t *testing.T) bool {
	p := filepath.Join(t.TempDir(), "n\xff\xfe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return false
	}
	return true
}

// capEvent is one capture of the agent as the model knows it, in log
// order: kind is taken, reused or failed; tree is what it held.
type capEvent struct {
	kind   string
	id     string
	reason string
	turn   string
	tree   treeMap
	clock  int // the operation it came from, in the order of all agents' captures
	// subTree is what it held in the submodule (sequences with one).
	subTree treeMap
}

// sharerTurn is a turn of the second agent, b1, between the clocks of the
// captures that started and ended it (end 0 while open).
type sharerTurn struct{ start, end int }

// editEvent is an edit record: after is the index in caps of the capture
// before it, turn the turn it names ("" between turns).
type editEvent struct {
	after int
	turn  string
	paths []string
}

// cpModel is one checkpoint as the model expects it.
type cpModel struct {
	id      string
	n       int
	reason  string
	cap     int
	tree    treeMap
	tooBig  map[string]bool
	subs    map[string]string
	head    string
	branch  string
	through string
	midTurn bool
	commit  string
	pruned  bool
	// subTree and subCommit are the submodule's part (sequences with one).
	subTree   treeMap
	subCommit string
}

// turnModel is one turn: whether it runs under a harness that can rewind
// (claude-code, with a session) and whether its end gave harness_end.
type turnModel struct {
	n       int
	harness bool
	end     bool
	ended   bool
}

// seq is one random sequence: a repository, the tree the agent works in,
// and the model.
type seq struct {
	t       *testing.T
	seed    int64
	rng     *rand.Rand
	nonUTF8 bool
	ctx     context.Context

	r       *gittest.Repo // the tree (a linked worktree in "linked" sequences)
	top     string        // the directory holding the repository and its worktree
	tree    *checkpoint.Tree
	agent   string
	kind    string // guarded, unguarded, linked
	guarded bool
	keep    int
	history []string

	turnOpen bool
	turns    []*turnModel
	caps     []capEvent
	edits    []editEvent
	cps      map[string]*cpModel
	order    []string
	maxN     int
	dropped  map[string]bool
	lastRB   *lastRollback
	// rbIndex is, by safety checkpoint, the index a rollback that moved
	// HEAD found: what its undo gives back.
	rbIndex map[string]index
	// rbCreated is, by safety checkpoint, the files a rollback created
	// where its S held nothing and S's rules ignore the path, with the
	// entry it wrote: the first rollback to that checkpoint (its undo)
	// deletes those still so although its target ignores them.
	rbCreated map[string]treeMap
	// rbTargeted are the checkpoints a rollback has gone back to.
	rbTargeted map[string]bool
	opsSince   int    // file operations since the last rollback
	lastErr    string // the message of the last rollback error

	indexPath, stashLogPath string // the user's index and the stash's reflog

	// A second agent, b1, that captures in the same tree in some
	// sequences: the tree is then shared, so guarded (RFC 6), and a1's
	// turn windows that overlap b1's turns are gaps (RFC 7.3).
	withB1 bool
	b1Reg  bool
	// A submodule, subPath, in some sequences (submodule_test.go): sub is
	// it, nil in the others; subRng draws what concerns it, so the other
	// sequences of a seed are as they were.
	withSub bool
	sub     *gittest.Repo
	subRng  *rand.Rand
	b1Turns []sharerTurn
	b1Open  bool
	b1Caps  int
	clock   int
}

// isGuarded is RFC 6: in place, or shared with another non-archived agent.
func (s *seq) isGuarded() bool { return s.guarded || s.b1Reg }

// sharedTurn reports whether b1 had a turn running between clocks lo and hi.
func (s *seq) sharedTurn(lo, hi int) bool {
	for _, t := range s.b1Turns {
		if t.start < hi && (t.end == 0 || t.end > lo) {
			return true
		}
	}
	return false
}

// lastRollback is what the undo of the last rollback must bring back.
type lastRollback struct {
	safety  string
	before  *disk
	head    string
	guarded bool
	// subBefore is the submodule's files before it (sequences with one).
	subBefore treeMap
}

func newSeq(t *testing.T, seed int64, nonUTF8 bool) *seq {
	s := &seq{t: t, seed: seed, rng: rand.New(rand.NewSource(seed)), nonUTF8: nonUTF8, ctx: context.Background(),
		cps: map[string]*cpModel{}, dropped: map[string]bool{}, rbIndex: map[string]index{}, rbCreated: map[string]treeMap{}, rbTargeted: map[string]bool{}, keep: 100}
	s.agent = []string{"a1", "agent-x", "default"}[s.rng.Intn(3)]
	switch n := s.rng.Intn(10); {
	case n < 5:
		s.kind, s.guarded = "guarded", true
	case n < 8:
		s.kind = "unguarded"
	default:
		s.kind = "linked"
	}
	if s.rng.Intn(5) == 0 {
		s.keep = 3 + s.rng.Intn(3)
	}
	s.withB1 = s.rng.Intn(3) == 0
	s.subRng = rand.New(rand.NewSource(seed*7919 + 17))
	s.withSub = s.subRng.Intn(4) == 0
	return s
}

// fatalf stops the sequence at a divergence, with the seed, the step and
// the steps that led to it.
func (s *seq) fatalf(format string, args ...any) {
	s.t.Helper()
	kept := ""
	if os.Getenv("VENOM_MODEL_KEEP") != "" {
		// Keep the repository for a post-mortem.
		if d, err := os.MkdirTemp("", "venom-model-kept-"); err == nil {
			exec.Command("cp", "-a", s.top, d).Run()
			kept = "\nkept in " + d
		}
	}
	hist := s.history
	if len(hist) > 60 {
		hist = hist[len(hist)-60:]
	}
	if out := os.Getenv("VENOM_MODEL_REPORT"); out != "" {
		// A long run prints failures only at its end: say it now.
		progress(out, "FAIL seed %d: %s", s.seed, strings.SplitN(fmt.Sprintf(format, args...), "\n", 2)[0])
	}
	s.t.Fatalf("seed %d (%s=%d %s=1), %s tree, step %d: %s%s\nsteps:\n  %s", s.seed, seedEnv, s.seed, seqsEnv, s.kind,
		len(s.history), fmt.Sprintf(format, args...), kept, strings.Join(hist, "\n  "))
}

func (s *seq) logf(format string, args ...any) {
	s.history = append(s.history, fmt.Sprintf(format, args...))
}

// git runs git in the tree; a failure is a model error.
func (s *seq) git(args ...string) string {
	s.t.Helper()
	out, err := s.r.GitErr(args...)
	if err != nil {
		s.fatalf("git %q: %v", args, err)
	}
	return out
}

func (s *seq) gitOK(args ...string) bool {
	_, err := s.r.GitErr(args...)
	return err == nil
}

// setup makes the repository: a .gitignore, some files, a commit (unless
// the sequence starts unborn), untracked and ignored files, a stash entry.
func (s *seq) setup() {
	main := gittest.New(s.t)
	s.top = main.Dir
	main.Git("config", "venom.checkpoints.maxFileBytes", strconv.Itoa(maxFile))
	// The agent's and the person's commits need not start git maintenance.
	main.Git("config", "maintenance.auto", "false")
	if s.keep != 100 {
		main.Git("config", "venom.checkpoints.keep", strconv.Itoa(s.keep))
	}
	s.r = main
	unborn := s.kind == "guarded" && s.rng.Intn(8) == 0
	s.writeFile(".gitignore", ".env\n*.log\nbuild/\n", 0o644)
	for i := 0; i < 4+s.rng.Intn(6); i++ {
		s.writeFile(s.newPath(), s.content(), s.mode())
	}
	if !unborn {
		main.Git("add", "-A")
		main.Git("commit", "-q", "-m", "init")
		// A stash entry, which nothing may touch.
		s.writeFile(".gitignore", ".env\n*.log\nbuild/\n# stashed\n", 0o644)
		main.Git("stash", "push", "-q", "-m", "the person's stash")
		if s.withSub && s.kind != "linked" {
			s.addSubmodule(main)
		}
	}
	if s.kind == "linked" {
		dir := main.Dir + "-wt"
		s.top = filepath.Dir(main.Dir)
		s.t.Cleanup(func() { os.RemoveAll(dir) })
		main.Git("worktree", "add", "-q", "-b", "agent-wt", dir)
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			s.t.Fatal(err)
		}
		s.r = gittest.At(s.t, real)
	}
	for i := 0; i < s.rng.Intn(4); i++ {
		s.writeFile(s.newPath(), s.content(), s.mode())
	}
	s.writeFile(".env", "SECRET=model\n", 0o600)
	s.writeFile("build/app", "\x7fELF", 0o755)
	tr, err := checkpoint.OpenTree(s.ctx, s.r.Dir)
	if err != nil {
		s.fatalf("OpenTree: %v", err)
	}
	s.tree = tr
	s.logf("setup: %s tree, agent %s, keep %d, unborn %v, second agent %v, submodule %v", s.kind, s.agent, s.keep, unborn, s.withB1, s.sub != nil)
}

// run is the sequence: steps chosen at random by what is open.
func (s *seq) run(steps int) {
	s.setup()
	for i := 0; i < steps; i++ {
		s.step()
		if s.t.Failed() {
			s.fatalf("stopped after a failed check")
		}
	}
	// End with closed turns and a last rollback, so every sequence
	// exercises one.
	if s.turnOpen {
		s.capture(checkpoint.ReasonTurnEnd)
	}
	if s.b1Open {
		s.b1Take(checkpoint.ReasonTurnEnd)
	}
	if len(s.order) > 0 {
		s.rollbackStep(false)
	}
	if os.Getenv("VENOM_MODEL_TRACE") != "" {
		s.t.Logf("seed %d, %s tree:\n  %s", s.seed, s.kind, strings.Join(s.history, "\n  "))
	}
}

func (s *seq) step() {
	if s.withB1 && s.rng.Intn(12) == 0 {
		s.b1Capture()
		return
	}
	n := s.rng.Intn(100)
	if s.turnOpen {
		switch {
		case n < 55:
			s.fileOp(true)
		case n < 63:
			s.capture(checkpoint.ReasonManual)
		case n < 71:
			s.commitOp()
		case n < 88:
			s.capture(checkpoint.ReasonTurnEnd)
		case n < 92:
			s.capture(checkpoint.ReasonTurnStart) // an interrupted turn: a synthetic end
		case n < 96:
			s.rollbackStep(false) // refused: the turn runs
		default:
			s.gitOp()
		}
		return
	}
	switch {
	case n < 25:
		s.fileOp(false)
	case n < 50:
		s.capture(checkpoint.ReasonTurnStart)
	case n < 54:
		s.capture(checkpoint.ReasonManual)
	case n < 56:
		s.capture(checkpoint.ReasonTurnEnd) // a turn with no start
	case n < 82:
		s.rollbackStep(false)
	case n < 92:
		s.rollbackStep(true)
	case n < 96:
		s.gitOp()
	default:
		s.commitOp()
	}
}

// names of path components: spaces, a newline, a tab, leading ':' and '-',
// glob characters, a backslash, non-ASCII. All lower case, so that a
// case-insensitive filesystem sees the same tree.
var nameParts = []string{"a", "b", "c", "src", "lib", "doc", "x y", "-dash", ":colon", "new\nline", "[g]", "*st", "q?",
	"tab\tx", "back\\s", "dot.txt", "e f ", "\u00fc", "z"}

func (s *seq) name() string {
	if s.nonUTF8 && s.rng.Intn(15) == 0 {
		return "n\xff" + strconv.Itoa(s.rng.Intn(2))
	}
	p := nameParts[s.rng.Intn(len(nameParts))]
	if s.rng.Intn(2) == 0 {
		p += strconv.Itoa(s.rng.Intn(3))
	}
	return p
}

func (s *seq) newPath() string {
	parts := make([]string, 1+s.rng.Intn(3))
	for i := range parts {
		parts[i] = s.name()
	}
	return strings.Join(parts, "/")
}

func (s *seq) content() string {
	n := s.rng.Intn(160)
	if s.rng.Intn(8) == 0 {
		n = 0
	}
	b := make([]byte, n)
	if s.rng.Intn(4) == 0 {
		s.rng.Read(b)
		return string(b)
	}
	const alphabet = "abcdefghij \n\t\r"
	for i := range b {
		b[i] = alphabet[s.rng.Intn(len(alphabet))]
	}
	return string(b)
}

func (s *seq) mode() os.FileMode {
	m := os.FileMode(0o644)
	if s.rng.Intn(4) == 0 {
		m = 0o755
	}
	if s.rng.Intn(6) == 0 {
		m &^= 0o077 // private: a key, a token (CASES BR-41)
	}
	return m
}

func (s *seq) abs(rel string) string { return filepath.Join(s.r.Dir, filepath.FromSlash(rel)) }

// writeFile writes rel, making its directories; false when a parent is a
// file or a symlink (the op is skipped then: writing through a symlinked
// directory could land outside the tree).
func (s *seq) writeFile(rel, data string, mode os.FileMode) bool {
	if !s.plainParents(rel) {
		return false
	}
	p := s.abs(rel)
	if st, err := os.Lstat(p); err == nil && st.IsDir() {
		return false
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false
	}
	if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
		os.Remove(p)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		s.fatalf("writing %q: %v", rel, err)
	}
	if err := os.Chmod(p, mode); err != nil {
		s.fatalf("chmod %q: %v", rel, err)
	}
	return true
}

// plainParents reports whether every existing directory above rel is a
// real directory (not a file or a symlink).
func (s *seq) plainParents(rel string) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		st, err := os.Lstat(s.abs(strings.Join(parts[:i], "/")))
		if os.IsNotExist(err) {
			return true
		}
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// pick returns a random element of a sorted copy of xs ("" when empty).
func (s *seq) pick(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	sort.Strings(xs)
	return xs[s.rng.Intn(len(xs))]
}

func (s *seq) walk() *disk {
	d, err := walkDisk(s.r.Dir)
	if err != nil {
		s.fatalf("walking the tree: %v", err)
	}
	// A directory holding a .git is a nested repository to the capture
	// and the rollback even when the user's index tracks paths below it
	// and git's status descends into it (issue 13 item 12).
	return d
}

// candidates lists the files, symlinks and directories an op may pick:
// not in a nested repository, not ignored, not .gitignore.
func (s *seq) candidates(d *disk) (regular, links, dirs []string) {
	rs := s.rulesNow()
	for p, f := range d.Files {
		if p == ".gitignore" || p == ".gitmodules" || d.nestedRoot(p) != "" || inGitDir(p) || rs.matches(p) {
			continue
		}
		if f.Link {
			links = append(links, p)
		} else {
			regular = append(regular, p)
		}
	}
	for p := range d.Dirs {
		if d.nestedRoot(p) != "" || inGitDir(p+"/") || rs.matches(p+"/x") {
			continue
		}
		inner := false
		for n := range d.Nested {
			if strings.HasPrefix(n, p+"/") {
				inner = true
			}
		}
		if !inner {
			dirs = append(dirs, p)
		}
	}
	return
}

func (s *seq) rulesNow() rules {
	b, err := os.ReadFile(s.abs(".gitignore"))
	if err != nil {
		return nil
	}
	rs, err := parseRules(string(b))
	if err != nil {
		s.fatalf("%v", err)
	}
	return rs
}

// fileOp makes one random change to the files, as the agent (during a
// turn: then it may record an edit) or a person (between turns).
func (s *seq) fileOp(agent bool) {
	who := "person"
	if agent {
		who = "agent"
	}
	d := s.walk()
	regular, links, dirs := s.candidates(d)
	var touched []string
	desc := ""
	if s.sub != nil && s.subRng.Intn(5) == 0 {
		touched, desc = s.subOp(agent)
	} else {
		s.fileOpIn(d, regular, links, dirs, &touched, &desc)
	}
	if desc == "" {
		return
	}
	s.opsSince++
	s.logf("%s: %s", who, desc)
	if agent && len(touched) > 0 && s.rng.Intn(10) < 7 {
		s.recordEdit(touched)
	} else if !agent && len(touched) > 0 && s.rng.Intn(15) == 0 {
		s.recordEdit(touched) // a person's edit record: no turn
	}
}

// fileOpIn is fileOp's change in the top repository.
func (s *seq) fileOpIn(d *disk, regular, links, dirs []string, touchedp *[]string, descp *string) {
	var touched []string
	desc := ""
	defer func() { *touchedp, *descp = touched, desc }()
	switch op := s.rng.Intn(100); {
	case op < 18: // create
		p := s.newPath()
		if s.writeFile(p, s.content(), s.mode()) {
			touched, desc = []string{p}, "create "+strconv.Quote(p)
		}
	case op < 32: // modify
		if p := s.pick(regular); p != "" {
			s.writeFile(p, s.content(), os.FileMode(0o644|boolMode(d.Files[p].Exec)))
			touched, desc = []string{p}, "modify "+strconv.Quote(p)
		}
	case op < 37: // the same size, right after the index was written
		if p := s.pick(regular); p != "" {
			s.gitOK("add", "--", ":(literal)"+p)
			old := d.Files[p].Data
			b := []byte(s.content())
			for len(b) < len(old) {
				b = append(b, 'x')
			}
			b = b[:len(old)]
			if len(b) > 0 && string(b) == old {
				b[0] ^= 1
			}
			s.writeFile(p, string(b), os.FileMode(0o644|boolMode(d.Files[p].Exec)))
			touched, desc = []string{p}, "stage and rewrite at the same size "+strconv.Quote(p)
		}
	case op < 45: // delete
		if p := s.pick(append(regular, links...)); p != "" {
			os.Remove(s.abs(p))
			touched, desc = []string{p}, "delete "+strconv.Quote(p)
		}
	case op < 47: // exec bit
		if p := s.pick(regular); p != "" {
			m := os.FileMode(0o755)
			if d.Files[p].Exec {
				m = 0o644
			}
			os.Chmod(s.abs(p), m)
			touched, desc = []string{p}, fmt.Sprintf("chmod %o %q", m, p)
		}
	case op < 49: // private bits, or back to git's: the same git mode
		if p := s.pick(regular); p != "" {
			m := s.pick([]string{"600", "640", "644"})
			if d.Files[p].Exec {
				m = s.pick([]string{"700", "750", "755"})
			}
			n, _ := strconv.ParseUint(m, 8, 32)
			os.Chmod(s.abs(p), os.FileMode(n))
			touched, desc = []string{p}, fmt.Sprintf("chmod %s %q", m, p)
		}
	case op < 54: // symlink
		p := s.newPath()
		target := s.pick([]string{"a", "src", "../outside", "dangling", "x y/z", "dot.txt", "/nonexistent/abs"})
		if s.plainParents(p) {
			if _, err := os.Lstat(s.abs(p)); os.IsNotExist(err) {
				os.MkdirAll(filepath.Dir(s.abs(p)), 0o755)
				if os.Symlink(target, s.abs(p)) == nil {
					touched, desc = []string{p}, fmt.Sprintf("symlink %q -> %q", p, target)
				}
			}
		}
	case op < 57: // a symlink to a directory of the tree
		if dd := s.pick(dirs); dd != "" && !strings.Contains(dd, "/") {
			p := "lnk" + strconv.Itoa(s.rng.Intn(3))
			if _, err := os.Lstat(s.abs(p)); os.IsNotExist(err) && os.Symlink(dd, s.abs(p)) == nil {
				touched, desc = []string{p}, fmt.Sprintf("symlink %q -> directory %q", p, dd)
			}
		}
	case op < 62: // a file becomes a directory
		if p := s.pick(regular); p != "" {
			os.Remove(s.abs(p))
			inner := p + "/" + s.name()
			s.writeFile(inner, s.content(), s.mode())
			touched, desc = []string{p, inner}, fmt.Sprintf("file %q becomes a directory with %q", p, inner)
		}
	case op < 67: // a directory becomes a file
		if dd := s.pick(dirs); dd != "" {
			var gone []string
			for p := range d.Files {
				if strings.HasPrefix(p, dd+"/") {
					gone = append(gone, p)
				}
			}
			os.RemoveAll(s.abs(dd))
			s.writeFile(dd, s.content(), s.mode())
			touched, desc = append(gone, dd), fmt.Sprintf("directory %q becomes a file", dd)
		}
	case op < 68: // a directory becomes a symlink to another
		if dd, to := s.pick(dirs), s.pick(dirs); dd != "" && to != "" && !strings.HasPrefix(to+"/", dd+"/") {
			for p := range d.Files {
				if strings.HasPrefix(p, dd+"/") {
					touched = append(touched, p)
				}
			}
			os.RemoveAll(s.abs(dd))
			target, _ := filepath.Rel(filepath.Dir(s.abs(dd)), s.abs(to))
			if os.Symlink(target, s.abs(dd)) == nil {
				touched, desc = append(touched, dd), fmt.Sprintf("directory %q becomes a symlink to %q", dd, to)
			}
		}
	case op < 72: // rename
		if p := s.pick(regular); p != "" {
			q := s.newPath()
			if _, err := os.Lstat(s.abs(q)); os.IsNotExist(err) && s.plainParents(q) {
				os.MkdirAll(filepath.Dir(s.abs(q)), 0o755)
				if os.Rename(s.abs(p), s.abs(q)) == nil {
					touched, desc = []string{p, q}, fmt.Sprintf("rename %q to %q", p, q)
				}
			}
		}
	case op < 74: // remove a directory and all in it
		if dd := s.pick(dirs); dd != "" {
			for p := range d.Files {
				if strings.HasPrefix(p, dd+"/") {
					touched = append(touched, p)
				}
			}
			os.RemoveAll(s.abs(dd))
			desc = "rm -rf " + strconv.Quote(dd)
		}
	case op < 82: // ignored files
		p := s.pick([]string{".env", "x.log", "build/out", "gen/data", "n.tmp", "top"})
		if dd := s.pick(dirs); dd != "" && s.rng.Intn(2) == 0 {
			p = dd + "/" + s.pick([]string{".env", "y.log", "build/cache", "gen/g", "m.tmp"})
		}
		if s.writeFile(p, s.content(), 0o600) {
			touched, desc = []string{p}, "write ignored "+strconv.Quote(p)
		}
	case op < 84: // the ignore rules
		pool := []string{"*.log", "build/", "*.tmp", "gen/", "/top"}
		var rs []string
		if s.rng.Intn(7) > 0 {
			rs = append(rs, ".env")
		}
		for _, r := range pool {
			if s.rng.Intn(2) == 0 {
				rs = append(rs, r)
			}
		}
		if s.rng.Intn(10) == 0 {
			os.Remove(s.abs(".gitignore"))
			desc = "delete .gitignore"
		} else {
			s.writeFile(".gitignore", strings.Join(rs, "\n")+"\n", 0o644)
			desc = fmt.Sprintf(".gitignore %q", rs)
		}
		touched = []string{".gitignore"}
	case op < 89: // too big to capture
		p := "big" + strconv.Itoa(s.rng.Intn(3)) + ".bin"
		if s.rng.Intn(3) == 0 {
			p = s.newPath()
		}
		b := make([]byte, maxFile+1+s.rng.Intn(300))
		s.rng.Read(b)
		if s.writeFile(p, string(b), 0o644) {
			touched, desc = []string{p}, fmt.Sprintf("write %d bytes to %q", len(b), p)
		}
	case op < 92: // a nested repository
		p := s.newPath()
		if _, err := os.Lstat(s.abs(p)); os.IsNotExist(err) && s.plainParents(p) {
			os.MkdirAll(s.abs(p), 0o755)
			if _, err := s.r.GitErr("init", "-q", "--", p); err == nil {
				os.WriteFile(filepath.Join(s.abs(p), "inner.txt"), []byte(s.content()), 0o644)
				committed := s.rng.Intn(5) > 0
				if committed {
					s.nestedCommit(p)
				}
				desc = fmt.Sprintf("nested repository %q (commit %v)", p, committed)
			}
		}
	case op < 95: // inside a nested repository
		var nested []string
		for _, n := range keys(d.Nested) {
			if s.sub == nil || n != subPath {
				nested = append(nested, n) // the submodule's changes are subOp's
			}
		}
		if n := s.pick(nested); n != "" {
			os.WriteFile(filepath.Join(s.abs(n), "inner"+strconv.Itoa(s.rng.Intn(3))+".txt"), []byte(s.content()), 0o644)
			if s.rng.Intn(2) == 0 {
				s.nestedCommit(n)
			}
			desc = "edit inside nested repository " + strconv.Quote(n)
		}
	case op < 98: // stage
		if p := s.pick(regular); p != "" {
			s.gitOK("add", "--", ":(literal)"+p)
			desc = "git add " + strconv.Quote(p)
		}
	default: // unstage
		if p := s.pick(regular); p != "" {
			s.gitOK("rm", "-q", "--cached", "--", ":(literal)"+p)
			desc = "git rm --cached " + strconv.Quote(p)
		}
	}
}

func boolMode(exec bool) os.FileMode {
	if exec {
		return 0o111
	}
	return 0
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *seq) nestedCommit(n string) {
	dir := s.abs(n)
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=N", "-c", "user.email=n@example.invalid", "commit", "-q", "--allow-empty", "-m", "nested"}} {
		if _, err := s.r.GitErr(append([]string{"-C", dir}, args...)...); err != nil {
			return
		}
	}
}

// commitOp is a commit: by the agent during its turn, by the person
// between turns. `git add -A` adds a nested repository as a gitlink, and
// fails on one with no commit; then only what is staged is committed.
func (s *seq) commitOp() {
	s.gitOK("add", "-A")
	s.git("commit", "-q", "--allow-empty", "-m", "commit "+strconv.Itoa(len(s.history)))
	s.opsSince++
	s.logf("commit %s", short(strings.TrimSpace(s.git("rev-parse", "HEAD"))))
}

// gitOp is a rarer git operation: a new branch, a detached HEAD, an amend
// (history rewritten), or a "push" (a remote-tracking ref at HEAD).
func (s *seq) gitOp() {
	if !s.gitOK("rev-parse", "-q", "--verify", "HEAD") {
		return
	}
	switch s.rng.Intn(5) {
	case 0:
		b := "b" + strconv.Itoa(len(s.history))
		s.git("switch", "-q", "-c", b)
		s.logf("git switch -c %s", b)
	case 1:
		s.git("switch", "-q", "--detach")
		s.logf("git switch --detach")
	case 2:
		s.git("commit", "-q", "--amend", "--allow-empty", "-m", "amended "+strconv.Itoa(len(s.history)))
		s.logf("git commit --amend")
	default:
		s.git("update-ref", "refs/remotes/origin/main", "HEAD")
		s.logf("push: refs/remotes/origin/main at HEAD")
	}
	s.opsSince++
}
