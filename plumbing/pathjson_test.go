package plumbing_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/plumbing"
)

// TestPathJSON: skipped[] and submodules[] keep RFC 4.2's shape for UTF-8
// names, and names that are not UTF-8 survive the log byte for byte.
func TestPathJSON(t *testing.T) {
	t.Parallel()
	c := oidA
	for _, tc := range []struct {
		name string
		v    any
		want string // exact JSON, or a substring when the name is not UTF-8
	}{
		{"skip", plumbing.Skip{Path: "sp ace/é.bin", Bytes: 3, Reason: "too_big"}, `{"path":"sp ace/é.bin","bytes":3,"reason":"too_big"}`},
		{"submodule", plumbing.Submodule{Path: "lib", Commit: &c, Dirty: true}, `{"path":"lib","commit":"` + oidA + `","dirty":true}`},
		{"unborn submodule", plumbing.Submodule{Path: "scratch"}, `{"path":"scratch","commit":null,"dirty":false}`},
		{"skip, not UTF-8", plumbing.Skip{Path: "\xff\xfe.bin", Bytes: 9, Reason: "too_big"}, `"path_bytes":"//4uYmlu"`},
		{"submodule, not UTF-8", plumbing.Submodule{Path: "caf\xe9", Commit: &c}, `"path_bytes":"Y2Fm6Q=="`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(tc.name, "not UTF-8") {
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("%s: %s lacks %s", tc.name, b, tc.want)
			}
		} else if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
		back := reflect.New(reflect.TypeOf(tc.v))
		if err := json.Unmarshal(b, back.Interface()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Elem().Interface(), tc.v) {
			t.Errorf("%s: round trip gave %+v, want %+v", tc.name, back.Elem().Interface(), tc.v)
		}
	}
	// In a slice, as the records hold them.
	in := []plumbing.Skip{{Path: "a", Reason: "skip_worktree"}, {Path: "\x80", Bytes: 1, Reason: "too_big"}}
	b, _ := json.Marshal(in)
	var out []plumbing.Skip
	if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("slice round trip: %+v %v from %s", out, err, b)
	}
}

// TestAddPathBytes: a member other than "path" follows the same
// convention: nothing is added for a UTF-8 path, and a path that is not
// UTF-8 comes back byte for byte from the member added.
func TestAddPathBytes(t *testing.T) {
	t.Parallel()
	obj := []byte(`{"file":"x"}`)
	if b, err := plumbing.AddPathBytes(obj, "file_bytes", "dir/é.txt"); err != nil || string(b) != string(obj) {
		t.Errorf("a UTF-8 path: %s, %v; want %s as it was", b, err, obj)
	}
	b, err := plumbing.AddPathBytes(obj, "file_bytes", "d\xfe/\xff.txt")
	if err != nil || string(b) != `{"file":"x","file_bytes":"ZP4v/y50eHQ="}` {
		t.Fatalf("a path that is not UTF-8: %s, %v", b, err)
	}
	got := "unchanged"
	if err := plumbing.PathBytesOf(obj, "file_bytes", &got); err != nil || got != "unchanged" {
		t.Errorf("no member: %q, %v; want it left alone", got, err)
	}
	if err := plumbing.PathBytesOf(b, "file_bytes", &got); err != nil || got != "d\xfe/\xff.txt" {
		t.Errorf("read back: %q, %v", got, err)
	}
}
