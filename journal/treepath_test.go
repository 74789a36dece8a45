package journal_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestTreePathsNotUTF8RoundTrip: every record that names its tree by
// path keeps a path that is not UTF-8 byte for byte (path_bytes), so that
// the tree finds its own records again; with a UTF-8 path each is
// encoded exactly as the plain struct is, with no path_bytes.
func TestTreePathsNotUTF8RoundTrip(t *testing.T) {
	t.Parallel()
	tree := "/home/me/caf\xe9/\xff\xfe"
	head := "0123"
	for _, path := range []string{tree, "/home/me/café"} {
		records := []any{
			&journal.RepoState{Repo: ".", Path: path, Commit: "c", Tree: "t", Head: &head},
			&journal.Reused{Agent: "a1", Checkpoint: "k1", Reason: "manual", Path: path},
			&journal.Failed{Agent: "a1", Reason: "manual", Code: "failed.checkpoint_git", Path: path},
			&journal.AgentRegistered{Agent: "a1", Path: path, Isolation: "worktree"},
			&journal.RollbackStarted{Agent: "a1", Checkpoint: "k1", Safety: "k3", Path: path,
				Perms: json.RawMessage(`[{"path":"x\ufffd","perm":"0600","path_bytes":"eP8="}]`)},
			&journal.RollbackEnded{Agent: "a1", Checkpoint: "k1", Safety: "k3", OK: true, Path: path},
			&journal.NotePending{Agent: "a1", Text: "note", Path: path},
			&journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"a.go"}, Path: path},
		}
		for _, rec := range records {
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatalf("%T: %v", rec, err)
			}
			if has := strings.Contains(string(b), `"path_bytes":"L2hvbWUvbWUvY2Fm6S///g=="`); has != (path == tree) {
				t.Errorf("%T with path %q: path_bytes %v in %s", rec, path, has, b)
			}
			back := reflect.New(reflect.TypeOf(rec).Elem()).Interface()
			if err := json.Unmarshal(b, back); err != nil {
				t.Fatalf("%T: %v", rec, err)
			}
			if rs, ok := back.(*journal.RollbackStarted); ok {
				// Perms is raw JSON: compare it as encoded.
				rs.Perms = rec.(*journal.RollbackStarted).Perms
			}
			if !reflect.DeepEqual(back, rec) {
				t.Errorf("%T reads back as %+q, want %+q", rec, back, rec)
			}
		}
	}
}
