package rollback_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
)

// slowTree is a tree whose rollback to k1 rewrites n files through a
// smudge filter that takes a few milliseconds a file, so the writes last
// long enough to be interrupted (or written into) at random moments. The
// filter creates the file started (outside the tree) when it first runs:
// the rollback's first write has begun. It returns the fixture, the
// choices of the rollback, the planned paths and that file.
type slowTree struct {
	f       *fixture
	args    []string
	paths   []string
	started string
	before  map[string]entry // the files as S has them
}

func newSlowTree(t *testing.T, n int, guarded bool) *slowTree {
	t.Helper()
	f := newFixture(t, guarded)
	r := f.r
	aux := t.TempDir()
	started := filepath.Join(aux, "started")
	smudge := filepath.Join(aux, "smudge.sh")
	script := "#!/bin/sh\n: > '" + started + "'\nsleep 0.004\nexec cat\n"
	if err := os.WriteFile(smudge, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "filter.slow.clean", "cat")
	r.Git("config", "filter.slow.smudge", smudge)
	r.Write(".gitattributes", "*.txt filter=slow\n")
	var paths []string
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		paths = append(paths, p)
		r.Write(p, fmt.Sprintf("one %d\n", i))
	}
	r.Commit("init")
	f.take(checkpoint.ReasonTurnStart) // k1
	for i, p := range paths {
		r.Write(p, fmt.Sprintf("two %d\n", i))
	}
	f.take(checkpoint.ReasonTurnEnd) // k2
	args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
	if guarded {
		args = append(args, "--outside", "overwrite")
	}
	return &slowTree{f: f, args: args, paths: paths, started: started, before: files(disk(t, r.Dir))}
}

// start plans the rollback and starts its real call, and waits for its
// first write (the smudge filter's first run).
func (s *slowTree) start(t *testing.T, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	p := runBin(t, s.f.r.Dir, "git-venom-plan", nil, s.args...)
	plan := parseOut(t, p)
	if plan.Plan == "" {
		t.Fatalf("plan: exit %d\n%s%s", p.exit, p.stdout, p.stderr)
	}
	cmd := exec.Command(filepath.Join(binDir, "git-venom-rollback"), append(append([]string(nil), s.args...), "--plan", plan.Plan)...)
	cmd.Dir = s.f.r.Dir
	cmd.Env = gittest.Env(env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(s.started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the rollback never wrote a file:\n%s", out.String())
		}
	}
	return cmd, &out
}

// fileStamp is what a write to a path changes: its type, size, mtime and
// inode.
type fileStamp struct {
	mode  fs.FileMode
	size  int64
	mtime int64
	ino   uint64
}

// stamps lstats every path under root but .git.
func stamps(t testing.TB, root string) map[string]fileStamp {
	t.Helper()
	m := map[string]fileStamp{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking: the next scan says so
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		var ino uint64
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			ino = uint64(sys.Ino)
		}
		m[filepath.ToSlash(rel)] = fileStamp{st.Mode().Type(), st.Size(), st.ModTime().UnixNano(), ino}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// writesAfter watches root for a while after a death: the paths whose
// stamp changed since the scan taken at once, and those created or
// removed.
func writesAfter(t testing.TB, root string) []string {
	t.Helper()
	at := stamps(t, root)
	changed := map[string]bool{}
	for _, wait := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond} {
		time.Sleep(wait)
		now := stamps(t, root)
		for p, s := range now {
			if at[p] != s {
				changed[p] = true
			}
		}
		for p := range at {
			if _, ok := now[p]; !ok {
				changed[p] = true
			}
		}
	}
	var out []string
	for p := range changed {
		out = append(out, p)
	}
	return out
}

// TestKilledRollbackWritesNothingAfterDeath kills the real call with
// SIGKILL, or hangs it up with SIGHUP, at random moments while git writes
// its files, and then watches the tree: once the rollback is dead (or,
// after a hang-up, has put the tree back and exited), nothing may write
// to it (issue 13 item 1). A git child left running would go on writing
// the paths it was given over what a person saves after the kill.
func TestKilledRollbackWritesNothingAfterDeath(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP} {
		for try := 0; try < 2; try++ {
			t.Run(fmt.Sprintf("%v/%d", sig, try), func(t *testing.T) {
				t.Parallel()
				seed := time.Now().UnixNano()
				rng := rand.New(rand.NewSource(seed))
				s := newSlowTree(t, 150, false)
				cmd, out := s.start(t)
				delay := time.Duration(rng.Intn(400)) * time.Millisecond
				time.Sleep(delay)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				err := cmd.Wait()
				after := writesAfter(t, s.f.r.Dir)
				t.Logf("seed %d: %v %v after the first write; %d path(s) written after the end", seed, sig, delay, len(after))
				if len(after) > 0 {
					t.Errorf("%d path(s) were written after the rollback died (%v %v after its first write), e.g. %v\n%s",
						len(after), sig, delay, after[:min(len(after), 5)], out)
				}
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if sig == syscall.SIGHUP && ws.Signaled() {
					t.Errorf("a hang-up killed the rollback (%v) instead of stopping it: %v", ws.Signal(), err)
				}
				if sig == syscall.SIGHUP {
					// Stopped as by SIGTERM: the way back ran to its end.
					if !strings.Contains(out.String(), `"code":"failed.rollback_undone"`) {
						t.Errorf("a hung-up rollback does not say it was undone:\n%s", out)
					}
					if d := diffEntries(s.before, files(disk(t, s.f.r.Dir))); d != "" {
						t.Errorf("after the hang-up the tree is not as it was:\n%s", d)
					}
				}
			})
		}
	}
}
