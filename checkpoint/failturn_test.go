package checkpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
)

// TestFailedCaptureNamesItsTurn: a checkpoint.failed record names the turn
// the capture belongs to (RFC 11.2 agent.checkpoint_failed {turn?}), the one
// a capture that succeeded records (RFC 3, 3.3): the open turn for a capture
// that neither starts nor ends one, none outside a turn, the new turn for a
// turn_start and the ended one for a turn_end (D4 in
// internal/model/regress_test.go).
func TestFailedCaptureNamesItsTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before []string // reasons of the captures that succeed first
		reason string   // of the capture that fails
		want   string   // its turn, "" for none
	}{
		{"manual in a turn", []string{"turn_start"}, "manual", "t1"},
		{"takeover in a turn", []string{"turn_start"}, "takeover", "t1"},
		{"takeback in a turn", []string{"turn_start", "manual"}, "takeback", "t1"},
		{"manual in the second turn", []string{"turn_start", "turn_end", "turn_start"}, "manual", "t2"},
		{"manual before any turn", nil, "manual", ""},
		{"manual between turns", []string{"turn_start", "turn_end"}, "manual", ""},
		{"turn_end", []string{"turn_start"}, "turn_end", "t1"},
		{"turn_end with no start", nil, "turn_end", "t1"},
		{"turn_start", []string{"turn_start", "turn_end"}, "turn_start", "t2"},
		{"turn_start in an open turn", []string{"turn_start"}, "turn_start", "t2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			for i, reason := range tc.before {
				r.Write("a", strings.Repeat("a", i+2)+"\n")
				take(t, r, checkpoint.TakeOptions{Agent: "a1", Reason: reason})
			}
			r.Write("big", strings.Repeat("x", 100))
			tr := openTree(t, r)
			tr.Config.MaxTotalBytes = 10
			if e := takeErr(t, r, tr, checkpoint.TakeOptions{Agent: "a1", Reason: tc.reason}); e.Code != "failed.checkpoint_too_large" {
				t.Fatalf("code %s: %v", e.Code, e)
			}
			failed := logRecords(t, r, journal.TypeCheckpointFailed)
			if len(failed) != 1 {
				t.Fatalf("checkpoint.failed records: %v", failed)
			}
			got, has := failed[0]["turn"].(string)
			if got != tc.want || has != (tc.want != "") {
				t.Errorf("checkpoint.failed %v: turn %v, want %q", failed[0], failed[0]["turn"], tc.want)
			}
			st, err := tr.Log.Load()
			if err != nil {
				t.Fatal(err)
			}
			caps := st.Agents["a1"].Captures
			if last := caps[len(caps)-1]; last.Type != journal.TypeCheckpointFailed || last.Turn != tc.want {
				t.Errorf("replayed, the failed capture is %+v, want turn %q", last, tc.want)
			}
			if tc.reason == "turn_start" || tc.reason == "turn_end" {
				return
			}
			// The same capture, once it fits, records the same turn.
			tr.Config.MaxTotalBytes = 1 << 20
			res, err := tr.Take(context.Background(), checkpoint.TakeOptions{Agent: "a1", Reason: tc.reason})
			if err != nil {
				t.Fatal(err)
			}
			if deref(res.Checkpoint.Turn) != tc.want {
				t.Errorf("the capture that succeeded has turn %q, the failed one %q", deref(res.Checkpoint.Turn), tc.want)
			}
		})
	}
}
