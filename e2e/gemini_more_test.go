//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/e2e/e2etest"
	"github.com/venom-org/git-venom/e2e/mockllm"
	"github.com/venom-org/git-venom/harness"
)

// Gemini CLI with the real gemini 0.61 (issue 14: items 4 and 5, Gemini
// conversations, per-tool-call checkpoints).

// setProjectSetting merges key: value into the project's
// .gemini/settings.json (where install wrote the hooks).
func setProjectSetting(t *testing.T, e *e2etest.Env, key string, value any) {
	t.Helper()
	p := filepath.Join(e.Repo, ".gemini", "settings.json")
	m := map[string]any{}
	if b, err := os.ReadFile(p); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	m[key] = value
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGeminiHooksConfigKey (item 4): the key install's hint names,
// hooksConfig.enabled, is the one Gemini CLI 0.61 reads: false runs no
// hook, true runs them; hooks.enabled, which the old hint named, is not a
// setting it takes ("hooks" holds the hook lists).
func TestGeminiHooksConfigKey(t *testing.T) {
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	in := e.Venom("venom-hook", "install", "gemini")
	if in.Code != 0 || !strings.Contains(in.Stdout, "hooksConfig.enabled") || strings.Contains(in.Stdout, "hooks.enabled") {
		t.Fatalf("install's hint: %s\n%s", in, in.Stdout)
	}
	setProjectSetting(t, e, "hooksConfig", map[string]any{"enabled": false})
	r := g.Print("-p", "Off. [[venom-e2e: say Off done.]]")
	if r.Code != 0 || r.Response != "Off done." || len(e.Hooks()) != 0 {
		t.Errorf("hooksConfig.enabled=false: %s, %d hook runs, want none", r, len(e.Hooks()))
	}
	setProjectSetting(t, e, "hooksConfig", map[string]any{"enabled": true})
	r = g.Print("-p", "On. [[venom-e2e: say On done.]]")
	if r.Code != 0 || len(e.HookRuns("BeforeAgent")) != 1 {
		t.Errorf("hooksConfig.enabled=true: %s, hook runs:\n%s", r, e.HooksText())
	}
	// The old hint's key: Gemini CLI says what it makes of it.
	p := filepath.Join(e.Repo, ".gemini", "settings.json")
	good, _ := os.ReadFile(p)
	var m map[string]any
	json.Unmarshal(good, &m)
	m["hooks"].(map[string]any)["enabled"] = true
	b, _ := json.Marshal(m)
	os.WriteFile(p, b, 0o644)
	r = g.Print("-p", "Wrong key. [[venom-e2e: say Wrong key done.]]")
	said := ""
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(l, "hooks") || strings.Contains(l, "Expected") {
			said += l + "\n"
		}
	}
	t.Logf("with hooks.enabled=true Gemini CLI 0.61: exit %d; it says: %s", r.Code, said)
	if r.Code == 0 && !strings.Contains(r.Stderr, "Expected array") {
		t.Errorf("hooks.enabled: gemini took it without a word: %s", r)
	}
	os.WriteFile(p, good, 0o644)
}

// TestGeminiFolderTrust (item 5): installed in a folder Gemini CLI does not
// trust, install and doctor say its hooks will not run (from
// trustedFolders.json), and indeed gemini -p runs none (it exits 55);
// trusted, doctor says ok and the hooks run.
func TestGeminiFolderTrust(t *testing.T) {
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	in := e.Venom("venom-hook", "install", "gemini")
	if in.Code != 0 || !strings.Contains(in.Stdout, "Gemini CLI does not run them here: the folder is not in") {
		t.Errorf("trust.install_says: %s\n%s", in, in.Stdout)
	}
	doctor := func() string {
		r := e.Run(e2etest.RunOpts{Env: append(append([]string(nil), g.Env...), "GIT_CONFIG_NOSYSTEM=1")}, "git", "venom-doctor")
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(l, "hooks.gemini") {
				return l
			}
		}
		return "no hooks.gemini line in:\n" + r.Stdout
	}
	if d := doctor(); !strings.HasPrefix(d, "warn hooks.gemini") {
		t.Errorf("trust.doctor_warns: %s", d)
	}
	r := g.Print("-p", "Untrusted. [[venom-e2e: say Untrusted done.]]")
	if r.Code == 0 || len(e.Hooks()) != 0 {
		t.Errorf("trust.untrusted: %s, %d hook runs", r, len(e.Hooks()))
	}
	t.Logf("untrusted folder: gemini -p exit %d", r.Code)
	g.TrustRepo()
	if d := doctor(); !strings.HasPrefix(d, "ok   hooks.gemini") {
		t.Errorf("trust.doctor_ok: %s", d)
	}
	r = g.Print("-p", "Trusted. [[venom-e2e: say Trusted done.]]")
	if r.Code != 0 || len(e.HookRuns("BeforeAgent")) != 1 {
		t.Errorf("trust.trusted_hooks_run: %s\n%s", r, e.HooksText())
	}
}

// TestGeminiToolCallCheckpoints: BeforeTool of run_shell_command takes a
// mid-turn checkpoint before each command, labelled with it (a reuse when
// nothing changed); write_file does not, under the default.
func TestGeminiToolCallCheckpoints(t *testing.T) {
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	if r := e.Venom("venom-hook", "install", "gemini"); r.Code != 0 {
		t.Fatal(r)
	}
	r := g.Print("-p", "Commands. [[venom-e2e: bash echo one > made.txt ;; write "+e.Repo+"/w.txt x ;; bash echo two >> made.txt ;; say Commands done.]]")
	if r.Code != 0 || r.Response != "Commands done." {
		t.Fatalf("%s", r)
	}
	A := harness.AgentID("gemini", r.SessionID)
	taken := e.Records("checkpoint.taken", "agent="+A, "reason=manual")
	if len(taken) != 1 || taken[0].S("label") != "before run_shell_command: echo two >> made.txt" || taken[0]["mid_turn"] != true {
		t.Errorf("tool-call checkpoints:\n%s\nhooks:\n%s", e2etest.LogText(e.Records("checkpoint.taken")), e.HooksText())
	}
	if reused := e.Records("checkpoint.reused", "agent="+A, "reason=manual"); len(reused) != 1 {
		t.Errorf("the reuse before the first command:\n%s", e2etest.LogText(reused))
	}
}

// TestGeminiRewindIsFilesOnly: Gemini CLI 0.61 has no documented way to
// continue a copy of a session from an earlier point, so --restore all to
// an earlier turn is unsupported.harness_capability (fix --restore=files),
// and --restore files leaves the note the next prompt's model request
// carries (BeforeAgent's additionalContext).
func TestGeminiRewindIsFilesOnly(t *testing.T) {
	e := e2etest.New(t, "gemini")
	g := e.Gemini()
	g.TrustRepo()
	if r := e.Venom("venom-hook", "install", "gemini"); r.Code != 0 {
		t.Fatal(r)
	}
	r1 := g.Print("-p", "Turn one. [[venom-e2e: write "+e.Repo+"/one.txt apple ;; say Turn one done.]]")
	S := r1.SessionID
	A := harness.AgentID("gemini", S)
	g.Print("-p", "Turn two. [[venom-e2e: write "+e.Repo+"/two.txt banana ;; say Turn two done.]]", "--resume", S)
	ended := e.Records("turn.ended", "agent="+A, "turn=t1")
	if len(ended) != 1 {
		t.Fatalf("turn.ended:\n%s", e2etest.LogText(e.Records("turn.ended")))
	}
	K := ended[0].S("checkpoint")
	var p planJSON
	if rr := e.VenomJSON(&p, "venom-plan", "--agent", A, K, "--json"); rr.Code != 10 || p.Error == nil || p.Error.Code != "unsupported.harness_capability" || p.Error.Data["fix"] != "--restore=files" {
		t.Errorf("rewind.unsupported: %s %+v", rr, p.Error)
	}
	e.VenomJSON(&p, "venom-plan", "--agent", A, K, "--restore", "files", "--json")
	if rb := e.Venom("venom-rollback", "--agent", A, K, "--restore", "files", "--plan", p.Plan); rb.Code != 0 || e.Exists("two.txt") {
		t.Fatalf("%s\n%s", rb, rb.Stdout)
	}
	since := e.Mock.Seq()
	g.Print("-p", "Turn three. [[venom-e2e: say Turn three done.]]", "--resume", S)
	if cv := mockllm.Text(e.Mock.LastConvo(since, "gemini")); !strings.Contains(cv, "the files were rolled back to their state after turn t1") {
		t.Errorf("note.model_receives:\n%s", cv)
	}
}
