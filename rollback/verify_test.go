package rollback_test

import (
	"encoding/json"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
)

// TestWriteElsewhereDuringRollbackIsNotExact: the rollback's own capture
// (RFC 7.4 step 6) sees the whole tree, so a file created or changed
// anywhere while the rollback ran, not only in its planned paths, makes
// exact false and is in the rollback checkpoint (issue 13 item 6). The
// old capture read only the planned paths again from S (Reread), and
// said exact: true; and where HEAD moved, a file that appeared was taken
// for one the index brought.
func TestWriteElsewhereDuringRollbackIsNotExact(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		guarded bool
		at      string
		write   string // shell, in the tree
		path    string // what the rollback checkpoint must hold
		want    string
	}{
		{"new file", true, "rollback.written", "echo new > elsewhere.txt", "elsewhere.txt", "new\n"},
		{"changed file", true, "rollback.written", "echo more >> other.txt", "other.txt", "other\nmore\n"},
		{"new file, HEAD moved", false, "rollback.head-moved", "echo new > elsewhere.txt", "elsewhere.txt", "new\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.guarded)
			r := f.r
			r.Write("a.txt", "one\n")
			r.Write("other.txt", "other\n")
			r.Commit("init")
			f.take(checkpoint.ReasonTurnStart) // k1
			r.Write("a.txt", "two\n")
			if !tc.guarded {
				r.Commit("agent") // HEAD moves back
			}
			f.take(checkpoint.ReasonTurnEnd) // k2
			args := []string{"--agent", f.agent, "k1", "--restore", "files", "--json"}
			plan := parseOut(t, runBin(t, r.Dir, "git-venom-plan", nil, args...))
			if plan.Plan == "" {
				t.Fatal("no plan")
			}
			if moves := plan.Repos[0].Head.Moves; moves == tc.guarded {
				t.Fatalf("head.moves is %v", moves)
			}
			p := runBin(t, r.Dir, "git-venom-rollback",
				[]string{"GIT_VENOM_TEST_FAILPOINT=" + tc.at + ":exec", "GIT_VENOM_TEST_FAILPOINT_EXEC=" + tc.write},
				append(args, "--plan", plan.Plan)...)
			var res struct {
				After string `json:"after"`
				Exact *bool  `json:"exact"`
			}
			if err := json.Unmarshal([]byte(p.stdout), &res); err != nil || p.exit != 0 {
				t.Fatalf("rollback: exit %d %v\n%s%s", p.exit, err, p.stdout, p.stderr)
			}
			if r.Read("a.txt") != "one\n" {
				t.Errorf("a.txt was not rolled back")
			}
			if res.Exact == nil || *res.Exact {
				t.Errorf("exact is true (or absent), but %s was written while the rollback ran", tc.path)
			}
			if got, ok := r.Show(f.ref(res.After), tc.path); !ok || got != tc.want {
				t.Errorf("the rollback checkpoint %s holds %s = %q (%v), want %q", res.After, tc.path, got, ok, tc.want)
			}
		})
	}
}
