package plumbing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A path in git is any bytes but NUL, and a JSON string holds only UTF-8:
// encoding/json turns each invalid byte into U+FFFD, so "\xff.bin" would be
// logged as "\ufffd.bin", which names no file, and two such names would
// become one. The objects that carry paths a reader must get back byte for
// byte (the log's skipped[], submodules[] and edit records, a plan's
// files[] and left[]) therefore follow one convention, written and read by
// the helpers below (docs/json.md, "Conventions"):
//
//   - an object with one path in "path" adds "path_bytes", the path's
//     bytes in base64, when the path is not valid UTF-8;
//   - an object with a list of paths in "paths" adds "paths_bytes", a list
//     parallel to "paths" holding every path's bytes in base64, when any
//     of them is not valid UTF-8.
//
// Readers take the bytes in preference to the strings. Objects whose paths
// are all valid UTF-8 keep exactly the RFC's shape, byte for byte.

// MarshalPathBytes implements the path_bytes convention for one path (RFC
// 4.2 skipped[] and submodules[], RFC 11.1 repos[].files[] and
// repos[].left[]): it encodes v, which must encode as a JSON object, and
// when path is not valid UTF-8 adds the member "path_bytes" with path's
// bytes in base64 at its end. v must not be a type whose MarshalJSON calls
// this (pass a method-less copy of it), or the call recurses.
func MarshalPathBytes(v any, path string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return AddPathBytes(b, "path_bytes", path)
}

// AddPathBytes adds to obj, an encoded JSON object, the member key with
// path's bytes in base64 at its end when path is not valid UTF-8, and
// returns obj as it is otherwise: the path_bytes convention for a member
// other than "path" (a backup manifest's file_bytes, say). PathBytesOf
// reads it back.
func AddPathBytes(obj []byte, key, path string) ([]byte, error) {
	if utf8.ValidString(path) {
		return obj, nil
	}
	return addMember(obj, key, []byte(path))
}

// PathBytesOf sets *path to the bytes of the member key of b, an encoded
// JSON object, when b has that member (AddPathBytes wrote it), and leaves
// it alone otherwise or on an error.
func PathBytesOf(b []byte, key string, path *string) error {
	if !bytes.Contains(b, []byte(`"`+key+`"`)) {
		return nil // the common case, at the cost of a search
	}
	var x map[string]json.RawMessage
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	raw, ok := x[key]
	if !ok {
		return nil
	}
	var v []byte
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*path = string(v)
	return nil
}

// UnmarshalPathBytes reads what MarshalPathBytes writes (RFC 4.2, 11.1):
// it decodes b into a new T, sets the field path points at to the bytes of
// "path_bytes" when b has that member, and then replaces *dst, which is
// left alone on an error. T must not be a type whose UnmarshalJSON calls
// this.
func UnmarshalPathBytes[T any](b []byte, dst *T, path func(*T) *string) error {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if err := PathBytesOf(b, "path_bytes", path(&v)); err != nil {
		return err
	}
	*dst = v
	return nil
}

// MarshalPathsBytes implements the paths_bytes convention for a list of
// paths (the edit record that RFC 7.3's edit tool calls leave in the log):
// it encodes v, which must encode as a JSON object, and when any of paths
// is not valid UTF-8 adds the member "paths_bytes", every path's bytes in
// base64 in the same order, at its end. As for MarshalPathBytes, v must
// not be a type whose MarshalJSON calls this.
func MarshalPathsBytes(v any, paths []string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || allValid(paths) {
		return b, err
	}
	raw := make([][]byte, len(paths))
	for i, p := range paths {
		raw[i] = []byte(p)
	}
	return addMember(b, "paths_bytes", raw)
}

// UnmarshalPathsBytes reads what MarshalPathsBytes writes (RFC 7.3): it
// decodes b into a new T, replaces each member of the list paths points at
// by its bytes from "paths_bytes" when b has that member, and then
// replaces *dst, which is left alone on an error. A paths_bytes whose
// length is not that of the list is an error: MarshalPathsBytes did not
// write it. T must not be a type whose UnmarshalJSON calls this.
func UnmarshalPathsBytes[T any](b []byte, dst *T, paths func(*T) *[]string) error {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var x struct {
		PathsBytes [][]byte `json:"paths_bytes"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	if x.PathsBytes != nil {
		ps := *paths(&v)
		if len(x.PathsBytes) != len(ps) {
			return fmt.Errorf("paths_bytes has %d members for %d paths", len(x.PathsBytes), len(ps))
		}
		for i, p := range x.PathsBytes {
			ps[i] = string(p)
		}
	}
	*dst = v
	return nil
}

func allValid(paths []string) bool {
	for _, p := range paths {
		if !utf8.ValidString(p) {
			return false
		}
	}
	return true
}

// addMember appends "key":val to obj, an encoded JSON object.
func addMember(obj []byte, key string, val any) ([]byte, error) {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("adding %s: %s is not a JSON object", key, obj)
	}
	v, err := json.Marshal(val)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)+len(key)+len(v)+4)
	out = append(out, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, v...)
	return append(out, '}'), nil
}

// MarshalJSON writes the RFC 4.2 shape, plus path_bytes for a path that is
// not valid UTF-8.
func (s Skip) MarshalJSON() ([]byte, error) {
	type plain Skip
	return MarshalPathBytes(plain(s), s.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Skip) UnmarshalJSON(b []byte) error {
	type plain Skip
	return UnmarshalPathBytes(b, (*plain)(s), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the RFC 4.2 shape, plus path_bytes for a path that is
// not valid UTF-8.
func (s Submodule) MarshalJSON() ([]byte, error) {
	type plain Submodule
	return MarshalPathBytes(plain(s), s.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Submodule) UnmarshalJSON(b []byte) error {
	type plain Submodule
	return UnmarshalPathBytes(b, (*plain)(s), func(v *plain) *string { return &v.Path })
}
