package harness_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
)

// Hook latency, as a harness sees it: `git-venom-hook claude-code` started
// as the installed command line runs it (Harness.Command), event on stdin,
// until it exits. Run with
//
//	go test -run '^$' -bench Hook -benchtime 100x ./harness/
//
// BenchmarkHookEdit is an edit-record event (target: well under 15 ms).
// BenchmarkHookTurnStart is a prompt-submit event that captures a changed
// tree; BenchmarkCheckpointCommand is the same capture by `git
// venom-checkpoint --reason turn_start`, and BenchmarkTakeInProcess the
// capture alone, without a process: the hook's own cost (target: 10 ms) is
// its difference from the first, and from the second what a hook adds
// over the command a person would run.
// The repository has benchFiles files; log=N pre-fills the log with N
// records, since every event replays it.

const benchFiles = 500

func benchRepo(b *testing.B, logRecords int) (*gittest.Repo, []string) {
	b.Helper()
	repo := gittest.New(b)
	for i := 0; i < benchFiles; i++ {
		repo.Write(fmt.Sprintf("pkg%02d/file%03d.go", i%20, i), fmt.Sprintf("package p\n\nvar v%d = %d\n", i, i))
	}
	repo.Commit("init")
	lg, err := journal.Open(repo.GitDir)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < logRecords; i += 100 {
		var es []journal.Entry
		for j := 0; j < 100; j++ {
			es = append(es, journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "other", Paths: []string{fmt.Sprintf("pkg00/file%03d.go", j)}, Path: repo.Dir}})
		}
		if _, err := lg.Append(es...); err != nil {
			b.Fatal(err)
		}
	}
	bin := gittest.Build(b, "git-venom-hook", "git-venom-checkpoint")
	env := hookEnv("PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"))
	var clean []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "VENOM_TEST_HOOK_MAIN=") {
			clean = append(clean, kv)
		}
	}
	return repo, clean
}

// runHook runs the hook once and returns the CPU time it and its git
// children used (user plus system: wait4's rusage counts the children a
// process waited for), the figure to compare on a loaded machine.
func runHook(b *testing.B, repo *gittest.Repo, env []string, input []byte) time.Duration {
	// The binary on env's PATH, as the harness's shell finds it.
	var bin string
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			bin = filepath.Join(filepath.SplitList(path)[0], "git-venom-hook")
		}
	}
	cmd := exec.Command(bin, "claude-code")
	cmd.Dir = repo.Dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || out.Len() > 0 || errb.Len() > 0 {
		b.Fatalf("hook: %v stdout %q stderr %q", err, out.String(), errb.String())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// reportCPU adds the mean CPU time per event to the benchmark's line.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

func BenchmarkHookEdit(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			repo, env := benchRepo(b, n)
			vars := map[string]string{"CWD": repo.Dir}
			runHook(b, repo, env, load(b, "claude-code", "UserPromptSubmit.json", vars))
			in := load(b, "claude-code", "PostToolUse-Write.json", vars)
			b.ResetTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				cpu += runHook(b, repo, env, in)
			}
			reportCPU(b, cpu)
		})
	}
}

func BenchmarkHookTurnStart(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			repo, env := benchRepo(b, n)
			in := load(b, "claude-code", "UserPromptSubmit.json", map[string]string{"CWD": repo.Dir})
			b.ResetTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				repo.Write("pkg00/file000.go", fmt.Sprintf("package p\n\nvar v0 = %d\n", i))
				b.StartTimer()
				cpu += runHook(b, repo, env, in)
			}
			reportCPU(b, cpu)
		})
	}
}

func BenchmarkCheckpointCommand(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			repo, env := benchRepo(b, n)
			b.ResetTimer()
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				repo.Write("pkg00/file000.go", fmt.Sprintf("package p\n\nvar v0 = %d\n", i))
				b.StartTimer()
				cmd := exec.Command("git", "venom-checkpoint", "--agent", "bench", "--reason", "turn_start", "--json")
				cmd.Dir, cmd.Env = repo.Dir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			reportCPU(b, cpu)
		})
	}
}

func BenchmarkTakeInProcess(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			repo, _ := benchRepo(b, n)
			tr, err := checkpoint.OpenTree(context.Background(), repo.Dir)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				repo.Write("pkg00/file000.go", fmt.Sprintf("package p\n\nvar v0 = %d\n", i))
				b.StartTimer()
				if _, err := tr.Take(context.Background(), checkpoint.TakeOptions{Agent: "bench", Reason: checkpoint.ReasonTurnStart}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGitVersion is the floor: starting git itself, which every hook
// pays for each of git-venom-hook's own git children (two for an edit).
func BenchmarkGitVersion(b *testing.B) {
	gittest.Setup()
	dir := filepath.Join(b.TempDir())
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "--version")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
