package plumbing

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
)

// indexScan is what a capture needs to know about an index file before
// deciding whether `git ls-files -s -v -z` and `git write-tree` can be left
// out (both load the whole index; on a 100k-file tree ls-files and parsing
// its output cost about half a status).
//
// Flagged is true when any entry is assume-unchanged (CE_VALID) or has the
// extended flags (skip-worktree, intent-to-add): the capture then asks git
// with ls-files, exactly as without the scan. Gitlinks are the stage-0
// gitlink entries (path to commit), what ls-files -s would list with mode
// 160000; never nil when the scan answered. Root is the cache-tree's root
// tree when the TREE extension holds a valid one, else "".
type indexScan struct {
	Flagged  bool
	Gitlinks map[string]OID
	Root     OID
}

// On-disk index entry flags (git's read-cache.c, Documentation/gitformat-index).
const (
	ceValid     = 0x8000 // assume-unchanged
	ceExtended  = 0x4000 // a second 16-bit flags word follows (skip-worktree, intent-to-add)
	ceStageMask = 0x3000
	ceNameMask  = 0x0fff
)

// scanIndex reads the index file at path, whose objects names are hashLen
// bytes (20 for SHA-1, 32 for SHA-256). ok is false whenever the file is not
// one this reader fully understands: a version other than 2, 3 or 4, a split
// index ("link": the entries that matter may be in the shared index), a
// sparse index ("sdir"), any other required (lowercase) extension, or any
// inconsistency in the layout (entries and extensions must end exactly at
// the trailing checksum). Callers then fall back to asking git. A missing
// file is an empty index: ok, nothing flagged.
func scanIndex(path string, hashLen int) (s indexScan, ok bool) {
	s.Gitlinks = map[string]OID{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, true
	}
	if err != nil || hashLen <= 0 || len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return s, false
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return s, false
	}
	n := binary.BigEndian.Uint32(b[8:12])
	end := len(b) - hashLen // the trailing checksum
	off := 12
	fixed := 40 + hashLen + 2 // stat data, object name, flags
	var name []byte           // v4: the previous entry's name, rebuilt in place
	for i := uint32(0); i < n; i++ {
		if off+fixed > end {
			return s, false
		}
		mode := binary.BigEndian.Uint32(b[off+24 : off+28])
		flags := binary.BigEndian.Uint16(b[off+40+hashLen : off+fixed])
		p := off + fixed
		if flags&ceExtended != 0 {
			if version < 3 {
				return s, false
			}
			s.Flagged = true
			p += 2
		}
		if flags&ceValid != 0 {
			s.Flagged = true
		}
		// A stage-0 gitlink: its path (below) and commit are recorded.
		gitlink := mode&0o170000 == 0o160000 && flags&ceStageMask == 0
		oid := b[off+40 : off+40+hashLen]
		if p > end {
			return s, false
		}
		nameLen := int(flags & ceNameMask)
		if version == 4 {
			// Prefix compression: a varint of bytes to drop from the end of
			// the previous name, then the rest of this name, NUL-terminated.
			strip, w := varint(b[p:end])
			if w <= 0 || strip > uint64(len(name)) {
				return s, false
			}
			p += w
			z := bytes.IndexByte(b[p:end], 0)
			if z < 0 {
				return s, false
			}
			name = append(name[:len(name)-int(strip)], b[p:p+z]...)
			if nameLen != ceNameMask && nameLen != len(name) {
				return s, false
			}
			if gitlink {
				s.Gitlinks[string(name)] = hexOID(oid)
			}
			off = p + z + 1
			continue
		}
		// v2, v3: the name, then 1 to 8 NULs padding the entry to a
		// multiple of 8 bytes.
		var z int
		if nameLen == ceNameMask {
			z = bytes.IndexByte(b[p:end], 0)
			if z < 0 {
				return s, false
			}
		} else {
			z = nameLen
		}
		next := off + ((p - off + z + 8) &^ 7)
		if next > end || bytes.IndexByte(b[p:p+z], 0) >= 0 {
			return s, false
		}
		for _, c := range b[p+z : next] {
			if c != 0 {
				return s, false
			}
		}
		if gitlink {
			s.Gitlinks[string(b[p:p+z])] = hexOID(oid)
		}
		off = next
	}
	// Extensions: signature, 32-bit size, data; until the checksum.
	for off < end {
		if off+8 > end {
			return s, false
		}
		sig := string(b[off : off+4])
		size := int(binary.BigEndian.Uint32(b[off+4 : off+8]))
		data := off + 8
		if size < 0 || data+size > end {
			return s, false
		}
		switch {
		case sig == "TREE":
			s.Root = treeRoot(b[data:data+size], hashLen)
		case sig[0] >= 'A' && sig[0] <= 'Z':
			// Optional (REUC, UNTR, FSMN, EOIE, IEOT): nothing we need.
		default:
			// Required extensions change what the entries mean: "link"
			// (split index), "sdir" (sparse index), or one we do not know.
			return s, false
		}
		off = data + size
	}
	if off != end {
		return s, false
	}
	return s, true
}

// treeRoot returns the root of a TREE extension ("" NUL, entry count,
// space, subtree count, newline, object name) when it is valid (entry count
// not -1).
func treeRoot(d []byte, hashLen int) OID {
	if len(d) < 1 || d[0] != 0 {
		return ""
	}
	nl := bytes.IndexByte(d, '\n')
	if nl < 0 {
		return ""
	}
	cnt, _, ok := bytes.Cut(d[1:nl], []byte{' '})
	if !ok {
		return ""
	}
	c, err := strconv.Atoi(string(cnt))
	if err != nil || c < 0 || len(d) < nl+1+hashLen {
		return ""
	}
	return hexOID(d[nl+1 : nl+1+hashLen])
}

func hexOID(raw []byte) OID {
	const hexdigits = "0123456789abcdef"
	h := make([]byte, 0, 2*len(raw))
	for _, x := range raw {
		h = append(h, hexdigits[x>>4], hexdigits[x&15])
	}
	return OID(h)
}

// varint decodes git's offset varint (varint.c): 7 bits a byte, high bit
// set means more, and each continuation adds one before shifting.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		v++
		c = b[i]
		i++
		v = (v << 7) + uint64(c&127)
	}
	return v, i
}
