package cli

import "testing"

// TestExitCodes: every code of RFC 11.3 that issue 3 uses, and the
// toolkit's own, exits with its class's status, including
// failed.rollback_interrupted, which only a log record carries.
func TestExitCodes(t *testing.T) {
	for code, want := range map[string]int{
		"not_found.agent":                3,
		"not_found.checkpoint":           3,
		"invalid_params.plan":            2,
		"denied.agent_caller":            4,
		"conflict.turn_running":          5,
		"conflict.rollback_running":      5,
		"conflict.checkpoint_pending":    5,
		"conflict.git_operation":         5,
		"conflict.head_moved":            5,
		"conflict.commits_pushed":        5,
		"conflict.index_locked":          5,
		"conflict.outside_edits":         5,
		"conflict.rollback_stale":        5,
		"unsupported.harness_capability": 10,
		"failed.rollback_undone":         1,
		"failed.rollback_partial":        1,
		"failed.rollback_interrupted":    1,
		"timeout.checkpoint":             7,
		"failed.internal":                1,
	} {
		if got := exitCode(code); got != want {
			t.Errorf("exitCode(%q) = %d, want %d", code, got, want)
		}
	}
}
