package checkpoint_test

import (
	"context"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
)

// TestNotesDeliveredOnce: a pending note is returned until it is marked
// delivered, the newest of several wins, and each is delivered once; a
// note for another tree or agent is not this one's (RFC 8, CASES BR-58).
func TestNotesDeliveredOnce(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	tr := openTree(t, r)
	ctx := context.Background()
	if _, err := tr.Log.Append(
		journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: "a1", Text: "old", Path: tr.Path()}},
		journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: "a1", Text: "new", Path: tr.Path()}},
		journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: "a1", Text: "elsewhere", Path: "/some/other/tree"}},
		journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: "a2", Text: "sharer", Path: tr.Path()}},
	); err != nil {
		t.Fatal(err)
	}
	var n checkpoint.Notes
	text, done, err := n.Pending(ctx, tr, "a1", "")
	if err != nil || text != "new" || done == nil {
		t.Fatalf("Pending(a1) = %q, %v; want \"new\"", text, err)
	}
	// Not delivered yet: asked again, the same note.
	if again, _, _ := n.Pending(ctx, tr, "a1", ""); again != "new" {
		t.Fatalf("before delivery Pending(a1) = %q, want \"new\" again", again)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if after, d, err := n.Pending(ctx, tr, "a1", ""); after != "" || d != nil || err != nil {
		t.Fatalf("after delivery Pending(a1) = %q, %v; want none", after, err)
	}
	if s, _, _ := n.Pending(ctx, tr, "a2", ""); s != "sharer" {
		t.Fatalf("Pending(a2) = %q, want the sharer's note", s)
	}
	if s, _, _ := n.Pending(ctx, tr, "a3", ""); s != "" {
		t.Fatalf("Pending(a3) = %q, want none", s)
	}
}
