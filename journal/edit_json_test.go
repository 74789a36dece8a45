package journal_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestEditRecordPaths: an edit record of UTF-8 names is logged in exactly
// its documented shape; one with names that are not UTF-8, two of them
// differing only there, is logged with paths_bytes and replays to the
// same bytes (model divergence D3).
func TestEditRecordPaths(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	valid := journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"a b/é.go", `q"\.txt`}, Path: "/tree"}
	odd := journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"ok.txt", "n\xff.txt", "n\xfe.txt"}, Path: "/tree"}
	if _, err := l.Append(journal.Entry{Type: journal.TypeEdit, Body: valid}, journal.Entry{Type: journal.TypeEdit, Body: odd}); err != nil {
		t.Fatal(err)
	}
	recs, torn, err := l.ReadAll()
	if err != nil || torn || len(recs) != 2 {
		t.Fatalf("read back %d records, torn %v, %v", len(recs), torn, err)
	}
	ts := regexp.MustCompile(`"ts":"[^"]*"`)
	got := ts.ReplaceAllString(string(recs[0].Line), `"ts":"T"`)
	want := `{"seq":1,"ts":"T","type":"edit","agent":"a1","turn":"t1","paths":["a b/é.go","q\"\\.txt"],"path":"/tree"}`
	if got != want {
		t.Errorf("a UTF-8 edit record is logged as\n  %s\nwant\n  %s", got, want)
	}
	if !strings.Contains(string(recs[1].Line), `"paths_bytes":["b2sudHh0","bv8udHh0","bv4udHh0"]`) {
		t.Errorf("the record of names that are not UTF-8 has no paths_bytes: %s", recs[1].Line)
	}
	st, err := journal.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	ed := st.Agents["a1"].Edits
	if len(ed) != 2 {
		t.Fatalf("replay gave %d edits", len(ed))
	}
	for i, w := range []journal.Edit{valid, odd} {
		if g := ed[i].Edit; g.Agent != w.Agent || g.Turn != w.Turn || g.Path != w.Path || strings.Join(g.Paths, "\x00") != strings.Join(w.Paths, "\x00") {
			t.Errorf("edit %d replays as %+q, want %+q", i, g, w)
		}
	}
}

// TestEditRecordRefusesAShortPathsBytes: a paths_bytes that is not one
// member per path is not what the toolkit writes, and replay says so
// rather than pairing names with the wrong bytes.
func TestEditRecordRefusesAShortPathsBytes(t *testing.T) {
	t.Parallel()
	var e journal.Edit
	err := json.Unmarshal([]byte(`{"agent":"a1","turn":"t1","paths":["a","b"],"paths_bytes":["YQ=="],"path":"/t"}`), &e)
	if err == nil {
		t.Errorf("read as %+q", e)
	}
}
