package plumbing

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"
)

// A capture leaves two index files for the next one, in
// <git dir>/venom/kept/ (issue 16): they hold what git learnt of the work
// tree's files, stat data that lets the next git skip reading and hashing
// a file it already knows, and nothing else. Both are caches: a missing,
// foreign or damaged one only makes the next capture do all its work
// (git failing on one makes the capture do that work again without it),
// and the user's index is never written.
//
//   - The status index: a copy of the user's index whose stat data the
//     capture's own status walk refreshed (status rewrites the private
//     copy when a file's stat data changed but its content did not: after
//     a rollback, every restored path). Kept only where the copy is the
//     user's index byte for byte but that stat data: no assume-unchanged
//     or skip-worktree bit and no gitlink in it (Capture), and an index
//     settled as the index cache wants it. Named after the user's index
//     file's identity (indexKey) and the configuration (keptEnvID), and
//     used only while both are the same. Not kept while an attributes file
//     differs from the index's (status lists it), and a walk from it that
//     lists one is made again from the user's index: the stat data was
//     refreshed under the attributes of then. git's racy-git rule holds
//     because it is copied with its own mtime, as the user's index is
//     (copyKeepMtime), and git smudged its racily clean entries when it
//     wrote it. Its entries' objects are the user's index's, which gc
//     keeps.
//   - The stage index (keptStage): the index of the changed paths alone
//     the last tree edit staged (Repo.stage), entries with the stat data
//     update-index gave them, so that a file the person changed and never
//     staged is not hashed again by every capture; and the tree that edit
//     made, with what it made it from (base and changes), so that the
//     same change set on the same base is not written again; and the
//     stamps of its files as the capture saw them (stamps.go), so that a
//     capture of the same paths, each as it was, runs no update-index at
//     all. Used only on the same base, under the same configuration,
//     with no attributes file among the paths then or now. Its blobs may be in no ref (a
//     dedup, a plan's capture) and a gc may prune them: mktree refuses an
//     entry whose object is gone, and the edit is then made again without
//     the kept index; a memoized tree is used only once git says it is
//     there (git prunes an unreachable object with all it reaches, or
//     keeps them all).

// keptDir is where a capture's kept files are.
func (r *Repo) keptDir() string { return filepath.Join(r.GitDir, "venom", "kept") }

// statusIndexName is the file name of the status index of the user's
// index file with key k, made under the configuration env (keptEnvID).
func statusIndexName(k indexKey, env string) string {
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(append(b, env...))
	return "status-" + hex.EncodeToString(sum[:8]) + ".index"
}

// validKeptName reports whether name can be a kept file's name (prefix,
// no directory) as a cache file records it.
func validKeptName(name, prefix string) bool {
	return strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".index") && !strings.ContainsAny(name, "/\\")
}

// keepStatusIndex makes the private index idx, which the status walk
// rewrote, the status index named name (statusIndexName): a hard link to it under its name
// (git replaces an index by renaming a new file over it, never in place,
// so what later steps do to idx leaves the link as it is), or a copy
// where links are not possible. Other status indexes, of earlier index
// files, are removed. It returns the name kept, "" when it could not.
func (r *Repo) keepStatusIndex(idx, name string) string {
	dir := r.keptDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	tmp := filepath.Join(dir, name+".tmp-"+randHex())
	if !linkOrCopy(idx, tmp) {
		return ""
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return ""
	}
	r.removeKept("status-", name)
	return name
}

// Wrote tells r that this process has just written files into its work
// tree (a rollback, before its verification capture). An index a status
// walk of a capture begun in that second refreshes holds entries of
// those files that git cannot tell from a later write of the same size
// with the mtime put back (unsureEntry): it is not kept as the status
// index, and no git is asked whether it could be. A capture a few seconds
// later refreshes and keeps its own.
func (r *Repo) Wrote() { r.wrote.Store(time.Now().UnixNano()) }

// unsureEntry returns the first entry of the index idx (env names it)
// that records a change git cannot tell from a later write by its stat
// data (stageStamps.unsureStat, by the moments s took before the status
// walk that refreshed idx began), with its times; "" when there is none.
// An entry the walk refreshed from a file changed in the second it
// looked, or later, would look clean to git after a write later in that
// second that kept the size and put the mtime back (cp -p, touch -d). A
// status index is kept only without one. It asks `git ls-files --debug`
// (about 35 ms for 57,000 entries), which runs only where status rewrote
// the index: after a rollback, a checkout, files touched. An error is an
// answer too: the index is then not kept.
func (r *Repo) unsureEntry(ctx context.Context, idx string, env []string, s stageStamps) string {
	if w := r.wrote.Load(); w != 0 && s.unsureStat(true, w, w) {
		return "this process wrote files of the tree as the capture began"
	}
	out, err := r.Run(ctx, Options{Env: env}, "ls-files", "--debug")
	if err != nil {
		return "its entries cannot be listed: " + err.Error()
	}
	// Each entry is its path (quoted where it needs it, so on one line),
	// then indented lines of its stat data, in this order:
	// "  ctime: <s>:<ns>", "  mtime: <s>:<ns>", "  dev: <n>\tino: <n>"
	// (git keeps the device's low 32 bits).
	var path string
	var ctime, mtime int64
	stamp := func(v []byte) (int64, bool) {
		sec, nsec, _ := bytes.Cut(v, []byte(":"))
		a, err1 := strconv.ParseInt(string(sec), 10, 64)
		b, err2 := strconv.ParseInt(string(nsec), 10, 64)
		return a*1e9 + b, err1 == nil && err2 == nil
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		ok := true
		if v, found := bytes.CutPrefix(line, []byte("  ctime: ")); found {
			ctime, ok = stamp(v)
		} else if v, found := bytes.CutPrefix(line, []byte("  mtime: ")); found {
			mtime, ok = stamp(v)
		} else if v, found := bytes.CutPrefix(line, []byte("  dev: ")); found {
			d, _, _ := bytes.Cut(v, []byte("\t"))
			dev, err := strconv.ParseUint(string(d), 10, 64)
			ok = err == nil
			if ok && s.unsureStat(s.fsOK && dev == s.fsDev&0xffffffff, mtime, ctime) {
				return fmt.Sprintf("%s changed as the walk began or after (ctime %d, mtime %d)", path, ctime, mtime)
			}
		} else if len(line) > 0 && line[0] != ' ' {
			path, ctime, mtime = string(line), 0, 0
		}
		if !ok {
			return fmt.Sprintf("git listed %q, which is not understood", line)
		}
	}
	return ""
}

// removeKept removes the kept files whose names start with prefix, but
// keep and the files beside it (keep.ls, keep.sets, keep.stamps): those
// of earlier captures, and temporary files a killed one left.
// A capture that copies one of them meanwhile finds it gone and does
// without it.
func (r *Repo) removeKept(prefix, keep string) {
	ents, err := os.ReadDir(r.keptDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, prefix) && n != keep && (keep == "" || !strings.HasPrefix(n, keep+".")) {
			os.Remove(filepath.Join(r.keptDir(), n))
		}
	}
}

func randHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%d", b, os.Getpid())
}

// keptStage is the stage index a tree edit leaves for the next capture
// (kept.go's header): Index is its file name in keptDir; Paths are the
// paths of its entries but the seeded attributes files (they have the
// stat data update-index gave them, or none: an --index-info record);
// Attrs the .gitattributes entries of Base seeded in it, for the
// directories Dirs ("" for the top); Tainted, that an attributes file was
// among its paths (what its entries were hashed under is not Base's);
// Env, the configuration it was made under (keptEnvID); Unsure, the paths
// whose files had changed (ctime or mtime) in or after the second the
// capture that made their entries began (stageStamps.unsure), which the
// next capture records again without their stat data before git reads
// the paths again, so git reads those files (Repo.stage);
// Memo the tree the
// edit made; Listing what `git ls-files -s -v -z` printed of it, so that
// a capture after which git did not rewrite its copy (nothing to hash or
// refresh: a dedup) need not ask again. The listing is kept beside the
// index, in <Index>.ls, raw, and stage.json holds its SHA-256
// (ListingSum): it is read only where it is used (keptListing), and
// stage.json, which every capture reads, stays small. So are Paths, Dirs
// and Unsure, in <Index>.sets (keptSets; SetsSum), read by the capture
// that stages from the kept index past its fast path (loadSets), and by
// no other: in base64 inside stage.json the 10,000 paths of a big
// capture cost it 17 ms to decode and more to encode, a tenth of its own
// CPU, and read at every capture the 50,000 paths of one big turn cost
// each dedup after it 6-8 ms (issue 16). Count is how many Paths there
// are, in stage.json, so that a capture staging far fewer paths leaves
// the kept index alone without reading them (keptUsable).
type keptStage struct {
	Index   string
	Base    OID
	Paths   map[string]bool
	Attrs   map[string]bool
	Dirs    map[string]bool
	Tainted bool
	Env     string
	Unsure  map[string]bool
	Count   int
	// loaded says that Paths, Dirs and Unsure are read (loadSets), or
	// set by the capture that made it.
	loaded  bool
	Memo    stageMemo
	Listing []byte // set to store; loaded by keptListing
	// ListingSum is the hex SHA-256 of the listing file, as loaded.
	ListingSum string
	// SetsSum is the hex SHA-256 of <Index>.sets, as loaded or stored.
	SetsSum string
	// StatSum is the hex SHA-256 of the stamps of the paths staged in it,
	// as the capture that made it saw them before git read them
	// (stageStamps.sum), "" when some file had changed too lately for its
	// stamp to be kept, or the capture staged submodule commits or kept
	// entries too (stamps.go).
	StatSum string
	// Stamps are the settled files' stamps, as StatSum's
	// (stageStamps.settledRecords), set to store; kept beside the index
	// in <Index>.stamps, whose SHA-256 StampsSum is, and read only where
	// they are used (keptStamps). None for fewer than keptStampsMin
	// paths, or with submodule commits or kept entries.
	Stamps    []byte
	StampsSum string
}

// keptStageVersion is the format of stage.json; another is not read.
// Version 4 moved Paths and Dirs out of it, into <Index>.sets; version 5
// added Unsure (an older file, without it, is not to be trusted);
// version 6 the stamps of each file (StampsSum); version 7 moved Unsure
// into <Index>.sets and added the count of paths (keptStage.Count).
const keptStageVersion = 7

// stageMemo says that the tree edit of Base with the changes whose digest
// is Digest (changesDigest) made Tree; Count is how many changes there
// were (0: not said), so that a capture with far more or fewer need not
// read them (memo.go).
type stageMemo struct {
	Base   OID    `json:"base,omitempty"`
	Digest string `json:"digest,omitempty"`
	Tree   OID    `json:"tree,omitempty"`
	Count  int    `json:"count,omitempty"`
}

// keptStageFile is stage.json: Attrs NUL-terminated, as git's -z output,
// stored as base64 (a path is any bytes but NUL); Paths, Dirs and Unsure
// are in <Index>.sets, whose SHA-256 SetsSum is (keptSets), and Count
// says how many Paths there are.
type keptStageFile struct {
	Version int       `json:"version"`
	Index   string    `json:"index"`
	Base    OID       `json:"base"`
	Attrs   []byte    `json:"attrs,omitempty"`
	SetsSum string    `json:"sets_sha256"`
	Count   int       `json:"path_count"`
	Tainted bool      `json:"tainted,omitempty"`
	Env     string    `json:"env,omitempty"`
	Memo    stageMemo `json:"memo"`
	// ListingSum is the hex SHA-256 of <Index>.ls (keptStage.Listing).
	ListingSum string `json:"listing_sha256,omitempty"`
	// StatSum is keptStage.StatSum.
	StatSum string `json:"stat_sha256,omitempty"`
	// StampsSum is the hex SHA-256 of <Index>.stamps (keptStage.Stamps).
	StampsSum string `json:"stamps_sha256,omitempty"`
}

func (r *Repo) keptStagePath() string { return filepath.Join(r.keptDir(), "stage.json") }

// loadKeptStage returns the kept stage index's description, nil when
// there is none or it is not whole: stage.json alone, its sets not read
// (loadSets).
func (r *Repo) loadKeptStage() *keptStage {
	b, err := os.ReadFile(r.keptStagePath())
	if err != nil {
		return nil
	}
	var f keptStageFile
	if json.Unmarshal(b, &f) != nil || f.Version != keptStageVersion || !validKeptName(f.Index, "stage-") ||
		!isOIDHex(string(f.Base)) || f.Count < 0 {
		return nil
	}
	ks := &keptStage{Index: f.Index, Base: f.Base, Memo: f.Memo, Tainted: f.Tainted, Env: f.Env, ListingSum: f.ListingSum,
		SetsSum: f.SetsSum, Count: f.Count, StatSum: f.StatSum, StampsSum: f.StampsSum}
	var ok bool
	if ks.Attrs, ok = nulSet(f.Attrs); !ok {
		return nil
	}
	return ks
}

// loadSets reads ks's Paths, Dirs and Unsure from <Index>.sets
// (keptSets) unless they are there already, and reports whether ks has
// them: false when the file is missing, is not the one stage.json names,
// does not parse or holds other than Count paths.
func (r *Repo) loadSets(ks *keptStage) bool {
	if ks.loaded {
		return true
	}
	paths, dirs, unsure, ok := r.keptSets(ks.Index, ks.SetsSum)
	if !ok || len(paths) != ks.Count {
		return false
	}
	ks.Paths, ks.Dirs, ks.Unsure, ks.loaded = paths, dirs, unsure, true
	return true
}

// keptSlack is how many more paths than twice those a capture stages the
// kept stage index may hold and still be staged from (keptUsable).
const keptSlack = 64

// keptUsable reports whether a kept stage index of count paths is worth
// staging n paths from: its copy, its sets and the drop of the entries
// of the paths not staged now cost with count, what it spares (hashing
// again the files of paths in both) with n. After a turn of 50,000 new
// files, rolled back or committed, the next capture of one changed file
// copied a 4.8 MB index and had update-index drop 50,000 entries from it,
// 0.23 s of CPU on test262 (issue 16); a capture of few paths hashes them
// again instead.
func keptUsable(count, n int) bool { return count <= 2*n+keptSlack }

// keptSets reads <index>.sets, the Paths, the Dirs and the Unsure of the
// kept stage index named index: each a NUL-terminated list, in no order,
// the Dirs after an empty record, each with a "/" after it (the top
// directory is "/"), then another empty record and Unsure. ok is false
// when the file is missing, is not the one stage.json names (its SHA-256
// is not sum) or does not parse.
func (r *Repo) keptSets(index, sum string) (paths, dirs, unsure map[string]bool, ok bool) {
	b := readSummed(filepath.Join(r.keptDir(), index+".sets"), sum)
	if b == nil {
		return nil, nil, nil, false
	}
	p, rest, ok := cutRecords(b)
	if !ok {
		return nil, nil, nil, false
	}
	d, u, ok := cutRecords(rest)
	if !ok {
		return nil, nil, nil, false
	}
	if paths, ok = nulSet(p); !ok {
		return nil, nil, nil, false
	}
	if unsure, ok = nulSet(u); !ok {
		return nil, nil, nil, false
	}
	ds, ok := nulSet(d)
	if !ok {
		return nil, nil, nil, false
	}
	dirs = make(map[string]bool, len(ds))
	for p := range ds {
		if !strings.HasSuffix(p, "/") {
			return nil, nil, nil, false
		}
		dirs[strings.TrimSuffix(p, "/")] = true
	}
	return paths, dirs, unsure, true
}

// cutRecords cuts b, NUL-terminated records none of which is empty but
// one, at that empty record: the records before it, and what follows.
// ok is false when there is none.
func cutRecords(b []byte) (before, after []byte, ok bool) {
	if len(b) > 0 && b[0] == 0 {
		return nil, b[1:], true
	}
	i := bytes.Index(b, []byte{0, 0})
	if i < 0 {
		return nil, nil, false
	}
	return b[:i+1], b[i+2:], true
}

// keptSetsBytes is what keptSets reads: ks's Paths, an empty record, its
// Dirs, each "/"-terminated, another empty record and its Unsure, every
// record NUL-terminated. Unsorted: they are sets, and a sort of 10,000
// paths costs about 5 ms.
func keptSetsBytes(ks *keptStage) []byte {
	size := 2
	for p := range ks.Paths {
		size += len(p) + 1
	}
	for d := range ks.Dirs {
		size += len(d) + 2
	}
	for p := range ks.Unsure {
		size += len(p) + 1
	}
	b := make([]byte, 0, size)
	for p := range ks.Paths {
		b = append(append(b, p...), 0)
	}
	b = append(b, 0)
	for d := range ks.Dirs {
		b = append(append(b, d...), '/', 0)
	}
	b = append(b, 0)
	for p := range ks.Unsure {
		b = append(append(b, p...), 0)
	}
	return b
}

// pendKeptStage puts the stage index idx in keptDir under a new name (a
// hard link, or a copy where links are not possible) and returns its
// path, "" when it could not: the file the capture makes the kept one if
// it succeeds (storeKeptStage), and removes otherwise. A capture killed
// before that leaves it behind, beside no description that names it, and
// the next capture that keeps one removes it.
func (r *Repo) pendKeptStage(idx string) string {
	dir := r.keptDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	dst := filepath.Join(dir, "stage-"+randHex()+".index")
	if !linkOrCopy(idx, dst) {
		return ""
	}
	return dst
}

// writeNewFile creates path, which must not exist, mode 0600, holding
// data (writeNew).
func writeNewFile(path string, data []byte) error {
	return writeNew(path, bytes.NewReader(data))
}

// writeNew creates dst, which must not exist, mode 0600, holding what src
// reads; on a failure nothing is left at dst.
func writeNew(dst string, src io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// linkOrCopy makes dst, a new name, the file src: a hard link, or a copy
// with src's mtime where links are not possible (nothing left on a
// failure). It reports whether it did.
func linkOrCopy(src, dst string) bool {
	if os.Link(src, dst) == nil {
		return true
	}
	if CopyKeepMtime(src, dst) != nil {
		os.Remove(dst)
		return false
	}
	return true
}

// storeKeptStage makes the stage index at path (pendKeptStage) the kept
// one, described by ks (whose Index it sets), removes the ones before,
// and reports whether it did. A failure leaves path to the caller to
// remove: the next capture stages without it.
func (r *Repo) storeKeptStage(path string, ks *keptStage) bool {
	dir := r.keptDir()
	name := filepath.Base(path)
	f := keptStageFile{Version: keptStageVersion, Index: name, Base: ks.Base, Memo: ks.Memo, Tainted: ks.Tainted, Env: ks.Env,
		Attrs: nulOf(ks.Attrs), Count: len(ks.Paths), StatSum: ks.StatSum}
	// The sets beside the index, before the description that names them;
	// without them it is not kept. They and the listing are new files
	// under the new index's unique name, which no reader opens before
	// stage.json names them with their SHA-256, so they are written in
	// place and not fsynced (a file a crash cut short is a checksum
	// mismatch, a miss); only stage.json, which captures read while it is
	// replaced, goes through renameio. Three fsyncs a capture were about
	// 1.3 ms of a hook turn's CPU on test262 (issue 16).
	var ok bool
	if f.SetsSum, ok = writeSummed(filepath.Join(dir, name+".sets"), keptSetsBytes(ks)); !ok {
		return false
	}
	// The listing and the stamps likewise; one that cannot be written is
	// not named, and is asked of git again.
	f.ListingSum, _ = writeSummed(filepath.Join(dir, name+".ls"), ks.Listing)
	f.StampsSum, _ = writeSummed(filepath.Join(dir, name+".stamps"), ks.Stamps)
	b, err := json.Marshal(f)
	if err == nil {
		err = renameio.WriteFile(r.keptStagePath(), b, 0o600, renameio.WithTempDir(dir))
	}
	if err != nil {
		return false
	}
	ks.Index, ks.ListingSum, ks.SetsSum, ks.StampsSum, ks.Count, ks.loaded = name, f.ListingSum, f.SetsSum, f.StampsSum, f.Count, true
	r.removeKept("stage-", name)
	return true
}

// rememoKeptStage gives the kept stage index ks, as loaded and still
// named by stage.json, the memo m: the tree a capture made from its
// entries, taken as they were (Repo.stage's stamps) with other removals
// or nested repositories. Only stage.json is written (renameio); the index
// and the files beside it stay. It reports whether it did; stage.json
// naming another index by then (a capture of another agent kept one) is
// left as it is.
func (r *Repo) rememoKeptStage(ks *keptStage, m stageMemo) bool {
	var now keptStageFile
	if b, err := os.ReadFile(r.keptStagePath()); err != nil || json.Unmarshal(b, &now) != nil ||
		now.Version != keptStageVersion || now.Index != ks.Index || now.SetsSum != ks.SetsSum {
		return false
	}
	f := keptStageFile{Version: keptStageVersion, Index: ks.Index, Base: ks.Base, Memo: m, Tainted: ks.Tainted, Env: ks.Env,
		Attrs: nulOf(ks.Attrs), SetsSum: ks.SetsSum, Count: ks.Count, ListingSum: ks.ListingSum, StatSum: ks.StatSum,
		StampsSum: ks.StampsSum}
	b, err := json.Marshal(f)
	if err == nil {
		err = renameio.WriteFile(r.keptStagePath(), b, 0o600, renameio.WithTempDir(r.keptDir()))
	}
	if err != nil {
		return false
	}
	ks.Memo = m
	return true
}

// keptStamps returns the stamps of the kept stage index ks
// (keptStage.Stamps, by path), nil when there are none or the file is
// not the one stage.json names (its SHA-256 differs).
func (r *Repo) keptStamps(ks *keptStage) map[string][stampLen]byte {
	b := readSummed(filepath.Join(r.keptDir(), ks.Index+".stamps"), ks.StampsSum)
	if b == nil {
		return nil
	}
	m, ok := parseStampRecords(b)
	if !ok {
		return nil
	}
	return m
}

// keptListing returns the listing of the kept stage index ks
// (keptStage.Listing), nil when there is none or the file is not the one
// stage.json names (its SHA-256 differs).
func (r *Repo) keptListing(ks *keptStage) []byte {
	return readSummed(filepath.Join(r.keptDir(), ks.Index+".ls"), ks.ListingSum)
}

// writeSummed creates path, a new file (writeNew), holding b, and returns
// b's hex SHA-256 for the description that names it (readSummed); ""
// and false when b is nil or the file could not be written.
func writeSummed(path string, b []byte) (string, bool) {
	if b == nil || writeNewFile(path, b) != nil {
		return "", false
	}
	return sha256Hex(b), true
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readSummed returns the file at path when its hex SHA-256 is sum: one
// of the kept files beside the description that names it with its sum.
// nil when sum is "", the file is missing, or it is not that one (a
// write cut short, another capture's, another hand's); an empty file is
// a non-nil empty slice.
func readSummed(path, sum string) []byte {
	if sum == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if sha256Hex(b) != sum {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

func nulSet(b []byte) (map[string]bool, bool) {
	list, ok := splitNul(b)
	if !ok {
		return nil, false
	}
	m := make(map[string]bool, len(list))
	for _, p := range list {
		m[p] = true
	}
	return m, true
}

func nulOf(m map[string]bool) []byte {
	list := make([]string, 0, len(m))
	for p := range m {
		list = append(list, p)
	}
	sort.Strings(list)
	return NulList(list)
}

// changesDigest is the hex SHA-256 of records, a tree edit's changes
// (changesRecords: path, mode and object of each; a removal without
// either), whatever their order.
func changesDigest(records []byte) string { return sha256Hex(records) }

// sortedChanges returns the paths of changes, sorted: the one sort of
// them a capture makes, for changesDigest and writeWhole (10,000 changed
// paths cost about 5 ms a sort).
func sortedChanges(changes map[string]*Entry) []string {
	paths := make([]string, 0, len(changes))
	for p := range changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// keptEnvID says which files and variables outside the index and the
// work tree decide what git makes of a file's bytes, as they are now: the
// stat identity (device, inode, size, mtime, ctime) of info/attributes,
// of the repository's, the worktree's, the global and the system
// configuration files and attributes files (those GIT_CONFIG_GLOBAL and
// GIT_CONFIG_SYSTEM name too), and the values of the GIT_CONFIG* and
// GIT_ATTR* variables, HOME and XDG_CONFIG_HOME. A kept index is used
// only while it is the same: a changed clean filter, core.autocrlf or a
// global attribute would hash the same bytes to another blob. The files
// the configuration names (KnowConfigFiles: core.attributesFile and the
// included ones) count too, and HEAD's file when an include depends on
// the branch. (A file included by a relative name from a file itself
// included by a relative name is not found; nor is /etc/gitconfig where
// git was built with another prefix.)
func (r *Repo) keptEnvID() string {
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	for _, d := range []string{r.GitDir, r.CommonDir} {
		if d != "" {
			files = append(files, filepath.Join(d, "info", "attributes"), filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
		}
	}
	// Where a relative include.path may be relative to: the directory
	// of each configuration file git reads (git-config(1), "Includes");
	// a relative core.attributesFile is read from the work tree.
	bases := []string{r.WorkTree, r.GitDir, r.CommonDir}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
		bases = append(bases, home)
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(xdg, "git", "attributes"))
		bases = append(bases, filepath.Join(xdg, "git"))
	}
	files = append(files, "/etc/gitconfig", "/etc/gitattributes")
	bases = append(bases, "/etc")
	for _, v := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if f := os.Getenv(v); f != "" && f != os.DevNull {
			if abs, err := filepath.Abs(f); err == nil {
				files = append(files, abs)
				bases = append(bases, filepath.Dir(abs))
			}
		}
	}
	h := sha256.New()
	// The files configured by name (KnowConfigFiles), the names too: a
	// relative one is looked for beside each configuration file it may
	// be relative to (an include, from any of the files above or from a
	// file included by its absolute name) and in the work tree (an
	// attributes file), every candidate counted.
	var named []string
	for _, v := range r.configFiles {
		fmt.Fprintf(h, "config file %s\x00", v)
		if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
			v = filepath.Join(home, rest)
		}
		if filepath.IsAbs(v) {
			files = append(files, v)
			bases = append(bases, filepath.Dir(v))
			continue
		}
		named = append(named, v)
	}
	for _, v := range named {
		for _, d := range bases {
			if d != "" {
				files = append(files, filepath.Join(d, v))
			}
		}
	}
	if r.configOnBranch && r.GitDir != "" {
		files = append(files, filepath.Join(r.GitDir, "HEAD"))
	}
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00", f)
		if fi, err := os.Stat(f); err == nil {
			dev, ino, ctime, _ := statIdentity(fi)
			fmt.Fprintf(h, "%d:%d:%d:%d:%d", dev, ino, fi.Size(), fi.ModTime().UnixNano(), ctime)
		}
		h.Write([]byte{0})
	}
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_CONFIG") || strings.HasPrefix(kv, "GIT_ATTR") ||
			strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			fmt.Fprintf(h, "%s\x00", kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// KnowConfigFiles gives the Repo the values of core.attributesFile,
// include.path and includeIf.*.path (checkpoint.Config.HashFiles), read
// by the caller's config call, and onBranch, whether an includeIf's
// condition is a branch (includeIf.onbranch:*.path): keptEnvID then keys
// on those files too, and on HEAD's file for onBranch (a switch to
// another branch at the same commit includes other files), so an
// attributes file or an included configuration edited since makes the
// kept indexes unusable, as the fixed files do. A submodule's runner
// (OpenSubmodule) starts with its parent's, which hold every global and
// system name; SubmoduleConfigMayInclude says when its own configuration
// must be asked as well.
func (r *Repo) KnowConfigFiles(values []string, onBranch bool) {
	r.configFiles, r.configOnBranch = values, onBranch
}

// SubmoduleConfigMayInclude reports whether r's own configuration files
// (config and config.worktree in its git and common directories) may
// name files of their own: whether any holds the word "include" in any
// case, or cannot be read. A submodule's runner knows only its parent's
// configured files (KnowConfigFiles); when this is true its caller asks
// the submodule's configuration for its own (checkpoint.LoadConfig). A
// false answer is never wrong: a configuration without that word includes
// nothing.
func (r *Repo) SubmoduleConfigMayInclude() bool {
	for _, d := range []string{r.GitDir, r.CommonDir} {
		if d == "" {
			continue
		}
		for _, n := range []string{"config", "config.worktree"} {
			b, err := os.ReadFile(filepath.Join(d, n))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil || bytes.Contains(bytes.ToLower(b), []byte("include")) {
				return true
			}
		}
	}
	return false
}

// ForgetKeptStage removes the stage index and the tree memo the last
// capture kept (this file's header; memo.go), and says why in the trace
// (GIT_VENOM_TRACE): the next capture stages from a copy of the user's
// index and writes every tree along its changes again, as a first
// capture does. Trees are made from their entries, so the same files
// make the same objects: a tree the memo named whose subtree a `git gc
// --prune=now` removed as the capture wrote it, which each capture after
// reused unread, is written again by that capture, and every checkpoint
// holding it is whole again. A rollback calls it when git cannot read
// its S (RFC 7.2, issue 16); it never fails.
func (r *Repo) ForgetKeptStage(why string) {
	r.trace.printf("capture: the kept stage index and its memo are forgotten: %s", why)
	r.dropKeptStage()
}

// dropKeptStage removes the kept stage index and its description: a
// capture found it unusable (damaged, or git failed on it).
func (r *Repo) dropKeptStage() {
	os.Remove(r.keptStagePath())
	r.removeKept("stage-", "")
}

// indexUnreadable reports whether err is git failing to read an index
// file itself (damaged, truncated, of an unknown version), as opposed to
// a failure to read the work tree (a clean filter that fails, a file
// that vanished): a kept index git cannot read is dropped and the work
// done without it, where a failure of the work tree fails the capture as
// it always did.
func indexUnreadable(err error) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	for _, m := range []string{"index file", "bad signature", "bad index version", "index entry format", "unknown index"} {
		if strings.Contains(ge.Stderr, m) {
			return true
		}
	}
	return false
}
