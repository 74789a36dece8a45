package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// tree is a work tree the bench owns and may change: the generated tree, or
// a local clone of the repository the user named. The user's repository
// itself is only ever read (by `git clone --local`).
type tree struct {
	title string // for the table header
	dir   string // top of the work tree, inside the cache dir
	files int    // tracked paths
	subs  int    // submodules s00.. (withSubmodules); 0 for the other trees
	small bool   // the small generated tree (-small): smallCases only
}

// ownedMark is written into the git dir of every tree the bench made; no
// command that changes files or refs runs in a tree without it.
const ownedMark = "venom-bench-owned"

// readyMark says the tree was made completely (an interrupted generation
// or clone is thrown away and made again).
const readyMark = "venom-bench-ready"

// benchEnv is the environment of every git child the bench starts, timed or
// not: the caller's environment without any GIT_* variable (a hook or
// `make` run from `rebase -x` may export GIT_DIR or GIT_INDEX_FILE; a
// GIT_VENOM_* test or trace switch would change what is measured), with
// the bench's binaries first on PATH, and with system and global git config
// replaced by a fixed file so numbers do not depend on who runs them (a
// global core.fsmonitor or core.untrackedCache would speed up the status
// baseline only: venom pins both off).
func benchEnv(bin, globalConfig string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "LC_ALL", k == "LANG":
			continue
		case strings.HasPrefix(k, "GIT_"), strings.HasPrefix(k, "VENOM_TEST_"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+globalConfig,
		"GIT_TERMINAL_PROMPT=0",
	)
	return env
}

var childEnv []string

// git runs git in dir (untimed helper) and returns its stdout.
func git(dir string, args ...string) ([]byte, error) {
	return gitIn(dir, nil, args...)
}

func gitIn(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = childEnv
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// --json commands put their error object on stdout.
		return out.Bytes(), fmt.Errorf("git %s (in %s): %v: %s%.500s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()), out.Bytes())
	}
	return out.Bytes(), nil
}

// mustOwn refuses to change a tree the bench did not make.
func mustOwn(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, ".git", ownedMark)); err != nil {
		return fmt.Errorf("refusing to change %s: it was not made by venom-bench", dir)
	}
	return nil
}

// generated returns the cached generated tree of n files, making it on
// first use. Shape (see README): 20 files a directory, three levels deep,
// sizes 64 B-6 KiB (about 1 KiB on average), 1% executable, a few
// symlinks, and an ignored build/ directory with 500 files that status
// must not descend into. Contents are fixed by a seed, so every run and
// every machine gets the same tree.
func generated(cache string, n int) (*tree, error) {
	dir := filepath.Join(cache, fmt.Sprintf("gen-%d-v1", n))
	t := &tree{title: fmt.Sprintf("generated, %d files", n), dir: dir, files: n}
	if _, err := os.Stat(filepath.Join(dir, ".git", readyMark)); err == nil {
		return t, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "venom-bench: generating %d files in %s (once; later runs reuse it)\n", n, dir)
	t0 := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := git(dir, "init", "-q"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", ownedMark), []byte("made by git-venom bench/run.sh; safe to delete\n"), 0o644); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog func return if else for range struct int string error nil package import var const type map slice chan go defer select case switch")
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		leaf := i / 20
		exts := []string{"go", "c", "h", "md", "txt", "json", "js", "py"}
		p := filepath.Join(fmt.Sprintf("d%02d", leaf/500), fmt.Sprintf("m%02d", (leaf/20)%25),
			fmt.Sprintf("l%02d", leaf%20), fmt.Sprintf("f%02d.%s", i%20, exts[i%len(exts)]))
		full := filepath.Join(dir, p)
		if i%20 == 0 {
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return nil, err
			}
		}
		if i%10007 == 5 {
			// A symlink to a sibling: modes and symlinks are part of a real tree.
			if err := os.Symlink(fmt.Sprintf("f%02d.%s", (i+1)%20, exts[(i+1)%len(exts)]), full); err != nil {
				return nil, err
			}
			continue
		}
		size := 64 + int(rng.ExpFloat64()*900)
		if size > 6144 {
			size = 6144
		}
		buf.Reset()
		fmt.Fprintf(&buf, "// %s\n", p)
		for buf.Len() < size {
			buf.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(10) == 0 {
				buf.WriteByte('\n')
			} else {
				buf.WriteByte(' ')
			}
		}
		buf.WriteByte('\n')
		mode := os.FileMode(0o644)
		if i%100 == 7 {
			mode = 0o755
		}
		if err := os.WriteFile(full, buf.Bytes(), mode); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/build/\n*.o\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "build", "obj"), 0o755); err != nil {
		return nil, err
	}
	for i := 0; i < 500; i++ {
		if err := os.WriteFile(filepath.Join(dir, "build", "obj", fmt.Sprintf("o%03d.o", i)), []byte(strings.Repeat("x", 256)), 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := git(dir, "config", "gc.auto", "0"); err != nil {
		return nil, err
	}
	if _, err := git(dir, "add", "-A"); err != nil {
		return nil, err
	}
	if _, err := git(dir, "-c", "user.name=venom-bench", "-c", "user.email=bench@localhost",
		"commit", "-q", "--no-verify", "-m", "venom-bench generated tree"); err != nil {
		return nil, err
	}
	// A real repository keeps its objects packed; `add` left 100k loose.
	if _, err := git(dir, "gc", "-q", "--prune=now"); err != nil {
		return nil, err
	}
	if err := freshen(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", readyMark), nil, 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "venom-bench: generated in %s\n", time.Since(t0).Round(time.Second))
	return t, nil
}

// cloned returns a local clone of the repository at src, in the cache,
// made again whenever src's HEAD moved. src is only read.
func cloned(cache, src string) (*tree, error) {
	top, err := git(src, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("REPO=%s: %w", src, err)
	}
	srcTop := strings.TrimSpace(string(top))
	head, err := git(srcTop, "rev-parse", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("REPO=%s has no commit to clone: %w", srcTop, err)
	}
	h := sha256.Sum256([]byte(srcTop))
	dir := filepath.Join(cache, "repo-"+filepath.Base(srcTop)+"-"+hex.EncodeToString(h[:6]))
	t := &tree{title: srcTop + " (local clone at " + strings.TrimSpace(string(head))[:12] + ")", dir: dir}
	ready := filepath.Join(dir, ".git", readyMark)
	if b, err := os.ReadFile(ready); err == nil && string(b) == string(head) {
		return t, t.count()
	}
	if _, err := os.Stat(dir); err == nil {
		if err := mustOwn(dir); err != nil {
			return nil, err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "venom-bench: cloning %s into %s (reused while its HEAD stays)\n", srcTop, dir)
	if _, err := git(cache, "clone", "--local", "--quiet", "--no-recurse-submodules", srcTop, dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", ownedMark), []byte("made by git-venom bench/run.sh; safe to delete\n"), 0o644); err != nil {
		return nil, err
	}
	if _, err := git(dir, "config", "gc.auto", "0"); err != nil {
		return nil, err
	}
	// The clone is on the branch src is on; a detached src gives a clone
	// at another commit, so put it where src is.
	if got, err := git(dir, "rev-parse", "HEAD"); err != nil || string(got) != string(head) {
		if _, err := git(dir, "checkout", "-q", "--detach", strings.TrimSpace(string(head))); err != nil {
			return nil, err
		}
	}
	if err := freshen(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(ready, head, 0o644); err != nil {
		return nil, err
	}
	return t, t.count()
}

func (t *tree) count() error {
	out, err := git(t.dir, "ls-files", "-z")
	if err != nil {
		return err
	}
	t.files = bytes.Count(out, []byte{0})
	t.title = fmt.Sprintf("%s, %d files", t.title, t.files)
	return nil
}

// freshen makes the index fresh as a user's index normally is: written
// more than a second after the newest file, so no entry is "racily clean"
// and no git command has to re-read file contents to trust its stat data.
// A tree written and indexed in the same second would make both sides of
// every comparison re-hash those files.
func freshen(dir string) error {
	if err := mustOwn(dir); err != nil {
		return err
	}
	time.Sleep(1100 * time.Millisecond)
	_, err := git(dir, "update-index", "-q", "--refresh", "--force-write-index")
	return err
}

// reset puts an owned tree back to a clean, committed state with no venom
// refs, log or caches and no refs of the bench's own, so every run (and
// every row that cleans up after itself, dropLoose) starts alike: an
// interrupted run may have left modified files, checkpoints and loose
// objects behind.
func (t *tree) reset() error {
	if err := mustOwn(t.dir); err != nil {
		return err
	}
	refs, err := git(t.dir, "for-each-ref", "--format=delete %(refname)", "refs/venom/", "refs/venom-bench/")
	if err != nil {
		return err
	}
	if len(refs) > 0 {
		if _, err := gitIn(t.dir, refs, "update-ref", "--stdin"); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(t.dir, ".git", "venom")); err != nil {
		return err
	}
	st, err := git(t.dir, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		return err
	}
	dirty := len(st) > 0
	if dirty {
		fmt.Fprintf(os.Stderr, "venom-bench: %s was left dirty by an earlier run; resetting it\n", t.dir)
		if _, err := git(t.dir, "reset", "-q", "--hard"); err != nil {
			return err
		}
		if _, err := git(t.dir, "clean", "-q", "-f", "-d"); err != nil {
			return err
		}
	}
	// Loose objects from earlier runs (a modified-files run writes 1,000
	// blobs a side, a new-files run 50,000) slowly change object lookups.
	// With the refs above gone nothing reaches them: drop them now and then.
	if cnt, err := git(t.dir, "count-objects"); err == nil {
		if f := strings.Fields(string(cnt)); len(f) > 0 {
			if n, _ := strconv.Atoi(f[0]); n > 30000 {
				fmt.Fprintf(os.Stderr, "venom-bench: dropping %d loose objects left by earlier runs (git prune)\n", n)
				if _, err := git(t.dir, "prune", "--expire=now"); err != nil {
					return err
				}
			}
		}
	}
	if dirty {
		return freshen(t.dir)
	}
	return nil
}

// dropLoose is the teardown of a row that wrote tens of thousands of
// objects: the tree is reset (its checkpoints dropped) and the objects no
// ref reaches are pruned, so the rows after it are not measured in a
// store of 100,000s of loose objects.
func (t *tree) dropLoose() error { return t.reset() }
