package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/google/renameio/v2"

	"github.com/venom-org/git-venom/plumbing"
)

// The replay snapshot (DESIGN.md section 3: "a cache file that is rebuilt
// from the log, never a second source of truth"). Replaying the whole log
// cost every command about 5-9 µs a record (issue 16: at 5,000 records a
// dedup capture paid 44 ms more); the snapshot holds the State as of one
// record, in a compact binary form that decodes at a small fraction of
// that, so a command decodes it and replays only the records appended
// since. It is only trusted while the log still ends, where the snapshot
// says it did, with the very line of its last record (the size, that line
// and the next record's seq are checked, as the in-process read cache
// does); anything else, and a snapshot that does not decode or whose
// checksum is wrong, is ignored and the log read whole.
//
// A snapshot also names the log file it was taken of (device and inode):
// a log replaced by another file (an editor's save, a copy put back) is
// not the one the snapshot covers, even where its last line is the same.
//
// File layout: snapshotMagic, the format version (uvarint), the CRC-32
// (IEEE) of the rest (4 bytes, little-endian), then the payload: the log's
// device and inode (uvarints, 0 where the system gives none), end
// (uvarint: the log's size up to the end of the last complete line
// covered), seq (the last record's), tail (the log's bytes from the start
// of the last record's line to end), then the State (encodeState).

const (
	snapshotName  = "replay.snapshot"
	snapshotMagic = "venom replay snapshot\n"
	// snapshotVersion changes whenever the layout or a State type
	// changes: a snapshot of another version is not read (and is replaced
	// by the next one written). TestSnapshotFields fails when a field is
	// added to the State types without a new version. It changes too when
	// what a record means to the State does: 2, turn.ended's harness
	// (issue 13 item 15), which a binary of version 1 replayed as absent;
	// 3, rollback.ended's rescued (issue 13 item 2); 4, rollback.started's
	// indexes (issue 18); 5, a reused capture's at and through_turn
	// (Capture.At, ThroughTurn); 6, the checksum is CRC-32 (IEEE), not
	// CRC-32C: the tables CRC-32C's SSE4.2 code needs cost every process
	// about 0.28 ms to build at its start (issue 16, the hook turn's
	// profile), IEEE's a small fraction of that; 7, rollback.started's
	// created.
	snapshotVersion = 7
)

// defaultSnapshotEvery is how many records a Load may replay past the
// snapshot before it writes a new one: writing costs an encoding of the
// whole state and an fsync, so it is not done for every record, and the
// records replayed on top of a snapshot stay below this many (about 0.3
// ms). GIT_VENOM_TEST_SNAPSHOT_EVERY lowers it in tests (1: every Load
// that read a record writes one); it is read at the first Load.
var defaultSnapshotEvery = sync.OnceValue(func() int {
	if n, err := strconv.Atoi(os.Getenv("GIT_VENOM_TEST_SNAPSHOT_EVERY")); err == nil && n > 0 {
		return n
	}
	return 64
})

func (l *Log) snapshotEvery() int {
	if l.every > 0 {
		return l.every
	}
	return defaultSnapshotEvery()
}

// SnapshotPath is the replay snapshot's file, beside the log.
func (l *Log) SnapshotPath() string { return filepath.Join(l.Dir, snapshotName) }

// snapshot is a decoded snapshot file: what it covers of the log and the
// encoded state, kept as one string that the decoded States' strings are
// slices of.
type snapshot struct {
	file  fileID
	end   int64
	seq   int64
	tail  string
	state string // encodeState's bytes
}

// readSnapshot reads and checks the snapshot file; nil when there is none
// or it is not one this version wrote whole.
func (l *Log) readSnapshot() *snapshot {
	b, err := os.ReadFile(l.SnapshotPath())
	if err != nil || len(b) == 0 {
		return nil
	}
	// The decoded States' strings are slices of the file's bytes, so they
	// are made a string without a copy: b is never written after this.
	s, err := parseSnapshot(unsafe.String(&b[0], len(b)))
	if err != nil {
		return nil
	}
	return s
}

// parseSnapshot checks a snapshot file's magic, version and checksum and
// reads its header.
func parseSnapshot(b string) (*snapshot, error) {
	if len(b) < len(snapshotMagic) || b[:len(snapshotMagic)] != snapshotMagic {
		return nil, errors.New("not a replay snapshot")
	}
	r := &decoder{s: b, i: len(snapshotMagic)}
	if v := r.uvarint(); r.err != nil || v != snapshotVersion {
		return nil, fmt.Errorf("replay snapshot version %d, not %d", v, snapshotVersion)
	}
	if len(b)-r.i < 4 {
		return nil, errors.New("replay snapshot cut short")
	}
	sum := binary.LittleEndian.Uint32([]byte(b[r.i : r.i+4]))
	r.i += 4
	if crc32.ChecksumIEEE(unsafe.Slice(unsafe.StringData(b[r.i:]), len(b)-r.i)) != sum {
		return nil, errors.New("replay snapshot checksum mismatch")
	}
	s := &snapshot{file: fileID{r.uvarint(), r.uvarint()}, end: int64(r.uvarint()), seq: r.varint(), tail: r.str()}
	if r.err != nil || len(s.tail) == 0 {
		return nil, errors.New("replay snapshot header is corrupt")
	}
	s.state = b[r.i:]
	return s, nil
}

// writeSnapshot replaces the snapshot file with st, the state of the log
// file id's complete lines up to end, whose last record is seq with the
// line tail (atomically: renameio writes a temporary file beside it,
// fsyncs and renames it). Failure only costs the next command a longer
// replay.
func (l *Log) writeSnapshot(id fileID, end, seq int64, tail []byte, st *State) (*snapshot, error) {
	file, state := snapshotFile(snapshotVersion, id, end, seq, tail, st)
	if err := renameio.WriteFile(l.SnapshotPath(), file, 0o644, renameio.WithTempDir(l.Dir)); err != nil {
		return nil, err
	}
	return &snapshot{file: id, end: end, seq: seq, tail: string(tail), state: state}, nil
}

// snapshotFile is the snapshot file's bytes (layout above) and the
// encoded state in them.
func snapshotFile(version uint64, id fileID, end, seq int64, tail []byte, st *State) ([]byte, string) {
	body := make([]byte, 0, 64<<10)
	body = binary.AppendUvarint(body, id.dev)
	body = binary.AppendUvarint(body, id.ino)
	body = binary.AppendUvarint(body, uint64(end))
	body = binary.AppendVarint(body, seq)
	body = appendStr(body, string(tail))
	head := len(body)
	body = encodeState(body, st)
	file := make([]byte, 0, len(snapshotMagic)+binary.MaxVarintLen64+4+len(body))
	file = append(file, snapshotMagic...)
	file = binary.AppendUvarint(file, version)
	file = binary.LittleEndian.AppendUint32(file, crc32.ChecksumIEEE(body))
	file = append(file, body...)
	return file, string(body[head:])
}

// fileID is a file's device and inode, zero where the system gives none.
type fileID struct{ dev, ino uint64 }

func fileIDOf(fi os.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	return fileID{}
}

// encodeState appends st (but Torn: it is the log's end as read, not the
// state's) to b: its seq, then each agent, in id order, as its id and its
// block's length before the block, so that one agent can be decoded
// without the others (decodeAgent). Every slice keeps whether it was nil
// (a record's "skipped":[] and a missing list decode differently, and
// commands print them so); maps are written in key order, so one state
// always gives the same bytes.
func encodeState(b []byte, st *State) []byte {
	b = binary.AppendVarint(b, st.Seq)
	ids := make([]string, 0, len(st.Agents))
	for id := range st.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	b = binary.AppendUvarint(b, uint64(len(ids)))
	var block []byte
	for _, id := range ids {
		block = encodeAgent(block[:0], st.Agents[id])
		b = appendStr(b, id)
		b = appendStr(b, string(block))
	}
	b = appendLen(b, st.Bindings == nil, len(st.Bindings))
	for i := range st.Bindings {
		b = appendBinding(b, &st.Bindings[i])
	}
	return b
}

func appendBinding(b []byte, g *AgentBinding) []byte {
	b = appendStr(b, g.Agent)
	b = appendStr(b, g.Harness)
	b = appendStr(b, g.HarnessSession)
	b = appendStr(b, g.ForkSource)
	b = appendStr(b, g.ForkAt)
	return appendBool(b, g.Confirmed)
}

func (d *decoder) binding() AgentBinding {
	return AgentBinding{Agent: d.str(), Harness: d.str(), HarnessSession: d.str(),
		ForkSource: d.str(), ForkAt: d.str(), Confirmed: d.bool()}
}

func encodeAgent(b []byte, a *Agent) []byte {
	b = binary.AppendVarint(b, int64(a.MaxN))
	b = appendBool(b, a.Archived)
	b = appendLen(b, a.Checkpoints == nil, len(a.Checkpoints))
	for _, s := range a.Checkpoints {
		b = binary.AppendVarint(b, int64(s.N))
		b = binary.AppendVarint(b, s.Seq)
		b = appendStr(b, s.Label)
		b = appendBool(b, s.Pruned)
		b = encodeCheckpoint(b, &s.Rec)
	}
	b = appendLen(b, a.Turns == nil, len(a.Turns))
	for _, t := range a.Turns {
		b = binary.AppendVarint(b, int64(t.N))
		b = binary.AppendVarint(b, t.StartSeq)
		b = binary.AppendVarint(b, t.EndSeq)
		b = appendStr(b, t.Start)
		b = appendStr(b, t.End)
		b = appendBool(b, t.NoStart)
		b = appendBool(b, t.Synthetic)
		b = appendStr(b, t.Harness)
		b = appendStr(b, t.HarnessSession)
		b = appendStr(b, t.HarnessTurn)
		b = appendStr(b, t.HarnessEnd)
		b = appendBool(b, t.HarnessEndPending != nil)
		if p := t.HarnessEndPending; p != nil {
			b = appendStr(b, p.Transcript)
			b = appendStr(b, p.After)
			b = appendStr(b, p.TextSHA256)
		}
	}
	b = appendLen(b, a.Captures == nil, len(a.Captures))
	for _, c := range a.Captures {
		b = binary.AppendVarint(b, c.Seq)
		b = appendStr(b, c.Type)
		b = appendStr(b, c.Checkpoint)
		b = appendStr(b, c.Reason)
		b = appendStr(b, c.Turn)
		b = appendStr(b, c.Path)
		b = appendStr(b, c.At)
		b = appendOptStr(b, c.ThroughTurn)
	}
	b = appendLen(b, a.Edits == nil, len(a.Edits))
	for _, e := range a.Edits {
		b = binary.AppendVarint(b, e.Seq)
		b = appendStr(b, e.Agent)
		b = appendStr(b, e.Turn)
		b = appendStrs(b, e.Paths)
		b = appendStr(b, e.Path)
	}
	b = appendStrMap(b, a.Trees)
	b = appendLen(b, a.Rollbacks == nil, len(a.Rollbacks))
	for _, r := range a.Rollbacks {
		b = appendStr(b, r.Agent)
		b = appendStr(b, r.Checkpoint)
		b = appendStr(b, r.Safety)
		b = appendStr(b, r.Restore)
		b = appendStr(b, r.Plan)
		b = appendStr(b, r.Path)
		b = appendStr(b, r.Index)
		b = appendStrMap(b, r.Indexes)
		b = appendLen(b, r.Perms == nil, len(r.Perms))
		b = append(b, r.Perms...)
		b = appendLen(b, r.Created == nil, len(r.Created))
		b = append(b, r.Created...)
	}
	// OpenRollback is always the last started one (Replay points it at
	// it, and only a rollback.ended clears it).
	b = appendBool(b, a.OpenRollback != nil)
	b = appendLen(b, a.Ended == nil, len(a.Ended))
	for _, e := range a.Ended {
		b = appendStr(b, e.Agent)
		b = appendStr(b, e.Checkpoint)
		b = appendStr(b, e.Safety)
		b = appendStr(b, e.Restore)
		b = appendBool(b, e.OK)
		b = appendStr(b, e.Code)
		b = appendStr(b, e.After)
		b = appendStrs(b, e.Drops)
		b = appendStr(b, e.Path)
		b = appendStr(b, e.Rescued)
	}
	dropped := make([]string, 0, len(a.Dropped))
	for k, v := range a.Dropped {
		if v {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	b = appendLen(b, a.Dropped == nil, len(dropped))
	for _, k := range dropped {
		b = appendStr(b, k)
	}
	seqs := make([]int64, 0, len(a.Notes))
	for s := range a.Notes {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	b = appendLen(b, a.Notes == nil, len(seqs))
	for _, s := range seqs {
		n := a.Notes[s]
		b = binary.AppendVarint(b, s)
		b = appendStr(b, n.Agent)
		b = appendStr(b, n.Text)
		b = appendStr(b, n.Rollback)
		b = appendStr(b, n.Path)
		b = appendStr(b, n.Session)
	}
	b = appendBool(b, a.Binding != nil)
	if a.Binding != nil {
		b = appendBinding(b, a.Binding)
	}
	return b
}

func encodeCheckpoint(b []byte, c *Checkpoint) []byte {
	b = appendStr(b, c.Agent)
	b = appendStr(b, c.Checkpoint)
	b = appendStr(b, c.Reason)
	b = appendOptStr(b, c.Turn)
	b = appendOptStr(b, c.ThroughTurn)
	b = appendStr(b, c.At)
	b = appendBool(b, c.MidTurn)
	b = appendBool(b, c.Overlap)
	b = appendStr(b, c.Label)
	b = appendBool(b, c.ToolCall)
	b = appendLen(b, c.Repos == nil, len(c.Repos))
	for i := range c.Repos {
		r := &c.Repos[i]
		b = appendStr(b, r.Repo)
		b = appendStr(b, r.Path)
		b = appendStr(b, r.Commit)
		b = appendStr(b, r.Tree)
		b = appendOptStr(b, r.Head)
		b = appendStr(b, r.Branch)
		b = appendLen(b, r.Skipped == nil, len(r.Skipped))
		for _, s := range r.Skipped {
			b = appendStr(b, s.Path)
			b = binary.AppendVarint(b, s.Bytes)
			b = appendStr(b, s.Reason)
		}
		b = appendLen(b, r.Submodules == nil, len(r.Submodules))
		for _, s := range r.Submodules {
			b = appendStr(b, s.Path)
			b = appendOptStr(b, s.Commit)
			b = appendBool(b, s.Dirty)
		}
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendOptStr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return appendStr(b, *s)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendLen writes a list's length, 0 for a nil list and n+1 otherwise.
func appendLen(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func appendStrs(b []byte, ss []string) []byte {
	b = appendLen(b, ss == nil, len(ss))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

func appendStrMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = appendLen(b, m == nil, len(keys))
	for _, k := range keys {
		b = appendStr(b, k)
		b = appendStr(b, m[k])
	}
	return b
}

// decoder reads what the append functions wrote, from one string whose
// slices become the decoded strings (no copy). The first error stops it:
// every later read returns zero values, and err says what was wrong. A
// length is never trusted beyond the bytes left, so no input can make it
// allocate more than the input's size, or panic.
type decoder struct {
	s   string
	i   int
	err error
	// Slabs that small values are cut from, so that a state of
	// thousands of records costs a few allocations, not one per field.
	strs  []string
	repos []RepoState
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("replay snapshot: %s at offset %d", what, d.i)
	}
	d.i = len(d.s)
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	var shift uint
	for k := 0; k < binary.MaxVarintLen64; k++ {
		if d.i >= len(d.s) {
			d.fail("cut short")
			return 0
		}
		c := d.s[d.i]
		d.i++
		if c < 0x80 {
			if k == binary.MaxVarintLen64-1 && c > 1 {
				d.fail("varint overflows")
				return 0
			}
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	d.fail("varint overflows")
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) int() int { return int(d.varint()) }

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.fail("string past the end")
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

func (d *decoder) optStr() *string {
	if !d.bool() {
		return nil
	}
	if len(d.strs) == 0 {
		d.strs = make([]string, 256)
	}
	p := &d.strs[0]
	d.strs = d.strs[1:]
	*p = d.str()
	return p
}

func (d *decoder) bool() bool {
	if d.i >= len(d.s) {
		d.fail("cut short")
		return false
	}
	c := d.s[d.i]
	d.i++
	if c > 1 {
		d.fail("not a boolean")
	}
	return c == 1
}

// len reads a list's length as appendLen wrote it: -1 for nil. Every
// element takes at least one byte, so a length past the bytes left is
// corrupt.
func (d *decoder) len() int {
	u := d.uvarint()
	if u == 0 {
		return -1
	}
	if u-1 > uint64(len(d.s)-d.i) {
		d.fail("list longer than the snapshot")
		return -1
	}
	return int(u - 1)
}

// strList reads a list of strings, cut from a slab with its capacity
// capped, so that a caller's append copies it instead of writing into
// the next list.
func (d *decoder) strList() []string {
	n := d.len()
	if n < 0 {
		return nil
	}
	if n == 0 {
		return []string{}
	}
	if n > len(d.strs) {
		d.strs = make([]string, max(n, 256))
	}
	ss := d.strs[:n:n]
	d.strs = d.strs[n:]
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}

// decodeState rebuilds the State encodeState wrote.
func decodeState(s string) (*State, error) {
	return decodeAgents(s, nil)
}

// decodeAgents rebuilds the State encodeState wrote with only the agents
// only names (all of them when only is nil): the others' blocks are
// skipped, not read.
func decodeAgents(s string, only map[string]bool) (*State, error) {
	d := &decoder{s: s}
	st := &State{Seq: d.varint(), Agents: map[string]*Agent{}}
	n := d.uvarint()
	if n > uint64(len(s)) {
		d.fail("too many agents")
	}
	for k := uint64(0); k < n && d.err == nil; k++ {
		id, block := d.str(), d.str()
		if only != nil && !only[id] {
			continue
		}
		b := &decoder{s: block, strs: d.strs, repos: d.repos}
		a := b.agent(id)
		if b.err == nil && b.i != len(block) {
			b.fail("bytes after the agent")
		}
		if b.err != nil {
			return nil, b.err
		}
		d.strs, d.repos = b.strs, b.repos
		st.Agents[id] = a
	}
	if n := d.len(); n >= 0 {
		st.Bindings = make([]AgentBinding, n)
		for i := range st.Bindings {
			st.Bindings[i] = d.binding()
		}
	}
	if d.err == nil && d.i != len(s) {
		d.fail("bytes after the state")
	}
	if d.err != nil {
		return nil, d.err
	}
	return st, nil
}

func (d *decoder) agent(id string) *Agent {
	a := &Agent{ID: id, MaxN: d.int(), Archived: d.bool(), byID: map[string]*Saved{}}
	if n := d.len(); n >= 0 {
		saved := make([]Saved, n)
		a.Checkpoints = make([]*Saved, n)
		for i := range saved {
			s := &saved[i]
			s.N, s.Seq, s.Label, s.Pruned = d.int(), d.varint(), d.str(), d.bool()
			d.checkpoint(&s.Rec)
			a.Checkpoints[i] = s
			a.byID[s.Rec.Checkpoint] = s
		}
	}
	if n := d.len(); n >= 0 {
		turns := make([]Turn, n)
		a.Turns = make([]*Turn, n)
		for i := range turns {
			t := &turns[i]
			t.N, t.StartSeq, t.EndSeq = d.int(), d.varint(), d.varint()
			t.Start, t.End, t.NoStart, t.Synthetic = d.str(), d.str(), d.bool(), d.bool()
			t.Harness, t.HarnessSession, t.HarnessTurn, t.HarnessEnd = d.str(), d.str(), d.str(), d.str()
			if d.bool() {
				t.HarnessEndPending = &EndPending{Transcript: d.str(), After: d.str(), TextSHA256: d.str()}
			}
			a.Turns[i] = t
		}
	}
	if n := d.len(); n >= 0 {
		a.Captures = make([]Capture, n)
		for i := range a.Captures {
			a.Captures[i] = Capture{Seq: d.varint(), Type: d.str(), Checkpoint: d.str(), Reason: d.str(), Turn: d.str(), Path: d.str(),
				At: d.str(), ThroughTurn: d.optStr()}
		}
	}
	if n := d.len(); n >= 0 {
		a.Edits = make([]Edited, n)
		for i := range a.Edits {
			e := &a.Edits[i]
			e.Seq, e.Agent, e.Turn, e.Paths, e.Path = d.varint(), d.str(), d.str(), d.strList(), d.str()
		}
	}
	if n := d.len(); n >= 0 {
		a.Trees = make(map[string]string, n)
		for i := 0; i < n; i++ {
			k := d.str()
			a.Trees[k] = d.str()
		}
	}
	if n := d.len(); n >= 0 {
		a.Rollbacks = make([]RollbackStarted, n)
		for i := range a.Rollbacks {
			r := &a.Rollbacks[i]
			r.Agent, r.Checkpoint, r.Safety, r.Restore, r.Plan, r.Path, r.Index = d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
			if n := d.len(); n >= 0 {
				r.Indexes = make(map[string]string, n)
				for j := 0; j < n; j++ {
					k := d.str()
					r.Indexes[k] = d.str()
				}
			}
			if m := d.len(); m >= 0 {
				r.Perms = []byte(d.s[d.i : d.i+m])
				d.i += m
			}
			if m := d.len(); m >= 0 {
				r.Created = []byte(d.s[d.i : d.i+m])
				d.i += m
			}
		}
	}
	if d.bool() {
		if len(a.Rollbacks) == 0 {
			d.fail("an open rollback with none started")
		} else {
			a.OpenRollback = &a.Rollbacks[len(a.Rollbacks)-1]
		}
	}
	if n := d.len(); n >= 0 {
		a.Ended = make([]RollbackEnded, n)
		for i := range a.Ended {
			e := &a.Ended[i]
			e.Agent, e.Checkpoint, e.Safety, e.Restore = d.str(), d.str(), d.str(), d.str()
			e.OK, e.Code, e.After, e.Drops, e.Path = d.bool(), d.str(), d.str(), d.strList(), d.str()
			e.Rescued = d.str()
		}
	}
	if n := d.len(); n >= 0 {
		a.Dropped = make(map[string]bool, n)
		for i := 0; i < n; i++ {
			a.Dropped[d.str()] = true
		}
	}
	if n := d.len(); n >= 0 {
		a.Notes = make(map[int64]NotePending, n)
		for i := 0; i < n; i++ {
			s := d.varint()
			a.Notes[s] = NotePending{Agent: d.str(), Text: d.str(), Rollback: d.str(), Path: d.str(), Session: d.str()}
		}
	}
	if d.bool() {
		g := d.binding()
		a.Binding = &g
	}
	return a
}

func (d *decoder) checkpoint(c *Checkpoint) {
	c.Agent, c.Checkpoint, c.Reason = d.str(), d.str(), d.str()
	c.Turn, c.ThroughTurn = d.optStr(), d.optStr()
	c.At, c.MidTurn, c.Overlap, c.Label, c.ToolCall = d.str(), d.bool(), d.bool(), d.str(), d.bool()
	n := d.len()
	if n < 0 {
		return
	}
	if n == 0 {
		c.Repos = []RepoState{}
		return
	}
	if n > len(d.repos) {
		d.repos = make([]RepoState, max(n, 256))
	}
	c.Repos = d.repos[:n:n]
	d.repos = d.repos[n:]
	for i := range c.Repos {
		r := &c.Repos[i]
		r.Repo, r.Path, r.Commit, r.Tree = d.str(), d.str(), d.str(), d.str()
		r.Head, r.Branch = d.optStr(), d.str()
		if m := d.len(); m >= 0 {
			r.Skipped = make([]plumbing.Skip, m)
			for j := range r.Skipped {
				r.Skipped[j] = plumbing.Skip{Path: d.str(), Bytes: d.varint(), Reason: d.str()}
			}
		}
		if m := d.len(); m >= 0 {
			r.Submodules = make([]plumbing.Submodule, m)
			for j := range r.Submodules {
				r.Submodules[j] = plumbing.Submodule{Path: d.str(), Commit: d.optStr(), Dirty: d.bool()}
			}
		}
	}
}

// SnapshotCheck is what CheckSnapshot found: whether there is a snapshot
// this version reads (Present), whether it covers this log as it is now
// (Used: a command would start from it), the seq of its last record
// (Seq), and, when used, whether the state a command builds from it is
// the one a replay of the whole log gives (Agrees).
type SnapshotCheck struct {
	Present, Used, Agrees bool
	Seq                   int64
}

// CheckSnapshot compares the replay snapshot with a replay of the whole
// log, for git venom-doctor: a snapshot only disagrees when the log was
// changed before its end in place, as nothing but a person does. It
// writes nothing.
func (l *Log) CheckSnapshot() (SnapshotCheck, error) {
	var c SnapshotCheck
	sn := l.readSnapshot()
	if sn == nil {
		return c, nil
	}
	c.Present, c.Seq = true, sn.seq
	f, err := os.Open(l.Path())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return c, nil
		}
		return c, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return c, err
	}
	if sn.file != fileIDOf(fi) {
		return c, nil
	}
	more, _, _, ok := continueAt(f, fi.Size(), sn.end, []byte(sn.tail), sn.seq)
	if !ok {
		return c, nil
	}
	got, err := decodeState(sn.state)
	if err == nil {
		err = got.replay(more)
	}
	if err != nil {
		return c, nil // Load reads the log whole then: not used
	}
	c.Used = true
	recs, _, err := l.ReadAll()
	if err != nil {
		return c, err
	}
	want, err := Replay(recs)
	if err != nil {
		return c, err
	}
	c.Agrees = reflect.DeepEqual(got, want)
	return c, nil
}
