package journal

import (
	"encoding/binary"
	"hash/crc32"
	"os"
)

// SetSnapshotEvery makes l write its replay snapshot once a Load replayed
// n records past the last one (tests).
func SetSnapshotEvery(l *Log, n int) { l.every = n }

// SnapshotVersion is the format version this code reads and writes.
const SnapshotVersion = snapshotVersion

// SnapshotMagic starts every snapshot file.
const SnapshotMagic = snapshotMagic

// SnapshotHeader is what l's snapshot file says it covers of the log
// (ok false when there is no snapshot this version reads).
func SnapshotHeader(l *Log) (end, seq int64, tail string, ok bool) {
	sn := l.readSnapshot()
	if sn == nil {
		return 0, 0, "", false
	}
	return sn.end, sn.seq, sn.tail, true
}

// CraftSnapshot is a snapshot file of version holding st, claiming to
// cover the log file at logPath up to end, its last record seq with the
// line tail, with a right checksum: what a buggy or later writer, or a
// person, could leave there.
func CraftSnapshot(version uint64, logPath string, end, seq int64, tail string, st *State) []byte {
	var id fileID
	if fi, err := os.Stat(logPath); err == nil {
		id = fileIDOf(fi)
	}
	b, _ := snapshotFile(version, id, end, seq, []byte(tail), st)
	return b
}

// Recrc makes the checksum of a snapshot file of this version right again
// after its bytes were changed.
func Recrc(b []byte) []byte {
	i := len(snapshotMagic) + len(binary.AppendUvarint(nil, snapshotVersion))
	binary.LittleEndian.PutUint32(b[i:], crc32.ChecksumIEEE(b[i+4:]))
	return b
}
