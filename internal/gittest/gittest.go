// Package gittest runs Go tests against real git in temporary repositories
// with a clean environment (STYLE.md "Tests in three layers"): HOME in a
// temporary directory, no system config, fixed dates, and none of the
// repository variables a test runner may have inherited from a hook. It also
// snapshots everything invariant 1 of the RFC (section 2) protects, so a
// test can check that a capture changed nothing the user can see, byte for
// byte.
package gittest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Date is the fixed author and committer date of every test commit.
const Date = "2026-01-02T03:04:05Z"

var setup sync.Once

// Setup makes the process environment clean for git, once per test binary:
// HOME is an empty temporary directory, system and XDG config are off,
// dates are fixed, and the repository variables a hook or `rebase -x`
// exports (GIT_DIR, GIT_INDEX_FILE, ...) are removed, as are the toolkit's
// own GIT_VENOM_* settings. Every helper here calls it; tests that use
// plumbing or checkpoint directly call it first. It uses os.Setenv, not
// t.Setenv, so tests stay parallel.
func Setup() {
	setup.Do(func() {
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if (strings.HasPrefix(k, "GIT_") && k != "GIT_EXEC_PATH") || k == "XDG_CONFIG_HOME" || k == "EMAIL" {
				os.Unsetenv(k)
			}
		}
		// go build (Build) keeps using the user's caches.
		if os.Getenv("GOCACHE") == "" {
			if d, err := os.UserCacheDir(); err == nil {
				os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
			}
		}
		if os.Getenv("GOPATH") == "" {
			if d, err := os.UserHomeDir(); err == nil {
				os.Setenv("GOPATH", filepath.Join(d, "go"))
			}
		}
		home := filepath.Join(os.TempDir(), "git-venom-test-home")
		if err := os.MkdirAll(home, 0o755); err != nil {
			panic(err)
		}
		os.Setenv("HOME", home)
		os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		os.Setenv("GIT_AUTHOR_DATE", Date)
		os.Setenv("GIT_COMMITTER_DATE", Date)
		os.Setenv("LC_ALL", "C")
		os.Setenv("TZ", "UTC")
	})
}

// Env is the environment a test gives a spawned git or git-venom process:
// the clean process environment plus extra KEY=VALUE pairs (later ones win).
func Env(extra ...string) []string {
	Setup()
	return append(os.Environ(), extra...)
}

// Repo is a repository in a temporary directory. Dir is its canonical work
// tree (symlinks resolved, as the toolkit records it); GitDir its .git.
type Repo struct {
	T      testing.TB
	Dir    string
	GitDir string

	common string // CommonDir's answer, asked once
}

// CommonDir is the absolute path of the repository's common git directory
// (GitDir itself but in a linked worktree), asked of git once.
func (r *Repo) CommonDir() string {
	r.T.Helper()
	if r.common == "" {
		r.common = strings.TrimSpace(r.Git("rev-parse", "--path-format=absolute", "--git-common-dir"))
	}
	return r.common
}

// New makes an empty repository with branch main and a user identity in its
// own config.
func New(t testing.TB) *Repo {
	t.Helper()
	Setup()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &Repo{T: t, Dir: dir, GitDir: filepath.Join(dir, ".git")}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "user.name", "Dev")
	r.Git("config", "user.email", "dev@example.invalid")
	return r
}

// At returns a Repo for an existing work tree (a linked worktree, a
// submodule), asking git for its git directory.
func At(t testing.TB, dir string) *Repo {
	t.Helper()
	Setup()
	r := &Repo{T: t, Dir: dir}
	r.GitDir = strings.TrimSpace(r.Git("rev-parse", "--path-format=absolute", "--git-dir"))
	return r
}

// Git runs git in the work tree and returns its stdout; a failure fails the
// test.
func (r *Repo) Git(args ...string) string {
	r.T.Helper()
	out, err := r.GitErr(args...)
	if err != nil {
		r.T.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// GitErr runs git in the work tree and returns stdout, and an error holding
// stderr when it fails.
func (r *Repo) GitErr(args ...string) (string, error) {
	return r.GitEnv(nil, args...)
}

// GitEnv is GitErr with extra environment variables.
func (r *Repo) GitEnv(env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = Env(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Line is Git with the trailing newline removed.
func (r *Repo) Line(args ...string) string {
	r.T.Helper()
	return strings.TrimRight(r.Git(args...), "\n")
}

// Path is the absolute path of rel in the work tree.
func (r *Repo) Path(rel string) string { return filepath.Join(r.Dir, rel) }

// Write writes content to rel, making parent directories.
func (r *Repo) Write(rel, content string) {
	r.T.Helper()
	p := r.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.T.Fatal(err)
	}
}

// Read returns rel's content; a missing file fails the test.
func (r *Repo) Read(rel string) string {
	r.T.Helper()
	b, err := os.ReadFile(r.Path(rel))
	if err != nil {
		r.T.Fatal(err)
	}
	return string(b)
}

// Commit stages everything and commits it.
func (r *Repo) Commit(msg string) string {
	r.T.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Line("rev-parse", "HEAD")
}

// Show returns the content of path in a commit or tree (`git cat-file`),
// and false when it has no such path.
func (r *Repo) Show(rev, path string) (string, bool) {
	out, err := r.GitErr("cat-file", "-p", rev+":"+path)
	if err != nil {
		return "", false
	}
	return out, true
}

// Entry is one path of a tree: its mode and blob (or commit) name.
type Entry struct {
	Mode, OID string
}

// Tree lists every path of a commit or tree (`git ls-tree -r -z`), names
// byte for byte.
func (r *Repo) Tree(rev string) map[string]Entry {
	r.T.Helper()
	out := r.Git("ls-tree", "-r", "-z", "--full-tree", rev)
	m := map[string]Entry{}
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			r.T.Fatalf("ls-tree: bad record %q", rec)
		}
		m[path] = Entry{Mode: f[0], OID: f[2]}
	}
	return m
}

// HashBlob is the blob name git gives content.
func (r *Repo) HashBlob(content string) string {
	r.T.Helper()
	cmd := exec.Command("git", "hash-object", "--stdin")
	cmd.Dir = r.Dir
	cmd.Env = Env()
	cmd.Stdin = strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		r.T.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Submodules makes the tree of issue 18's tests in r: a submodule lib
// (file l) holding a submodule in (file i), nested two deep, each added
// with `git submodule add` of a local repository and committed, and
// checked out. It returns lib's and in's work trees as Repos.
func (r *Repo) Submodules() (lib, in *Repo) {
	r.T.Helper()
	inner := New(r.T)
	inner.Write("i", "i1\n")
	inner.Commit("inner")
	mid := New(r.T)
	mid.Write("l", "l1\n")
	mid.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.Dir, "in")
	mid.Commit("lib")
	r.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", mid.Dir, "lib")
	r.Commit("add lib")
	r.Git("-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive")
	lib = At(r.T, filepath.Join(r.Dir, "lib"))
	in = At(r.T, filepath.Join(r.Dir, "lib", "in"))
	for _, s := range []*Repo{lib, in} {
		s.Git("config", "user.name", "Dev")
		s.Git("config", "user.email", "dev@example.invalid")
	}
	return lib, in
}

// Refs lists every ref and the object it names (symbolic refs resolved).
func (r *Repo) Refs() map[string]string {
	r.T.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(r.Git("for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if name, oid, ok := strings.Cut(l, " "); ok {
			m[name] = oid
		}
	}
	return m
}

// LooseObject is the path of the loose object file oid would have (or
// has) in the repository's object directory (`git rev-parse --git-path
// objects`): what a test removes or damages as a gc or a crash would.
func (r *Repo) LooseObject(oid string) string {
	r.T.Helper()
	objs := strings.TrimSpace(r.Git("rev-parse", "--git-path", "objects"))
	if !filepath.IsAbs(objs) {
		objs = filepath.Join(r.Dir, objs)
	}
	return filepath.Join(objs, oid[:2], oid[2:])
}

// ObjectFiles lists the files under the object directory (loose objects and
// packs), to show a step wrote no object.
func (r *Repo) ObjectFiles() []string {
	r.T.Helper()
	common := r.CommonDir()
	var files []string
	root := filepath.Join(common, "objects")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// fileState is what invariant 1 compares for one path: type and permission
// bits, size, mtime in nanoseconds, and a hash of the content (the link
// target for a symlink).
type fileState struct {
	Mode  fs.FileMode
	Size  int64
	MTime int64
	Hash  string
}

func (f fileState) String() string {
	return fmt.Sprintf("mode %v size %d mtime %d content %.12s", f.Mode, f.Size, f.MTime, f.Hash)
}

// State is everything a capture must leave alone (RFC 2 invariant 1):
// every file and directory of the work tree (ignored files and nested
// repositories included) with bytes and mtime; every file of the git
// directory except objects and the toolkit's own (index, sharedindex.*,
// HEAD, packed-refs, loose refs, reflogs, the stash, config, in-progress
// operation state); and every ref.
type State struct {
	Work map[string]fileState
	Git  map[string]fileState
	Refs map[string]string
	Head string
}

// Snapshot records the State of the repository now.
func (r *Repo) Snapshot() *State {
	r.T.Helper()
	common := r.CommonDir()
	s := &State{Work: map[string]fileState{}, Git: map[string]fileState{}, Refs: r.Refs()}
	s.Head, _ = r.GitErr("rev-parse", "-q", "--verify", "HEAD")
	topGit := filepath.Join(r.Dir, ".git")
	walk(r.T, r.Dir, s.Work, func(rel string, d fs.DirEntry) bool {
		return filepath.Join(r.Dir, rel) == topGit && d.IsDir()
	}, true)
	skip := func(rel string, d fs.DirEntry) bool {
		if !d.IsDir() {
			return false
		}
		switch rel {
		case "objects", "venom", "refs/venom", "logs/refs/venom":
			return true
		}
		// A submodule's git dir (modules/<name>/, nested as deep as the
		// submodules are) is a repository of the tree too: its objects,
		// checkpoint refs and scratch are the capture's (issue 18).
		if strings.HasPrefix(rel, "modules/") {
			for _, own := range []string{"objects", "venom", "refs/venom", "logs/refs/venom"} {
				if gd, ok := strings.CutSuffix(rel, "/"+own); ok {
					if _, err := os.Stat(filepath.Join(common, gd, "HEAD")); err == nil {
						return true
					}
				}
			}
		}
		// A linked worktree's own scratch directory.
		m, _ := filepath.Match("worktrees/*/venom", rel)
		return m
	}
	walk(r.T, common, s.Git, skip, false)
	if gd := r.GitDir; gd != common && !strings.HasPrefix(gd, common+string(filepath.Separator)) {
		walk(r.T, gd, s.Git, skip, false)
	}
	return s
}

func walk(t testing.TB, root string, into map[string]fileState, skip func(string, fs.DirEntry) bool, dirs bool) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && skip(rel, d) {
			return filepath.SkipDir
		}
		if d.IsDir() && !dirs {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		f := fileState{Mode: st.Mode(), Size: st.Size(), MTime: st.ModTime().UnixNano()}
		if strings.HasPrefix(d.Name(), "sharedindex.") {
			// git freshens a split index's shared index (utime, content
			// untouched) every time it reads the index, so that it does not
			// expire while in use: the user's own `git status` does it too
			// (read-cache.c, freshen_shared_index). Only its bytes count.
			f.MTime = 0
		}
		switch {
		case st.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			f.Hash = hex.EncodeToString(h[:])
		case st.Mode()&fs.ModeSymlink != 0:
			f.Hash, _ = os.Readlink(p)
		case st.IsDir():
			f.Size = 0 // directory sizes differ across filesystems and mean nothing here
		}
		into[root+"\x00"+rel] = f
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
}

// AssertUnchanged fails the test for every difference between before and
// the repository now, except refs the capture may add under
// refs/venom/checkpoints/ (RFC 2 invariant 1: "It adds objects and one
// ref"). It returns the refs that were added.
func (r *Repo) AssertUnchanged(before *State) []string {
	r.T.Helper()
	after := r.Snapshot()
	diffFiles(r.T, "work tree", before.Work, after.Work)
	diffFiles(r.T, "git directory", before.Git, after.Git)
	if before.Head != after.Head {
		r.T.Errorf("HEAD moved: %q -> %q", before.Head, after.Head)
	}
	var added []string
	for name, oid := range before.Refs {
		if after.Refs[name] != oid {
			r.T.Errorf("ref %s changed: %s -> %q", name, oid, after.Refs[name])
		}
	}
	for name := range after.Refs {
		if _, ok := before.Refs[name]; ok {
			continue
		}
		if !strings.HasPrefix(name, "refs/venom/checkpoints/") {
			r.T.Errorf("ref %s was created", name)
			continue
		}
		added = append(added, name)
	}
	sort.Strings(added)
	return added
}

func diffFiles(t testing.TB, where string, before, after map[string]fileState) {
	t.Helper()
	name := func(k string) string {
		root, rel, _ := strings.Cut(k, "\x00")
		return fmt.Sprintf("%q in %s", rel, root)
	}
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, inB := before[k]
		a, inA := after[k]
		switch {
		case !inA:
			t.Errorf("%s: %s was removed (was %v)", where, name(k), b)
		case !inB:
			t.Errorf("%s: %s was created (%v)", where, name(k), a)
		case a != b:
			t.Errorf("%s: %s changed:\n  before %v\n  after  %v", where, name(k), b, a)
		}
	}
}

// NonUTF8Names reports whether the filesystem under dir takes file names
// that are not UTF-8 (Linux filesystems do; APFS refuses them), for tests
// of such names to skip where they cannot exist.
func NonUTF8Names(t testing.TB, dir string) bool {
	t.Helper()
	p := filepath.Join(dir, "probe-\xff\xfe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Logf("this filesystem refuses names that are not UTF-8: %v", err)
		return false
	}
	os.Remove(p)
	return true
}

// Build compiles the named commands of this module (e.g.
// "git-venom-checkpoint") into a temporary directory and returns it, for
// tests that spawn the binaries as separate processes. They are built as
// `make build` builds them (static, stripped), so benchmarks time what is
// installed.
func Build(t testing.TB, cmds ...string) string {
	t.Helper()
	Setup()
	dir := t.TempDir()
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", dir + string(filepath.Separator)}
	for _, c := range cmds {
		args = append(args, "github.com/venom-org/git-venom/cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}
