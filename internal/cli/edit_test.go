package cli

import (
	"encoding/json"
	"testing"
)

// TestEditOutputJSON: `checkpoint edit --json` prints the record's shape
// byte for byte for UTF-8 names, and paths_bytes for others.
func TestEditOutputJSON(t *testing.T) {
	t.Parallel()
	turn := "t2"
	b, _ := json.Marshal(editOutput{Agent: "claude-1", Turn: &turn, Paths: []string{"main.go"}, Path: "/tmp/project"})
	if want := `{"agent":"claude-1","turn":"t2","paths":["main.go"],"path":"/tmp/project"}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
	b, _ = json.Marshal(editOutput{Agent: "a1", Paths: []string{"n\xff", "n\xfe"}, Path: "/t"})
	if want := `{"agent":"a1","turn":null,"paths":["n\ufffd","n\ufffd"],"path":"/t","paths_bytes":["bv8=","bv4="]}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
}
