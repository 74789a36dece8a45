package rollback_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestInterruptedRollbackGoesBackToS sends the real call SIGINT (a
// person's Ctrl-C) or SIGHUP at each step of its writes, and checks that
// the way back runs to its end and the result says what is true (issue 13
// item 7): the tree, HEAD and the index are as they were before, and the
// error is failed.rollback_undone, logged so. The undo used to run on the
// cancelled context: every git it started failed at once, and the result
// said failed.rollback_partial ("mixed") with the tree back at S, or exit
// 0 with ok: true and after: null.
func TestInterruptedRollbackGoesBackToS(t *testing.T) {
	t.Parallel()
	for _, guarded := range []bool{false, true} {
		for _, at := range []string{"rollback.deleted", "rollback.written", "rollback.head-moved"} {
			if guarded && at == "rollback.head-moved" {
				continue // a guarded tree never moves HEAD
			}
			for _, sig := range []string{"int", "hup"} {
				t.Run(fmt.Sprintf("%s:%s/guarded=%v", at, sig, guarded), func(t *testing.T) {
					t.Parallel()
					f, args, _ := crashScenario(t, guarded)
					before := stateOf(t, f.r)
					interruptIsUndone(t, f, args, at+":"+sig)
					// The index of a guarded tree is never written; elsewhere
					// the way back puts a copy of it back.
					if d := before.changes(t, f.r, guarded); d != "" {
						t.Errorf("interrupted at %s, the tree is not as it was:\n%s", at, d)
					}
				})
			}
		}
	}
}

// interruptIsUndone makes the plan of args in f's tree and its real call
// with the failpoint fp (a step and a signal, step:int): the rollback
// must end failed.rollback_undone, exit 1, say it was interrupted, and
// log so. What the tree holds after is the caller's to check.
func interruptIsUndone(t *testing.T, f *fixture, args []string, fp string) {
	t.Helper()
	r := f.r
	plan := planOf(t, r, args)
	real := realCall(t, r, args, plan.Plan, "GIT_VENOM_TEST_FAILPOINT="+fp)
	out := parseOut(t, real)
	if real.exit != 1 || out.Error == nil || out.Error.Code != "failed.rollback_undone" {
		t.Fatalf("interrupted at %s: exit %d, want 1 and failed.rollback_undone\n%s%s", fp, real.exit, real.stdout, real.stderr)
	}
	if !strings.Contains(out.Error.Message, "interrupted") {
		t.Errorf("the message does not say the rollback was interrupted: %q", out.Error.Message)
	}
	ended := records(t, r, "rollback.ended")
	if len(ended) != 1 || ended[0]["ok"] != false || ended[0]["code"] != "failed.rollback_undone" {
		t.Errorf("rollback.ended: %v", ended)
	}
}
