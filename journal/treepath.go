package journal

import (
	"bytes"
	"encoding/json"

	"github.com/venom-org/git-venom/plumbing"
)

// A record's "path" is the absolute path of the tree it belongs to (or,
// in RepoState, of the repository's work tree), compared with the tree a
// command runs in to find the tree's records. A directory name is any
// bytes but NUL, and encoding/json writes each byte that is not UTF-8 as
// U+FFFD, so a tree at "/home/me/caf\xe9" was logged as a path that is no
// tree's: every checkpoint taken there was "taken in another tree", and
// no plan or rollback could use it. Each record with such a path follows
// the path_bytes convention (docs/json.md, "Conventions";
// plumbing.MarshalPathBytes): "path_bytes", the path's bytes in base64,
// beside "path" when it is not valid UTF-8, read back in its place. A
// record whose path is UTF-8 keeps its shape byte for byte.

// withPath encodes v (a method-less copy of a record) with path_bytes for
// path.
func withPath(v any, path string) ([]byte, error) { return plumbing.MarshalPathBytes(v, path) }

// readPath decodes b into *v, taking path (a field of *v) from
// path_bytes when b has one at its top. A record without path_bytes
// anywhere is decoded once, as a plain struct: replay decodes every
// record of the log on every command.
func readPath[T any](b []byte, v *T, path func(*T) *string) error {
	if !bytes.Contains(b, []byte(`"path_bytes"`)) {
		return json.Unmarshal(b, v)
	}
	return plumbing.UnmarshalPathBytes(b, v, path)
}

// MarshalJSON writes the repository's entry (RFC 4.2), plus path_bytes
// when its work tree's path is not valid UTF-8.
func (r RepoState) MarshalJSON() ([]byte, error) {
	type plain RepoState
	return withPath(plain(r), r.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RepoState) UnmarshalJSON(b []byte) error {
	type plain RepoState
	return readPath(b, (*plain)(r), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (r Reused) MarshalJSON() ([]byte, error) {
	type plain Reused
	return withPath(plain(r), r.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Reused) UnmarshalJSON(b []byte) error {
	type plain Reused
	return readPath(b, (*plain)(r), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (f Failed) MarshalJSON() ([]byte, error) {
	type plain Failed
	return withPath(plain(f), f.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Failed) UnmarshalJSON(b []byte) error {
	type plain Failed
	return readPath(b, (*plain)(f), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (a AgentRegistered) MarshalJSON() ([]byte, error) {
	type plain AgentRegistered
	return withPath(plain(a), a.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *AgentRegistered) UnmarshalJSON(b []byte) error {
	type plain AgentRegistered
	return readPath(b, (*plain)(a), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (r RollbackStarted) MarshalJSON() ([]byte, error) {
	type plain RollbackStarted
	return withPath(plain(r), r.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RollbackStarted) UnmarshalJSON(b []byte) error {
	type plain RollbackStarted
	return readPath(b, (*plain)(r), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (r RollbackEnded) MarshalJSON() ([]byte, error) {
	type plain RollbackEnded
	return withPath(plain(r), r.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RollbackEnded) UnmarshalJSON(b []byte) error {
	type plain RollbackEnded
	return readPath(b, (*plain)(r), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the record, plus path_bytes for a tree path that is
// not valid UTF-8.
func (n NotePending) MarshalJSON() ([]byte, error) {
	type plain NotePending
	return withPath(plain(n), n.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *NotePending) UnmarshalJSON(b []byte) error {
	type plain NotePending
	return readPath(b, (*plain)(n), func(v *plain) *string { return &v.Path })
}
