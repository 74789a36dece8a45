package rollback

import (
	"strings"
	"testing"

	"github.com/venom-org/git-venom/internal/rfcerr"
)

// TestStaleErrSaysWhichVersion: a plan id of another version than p2 is
// conflict.rollback_stale with data.plan_version, and the message says
// why it tells the truth for that version: RFC 7.2's p1 binds neither the
// agent, the target nor the decisions; a newer version's id (p3, made by
// a newer toolkit on a shared repository) is one this version cannot
// check, and the message said of it, as of p1, that this version "no
// longer" accepts it and that it binds none of those.
func TestStaleErrSaysWhichVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plan, version, says, never string
	}{
		{"p1-0123456789abcdef", "p1", "binds neither the agent", "no longer"},
		{"p3-0123456789abcdef", "p3", "makes and checks p2 plan ids only", "binds neither"},
		{"p2-0123456789abcdef", "", "changed since plan p2-0123456789abcdef was made (now p2-fedcba9876543210)", "version"},
	} {
		e := rfcerr.As(staleErr(Options{Agent: "a1", Checkpoint: "k1", Plan: tc.plan}, "p2-fedcba9876543210"))
		if e == nil || e.Code != "conflict.rollback_stale" {
			t.Fatalf("%s: %v, want conflict.rollback_stale", tc.plan, e)
		}
		if v, _ := e.Data["plan_version"].(string); v != tc.version {
			t.Errorf("%s: data.plan_version %q, want %q", tc.plan, v, tc.version)
		}
		if !strings.Contains(e.Message, tc.says) || strings.Contains(e.Message, tc.never) {
			t.Errorf("%s: %q, want it to say %q and never %q", tc.plan, e.Message, tc.says, tc.never)
		}
		if len(e.Hints) == 0 || !strings.Contains(e.Hints[0], "git venom-plan --agent a1 k1") {
			t.Errorf("%s: hints %q", tc.plan, e.Hints)
		}
	}
}
