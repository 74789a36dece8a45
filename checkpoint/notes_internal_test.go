package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// mayHaveNote finds a note.pending record of the agent on one line, and is
// certain when it says there is none: another agent's note, an agent whose
// id starts the same, the words in another record's text, a missing log.
func TestMayHaveNote(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.jsonl")
	if mayHaveNote(p, "a1") {
		t.Errorf("a missing log has a note")
	}
	log := `{"seq":1,"type":"edit","agent":"a1","paths":["x"]}
{"seq":2,"type":"note.pending","agent":"a10","text":"for a10"}
{"seq":3,"type":"note.pending","agent":"b","text":"\"agent\":\"a1\" is only text here"}
{"seq":4,"type":"checkpoint.taken","agent":"a1"}
`
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]bool{"a1": false, "a10": true, "b": true, "c": false} {
		if got := mayHaveNote(p, agent); got != want {
			t.Errorf("mayHaveNote(%s) = %v, want %v", agent, got, want)
		}
	}
	if err := os.WriteFile(p, []byte(log+`{"seq":5,"type":"note.pending","agent":"a1","text":"t"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mayHaveNote(p, "a1") {
		t.Errorf("a1's note on the last line (no newline yet) is not seen")
	}
}
