package plumbing_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/venom-org/git-venom/plumbing"
)

// record stands for any object that follows the paths_bytes convention.
type record struct {
	Agent string   `json:"agent"`
	Paths []string `json:"paths"`
}

func (r record) MarshalJSON() ([]byte, error) {
	type plain record
	return plumbing.MarshalPathsBytes(plain(r), r.Paths)
}

func (r *record) UnmarshalJSON(b []byte) error {
	type plain record
	return plumbing.UnmarshalPathsBytes(b, (*plain)(r), func(v *plain) *[]string { return &v.Paths })
}

// TestPathsBytes: a list of UTF-8 paths keeps its shape byte for byte; one
// name that is not UTF-8 adds paths_bytes with every path, in order, and
// reads back exactly, even when the names differ only in such bytes.
func TestPathsBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   record
		want string
	}{
		{"utf-8", record{Agent: "a1", Paths: []string{"a b/é.go", "x"}}, `{"agent":"a1","paths":["a b/é.go","x"]}`},
		{"empty", record{Agent: "a1", Paths: []string{}}, `{"agent":"a1","paths":[]}`},
		{"not utf-8", record{Agent: "a1", Paths: []string{"ok", "n\xff", "n\xfe"}},
			`{"agent":"a1","paths":["ok","n\ufffd","n\ufffd"],"paths_bytes":["b2s=","bv8=","bv4="]}`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
		var back record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(back, tc.in) {
			t.Errorf("%s: round trip gave %+q, want %+q", tc.name, back, tc.in)
		}
	}
}

// TestPathsBytesMismatch: a paths_bytes that is not parallel to paths is
// refused, and the value decoded into is left as it was.
func TestPathsBytesMismatch(t *testing.T) {
	t.Parallel()
	r := record{Agent: "before"}
	err := json.Unmarshal([]byte(`{"agent":"a1","paths":["a","b"],"paths_bytes":["YQ=="]}`), &r)
	if err == nil {
		t.Fatalf("a short paths_bytes was read as %+q", r)
	}
	if r.Agent != "before" || r.Paths != nil {
		t.Errorf("a refused record changed the value to %+q", r)
	}
}

// TestPathBytesObject: path_bytes goes at the end of any object, an empty
// one included, and a value that is not an object is an error.
func TestPathBytesObject(t *testing.T) {
	t.Parallel()
	b, err := plumbing.MarshalPathBytes(struct{}{}, "\x80")
	if err != nil || string(b) != `{"path_bytes":"gA=="}` {
		t.Errorf("empty object: %s, %v", b, err)
	}
	if b, err := plumbing.MarshalPathBytes([]string{"x"}, "\x80"); err == nil {
		t.Errorf("a list took path_bytes: %s", b)
	}
	if b, err := plumbing.MarshalPathBytes([]string{"x"}, "x"); err != nil || string(b) != `["x"]` {
		t.Errorf("a valid name changed a list: %s, %v", b, err)
	}
}
