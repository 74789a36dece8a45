package checkpoint_test

import (
	"os/exec"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestUndoCommand: the way back after a rollback that did not end as
// planned names the agent and the safety checkpoint and overwrites the
// outside paths the rollback wrote; from another tree it changes there
// first, its path one shell word whatever it holds.
func TestUndoCommand(t *testing.T) {
	t.Parallel()
	if got, want := checkpoint.UndoCommand("a1", "k3", ""), "git venom-plan --agent a1 k3 --restore files --outside overwrite"; got != want {
		t.Errorf("UndoCommand = %q, want %q", got, want)
	}
	dir := "/tmp/it's a tree/$HOME `x`"
	if got, want := checkpoint.UndoCommand("a1", "k3", dir), `cd '/tmp/it'\''s a tree/$HOME `+"`x`"+`' && git venom-plan --agent a1 k3 --restore files --outside overwrite`; got != want {
		t.Errorf("UndoCommand from another tree = %q, want %q", got, want)
	}
	for _, s := range []string{dir, "plain-1.2", "", "a'b", "tab\there", "new\nline"} {
		out, err := exec.Command("sh", "-c", "printf '%s' "+checkpoint.ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh reads ShellQuote(%q) as %q (%v)", s, out, err)
		}
	}
}
