package plumbing

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"time"
)

// A capture lstats each path it stages (RFC 4's size checks) before git
// reads it. Those results, the paths' stamps, are kept with the stage
// index (keptStage.StatSum, issue 16): when the next capture stages the
// same paths in the same order and every stamp is as it was, git would
// find each entry of the kept stage index clean and hash nothing, so the
// capture takes the kept listing's entries without starting update-index
// (Repo.stage). A dedup with 1,000 files the person changed and never
// staged then costs no update-index of them, which re-read the kept index
// and lstat'd each of the 1,000 files a second time (about 6 ms of CPU on
// test262), and the turn start after a turn's end, whose stage index git
// calls racy (the agent's edit and its index in one second), no
// update-index and ls-files.
//
// A stamp is a path's device, inode, size, mtime and ctime (both in
// nanoseconds) and mode: stricter than git's own stat check. Stamps are
// kept only when every file had settled as the capture started: its
// mtime and ctime are earlier than a moment taken before the capture's
// lstats, so any later write gives the file a later ctime and its stamp
// no longer matches, however coarse the file system's timestamps. The
// moment is the ctime of the capture's private index, made just before,
// for a file on the same device (the file system's own clock and
// granularity), and else stampSettle before the system clock's time then
// (a file system whose clock or granularity is not known). A stamp of a
// file whose content changed between the lstat and git's read of it does
// not match the file's later lstat, so the next capture stages it again.
// git's racy-git rule, which compares an entry's mtime with the second
// the index was written, is not needed on top: the stamps are taken
// before git reads the files, and the index is not read for them.

// stampSettle is how long before a capture's start a file on another
// device than the capture's private index must last have changed for its
// stamp to be kept: 2 s, FAT's timestamp granularity, the coarsest of the
// file systems git runs on, with room for a clock between.
const stampSettle = 2 * time.Second

// stageStamps is what a capture learnt of the paths it stages, for
// Repo.stage: fis are their lstat results in the order of the paths (nil
// where lstat failed); a file settled (stageStamps.sum) when it last
// changed before fsBefore, nanoseconds since the Unix epoch by the clock
// of the file system of device fsDev (fsOK false: none known), or before
// sysBefore by the system's (stampsBefore).
type stageStamps struct {
	fis       []os.FileInfo
	fsDev     uint64
	fsBefore  int64
	fsOK      bool
	sysBefore int64
}

// stampsBefore returns a stageStamps without files for a capture that
// started at read and made its private index idx just now: the file
// system's moment is idx's ctime, the system's stampSettle before read.
func stampsBefore(read time.Time, idx string) stageStamps {
	s := stageStamps{sysBefore: read.Add(-stampSettle).UnixNano()}
	if fi, err := os.Stat(idx); err == nil {
		s.fsDev, _, s.fsBefore, s.fsOK = statIdentity(fi)
	}
	return s
}

// stampLen is the bytes of one stamp after its path and NUL: device,
// inode, size, mtime, ctime and mode, each a little-endian uint64.
const stampLen = 6 * 8

// sum returns the hex SHA-256 of paths' stamps (each path, a NUL and its
// stampLen bytes, in the order given), ok false when a path has no stamp
// (no lstat result, or a system without inodes and ctimes: statIdentity),
// and settled whether every file had settled (stageStamps).
func (s stageStamps) sum(paths []string) (sum string, settled, ok bool) {
	if len(paths) == 0 || len(s.fis) != len(paths) {
		return "", false, false
	}
	h := sha256.New()
	settled = true
	for i, p := range paths {
		rec, fileSettled, ok := s.stamp(s.fis[i])
		if !ok {
			return "", false, false
		}
		settled = settled && fileSettled
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(rec[:])
	}
	return hex.EncodeToString(h.Sum(nil)), settled, true
}

// stamp returns the stamp of fi, a file's lstat (device, inode, size,
// mtime, ctime and mode, each a little-endian uint64), and whether the
// file had settled (stageStamps); ok is false when there is none (nil,
// or a system without inodes and ctimes: statIdentity).
func (s stageStamps) stamp(fi os.FileInfo) (rec [stampLen]byte, settled, ok bool) {
	if fi == nil {
		return rec, false, false
	}
	dev, ino, ctime, ok := statIdentity(fi)
	if !ok {
		return rec, false, false
	}
	mtime := fi.ModTime().UnixNano()
	fs := s.fsOK && dev == s.fsDev && mtime < s.fsBefore && ctime < s.fsBefore
	settled = fs || (mtime < s.sysBefore && ctime < s.sysBefore)
	binary.LittleEndian.PutUint64(rec[0:], dev)
	binary.LittleEndian.PutUint64(rec[8:], ino)
	binary.LittleEndian.PutUint64(rec[16:], uint64(fi.Size()))
	binary.LittleEndian.PutUint64(rec[24:], uint64(mtime))
	binary.LittleEndian.PutUint64(rec[32:], uint64(ctime))
	binary.LittleEndian.PutUint64(rec[40:], uint64(fi.Mode()))
	return rec, settled, true
}

// A kept stage index of many paths keeps each settled file's stamp too
// (<Index>.stamps, keptStage.StampsSum): when the fast path above does
// not hold (a turn changed one file beside a person's thousand unstaged
// ones), a path whose file's stamp is as kept has its entry as the kept
// index has it, made from the very bytes, and is left out of
// update-index; git lstats and hashes only the others (Repo.stage).

// keptStampsMin is the fewest staged paths whose stamps are kept
// (settledRecords): below it update-index of them all costs about what
// it does of one.
const keptStampsMin = 16

// settledRecords returns "<path>\0<stamp>" for each of paths (s.fis
// their lstats, in that order) whose file had settled, in that order: the
// stamp is stampLen bytes.
func (s stageStamps) settledRecords(paths []string) []byte {
	if len(s.fis) != len(paths) {
		return nil
	}
	var b []byte
	for i, p := range paths {
		if rec, settled, ok := s.stamp(s.fis[i]); ok && settled {
			b = append(append(append(b, p...), 0), rec[:]...)
		}
	}
	return b
}

// stampsSum is the hex SHA-256 of records (settledRecords), "" for none.
func stampsSum(records []byte) string {
	if records == nil {
		return ""
	}
	return sha256Hex(records)
}

// parseStampRecords reads settledRecords back: the stamp of each path.
// ok is false when b is not made of them.
func parseStampRecords(b []byte) (map[string][stampLen]byte, bool) {
	m := map[string][stampLen]byte{}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i <= 0 || len(b) < i+1+stampLen {
			return nil, false
		}
		var rec [stampLen]byte
		copy(rec[:], b[i+1:i+1+stampLen])
		m[string(b[:i])] = rec
		b = b[i+1+stampLen:]
	}
	return m, true
}

// unsureStat reports whether a file's change at mtime and ctime (Unix
// nanoseconds) may be one git cannot tell from a later write by the stat
// data it records: git compares ctimes and mtimes in whole seconds (its
// racy-git rule sees only the mtime), so an entry git made of a file
// that last changed in the second git looked at it, or later, looks clean
// after a write later in that second that keeps the size and puts the
// mtime back (cp -p, touch -d, an archive's extraction). git looks at the
// files after this capture began, so a file that last changed in an
// earlier second than its start is safe. The start is the second of the
// file system's moment (stampsBefore) for a file on its device (sameDev),
// and for any other the system clock's moment, stampSettle back: a clock
// not known to be the file's only makes more files unsure.
func (s stageStamps) unsureStat(sameDev bool, mtime, ctime int64) bool {
	if s.fsOK && sameDev {
		from := s.fsBefore / 1e9
		return floorSec(mtime) >= from || floorSec(ctime) >= from
	}
	return mtime >= s.sysBefore || ctime >= s.sysBefore
}

// floorSec is the Unix second of ns nanoseconds.
func floorSec(ns int64) int64 {
	if ns < 0 {
		return (ns - 1e9 + 1) / 1e9
	}
	return ns / 1e9
}

// unsureFile reports whether fi, a file's lstat (nil: none), is of a change
// git may not tell from a later one (unsureStat).
func (s stageStamps) unsureFile(fi os.FileInfo) bool {
	if fi == nil {
		return true
	}
	dev, _, ctime, ok := statIdentity(fi)
	return !ok || s.unsureStat(dev == s.fsDev, fi.ModTime().UnixNano(), ctime)
}

// unsure returns those of paths (the capture's staged paths, s.fis their
// lstats before git read them) whose entries git may have made from a
// change it cannot tell from a later one (unsureStat), by those lstats or
// by look, the file's lstat after git read it (nil: none taken), which
// catches a write between the two. Repo.stage makes such entries again
// from the file when it next stages the path.
func (s stageStamps) unsure(paths []string, look func(path string) os.FileInfo) map[string]bool {
	var out map[string]bool
	for i, p := range paths {
		var fi os.FileInfo
		if i < len(s.fis) {
			fi = s.fis[i]
		}
		if s.unsureFile(fi) || (look != nil && s.unsureFile(look(p))) {
			if out == nil {
				out = map[string]bool{}
			}
			out[p] = true
		}
	}
	return out
}
