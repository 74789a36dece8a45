package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/harness"
)

// The hashes codex 0.171 wrote into config.toml ([hooks.state."…"]
// trusted_hash) when its "Hooks need review" prompt was answered "Trust all
// and continue" for the entries `git venom-hook install codex` wrote.
func TestCodexHookHashMatchesCodex(t *testing.T) {
	for _, c := range []struct {
		event, matcher string
		timeout        int64
		want           string
	}{
		{"PostToolUse", "apply_patch", 45, "sha256:a360e825dc4a461a3c9758decb24df1598480ef0e6baa6538f7de3e7e7f2bc55"},
		{"SessionStart", "", 10, "sha256:5a9afc816eba0bf82ae9c3db7a58d30464ba433cf24b8eccb96a087806ed5545"},
		{"UserPromptSubmit", "", 45, "sha256:79a1fb5dd7f0a528e35905d2f992075aa316f2f64360217ca23cd8dfccceed28"},
		{"Stop", "", 45, "sha256:1a8d31e4b015bd3b819b525ba109e6efc671f90015b5e19cc7d9fca75f67609f"},
	} {
		if got := harness.CodexHookHash(c.event, c.matcher, "git-venom-hook codex", c.timeout); got != c.want {
			t.Errorf("%s: %s, want %s", c.event, got, c.want)
		}
	}
}

// codexTrustConfig writes $CODEX_HOME/config.toml trusting root (when
// trusted) and every hook of ours in root's .codex/hooks.json (timeout
// changes one hook's recorded timeout, as after an edit).
func codexTrustConfig(t *testing.T, home, root string, trusted bool, hooks map[string]int64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("model = \"gpt-5.5\"\n\n")
	if trusted {
		fmt.Fprintf(&b, "[projects.%q]\ntrust_level = \"trusted\"\n\n", root)
	}
	b.WriteString("[hooks.state]\n\n")
	file := filepath.Join(root, ".codex", "hooks.json")
	for _, e := range []struct {
		event, snake, matcher string
		timeout               int64
	}{
		{"SessionStart", "session_start", "", 10}, {"UserPromptSubmit", "user_prompt_submit", "", 45},
		{"PostToolUse", "post_tool_use", "apply_patch", 45}, {"Stop", "stop", "", 45}, {"PreToolUse", "pre_tool_use", "Bash", 45},
	} {
		to, ok := hooks[e.event]
		if !ok {
			continue
		}
		if to == 0 {
			to = e.timeout
		}
		fmt.Fprintf(&b, "[hooks.state.%q]\ntrusted_hash = %q\n\n", file+":"+e.snake+":0:0", harness.CodexHookHash(e.event, e.matcher, "git-venom-hook codex", to))
	}
	os.MkdirAll(home, 0o755)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCodexTrustCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(t.TempDir(), "codex-home")
	h, _ := harness.Lookup("codex")
	env := func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}
	o := harness.TrustOptions{Root: root, Home: t.TempDir(), Getenv: env}
	if _, ok := h.TrustCheck(o); ok {
		t.Fatal("a check of a harness with nothing installed")
	}
	if _, err := h.Install(harness.InstallOptions{Root: root, Getenv: env}); err != nil {
		t.Fatal(err)
	}
	all := map[string]int64{"SessionStart": 0, "UserPromptSubmit": 0, "PostToolUse": 0, "Stop": 0, "PreToolUse": 0}
	for _, c := range []struct {
		name    string
		trusted bool
		hooks   map[string]int64
		level   string
		says    []string
	}{
		{"nothing trusted", false, nil, "warn", []string{"the project is not trusted", "5 of its 5 hooks are not trusted", "(5 new, 0 changed"}},
		{"project only", true, nil, "warn", []string{"5 of its 5 hooks are not trusted"}},
		{"one hook changed since", true, map[string]int64{"SessionStart": 0, "UserPromptSubmit": 0, "PostToolUse": 0, "Stop": 30, "PreToolUse": 0}, "warn", []string{"1 of its 5 hooks", "(0 new, 1 changed"}},
		{"hooks only", false, all, "warn", []string{"the project is not trusted"}},
		{"all trusted", true, all, "ok", []string{"codex runs them here: the project and all 5 hooks are trusted"}},
	} {
		codexTrustConfig(t, home, root, c.trusted, c.hooks)
		got, ok := h.TrustCheck(o)
		if !ok || got.ID != "hooks.codex" || got.Level != c.level {
			t.Errorf("%s: %+v, want level %s", c.name, got, c.level)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(got.Message, s) {
				t.Errorf("%s: message %q does not say %q", c.name, got.Message, s)
			}
		}
		if c.level == "warn" && !strings.Contains(got.Fix, "--dangerously-bypass-hook-trust") {
			t.Errorf("%s: fix %q", c.name, got.Fix)
		}
	}
}

func TestGeminiTrustCheck(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "projects", "repo")
	os.MkdirAll(root, 0o755)
	home := t.TempDir()
	h, _ := harness.Lookup("gemini")
	if _, err := h.Install(harness.InstallOptions{Root: root, Home: home}); err != nil {
		t.Fatal(err)
	}
	write := func(rel, text string) {
		p := filepath.Join(home, ".gemini", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	for _, c := range []struct {
		name, settings, folders string
		env                     map[string]string
		level, says             string
	}{
		{"no rule", `{}`, `{}`, nil, "warn", "the folder is not in"},
		{"folder trusted", `{}`, `{` + q(root) + `: "TRUST_FOLDER"}`, nil, "ok", "the folder is trusted"},
		{"parent trusted", `{}`, `{` + q(filepath.Join(base, "projects", "other")) + `: "TRUST_PARENT"}`, nil, "ok", "the folder is trusted"},
		{"a longer rule distrusts it", `{}`, `{` + q(base) + `: "TRUST_FOLDER", ` + q(root) + `: "DO_NOT_TRUST"}`, nil, "warn", "DO_NOT_TRUST"},
		{"folder trust off", `{"security": {"folderTrust": {"enabled": false}}}`, `{}`, nil, "ok", "folder trust is off"},
		{"hooks off", `{"hooksConfig": {"enabled": false}}`, `{` + q(root) + `: "TRUST_FOLDER"}`, nil, "warn", "hooksConfig.enabled is false"},
		{"environment", `{}`, `{}`, map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}, "ok", "GEMINI_CLI_TRUST_WORKSPACE=true"},
	} {
		write("settings.json", c.settings)
		write("trustedFolders.json", c.folders)
		env := func(k string) string { return c.env[k] }
		got, ok := h.TrustCheck(harness.TrustOptions{Root: root, Home: home, Getenv: env})
		if !ok || got.Level != c.level || !strings.Contains(got.Message, c.says) {
			t.Errorf("%s: %+v, want %s saying %q", c.name, got, c.level, c.says)
		}
	}
}

// install says what to do about trust, from the harness's own files.
func TestInstallSaysWhatTrustNeeds(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	home := t.TempDir()
	o := hook(t, repo.Dir, nil, []string{"install", "codex"}, "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	for _, s := range []string{"hint: " + filepath.Join(repo.Dir, ".codex", "hooks.json") + " (project scope): codex skips them here, and `codex exec` says nothing about it",
		"hint: to fix: start codex in " + repo.Dir, "--dangerously-bypass-hook-trust"} {
		if !strings.Contains(o.stdout, s) {
			t.Errorf("install codex does not say %q:\n%s", s, o.stdout)
		}
	}
	o = hook(t, repo.Dir, nil, []string{"install", "gemini"}, "HOME="+home)
	if !strings.Contains(o.stdout, "Gemini CLI does not run them here: the folder is not in "+filepath.Join(home, ".gemini", "trustedFolders.json")) {
		t.Errorf("install gemini:\n%s", o.stdout)
	}
	// And doctor reports both.
	d := cliRunEnv(t, repo.Dir, []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex")}, "doctor")
	if !strings.Contains(d.stdout, "warn hooks.codex") || !strings.Contains(d.stdout, "warn hooks.gemini") {
		t.Errorf("doctor:\n%s", d.stdout)
	}
}
