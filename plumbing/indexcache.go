package plumbing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/renameio/v2"
)

// The index cache keeps git's own answers about the user's index from one
// capture to the next, so that a capture of an unchanged index runs
// neither `git ls-files -s -v -z` nor, on a clean tree, `git write-tree`:
// on a 100k-file tree the two and the parsing of ls-files' 7 MB of output
// cost about as much as the status walk itself (bench/README.md). The
// answers are what git printed, and they are tied to the index file by
// its identity (indexKey), which every index write changes, since git
// writes a new index to index.lock and renames it over the old one, and
// by the checksum git writes at the end of every index (gitformat-index(5)):
// the only bytes of the index this code reads are those last ones
// (indexTrailerLen), of the open file the capture copies, checked again
// in the private copy; no entry is ever parsed here.
//
// The cache is one small file per worktree, <git dir>/venom/index-cache.json
// (a line of JSON, then the path lists raw: indexCacheFile), replaced
// atomically. It is a cache only: a missing, unreadable, corrupt
// or foreign file is a miss and the capture asks git, as without it;
// failing to write it fails nothing.

// indexCacheVersion is the format of index-cache.json; a file of any other
// version is a miss.
const indexCacheVersion = 6

// indexSettle is how old, in both mtime and ctime, an index without a
// checksum (indexKey.Trailer "") must be when a capture reads it for the
// capture to store answers about it.
//
// The stat identity alone cannot tell two index files apart that share an
// inode number (the kernel reuses the number of the index git just
// replaced), a size (setting a flag bit does not change it) and both
// timestamps. That takes two index writes within one tick of the file
// system's clock: a jiffy (1-10 ms) on Linux, a second on HFS+ or ext3.
// ctime cannot be set by any program, so every file made after the
// capture read the index has a ctime no earlier than that moment, less one
// tick; an index whose ctime is older than that by more than a tick can
// never be matched by a later file. Two seconds covers one-second clocks
// and their truncation. A capture within that time of a write of such an
// index simply asks git (and holds the answers for its process:
// heldIndex), and the next capture stores.
//
// An index with a checksum needs no settling: two index files with the
// same checksum have the same bytes before it, and every answer the cache
// keeps (ls-files' of the file with core.sparseCheckout off, write-tree's)
// is a function of those bytes alone. This is every index git writes but
// with index.skipHash (git 2.40 and later; feature.manyFiles sets it),
// which writes zeros.
const indexSettle = 2 * time.Second

// indexKey is the identity of the real index file as the capture copied
// it: device and inode numbers, size in bytes, modification and
// status-change times in nanoseconds since the Unix epoch, and its
// checksum (Trailer). git never rewrites an index in place, so a change
// to it gives a new inode, or at least new times, and a new checksum.
type indexKey struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
	// Trailer is the file's last indexTrailerLen bytes in lower-case hex
	// (indexTrailer), or "" when there is no checksum to trust: a file
	// shorter than that, one that could not be read, or one whose
	// checksum is zeros (index.skipHash).
	Trailer string `json:"trailer,omitempty"`
}

// indexTrailerLen is how many bytes from the end of an index file its key
// holds: a SHA-256 checksum, or in a SHA-1 repository the 20-byte SHA-1
// checksum and the 12 bytes before it. Either way they hold the whole
// checksum, so equal trailers mean equal checksums, and the object format
// need not be known before the capture's first git child.
const indexTrailerLen = 32

// indexTrailer returns indexKey.Trailer for the file f, of size bytes:
// "" when it is shorter than indexTrailerLen, cannot be read there, or
// ends in 20 zero bytes (a zeroed checksum of either length; a SHA-256 one
// whose last 20 bytes are zeros by chance only loses the cache's use
// within indexSettle).
func indexTrailer(f io.ReaderAt, size int64) string {
	if size < indexTrailerLen {
		return ""
	}
	var b [indexTrailerLen]byte
	if n, err := f.ReadAt(b[:], size-indexTrailerLen); n != len(b) || (err != nil && err != io.EOF) {
		return ""
	}
	if bytes.Equal(b[indexTrailerLen-20:], make([]byte, 20)) {
		return ""
	}
	return hex.EncodeToString(b[:])
}

// fileTrailer is indexTrailer of the file at path, as it is now.
func fileTrailer(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	return indexTrailer(f, fi.Size())
}

// indexKeyOfOpen is indexKeyOf(fi) with the Trailer of f, the open file fi
// is a stat of.
func indexKeyOfOpen(f *os.File, fi os.FileInfo) (k indexKey, ok bool) {
	if k, ok = indexKeyOf(fi); ok {
		k.Trailer = indexTrailer(f, fi.Size())
	}
	return k, ok
}

// indexKeyOf returns the stat identity of the file fi describes (from a
// stat of the open file that was copied, so the key and the copied bytes
// are the same file), Trailer left "" (indexKeyOfOpen reads it). ok is
// false when there is no file or the system gives no inode and ctime
// (statIdentity): the cache is then not used.
func indexKeyOf(fi os.FileInfo) (k indexKey, ok bool) {
	if fi == nil {
		return k, false
	}
	dev, ino, ctime, ok := statIdentity(fi)
	if !ok {
		return k, false
	}
	return indexKey{Dev: dev, Ino: ino, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), CtimeNs: ctime}, true
}

// settled reports whether the index was last changed more than
// indexSettle before read, the moment the capture started reading it.
func (k indexKey) settled(read time.Time) bool {
	limit := read.Add(-indexSettle).UnixNano()
	return k.MtimeNs < limit && k.CtimeNs < limit
}

// storable reports whether answers about the index file of k, read at
// read, may be stored in the cache file: it has a checksum, or it settled
// (indexSettle).
func (k indexKey) storable(read time.Time) bool {
	return k.Trailer != "" || k.settled(read)
}

// indexAnswer is what a capture takes from `git ls-files -s -v -z`.
// SkipWorktree lists the paths of entries with the skip-worktree bit
// (tags 'S' and 's'), in index order, once per entry as the capture lists
// them; AssumeUnchanged the paths of the other entries with the
// assume-unchanged bit (lower-case tags), whose bit the capture clears in
// its private copy; Gitlinks maps each stage-0 gitlink (mode 160000) to
// the commit the index records, never nil. Attributes is true when the
// index holds a .gitattributes entry (any stage, any flag): git reads
// attributes from the index's .gitattributes where the work tree has none
// (gitattributes(5)), so without one an empty index gives the same
// attributes (Snapshot.IndexAttributes). Dirs lists, sorted, every
// directory with an entry below it (every parent of every entry's path,
// the top "" left out): git's status walk never asks whether one of them
// holds a .git, so Capture does (hiddenNested, issue 13 item 12).
type indexAnswer struct {
	SkipWorktree    []string
	AssumeUnchanged []string
	Gitlinks        map[string]OID
	Attributes      bool
	Dirs            []string
}

// answerOf keeps from ls-files' entries what a capture needs.
func answerOf(entries []IndexEntry) indexAnswer {
	b := newAnswerBuilder()
	for _, e := range entries {
		b.a.add(e)
		b.dirsOf(e.Path)
	}
	return b.done()
}

// answerBuilder makes an indexAnswer entry by entry: dirs collects the
// parents of the paths seen, last is the parent of the path seen last
// (entries come in path order, so most share it with the one before).
type answerBuilder struct {
	a    indexAnswer
	dirs map[string]bool
	last string
}

func newAnswerBuilder() *answerBuilder {
	return &answerBuilder{a: indexAnswer{Gitlinks: map[string]OID{}}, dirs: map[string]bool{}, last: "\x00"}
}

// dirsOf records the parent directories of path.
func (b *answerBuilder) dirsOf(path string) {
	d := parentDir(path)
	if d == b.last {
		return
	}
	b.last = d
	for d != "" && !b.dirs[d] {
		b.dirs[d] = true
		d = parentDir(d)
	}
}

// dirsOfRecord is dirsOf for the path of an ls-files -s -z record (after
// its first tab, before its NUL), without making a string of the path
// when its parent is the last one's.
func (b *answerBuilder) dirsOfRecord(rec []byte) {
	t := bytes.IndexByte(rec, '\t')
	p := rec[t+1 : len(rec)-1]
	d := p[:max(bytes.LastIndexByte(p, '/'), 0)]
	if string(d) == b.last { // no allocation: the compiler compares in place
		return
	}
	b.dirsOf(string(p))
}

// done returns the answer, its Dirs sorted.
func (b *answerBuilder) done() indexAnswer {
	if len(b.dirs) > 0 {
		b.a.Dirs = make([]string, 0, len(b.dirs))
		for d := range b.dirs {
			b.a.Dirs = append(b.a.Dirs, d)
		}
		sort.Strings(b.a.Dirs)
	}
	return b.a
}

// add keeps what a capture needs from one entry.
func (a *indexAnswer) add(e IndexEntry) {
	switch {
	case e.SkipWorktree():
		a.SkipWorktree = append(a.SkipWorktree, e.Path)
	case e.AssumeUnchanged():
		a.AssumeUnchanged = append(a.AssumeUnchanged, e.Path)
	}
	if e.Mode == "160000" && e.Stage == 0 {
		a.Gitlinks[e.Path] = e.OID
	}
	if e.Path == attrFile || strings.HasSuffix(e.Path, "/"+attrFile) {
		a.Attributes = true
	}
}

// attrFile is the name of a per-directory attributes file.
const attrFile = ".gitattributes"

// attrRecord reports whether an ls-files -z record (NUL included) is of
// a .gitattributes entry: its path, after the tab, is the name or ends in
// "/" and the name.
func attrRecord(rec []byte) bool {
	const name = attrFile + "\x00"
	return bytes.HasSuffix(rec, []byte("\t"+name)) || bytes.HasSuffix(rec, []byte("/"+name))
}

// parseIndexAnswer is answerOf(ParseLsFiles(out)) without building an
// entry for every record: nearly every record of a large index is a plain
// cached file ("H <mode other than 160000> ..."), which a capture does
// not use, and ParseLsFiles spends about 50 ms and 48 MB on the 100k
// records of the bench tree. Those records are checked for their shape
// only (tag, space, tab); every other record goes through ParseLsFiles.
// It accepts whatever ParseLsFiles accepts, with the same answer.
func parseIndexAnswer(out []byte) (indexAnswer, error) {
	b := newAnswerBuilder()
	for len(out) > 0 {
		n := bytes.IndexByte(out, 0)
		if n < 0 {
			return indexAnswer{}, fmt.Errorf("ls-files: record without NUL terminator")
		}
		rec := out[:n+1]
		out = out[n+1:]
		if len(rec) > 4 && rec[0] == 'H' && rec[1] == ' ' && !bytes.HasPrefix(rec[2:], []byte("160000 ")) &&
			bytes.IndexByte(rec[2:], '\t') >= 0 && !attrRecord(rec) {
			b.dirsOfRecord(rec)
			continue
		}
		e, err := ParseLsFiles(rec)
		if err != nil {
			return indexAnswer{}, err
		}
		for _, x := range e {
			b.a.add(x)
			b.dirsOf(x.Path)
		}
	}
	return b.done(), nil
}

// listIndex asks git for the indexAnswer of the private index in env.
//
// With onDisk, ls-files runs with core.sparseCheckout off, so that the
// answer is a function of the index file alone and can be cached: in a
// sparse checkout git clears, as it reads the index, the skip-worktree
// bit of every such path that is present in the work tree (git-config(1),
// sparse.expectFilesOutsideOfPatterns; repository.c, repo_read_index).
// Without onDisk it runs with the user's configuration, which is what the
// capture's status walk sees.
func (r *Repo) listIndex(ctx context.Context, env []string, onDisk bool) (indexAnswer, error) {
	args := []string{"ls-files", "-s", "-v", "-z"}
	if onDisk {
		args = append([]string{"-c", "core.sparseCheckout=false"}, args...)
	}
	out, err := r.Run(ctx, Options{Env: env}, args...)
	if err != nil {
		return indexAnswer{}, fmt.Errorf("listing the index: %w", err)
	}
	return parseIndexAnswer(out)
}

// indexCache is one entry of the cache: for the index file with Key,
// Answer is what `git ls-files -s -v -z` said of it with
// core.sparseCheckout off (listIndex), and Tree, when not "", what `git
// write-tree` printed for an unmodified copy of it.
type indexCache struct {
	Key    indexKey
	Answer indexAnswer
	Tree   OID
	// Hidden are the directories of Answer.Dirs a capture of this index
	// found holding a .git (nested.go), sorted: the captures after look
	// at them again without looking at every directory.
	Hidden []string
	// Status, when not "", is the file name in keptDir of this index's
	// status index (kept.go), used only while it is statusIndexName of
	// the key and the configuration of the moment.
	Status string
}

// indexCacheFile is index-cache.json's header: one line of JSON, the
// file's first. The five path lists follow it raw, back to back, in the
// order of indexCacheLists: NUL-terminated lists, as git's -z output (a
// path is any bytes but NUL, which a JSON string cannot hold without
// escapes), their byte lengths in Lists and the SHA-256 of all their bytes
// in ListsSum (lower-case hex); no lists, no Lists and nothing after the
// line. Gitlinks holds one "<commit> <path>" record per gitlink; Dirs the
// tracked directories. Until version 5 the lists were base64 strings in
// the JSON: on test262 (57k files, 9k directories) decoding them cost
// every capture about 1.1 ms, more than the rest of its reading of the
// cache (issue 16, the hook turn's profile); raw, they are one copy.
type indexCacheFile struct {
	Version    int      `json:"version"`
	Key        indexKey `json:"key"`
	Attributes bool     `json:"attributes,omitempty"`
	Tree       OID      `json:"tree,omitempty"`
	Status     string   `json:"status,omitempty"`
	Lists      []int    `json:"lists,omitempty"`
	ListsSum   string   `json:"lists_sha256,omitempty"`
}

// indexCacheLists is the number of path lists after the header line:
// skip-worktree, assume-unchanged, gitlinks, directories, hidden.
const indexCacheLists = 5

// indexCachePath is the worktree's index cache file (indexcache.go).
func (r *Repo) indexCachePath() string {
	return filepath.Join(r.GitDir, "venom", "index-cache.json")
}

// loadIndexCache returns the cache entry for key, or nil when there is
// none: no file, an unreadable or malformed one, another version or
// another key. It never fails.
func (r *Repo) loadIndexCache(key indexKey) *indexCache {
	c, why := readIndexCache(r.indexCachePath(), key)
	if c != nil {
		r.trace.printf("index cache: hit")
	} else {
		r.trace.printf("index cache: miss (%s)", why)
	}
	return c
}

// heldIndex is the index cache's answers about one index file without a
// checksum (index.skipHash) that changed less than indexSettle before a
// capture read it, so that the cache does not store them (a later file
// might get the same key), kept
// in memory with that file held open for the rest of the process. While
// it is open no other file can get its device and inode numbers, and git
// never rewrites an index in place: as long as the real index is still
// that file, with the same key, the answers are the file's. So a
// rollback's verification capture does not ask git again what its
// safety capture asked of the same index moments before, where the
// person's last `git add` or checkout was within two seconds (issue 16:
// an ls-files of the whole index and a write-tree, a third of a status
// walk on a 4.8k-file tree). The status index is never taken from it.
// An index with a checksum needs none of this: its answers are stored.
type heldIndex struct {
	f     *os.File
	cache indexCache
}

// heldCache is the held answers for the index file of key, which fi (a
// stat of the open real index) describes, or nil.
func (r *Repo) heldCache(key indexKey, fi os.FileInfo) *indexCache {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	h := r.held
	if h == nil || h.cache.Key != key {
		return nil
	}
	if hfi, err := h.f.Stat(); err != nil || !os.SameFile(hfi, fi) {
		return nil
	}
	c := h.cache
	c.Status = ""
	r.trace.printf("index cache: held by this process")
	return &c
}

// hold keeps c, the answers about the real index file fi describes, for
// this process's next captures, with that file open (heldIndex). It
// opens the file again, and keeps nothing unless it is still the same
// file with the same key.
func (r *Repo) hold(c *indexCache, fi os.FileInfo) {
	f, err := os.Open(r.RealIndex())
	if err != nil {
		return
	}
	nfi, err := f.Stat()
	if k, ok := indexKeyOfOpen(f, nfi); err != nil || !ok || k != c.Key || !os.SameFile(nfi, fi) {
		f.Close()
		return
	}
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	if r.held != nil {
		r.held.f.Close()
	}
	r.held = &heldIndex{f: f, cache: *c}
}

// cachedTracksBelow reports whether the index tracks a path below dir (a
// directory relative to the top, with no trailing slash), or a gitlink at
// it, as the cache entry for the index file as it is now says; known is
// false when there is no such entry (TracksBelowPrefix then asks git).
func (r *Repo) cachedTracksBelow(dir string) (tracked, known bool) {
	f, err := os.Open(r.RealIndex())
	if err != nil {
		return false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, false
	}
	key, ok := indexKeyOfOpen(f, fi)
	if !ok {
		return false, false
	}
	c, _ := readIndexCache(r.indexCachePath(), key)
	if c == nil {
		return false, false
	}
	_, isDir := slices.BinarySearch(c.Answer.Dirs, dir)
	_, isLink := c.Answer.Gitlinks[dir]
	return isDir || isLink, true
}

// readIndexCache is loadIndexCache; why says what made a miss.
func readIndexCache(path string, key indexKey) (c *indexCache, why string) {
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, "no cache file"
		}
		return nil, "unreadable: " + err.Error()
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, "corrupt: no header line"
	}
	var f indexCacheFile
	if err := json.Unmarshal(b[:nl], &f); err != nil {
		return nil, "corrupt: " + err.Error()
	}
	if f.Version != indexCacheVersion {
		return nil, fmt.Sprintf("version %d", f.Version)
	}
	if f.Key != key {
		return nil, "the index changed"
	}
	lists, why := indexCacheListsOf(&f, b[nl+1:])
	if why != "" {
		return nil, why
	}
	c = &indexCache{Key: key, Answer: indexAnswer{Gitlinks: map[string]OID{}}}
	var ok bool
	if c.Answer.SkipWorktree, ok = splitNul(lists[0]); !ok {
		return nil, "corrupt skip_worktree"
	}
	if c.Answer.AssumeUnchanged, ok = splitNul(lists[1]); !ok {
		return nil, "corrupt assume_unchanged"
	}
	if c.Answer.Dirs, ok = splitNul(lists[3]); !ok {
		return nil, "corrupt dirs"
	}
	if c.Hidden, ok = splitNul(lists[4]); !ok {
		return nil, "corrupt hidden"
	}
	links, ok := splitNul(lists[2])
	if !ok {
		return nil, "corrupt gitlinks"
	}
	for _, l := range links {
		oid, p, found := strings.Cut(l, " ")
		if !found || p == "" || !isOIDHex(oid) {
			return nil, "corrupt gitlinks"
		}
		c.Answer.Gitlinks[p] = OID(oid)
	}
	if f.Tree != "" && !isOIDHex(string(f.Tree)) {
		return nil, "corrupt tree"
	}
	c.Tree = f.Tree
	if f.Status != "" && !validKeptName(f.Status, "status-") {
		return nil, "corrupt status"
	}
	c.Status = f.Status
	c.Answer.Attributes = f.Attributes
	return c, ""
}

// storeIndexCache replaces the cache file with c. The write is atomic
// (renameio: a temporary file in the same directory, fsynced, renamed),
// so a concurrent capture reads the old entry or the new one, never half
// of one; the last writer wins, and each entry is true of its own key.
// The directory is not fsynced: a rename lost in a crash leaves the old
// entry, which is still true of the index it names.
func (r *Repo) storeIndexCache(c *indexCache) error {
	var links bytes.Buffer
	for p, oid := range c.Answer.Gitlinks {
		fmt.Fprintf(&links, "%s %s\x00", oid, p)
	}
	b, err := indexCacheBytes(indexCacheFile{
		Version:    indexCacheVersion,
		Key:        c.Key,
		Attributes: c.Answer.Attributes,
		Tree:       c.Tree,
		Status:     c.Status,
	}, NulList(c.Answer.SkipWorktree), NulList(c.Answer.AssumeUnchanged), links.Bytes(),
		NulList(c.Answer.Dirs), NulList(c.Hidden))
	if err != nil {
		return err
	}
	path := r.indexCachePath()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(path, b, 0o644, renameio.WithTempDir(dir))
}

// indexCacheBytes is the cache file of header f and the lists
// (indexCacheFile's layout, in indexCacheLists' order): its header line,
// with the lists' lengths and checksum set, and the lists after it.
func indexCacheBytes(f indexCacheFile, lists ...[]byte) ([]byte, error) {
	if len(lists) != indexCacheLists {
		return nil, fmt.Errorf("index cache: %d lists, not %d", len(lists), indexCacheLists)
	}
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total > 0 {
		sum := sha256.New()
		f.Lists = make([]int, len(lists))
		for i, l := range lists {
			f.Lists[i] = len(l)
			sum.Write(l)
		}
		f.ListsSum = hex.EncodeToString(sum.Sum(nil))
	}
	head, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	b := append(head, '\n')
	for _, l := range lists {
		b = append(b, l...)
	}
	return b, nil
}

// indexCacheListsOf splits rest, the bytes after the header line of f,
// into the lists f gives the lengths of, once their checksum is right;
// why says what is wrong otherwise.
func indexCacheListsOf(f *indexCacheFile, rest []byte) (lists [indexCacheLists][]byte, why string) {
	if len(f.Lists) == 0 {
		if len(rest) != 0 || f.ListsSum != "" {
			return lists, "corrupt: bytes after the header line"
		}
		return lists, ""
	}
	if len(f.Lists) != indexCacheLists {
		return lists, "corrupt lists"
	}
	at := 0
	for i, n := range f.Lists {
		if n < 0 || n > len(rest)-at {
			return lists, "corrupt lists: cut short"
		}
		lists[i] = rest[at : at+n]
		at += n
	}
	if at != len(rest) {
		return lists, "corrupt lists: bytes after them"
	}
	sum := sha256.Sum256(rest)
	if hex.EncodeToString(sum[:]) != f.ListsSum {
		return lists, "corrupt lists: checksum mismatch"
	}
	return lists, ""
}

// splitNul splits a NUL-terminated list; ok is false when the list does
// not end in NUL or holds an empty name. The names are slices of one copy
// of b, not a copy each.
func splitNul(b []byte) (list []string, ok bool) {
	if len(b) == 0 {
		return nil, true
	}
	if b[len(b)-1] != 0 {
		return nil, false
	}
	s := string(b)
	list = make([]string, 0, bytes.Count(b, []byte{0}))
	for len(s) > 0 {
		i := strings.IndexByte(s, 0)
		if i == 0 {
			return nil, false
		}
		list = append(list, s[:i])
		s = s[i+1:]
	}
	return list, true
}

// isOIDHex reports whether s is an object name: 40 (SHA-1) or 64
// (SHA-256) lower-case hex digits.
func isOIDHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// StatIdentity returns the device and inode numbers of the file fi
// describes and its status-change time (ctime) in nanoseconds since the
// Unix epoch; ok is false where the system does not give them (then
// every answer is 0). A rollback compares files by them (rollback's
// stamp).
func StatIdentity(fi os.FileInfo) (dev, ino uint64, ctimeNs int64, ok bool) {
	return statIdentity(fi)
}
