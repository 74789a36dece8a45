package harness

import (
	"errors"
	"strings"
	"testing"
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
