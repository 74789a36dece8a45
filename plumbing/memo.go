package plumbing

import (
	"os"
	"path/filepath"
	"strings"
)

// A capture's tree is base (the index's tree) with the paths status listed
// changed (Repo.stage, treeEditor). Where the last capture made its tree
// from the same base, its changes are kept beside the memo of its tree
// (stageMemo) in <keptDir>/memo-<digest>.changes, the very records its
// digest is of (changesRecords). A capture whose changes differ from
// those in a few paths then edits the last capture's tree along those
// paths alone (memoDelta), rather than along all of them or writing the
// whole index's tree: files a person changed and never staged, or an
// earlier turn's thousand new files, are not written into trees again at
// every turn's end (issue 16: the cost follows what changed since the
// last checkpoint, not since the index).

// memoChangesMin is the fewest changes whose records are kept for the
// next capture (storeMemoChanges): below it an edit along all of them
// costs about what one along a few does.
const memoChangesMin = 16

// changesRecords are the records of a tree edit's changes, in the order
// of paths (changes' keys, sorted: sortedChanges): "<path>\0<mode>\0<object>\0"
// for an entry, "<path>\0-\0\0" for a removal. changesDigest is of them.
func changesRecords(changes map[string]*Entry, paths []string) []byte {
	n := 0
	for _, p := range paths {
		n += len(p) + 3
		if e := changes[p]; e != nil {
			n += len(e.Mode) + len(e.OID)
		} else {
			n++
		}
	}
	rec := make([]byte, 0, n)
	for _, p := range paths {
		rec = append(rec, p...)
		if e := changes[p]; e != nil {
			rec = append(append(append(append(append(rec, 0), e.Mode...), 0), e.OID...), 0)
		} else {
			rec = append(rec, "\x00-\x00\x00"...)
		}
	}
	return rec
}

// parseChangesRecords reads changesRecords back; ok is false when b is
// not made of them (a dropTree, which no kept records hold, included).
func parseChangesRecords(b []byte) (changes map[string]*Entry, ok bool) {
	if len(b) == 0 {
		return map[string]*Entry{}, true
	}
	if b[len(b)-1] != 0 {
		return nil, false
	}
	f := strings.Split(string(b[:len(b)-1]), "\x00")
	if len(f)%3 != 0 {
		return nil, false
	}
	changes = make(map[string]*Entry, len(f)/3)
	for i := 0; i < len(f); i += 3 {
		p, mode, oid := f[i], f[i+1], f[i+2]
		if _, dup := changes[p]; dup || !validTreePath(p) {
			return nil, false
		}
		switch {
		case mode == "-" && oid == "":
			changes[p] = nil
		case validMode(mode) && isOIDHex(oid):
			changes[p] = &Entry{Mode: mode, OID: OID(oid)}
		default:
			return nil, false
		}
	}
	return changes, true
}

// validMode reports whether m is the octal mode text of a tree's entry.
func validMode(m string) bool {
	if m == "" || len(m) > 6 {
		return false
	}
	for _, c := range m {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

// memoChangesPath is the file of the records whose digest is digest.
func (r *Repo) memoChangesPath(digest string) string {
	return filepath.Join(r.keptDir(), "memo-"+digest+".changes")
}

// storeMemoChanges keeps records (changesRecords), whose SHA-256 is the
// hex digest, for the next capture (loadMemoChanges), and removes those
// of earlier captures. Written under a temporary name and renamed, not
// fsynced: a file cut short by a crash does not match its name's digest,
// and is not used. A failure keeps nothing, and costs the next capture
// only its speed.
func (r *Repo) storeMemoChanges(digest string, records []byte) {
	dst := r.memoChangesPath(digest)
	if _, err := os.Lstat(dst); err != nil {
		tmp := filepath.Join(r.keptDir(), "memo-"+randHex()+".tmp")
		if writeNewFile(tmp, records) != nil {
			os.Remove(tmp)
			return
		}
		if os.Rename(tmp, dst) != nil {
			os.Remove(tmp)
			return
		}
	}
	r.removeKept("memo-", filepath.Base(dst))
}

// loadMemoChanges returns the changes whose digest is digest, kept by
// storeMemoChanges; ok is false when there are none, or the file is not
// whole.
func (r *Repo) loadMemoChanges(digest string) (map[string]*Entry, bool) {
	if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return nil, false
	}
	b := readSummed(r.memoChangesPath(digest), digest)
	if b == nil {
		return nil, false
	}
	return parseChangesRecords(b)
}

// memoDelta returns the changes that make prevTree, which is base with
// the changes prev (the memo's), into base with the changes now, and
// whether they do. They are now's paths whose entries differ from prev's,
// and prev's paths now lacks, given back base's entry. That holds where
// every path of either is one an index's entry would change alone: none
// is a directory above another of either (a file replaced by a
// directory, or the other way: status lists both), and, for a path prev
// gave an entry that now removes or gives back, base is plain along it
// (shapeIn: no directory at it, no file above it, no empty tree on the
// way), so that removing it takes nothing else with it. Else ok is
// false and the caller makes the tree from base; so it is when they
// would be more than most paths (then no tree is read). Base's trees are
// read along the paths given back and removed only.
func (ed *treeEditor) memoDelta(base OID, prev, now map[string]*Entry, most int) (map[string]*Entry, bool, error) {
	delta := map[string]*Entry{}
	var look []string // prev's entries that now removes or gives back
	for p, e := range now {
		was, had := prev[p]
		if had && sameEntry(was, e) {
			continue
		}
		if had && was != nil && e == nil {
			look = append(look, p)
		}
		if delta[p] = e; len(delta) > most {
			return nil, false, nil
		}
	}
	for p := range prev {
		if _, still := now[p]; !still {
			look = append(look, p)
			if delta[p] = nil; len(delta) > most { // for the count; base's entry below
				return nil, false, nil
			}
		}
	}
	if len(delta) > most || !dirFree(prev, now) || !dirFree(now, prev) {
		return nil, false, nil
	}
	if err := ed.prefetchIn(base, look); err != nil {
		return nil, false, err
	}
	for _, p := range look {
		e, plain, err := ed.shapeIn(base, p)
		if err != nil {
			return nil, false, err
		}
		if !plain {
			return nil, false, nil
		}
		if _, still := now[p]; !still {
			delta[p] = e
		}
	}
	return delta, true, nil
}

// dirFree reports whether no path of a is a directory above a path of a
// or of b.
func dirFree(a, b map[string]*Entry) bool {
	for p := range a {
		for i := len(p) - 1; i > 0; i-- {
			if p[i] != '/' {
				continue
			}
			d := p[:i]
			if _, ok := a[d]; ok {
				return false
			}
			if _, ok := b[d]; ok {
				return false
			}
		}
	}
	return true
}

// sameEntry reports whether a and b (nil: a removal) are the same.
func sameEntry(a, b *Entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Mode == b.Mode && a.OID == b.OID
}
