package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

// Install names the hook binary, which the harness finds on its PATH: when
// this shell cannot find it either, the result says so, first among the
// notes; when it can, nothing is said about it.
func TestInstallSaysWhenTheHookIsNotOnPath(t *testing.T) {
	saved := lookPath
	defer func() { lookPath = saved }()
	for _, found := range []bool{false, true} {
		lookPath = func(string) (string, error) {
			if found {
				return "/usr/local/bin/git-venom-hook", nil
			}
			return "", errors.New("not found")
		}
		c, err := claudeCode.Install(InstallOptions{Root: t.TempDir(), Home: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		said := len(c.Notes) > 0 && strings.HasPrefix(c.Notes[0], "git-venom-hook is not on this PATH")
		if said == found {
			t.Errorf("found %v: notes %q", found, c.Notes)
		}
	}
}

// A settings file that is a symlink to a file not made yet is written at
// the link's target; the link stays. A settings file that is not valid
// UTF-8 is refused and left as it is, not written back with U+FFFD.
func TestInstallDanglingSymlinkAndBadUTF8(t *testing.T) {
	saved := lookPath
	defer func() { lookPath = saved }()
	lookPath = func(string) (string, error) { return "/bin/git-venom-hook", nil }

	root, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "shared-settings.json")
	link := filepath.Join(root, ".claude", "settings.local.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := claudeCode.Install(InstallOptions{Root: root, Home: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the settings link was replaced: %v %v", st, err)
	}
	if b, err := os.ReadFile(target); err != nil || !strings.Contains(string(b), "git-venom-hook claude-code") {
		t.Errorf("the link's target: %q %v", b, err)
	}

	bad := []byte("{\"env\":{\"X\":\"a\xffb\"}}\n")
	root2 := t.TempDir()
	p := filepath.Join(root2, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := claudeCode.Install(InstallOptions{Root: root2, Home: t.TempDir()})
	if e := rfcerr.As(err); e == nil || e.Code != "failed.settings" {
		t.Errorf("install over a file that is not UTF-8: %v, want failed.settings", err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(bad) {
		t.Errorf("the file changed: %q", b)
	}
}
