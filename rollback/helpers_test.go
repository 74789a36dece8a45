package rollback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/rollback"
)

// binDir holds git-venom-checkpoint, -plan and -rollback, built once by
// TestMain for the tests that run them as separate processes (the crash
// tests kill them).
var binDir string

func TestMain(m *testing.M) {
	gittest.Setup()
	dir, err := os.MkdirTemp("", "git-venom-rollback-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, c := range []string{"git-venom-checkpoint", "git-venom-plan", "git-venom-rollback"} {
		args = append(args, "github.com/venom-org/git-venom/cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is one repository with one agent, in a guarded tree (the main
// worktree, in_place, as registered by default) or an unguarded one (the
// agent registered --isolation worktree on its first capture).
type fixture struct {
	t       *testing.T
	r       *gittest.Repo
	agent   string
	guarded bool
}

func newFixture(t *testing.T, guarded bool) *fixture {
	t.Helper()
	return &fixture{t: t, r: gittest.New(t), agent: "a1", guarded: guarded}
}

// startedAtK1 is an unguarded fixture whose repository has a.txt "one"
// committed and the agent's turn started on it (k1); it returns both.
func startedAtK1(t *testing.T) (*fixture, *gittest.Repo) {
	t.Helper()
	f := newFixture(t, false)
	f.r.Write("a.txt", "one\n")
	f.r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	return f, f.r
}

// tree opens the tree afresh, so config a test changed is read.
func (f *fixture) tree() *checkpoint.Tree {
	f.t.Helper()
	tr, err := checkpoint.OpenTree(context.Background(), f.r.Dir)
	if err != nil {
		f.t.Fatalf("open tree: %v", err)
	}
	return tr
}

// take captures with reason and returns the checkpoint id.
func (f *fixture) take(reason string) string {
	f.t.Helper()
	o := checkpoint.TakeOptions{Agent: f.agent, Reason: reason}
	if !f.guarded {
		o.Isolation = checkpoint.IsolationWorktree
	}
	res, err := f.tree().Take(context.Background(), o)
	if err != nil {
		f.t.Fatalf("take %s: %v", reason, err)
	}
	return res.Checkpoint.Checkpoint
}

// plan is the dry run to k with the choices in o.
func (f *fixture) plan(k string, o rollback.Options) (*rollback.Result, error) {
	o.Agent, o.Checkpoint, o.DryRun, o.Plan = f.agent, k, true, ""
	return rollback.Run(context.Background(), f.tree(), o)
}

// rollback runs the dry run and then the real call with its plan.
func (f *fixture) rollback(k string, o rollback.Options) (plan, res *rollback.Result, err error) {
	f.t.Helper()
	plan, err = f.plan(k, o)
	if err != nil {
		return nil, nil, err
	}
	o.Agent, o.Checkpoint, o.DryRun, o.Plan = f.agent, k, false, plan.Plan
	res, err = rollback.Run(context.Background(), f.tree(), o)
	return plan, res, err
}

// mustRollback is rollback that fails the test on an error.
func (f *fixture) mustRollback(k string, o rollback.Options) *rollback.Result {
	f.t.Helper()
	_, res, err := f.rollback(k, o)
	if err != nil {
		f.t.Fatalf("rollback to %s %+v: %v", k, o, describe(err))
	}
	return res
}

// describe renders an error with its RFC code and data.
func describe(err error) string {
	if e := rfcerr.As(err); e != nil {
		d, _ := json.Marshal(e.Data)
		return fmt.Sprintf("%s: %s %s", e.Code, e.Message, d)
	}
	return err.Error()
}

// code is err's RFC code, "" for none.
func code(err error) string {
	if e := rfcerr.As(err); e != nil {
		return e.Code
	}
	return ""
}

// ref is the ref of checkpoint k of the fixture's agent.
func (f *fixture) ref(k string) string {
	return "refs/venom/checkpoints/" + f.agent + "/" + strings.TrimPrefix(k, "k")
}

// write writes rel with mode (0644 or 0755), turning a parent that is a
// file or a symlink into a directory and a directory at rel into the file,
// as an agent's tool would; it never writes through a symlink.
func write(t testing.TB, root, rel string, data []byte, mode fs.FileMode) {
	t.Helper()
	makeParents(t, root, rel)
	p := filepath.Join(root, filepath.FromSlash(rel))
	if st, err := os.Lstat(p); err == nil && (st.IsDir() || st.Mode()&fs.ModeSymlink != 0) {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// symlink makes rel a symlink to target, replacing what is there.
func symlink(t testing.TB, root, rel, target string) {
	t.Helper()
	makeParents(t, root, rel)
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func makeParents(t testing.TB, root, rel string) {
	t.Helper()
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		q := filepath.Join(root, filepath.FromSlash(strings.Join(parts[:i], "/")))
		st, err := os.Lstat(q)
		if err == nil && st.IsDir() {
			continue
		}
		if err == nil {
			if err := os.Remove(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(q, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// entry is what git can record of a path on disk: its type, the exec bit,
// and its bytes (the target for a symlink).
type entry struct {
	Kind string // "file", "exec", "link" or "dir"
	Data string
}

// gitMode is the tree mode that matches a non-directory entry.
func (e entry) gitMode() string {
	switch e.Kind {
	case "exec":
		return "100755"
	case "link":
		return "120000"
	}
	return "100644"
}

// disk lists every file, symlink and directory under root except the
// top-level .git, keyed by slash path.
func disk(t testing.TB, root string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case st.IsDir():
			m[rel] = entry{Kind: "dir"}
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = entry{Kind: "link", Data: target}
		case st.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			k := "file"
			if st.Mode()&0o111 != 0 {
				k = "exec"
			}
			m[rel] = entry{Kind: k, Data: string(b)}
		default:
			m[rel] = entry{Kind: "other"}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return m
}

// files is disk without directories.
func files(m map[string]entry) map[string]entry {
	out := map[string]entry{}
	for k, v := range m {
		if v.Kind != "dir" {
			out[k] = v
		}
	}
	return out
}

// diffEntries describes the differences between two listings, one line per
// path, sorted; "" when equal.
func diffEntries(want, got map[string]entry) string {
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
		w, inW := want[k]
		g, inG := got[k]
		switch {
		case !inG:
			fmt.Fprintf(&b, "  %q: missing (want %s %.40q)\n", k, w.Kind, w.Data)
		case !inW:
			fmt.Fprintf(&b, "  %q: unexpected (%s %.40q)\n", k, g.Kind, g.Data)
		case w != g:
			fmt.Fprintf(&b, "  %q: %s %.40q, want %s %.40q\n", k, g.Kind, g.Data, w.Kind, w.Data)
		}
	}
	return b.String()
}

// ignored lists the ignored files now on disk (git ls-files -o -i
// --exclude-standard), with their entries.
func ignored(t testing.TB, r *gittest.Repo) map[string]entry {
	t.Helper()
	out := r.Git("ls-files", "-z", "-o", "-i", "--exclude-standard")
	all := disk(t, r.Dir)
	m := map[string]entry{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			m[p] = all[p]
		}
	}
	return m
}

// blobs reads the objects named by oids with one cat-file --batch.
func blobs(t testing.TB, r *gittest.Repo, oids []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	if len(oids) == 0 {
		return m
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = r.Dir
	cmd.Env = gittest.Env()
	cmd.Stdin = strings.NewReader(strings.Join(oids, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cat-file --batch: %v", err)
	}
	for _, oid := range oids {
		nl := bytes.IndexByte(out, '\n')
		f := strings.Fields(string(out[:nl]))
		if len(f) != 3 || f[0] != oid {
			t.Fatalf("cat-file --batch: header %q for %s", out[:nl], oid)
		}
		var size int
		fmt.Sscan(f[2], &size)
		m[oid] = string(out[nl+1 : nl+1+size])
		out = out[nl+1+size+1:]
	}
	return m
}

// treeEntries turns a tree listing into disk entries, reading every blob:
// what the files must be on disk for the tree to be checked out exactly.
func treeEntries(t testing.TB, r *gittest.Repo, tree map[string]gittest.Entry) map[string]entry {
	t.Helper()
	var oids []string
	for _, e := range tree {
		if e.Mode != "160000" {
			oids = append(oids, e.OID)
		}
	}
	data := blobs(t, r, oids)
	m := map[string]entry{}
	for p, e := range tree {
		switch e.Mode {
		case "100755":
			m[p] = entry{Kind: "exec", Data: data[e.OID]}
		case "100644":
			m[p] = entry{Kind: "file", Data: data[e.OID]}
		case "120000":
			m[p] = entry{Kind: "link", Data: data[e.OID]}
		}
	}
	return m
}

// logBytes is the sidecar log's content ("" before the first record).
func logBytes(t testing.TB, r *gittest.Repo) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.GitDir, "venom", "log.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// records returns the log's records of type typ as generic objects, and
// fails the test if the log does not replay.
func records(t testing.TB, r *gittest.Repo, typ string) []map[string]any {
	t.Helper()
	recs, _, err := journal.Parse([]byte(logBytes(t, r)))
	if err != nil {
		t.Fatalf("log does not parse: %v", err)
	}
	if _, err := journal.Replay(recs); err != nil {
		t.Fatalf("log does not replay: %v", err)
	}
	var out []map[string]any
	for _, rec := range recs {
		if rec.Type == typ {
			var m map[string]any
			if err := json.Unmarshal(rec.Line, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// indexBytes is the user's index file, byte for byte.
func indexBytes(t testing.TB, r *gittest.Repo) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.GitDir, "index"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// head is HEAD's commit ("" when unborn) and its symbolic ref ("" when
// detached).
func head(r *gittest.Repo) (string, string) {
	h, _ := r.GitErr("rev-parse", "-q", "--verify", "HEAD")
	sym, _ := r.GitErr("symbolic-ref", "-q", "HEAD")
	return strings.TrimSpace(h), strings.TrimSpace(sym)
}

// run runs one of the built binaries in dir with extra environment and
// returns stdout, stderr and how it ended.
type procResult struct {
	stdout, stderr string
	exit           int
	killed         bool // died of SIGKILL
}

func runBin(t testing.TB, dir, name string, env []string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := procResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			res.killed = true
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

// failpoints collects the names of every failpoint.Hit call in the
// module's non-test sources, so a new step cannot be left untested.
func failpoints(t testing.TB) []string {
	t.Helper()
	re := regexp.MustCompile(`failpoint\.Hit\("([^"]+)"\)`)
	seen := map[string]bool{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			seen[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// startRollback starts the real call of the rollback of args with the
// plan id plan in dir, env added to its environment, without waiting for
// it: its output, stdout and stderr together, goes to out.
func startRollback(t testing.TB, dir string, args []string, plan string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "git-venom-rollback"), append(append([]string(nil), args...), "--plan", plan)...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(env...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}
