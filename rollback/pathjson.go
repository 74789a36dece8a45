package rollback

import "github.com/venom-org/git-venom/plumbing"

// File and Left name paths, which are any bytes but NUL, in JSON strings,
// which hold only UTF-8: two names that differ only in bytes that are not
// UTF-8 would print as the same string. They follow the path_bytes
// convention of plumbing/pathjson.go, as the log's skipped[] and
// submodules[] do: the RFC 11.1 shape, plus "path_bytes" (the path's bytes
// in base64) when the path is not valid UTF-8.

// MarshalJSON writes the RFC 11.1 repos[].files[] shape, plus path_bytes
// for a path that is not valid UTF-8.
func (f File) MarshalJSON() ([]byte, error) {
	type plain File
	return plumbing.MarshalPathBytes(plain(f), f.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *File) UnmarshalJSON(b []byte) error {
	type plain File
	return plumbing.UnmarshalPathBytes(b, (*plain)(f), func(v *plain) *string { return &v.Path })
}

// MarshalJSON writes the RFC 11.1 repos[].left[] shape (RFC 7.4), plus
// path_bytes for a path that is not valid UTF-8.
func (l Left) MarshalJSON() ([]byte, error) {
	type plain Left
	return plumbing.MarshalPathBytes(plain(l), l.Path)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Left) UnmarshalJSON(b []byte) error {
	type plain Left
	return plumbing.UnmarshalPathBytes(b, (*plain)(l), func(v *plain) *string { return &v.Path })
}
