package harness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/venom-org/git-venom/harness"
	"github.com/venom-org/git-venom/internal/rfcerr"
)

// Settings files that already hold the person's own hooks and keys, in
// the two-space layout the harnesses write, so a round trip can be
// compared byte for byte.
var existing = map[string]struct{ file, text string }{
	"claude-code": {".claude/settings.local.json", `{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./scripts/log-bash.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "model": "opus"
}
`},
	"codex": {".codex/hooks.json", `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/.codex/policy.py",
            "timeout": 30
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send codex done"
          }
        ]
      }
    ]
  }
}
`},
	"gemini": {".gemini/settings.json", `{
  "general": {
    "vimMode": true
  },
  "tools": {
    "enableHooks": true
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [
          {
            "name": "audit",
            "type": "command",
            "command": "./hooks/audit.sh",
            "timeout": 5000
          }
        ]
      }
    ],
    "AfterAgent": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "echo '{}'"
          }
        ]
      }
    ]
  }
}
`},
	"cursor": {".cursor/hooks.json", `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {
        "command": "./hooks/format.sh"
      }
    ],
    "beforeShellExecution": [
      {
        "command": "./hooks/audit.sh"
      }
    ]
  }
}
`},
}

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s is not JSON after the change: %v\n%s", p, err, data)
	}
	return m
}

// commands lists "event[matcher]=command" for every handler in a nested
// or flat hooks object, in file order.
func commands(m map[string]any, events ...string) []string {
	hooks, _ := m["hooks"].(map[string]any)
	var out []string
	for _, ev := range events {
		list, _ := hooks[ev].([]any)
		for _, g := range list {
			gm := g.(map[string]any)
			if hs, ok := gm["hooks"].([]any); ok {
				for _, h := range hs {
					matcher, _ := gm["matcher"].(string)
					out = append(out, ev+"["+matcher+"]="+h.(map[string]any)["command"].(string))
				}
			} else {
				out = append(out, ev+"="+gm["command"].(string))
			}
		}
	}
	return out
}

func TestInstallRoundTripKeepsOtherHooks(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"claude-code": {"SessionStart[]=git-venom-hook claude-code", "UserPromptSubmit[]=git-venom-hook claude-code",
			"PostToolUse[Bash]=./scripts/log-bash.sh", "PostToolUse[Write|Edit|MultiEdit|NotebookEdit]=git-venom-hook claude-code",
			"Stop[]=say done", "Stop[]=git-venom-hook claude-code", "StopFailure[]=git-venom-hook claude-code", "SessionEnd[]=git-venom-hook claude-code",
			"PreToolUse[Bash|PowerShell]=git-venom-hook claude-code"},
		"codex": {"SessionStart[]=git-venom-hook codex", "UserPromptSubmit[]=git-venom-hook codex", "PreToolUse[Bash]=python3 ~/.codex/policy.py",
			"PreToolUse[Bash]=git-venom-hook codex",
			"PostToolUse[apply_patch]=git-venom-hook codex", "Stop[]=notify-send codex done", "Stop[]=git-venom-hook codex"},
		"gemini": {"SessionStart[]=git-venom-hook gemini", "BeforeAgent[]=git-venom-hook gemini", "BeforeTool[run_shell_command]=./hooks/audit.sh",
			"BeforeTool[run_shell_command]=git-venom-hook gemini", "AfterTool[write_file|replace]=git-venom-hook gemini", "AfterAgent[]=echo '{}'", "AfterAgent[]=git-venom-hook gemini", "SessionEnd[]=git-venom-hook gemini"},
		"cursor": {"beforeSubmitPrompt=git-venom-hook cursor", "afterFileEdit=./hooks/format.sh", "afterFileEdit=git-venom-hook cursor",
			"beforeShellExecution=./hooks/audit.sh", "stop=git-venom-hook cursor"},
	}
	order := map[string][]string{
		"claude-code": {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "StopFailure", "SessionEnd", "PreToolUse"},
		"codex":       {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"},
		"gemini":      {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"},
		"cursor":      {"beforeSubmitPrompt", "afterFileEdit", "beforeShellExecution", "stop"},
	}
	for _, name := range harness.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h, _ := harness.Lookup(name)
			root := t.TempDir()
			ex := existing[name]
			p := filepath.Join(root, ex.file)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(ex.text), 0o600); err != nil {
				t.Fatal(err)
			}
			o := harness.InstallOptions{Root: root, Home: t.TempDir()}
			c, err := h.Install(o)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Changed || c.File != p {
				t.Fatalf("install: %+v", c)
			}
			m := readJSON(t, p)
			if got := commands(m, order[name]...); !reflect.DeepEqual(got, want[name]) {
				t.Errorf("hooks after install:\n got %q\nwant %q", got, want[name])
			}
			after, _ := os.ReadFile(p)
			for _, k := range []string{`"permissions"`, `"general"`, `"tools"`, `"version"`, `"model"`} {
				if strings.Contains(ex.text, k) && strings.Index(string(after), k) < 0 {
					t.Errorf("lost %s", k)
				}
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's own 0600", st.Mode().Perm())
			}

			// Installing twice changes nothing.
			c2, err := h.Install(o)
			if err != nil || c2.Changed {
				t.Fatalf("second install: %+v, %v", c2, err)
			}
			if again, _ := os.ReadFile(p); string(again) != string(after) {
				t.Errorf("second install rewrote the file")
			}

			// Uninstall removes exactly our entries.
			u, err := h.Uninstall(o)
			if err != nil || !u.Changed || len(u.Entries) != len(c.Entries) {
				t.Fatalf("uninstall: %+v, %v (installed %d)", u, err, len(c.Entries))
			}
			if back, _ := os.ReadFile(p); string(back) != ex.text {
				t.Errorf("uninstall did not restore the file:\n%s\nwant\n%s", back, ex.text)
			}
			if u2, err := h.Uninstall(o); err != nil || u2.Changed {
				t.Errorf("second uninstall: %+v, %v", u2, err)
			}
		})
	}
}

// Our own entry already in the file (an older install with another
// timeout, a copy under a stale matcher, a duplicate) is updated in place,
// not added again.
func TestInstallUpdatesOwnEntries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := filepath.Join(root, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"hooks":{
 "Stop":[{"hooks":[{"type":"command","command":"say done"},{"type":"command","command":"git venom-hook claude-code","timeout":5,"statusMessage":"checkpoint"}]},
         {"hooks":[{"type":"command","command":"git venom-hook claude"}]}],
 "PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"git venom-hook claude-code"}]}],
 "UserPromptSubmit":[{"hooks":[{"type":"command","command":"git venom-hook claude-code --agent me"}]}]}}`), 0o644)
	h, _ := harness.Lookup("claude-code")
	o := harness.InstallOptions{Scope: "project", Root: root, Home: t.TempDir(), CaptureTimeout: 60 * time.Second}
	if _, err := h.Install(o); err != nil {
		t.Fatal(err)
	}
	m := readJSON(t, p)
	stop := m["hooks"].(map[string]any)["Stop"].([]any)
	if len(stop) != 1 {
		t.Fatalf("Stop groups %v", stop)
	}
	ours := stop[0].(map[string]any)["hooks"].([]any)[1].(map[string]any)
	if ours["timeout"] != float64(75) || ours["statusMessage"] != "checkpoint" {
		t.Errorf("our Stop handler %v: want timeout 75 (60s capture + 15s) and the person's statusMessage kept", ours)
	}
	if got := commands(m, "PostToolUse"); !reflect.DeepEqual(got, []string{"PostToolUse[Write|Edit|MultiEdit|NotebookEdit]=git-venom-hook claude-code"}) {
		t.Errorf("PostToolUse %q", got)
	}
	// A handler the person changed (--agent) is theirs, kept beside ours.
	if got := commands(m, "UserPromptSubmit"); len(got) != 2 {
		t.Errorf("UserPromptSubmit %q", got)
	}
	u, _ := h.Uninstall(o)
	if got := commands(readJSON(t, p), "Stop", "UserPromptSubmit"); !reflect.DeepEqual(got, []string{"Stop[]=say done", "UserPromptSubmit[]=git venom-hook claude-code --agent me"}) {
		t.Errorf("after uninstall %q (removed %v)", got, u.Entries)
	}
}

func TestInstallRefusesUnreadableSettings(t *testing.T) {
	t.Parallel()
	h, _ := harness.Lookup("claude-code")
	for _, text := range []string{`{"hooks": {`, `[1, 2]`, `{"hooks": []}`, `{"hooks": {"Stop": {}}}`, "// a comment\n{}"} {
		root := t.TempDir()
		p := filepath.Join(root, ".claude", "settings.local.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
		_, err := h.Install(harness.InstallOptions{Root: root, Home: root})
		if rfcerr.Code(err) != "failed.settings" {
			t.Errorf("%q: err %v, want failed.settings", text, err)
		}
		if got, _ := os.ReadFile(p); string(got) != text {
			t.Errorf("%q: the file changed to %q", text, got)
		}
	}
}

func TestInstallScopes(t *testing.T) {
	t.Parallel()
	root, home, cfg := "/r", "/h", "/cfg"
	env := func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": cfg, "CODEX_HOME": cfg + "/codex"}[k]
	}
	for _, c := range []struct{ h, scope, want, code string }{
		{"claude-code", "", "/r/.claude/settings.local.json", ""},
		{"claude-code", "project", "/r/.claude/settings.json", ""},
		{"claude-code", "user", "/cfg/settings.json", ""},
		{"codex", "", "/r/.codex/hooks.json", ""},
		{"codex", "user", "/cfg/codex/hooks.json", ""},
		{"codex", "local", "", "invalid_params.scope"},
		{"gemini", "user", "/h/.gemini/settings.json", ""},
		{"cursor", "", "/r/.cursor/hooks.json", ""},
		{"cursor", "user", "/h/.cursor/hooks.json", ""},
		{"cursor", "everywhere", "", "invalid_params.scope"},
	} {
		h, _ := harness.Lookup(c.h)
		_, got, err := h.SettingsFile(harness.InstallOptions{Scope: c.scope, Root: root, Home: home, Getenv: env})
		if c.code != "" {
			if rfcerr.Code(err) != c.code {
				t.Errorf("%s --scope %q: err %v, want %s", c.h, c.scope, err, c.code)
			}
			continue
		}
		if err != nil || got != filepath.FromSlash(c.want) {
			t.Errorf("%s --scope %q: %q, %v; want %q", c.h, c.scope, got, err, c.want)
		}
	}
	h, _ := harness.Lookup("claude-code")
	if _, _, err := h.SettingsFile(harness.InstallOptions{Home: home}); rfcerr.Code(err) != "unsupported.checkpoint_no_repo" {
		t.Errorf("local scope outside a repository: %v", err)
	}
}

// A settings file that is a symlink (dotfiles kept in a repository) is
// replaced at its target; the link stays.
func TestInstallThroughSymlink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	os.WriteFile(target, []byte(`{"model": "opus"}`), 0o644)
	link := filepath.Join(root, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	h, _ := harness.Lookup("claude-code")
	if _, err := h.Install(harness.InstallOptions{Root: root, Home: root}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if m := readJSON(t, target); m["model"] != "opus" || m["hooks"] == nil {
		t.Errorf("target %v", m)
	}
}

// The command a person runs: what it prints, and the Codex trust step.
func TestInstallCommand(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	o := hook(t, repo.Dir, nil, []string{"install", "claude-code"})
	p := filepath.Join(repo.Dir, ".claude", "settings.local.json")
	if o.code != 0 || !strings.Contains(o.stdout, "wrote "+p+" (local scope):") ||
		!strings.Contains(o.stdout, "PostToolUse [Write|Edit|MultiEdit|NotebookEdit]") || !strings.Contains(o.stdout, "(timeout 45s)") {
		t.Errorf("install: %+v", o)
	}
	o = hook(t, repo.Dir, nil, []string{"install", "claude-code"})
	if o.code != 0 || !strings.Contains(o.stdout, "already installed in "+p) {
		t.Errorf("second install: %+v", o)
	}
	o = hook(t, repo.Dir, nil, []string{"install", "codex", "--json"})
	var c harness.Change
	if err := json.Unmarshal([]byte(o.stdout), &c); err != nil || o.code != 0 || !c.Changed || c.Scope != "project" || len(c.Entries) != 5 {
		t.Errorf("codex --json: %+v (%v)", o, err)
	}
	o = hook(t, repo.Dir, nil, []string{"install", "codex"})
	if !strings.Contains(o.stdout, "/hooks") {
		t.Errorf("codex install does not name the trust step: %q", o.stdout)
	}
	o = hook(t, repo.Dir, nil, []string{"uninstall", "claude-code"})
	if o.code != 0 || !strings.Contains(o.stdout, "removed 7 git venom-hook claude-code entries") {
		t.Errorf("uninstall: %+v", o)
	}
	o = hook(t, repo.Dir, nil, []string{"install", "codex", "--scope", "local"})
	if o.code != 2 || !strings.Contains(o.stderr, "no 'local' settings scope") {
		t.Errorf("codex --scope local: %+v", o)
	}
	o = hook(t, t.TempDir(), nil, []string{"install", "claude-code"})
	if o.code != 10 {
		t.Errorf("local scope outside a repository: %+v", o)
	}
}

// Issue 14 item 4: Gemini CLI 0.61's switch for its hooks is
// hooksConfig.enabled; tools.enableHooks and hooks.enabled are not keys it
// takes (hooks.enabled fails its settings schema: "Expected array").
func TestGeminiInstallHintNamesHooksConfigEnabled(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	o := hook(t, repo.Dir, nil, []string{"install", "gemini"})
	var hints []string
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "hint: ") {
			hints = append(hints, l)
		}
	}
	all := strings.Join(hints, "\n")
	if o.code != 0 || !strings.Contains(all, "hooksConfig.enabled") {
		t.Errorf("install gemini: no hint naming hooksConfig.enabled: %+v", o)
	}
	for _, wrong := range []string{"tools.enableHooks", " hooks.enabled"} {
		if strings.Contains(all, wrong) {
			t.Errorf("install gemini: a hint names %q, which Gemini CLI 0.61 does not take:\n%s", wrong, all)
		}
	}
}

// Per-tool-call checkpoints (issue 14): install writes the pre-tool hook
// as venom.checkpoints.toolCalls says: for the shell tools (the default),
// for every tool (all: no matcher), or not at all (off, which also takes
// ours out of a file an earlier install wrote).
func TestInstallPreToolHookFollowsToolCalls(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ h, file, event, shell string }{
		{"claude-code", ".claude/settings.local.json", "PreToolUse", "Bash|PowerShell"},
		{"codex", ".codex/hooks.json", "PreToolUse", "Bash"},
		{"gemini", ".gemini/settings.json", "BeforeTool", "run_shell_command"},
	} {
		t.Run(c.h, func(t *testing.T) {
			t.Parallel()
			h, _ := harness.Lookup(c.h)
			root := t.TempDir()
			p := filepath.Join(root, c.file)
			pre := func(mode string) []string {
				t.Helper()
				if _, err := h.Install(harness.InstallOptions{Root: root, Home: t.TempDir(), ToolCalls: mode}); err != nil {
					t.Fatal(err)
				}
				return commands(readJSON(t, p), c.event)
			}
			if got, want := pre(""), []string{c.event + "[" + c.shell + "]=git-venom-hook " + c.h}; !reflect.DeepEqual(got, want) {
				t.Errorf("default: %q, want %q", got, want)
			}
			if got, want := pre("all"), []string{c.event + "[]=git-venom-hook " + c.h}; !reflect.DeepEqual(got, want) {
				t.Errorf("all: %q, want %q", got, want)
			}
			if got := pre("off"); len(got) != 0 {
				t.Errorf("off: %q, want no %s hook", got, c.event)
			}
		})
	}
}
