package rollback_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/rollback"
)

// TestFileLeftJSON: repos[].files[] and repos[].left[] keep RFC 11.1's
// shape byte for byte for UTF-8 names, and a name that is not UTF-8 gets
// path_bytes and reads back exactly.
func TestFileLeftJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"file", rollback.File{Path: "sp ace/é.go", Change: "modify", Class: "agent"}, `{"path":"sp ace/é.go","change":"modify","class":"agent"}`},
		{"left", rollback.Left{Path: "notes.txt", Reason: "outside", Detail: "created after the last checkpoint"},
			`{"path":"notes.txt","reason":"outside","detail":"created after the last checkpoint"}`},
		{"left without detail", rollback.Left{Path: "x", Reason: "outside"}, `{"path":"x","reason":"outside"}`},
		{"file, not UTF-8", rollback.File{Path: "n\xff", Change: "create", Class: "turn"}, `{"path":"n\ufffd","change":"create","class":"turn","path_bytes":"bv8="}`},
		{"left, not UTF-8", rollback.Left{Path: "caf\xe9", Reason: "outside"}, `{"path":"caf\ufffd","reason":"outside","path_bytes":"Y2Fm6Q=="}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
		back := reflect.New(reflect.TypeOf(tc.v))
		if err := json.Unmarshal(b, back.Interface()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Elem().Interface(), tc.v) {
			t.Errorf("%s: round trip gave %+q, want %+q", tc.name, back.Elem().Interface(), tc.v)
		}
	}
}

// TestPlanJSONTellsNonUTF8NamesApart: a plan whose files are two names
// that differ only in bytes that are not UTF-8 prints them as two paths
// (model divergence D8), and the JSON reads back to the names on disk.
func TestPlanJSONTellsNonUTF8NamesApart(t *testing.T) {
	t.Parallel()
	if !gittest.NonUTF8Names(t, t.TempDir()) {
		t.Skip("this filesystem takes only UTF-8 names")
	}
	f := newFixture(t, false)
	f.r.Write("a.txt", "1\n")
	f.r.Commit("init")
	k1 := f.take(checkpoint.ReasonTurnStart)
	f.r.Write("n\xff", "1\n")
	f.r.Write("n\xfe", "2\n")
	f.r.Write("a.txt", "2\n")
	f.take(checkpoint.ReasonTurnEnd)
	res, err := f.plan(k1, rollback.Options{Restore: "files"})
	if err != nil {
		t.Fatal(describe(err))
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"path":"a.txt","change":"modify","class":"turn"}`, `"path_bytes":"bv8="`, `"path_bytes":"bv4="`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the plan's JSON lacks %s: %s", want, b)
		}
	}
	var back rollback.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range back.Repos[0].Files {
		got = append(got, x.Path)
	}
	if want := []string{"a.txt", "n\xfe", "n\xff"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the plan's files read back as %+q, want %+q", got, want)
	}
}
