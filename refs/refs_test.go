package refs_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/refs"
)

func TestValidAgent(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"a", "a1", "default", "claude-code.1", "x_y", "0", strings.Repeat("a", 64)} {
		if err := refs.ValidAgent(id); err != nil {
			t.Errorf("ValidAgent(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{
		"", "A", "a/b", "bad/../name", "a..b", "a.lock", "a.", ".a", "-a", "_a", "a b", "a\tb",
		"a:b", "a~b", "a^b", "a?b", "a*b", "a[b", "a\\b", "a@{b", "é", strings.Repeat("a", 65),
	} {
		if err := refs.ValidAgent(id); err == nil {
			t.Errorf("ValidAgent(%q) = nil, want an error", id)
		}
	}
}

func TestCheckpointRefs(t *testing.T) {
	t.Parallel()
	if got := refs.Checkpoint("a1", 12); got != "refs/venom/checkpoints/a1/12" {
		t.Errorf("Checkpoint = %q", got)
	}
	if got := refs.AgentPrefix("a1"); got != "refs/venom/checkpoints/a1/" {
		t.Errorf("AgentPrefix = %q", got)
	}
	for _, tc := range []struct {
		ref   string
		agent string
		n     int
		ok    bool
	}{
		{"refs/venom/checkpoints/a1/12", "a1", 12, true},
		{"refs/venom/checkpoints/a1/0", "", 0, false},
		{"refs/venom/checkpoints/a1/012", "", 0, false},
		{"refs/venom/checkpoints/a1/k1", "", 0, false},
		{"refs/venom/checkpoints/a1/1/2", "", 0, false},
		{"refs/venom/checkpoints/A/1", "", 0, false},
		{"refs/venom/checkpoints/a1", "", 0, false},
		{"refs/heads/a1/1", "", 0, false},
		{"refs/venom/checkpoints/a1/-1", "", 0, false},
	} {
		agent, n, ok := refs.ParseRef(tc.ref)
		if agent != tc.agent || n != tc.n || ok != tc.ok {
			t.Errorf("ParseRef(%q) = %q %d %v, want %q %d %v", tc.ref, agent, n, ok, tc.agent, tc.n, tc.ok)
		}
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	if refs.ID(3) != "k3" || refs.Turn(4) != "t4" {
		t.Errorf("ID(3) = %q, Turn(4) = %q", refs.ID(3), refs.Turn(4))
	}
	for _, tc := range []struct {
		in string
		n  int
	}{{"k1", 1}, {"k42", 42}, {"7", 7}, {"k0", 0}, {"k01", 0}, {"k", 0}, {"kk1", 0}, {"t1", 0}, {"k-1", 0}, {"k1 ", 0}} {
		n, err := refs.ParseID(tc.in)
		if n != tc.n || (err == nil) != (tc.n > 0) {
			t.Errorf("ParseID(%q) = %d, %v; want %d", tc.in, n, err, tc.n)
		}
	}
	for _, tc := range []struct {
		in string
		n  int
	}{{"t1", 1}, {"t10", 10}, {"1", 0}, {"t0", 0}, {"t01", 0}, {"k1", 0}, {"t", 0}} {
		n, err := refs.ParseTurn(tc.in)
		if n != tc.n || (err == nil) != (tc.n > 0) {
			t.Errorf("ParseTurn(%q) = %d, %v; want %d", tc.in, n, err, tc.n)
		}
	}
	// Round trips.
	for n := 1; n < 200; n += 17 {
		if m, err := refs.ParseID(refs.ID(n)); m != n || err != nil {
			t.Errorf("ParseID(ID(%d)) = %d, %v", n, m, err)
		}
		if m, err := refs.ParseTurn(refs.Turn(n)); m != n || err != nil {
			t.Errorf("ParseTurn(Turn(%d)) = %d, %v", n, m, err)
		}
		if a, m, ok := refs.ParseRef(refs.Checkpoint("ag", n)); a != "ag" || m != n || !ok {
			t.Errorf("ParseRef(Checkpoint(ag, %d)) = %q %d %v", n, a, m, ok)
		}
	}
}

// TestValidAgentIsARefComponent: every id ValidAgent accepts makes a ref
// name git accepts (DESIGN.md section 1: checked with check-ref-format's
// rules).
func TestValidAgentIsARefComponent(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	chars := []string{"a", "0", ".", "-", "_"}
	var ids []string
	for _, a := range chars {
		for _, b := range chars {
			for _, c := range chars {
				ids = append(ids, "a"+a+b+c, a+b+c)
			}
		}
	}
	for _, id := range ids {
		if refs.ValidAgent(id) != nil {
			continue
		}
		if err := exec.Command(git, "check-ref-format", refs.Checkpoint(id, 1)).Run(); err != nil {
			t.Errorf("ValidAgent accepts %q, git check-ref-format refuses %s", id, refs.Checkpoint(id, 1))
		}
	}
}
