package plumbing

import (
	"encoding/json"
	"unicode/utf8"
)

// A path in git is any bytes but NUL, and a JSON string holds only UTF-8:
// encoding/json turns each invalid byte into U+FFFD, so "\xff.bin" would be
// logged as "\ufffd.bin", which names no file, and two such names would
// become one. Skip and Submodule, which the log keeps (RFC 4.2 skipped[]
// and submodules[]), therefore add path_bytes, the path's bytes in base64,
// when the path is not valid UTF-8, and read it back in preference to path.
// Valid names keep exactly the RFC's shape.

// MarshalJSON writes the RFC 4.2 shape, plus path_bytes for a path that is
// not valid UTF-8.
func (s Skip) MarshalJSON() ([]byte, error) {
	type plain Skip
	if utf8.ValidString(s.Path) {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		PathBytes []byte `json:"path_bytes"`
	}{plain(s), []byte(s.Path)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Skip) UnmarshalJSON(b []byte) error {
	type plain Skip
	var v struct {
		plain
		PathBytes []byte `json:"path_bytes"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Skip(v.plain)
	if v.PathBytes != nil {
		s.Path = string(v.PathBytes)
	}
	return nil
}

// MarshalJSON writes the RFC 4.2 shape, plus path_bytes for a path that is
// not valid UTF-8.
func (s Submodule) MarshalJSON() ([]byte, error) {
	type plain Submodule
	if utf8.ValidString(s.Path) {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		PathBytes []byte `json:"path_bytes"`
	}{plain(s), []byte(s.Path)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Submodule) UnmarshalJSON(b []byte) error {
	type plain Submodule
	var v struct {
		plain
		PathBytes []byte `json:"path_bytes"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Submodule(v.plain)
	if v.PathBytes != nil {
		s.Path = string(v.PathBytes)
	}
	return nil
}
