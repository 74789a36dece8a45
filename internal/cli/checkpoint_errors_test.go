package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// These tests run cli.Main in the test process from a chosen directory, so
// they change the working directory (t.Chdir) and cannot be parallel.

type cliResult struct {
	code           int
	stdout, stderr string
	errCode        string
	errData        map[string]any
}

func runCheckpoint(t *testing.T, dir string, args ...string) cliResult {
	t.Helper()
	gittest.Setup()
	t.Chdir(dir)
	var out, errw bytes.Buffer
	code := cli.Main("checkpoint", args, strings.NewReader(""), &out, &errw)
	res := cliResult{code: code, stdout: out.String(), stderr: errw.String()}
	var obj struct {
		Error *struct {
			Code string         `json:"code"`
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(out.Bytes(), &obj) == nil && obj.Error != nil {
		res.errCode, res.errData = obj.Error.Code, obj.Error.Data
	}
	return res
}

func TestCheckpointOutsideRepo(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	res := runCheckpoint(t, dir, "--agent", "a1", "--json")
	if res.code != 10 || res.errCode != "unsupported.checkpoint_no_repo" {
		t.Errorf("exit %d code %q:\n%s%s", res.code, res.errCode, res.stdout, res.stderr)
	}
	res = runCheckpoint(t, dir, "--agent", "a1")
	if res.code != 10 || !strings.HasPrefix(res.stderr, "error: ") || res.stdout != "" {
		t.Errorf("human: exit %d\nstdout %q\nstderr %q", res.code, res.stdout, res.stderr)
	}
}

func TestCheckpointBareRepo(t *testing.T) {
	r := gittest.New(t)
	r.Git("init", "-q", "--bare", "b.git")
	res := runCheckpoint(t, r.Path("b.git"), "--agent", "a1")
	if res.code != 10 || !strings.Contains(res.stderr, "bare repository") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
	// Inside a non-bare repository's .git: no tree, but not called bare.
	res = runCheckpoint(t, r.GitDir, "--agent", "a1")
	if res.code != 10 || strings.Contains(res.stderr, "bare") {
		t.Errorf("inside .git: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestBR18BadAgent: a bad agent id is invalid_params.agent, exit 2.
func TestBR18BadAgent(t *testing.T) {
	r := gittest.New(t)
	for _, id := range []string{"bad/../name", "Upper", "a b"} {
		res := runCheckpoint(t, r.Dir, "--agent", id, "--json")
		if res.code != 2 || res.errCode != "invalid_params.agent" {
			t.Errorf("agent %q: exit %d code %q", id, res.code, res.errCode)
		}
	}
	if refs := r.Git("for-each-ref", "refs/venom"); refs != "" {
		t.Errorf("refs made: %s", refs)
	}
}

// TestBR52FromSubdirectory: run from a subdirectory, the whole worktree is
// captured and the human output says so.
func TestBR52FromSubdirectory(t *testing.T) {
	r := gittest.New(t)
	r.Write("packages/web/index.ts", "x\n")
	r.Write("top.txt", "t\n")
	r.Commit("init")
	r.Write("top.txt", "edited\n")
	res := runCheckpoint(t, r.Path("packages/web"), "--agent", "a1")
	if res.code != 0 || !strings.Contains(res.stdout, "the whole tree "+r.Dir+" was captured") {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got, _ := r.Show("refs/venom/checkpoints/a1/1", "top.txt"); got != "edited\n" {
		t.Errorf("top.txt = %q", got)
	}
	res = runCheckpoint(t, r.Path("packages"), "--agent", "a1", "--json")
	var out struct {
		Checkpoint string `json:"checkpoint"`
		Reused     bool   `json:"reused"`
		Repos      []struct {
			Path string `json:"path"`
		} `json:"repos"`
	}
	if json.Unmarshal([]byte(res.stdout), &out) != nil || out.Checkpoint != "k1" || !out.Reused || out.Repos[0].Path != r.Dir {
		t.Errorf("second capture: %s", res.stdout)
	}
}

// TestCheckpointTimeoutExit: venom.checkpoints.timeout passed is
// timeout.checkpoint, exit 7, with a checkpoint.failed record.
func TestCheckpointTimeoutExit(t *testing.T) {
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("init")
	r.Git("config", "venom.checkpoints.timeout", "1ms")
	res := runCheckpoint(t, r.Dir, "--agent", "a1", "--reason", "turn_start", "--json")
	if res.code != 7 || res.errCode != "timeout.checkpoint" {
		t.Fatalf("exit %d code %q:\n%s%s", res.code, res.errCode, res.stdout, res.stderr)
	}
	l, err := journal.Open(r.GitDir)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := l.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, rec := range recs {
		if rec.Type == journal.TypeCheckpointFailed {
			var f journal.Failed
			rec.Decode(&f)
			failed = append(failed, f.Code+"/"+f.Reason)
		}
	}
	if strings.Join(failed, " ") != "timeout.checkpoint/turn_start" {
		t.Errorf("checkpoint.failed records: %v", failed)
	}
	if refs := r.Git("for-each-ref", "refs/venom"); refs != "" {
		t.Errorf("refs made: %s", refs)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "venom", "tmp")); err == nil {
		ents, _ := os.ReadDir(filepath.Join(r.GitDir, "venom", "tmp"))
		if len(ents) > 0 {
			t.Errorf("private index left behind: %v", ents)
		}
	}
}

// TestTraceCPU: with GIT_VENOM_TRACE set, a command's last stderr line is
// its own CPU and its git children's (getrusage), both numbers, the
// children's more than nothing since a capture runs git.
func TestTraceCPU(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	t.Setenv("GIT_VENOM_TRACE", "1")
	res := runCheckpoint(t, r.Dir, "--agent", "tracecpu")
	if res.code != 0 {
		t.Fatalf("checkpoint: exit %d: %s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	last := lines[len(lines)-1]
	var own, kids float64
	if n, err := fmt.Sscanf(last, "venom trace: CPU: %f ms venom, %f ms its git children", &own, &kids); n != 2 || err != nil {
		t.Fatalf("the last trace line is %q, not the CPU line (%v)", last, err)
	}
	if own < 0 || kids <= 0 {
		t.Errorf("CPU line %q: venom %v ms, children %v ms", last, own, kids)
	}
	// Each git child's own CPU line follows its start line, the same
	// command named, and they add up to no more than the children's
	// total (which also counts the test's own git children before).
	started, ended := map[string]int{}, map[string]int{}
	var sum float64
	for _, l := range lines {
		if args, ok := strings.CutPrefix(l, "venom trace: git "); ok {
			started[plumbing.Subcommand(strings.Fields(args))]++
			continue
		}
		rest, ok := strings.CutPrefix(l, "venom trace: CPU of git ")
		if !ok {
			continue
		}
		name, v, _ := strings.Cut(rest, ": ")
		var ms float64
		if n, err := fmt.Sscanf(v, "%f ms", &ms); n != 1 || err != nil || ms < 0 {
			t.Fatalf("child CPU line %q (%v)", l, err)
		}
		if ended[name]++; ended[name] > started[name] && name != "rev-parse" && name != "config" {
			t.Errorf("%q ends a git %s that no trace line started", l, name)
		}
		sum += ms
	}
	// Discovery (rev-parse) and the settings (config) start before there
	// is a repository to trace them: their ends are the only lines.
	if ended["rev-parse"] < started["rev-parse"]+1 || ended["config"] != started["config"]+1 {
		t.Errorf("discovery and settings children: started %v, ended %v", started, ended)
	}
	for name, n := range started {
		if ended[name] < n {
			t.Errorf("git %s: %d started, %d CPU lines", name, n, ended[name])
		}
	}
	if sum <= 0 || sum > kids+0.01*float64(len(lines)) {
		t.Errorf("children's CPU lines add up to %.2f ms, their total is %.2f ms", sum, kids)
	}
}
