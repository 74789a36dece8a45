// Package journal is the sidecar log of DESIGN.md section 3: an append-only
// JSON Lines file at <git common dir>/venom/log.jsonl that is the truth about
// checkpoints, turns, edits and rollbacks (RFC 4.2). Appends are locked,
// written whole and fsynced; a torn last line is ignored by readers and cut
// off by the next append. Everything else is derived by replaying it.
package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/venom-org/git-venom/internal/failpoint"
)

// Log is the sidecar log of one repository. Dir is <git common dir>/venom.
type Log struct {
	Dir string
	// LockWait bounds how long Append waits for the log lock, which
	// another process holds for the moment of its own append; a holder
	// stuck longer (suspended with ^Z, a hung file system) must not hold
	// a hook past its timeout. 0 means DefaultLockWait. checkpoint.OpenTree
	// sets it to venom.checkpoints.timeout.
	LockWait time.Duration

	// replayed is what Load read last, so that the next Load in this
	// process reads and decodes only what was appended since (state.go).
	mu       sync.Mutex
	replayed *readCache
	// noSnapshot is set once writing the replay snapshot failed (a
	// read-only directory): this Log does not try again.
	noSnapshot bool
	// every, when not 0, replaces defaultSnapshotEvery (tests).
	every int
}

// DefaultLockWait is Append's wait for the log lock when LockWait is 0.
const DefaultLockWait = 30 * time.Second

// ErrLogLocked is Append's error when the log lock stayed held for all of
// LockWait.
var ErrLogLocked = errors.New("the log lock (venom/locks/log.lock) is held by another process")

// Open returns the log kept under commonDir (the repository's git common
// directory), creating its directories.
func Open(commonDir string) (*Log, error) {
	d := filepath.Join(commonDir, "venom")
	if err := os.MkdirAll(filepath.Join(d, "locks"), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", d, err)
	}
	return &Log{Dir: d}, nil
}

// Path is the log file.
func (l *Log) Path() string { return filepath.Join(l.Dir, "log.jsonl") }

// LockPath is the lock file for a named lock (DESIGN.md section 2).
func (l *Log) LockPath(name string) string { return filepath.Join(l.Dir, "locks", name+".lock") }

// Entry is one record to append: its type (RFC 11.2 and DESIGN.md section 3
// names) and a body that marshals to a JSON object.
type Entry struct {
	Type string
	Body any
}

// Raw is one record read back: its header and the whole line, to be decoded
// into the body type its Type names.
type Raw struct {
	Seq  int64           `json:"seq"`
	TS   string          `json:"ts"`
	Type string          `json:"type"`
	Line json.RawMessage `json:"-"`
	// body is the line decoded by a replay (decodeBody), a pointer to the
	// body type, kept so that a later replay of the same record does not
	// decode it again; nil before.
	body any
}

// Decode unmarshals the record's line into v (a body type).
func (r Raw) Decode(v any) error { return json.Unmarshal(r.Line, v) }

// decodeBody returns r's body as a T, decoding r.Line the first time and
// keeping the result in r. The value returned is a copy; what it shares
// with the kept one (slices, maps, pointers) a replay only reads.
func decodeBody[T any](r *Raw) (T, error) {
	if b, ok := r.body.(*T); ok {
		return *b, nil
	}
	b := new(T)
	if err := json.Unmarshal(r.Line, b); err != nil {
		return *b, err
	}
	r.body = b
	return *b, nil
}

// Now is the clock; tests replace it.
var Now = func() time.Time { return time.Now().UTC() }

// Timestamp is RFC 3339 UTC with milliseconds, as RFC 11.2 records use.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Append writes entries as consecutive records under the log lock, in one
// write, and fsyncs. It returns the records' sequence numbers. A torn last
// line from a crash is cut off first.
func (l *Log) Append(entries ...Entry) ([]int64, error) {
	wait := l.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lk, err := WaitLock(ctx, l.LockPath("log"), true)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w for %s", ErrLogLocked, wait)
		}
		return nil, err
	}
	defer lk.Unlock()
	return l.appendLocked(entries)
}

// TestFailEnv names, for tests only, record types whose append fails: a
// batch holding a record of one of them (a comma-separated list) fails
// before anything is written, as a full disk or a read-only log would, so
// tests can check what each command does when the log cannot take its
// record (docs/exit-codes.md, failed.checkpoint_git reason log).
const TestFailEnv = "GIT_VENOM_TEST_LOG_FAIL"

// errTestFail is the error of an append TestFailEnv fails.
var errTestFail = errors.New("appending to the log: refused by " + TestFailEnv)

// testFails reports whether TestFailEnv names the type of one of entries.
func testFails(entries []Entry) bool {
	v := os.Getenv(TestFailEnv)
	if v == "" {
		return false
	}
	for _, e := range entries {
		for _, t := range strings.Split(v, ",") {
			if t == e.Type {
				return true
			}
		}
	}
	return false
}

func (l *Log) appendLocked(entries []Entry) ([]int64, error) {
	if testFails(entries) {
		return nil, errTestFail
	}
	f, err := os.OpenFile(l.Path(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end, last, err := lastRecord(f, st.Size())
	if err != nil {
		return nil, err
	}
	if end != st.Size() {
		if err := f.Truncate(end); err != nil {
			return nil, fmt.Errorf("cutting a torn last line: %w", err)
		}
	}
	seq := last
	ts := Timestamp(Now())
	var buf bytes.Buffer
	seqs := make([]int64, 0, len(entries))
	for _, e := range entries {
		seq++
		body, err := json.Marshal(e.Body)
		if err != nil {
			return nil, fmt.Errorf("encoding %s record: %w", e.Type, err)
		}
		if len(body) < 2 || body[0] != '{' {
			return nil, fmt.Errorf("encoding %s record: body is not an object", e.Type)
		}
		typ, _ := json.Marshal(e.Type)
		fmt.Fprintf(&buf, `{"seq":%d,"ts":"%s","type":%s`, seq, ts, typ)
		if len(body) > 2 {
			buf.WriteByte(',')
			buf.Write(body[1:])
		} else {
			buf.WriteByte('}')
		}
		buf.WriteByte('\n')
		seqs = append(seqs, seq)
	}
	failpoint.Hit("journal.before-append")
	if _, err := f.WriteAt(buf.Bytes(), end); err != nil {
		// A write cut short (a full disk, a file size limit) may have
		// put some of the batch's lines in whole: they are cut off again,
		// so a batch is in the log entirely or not at all (RFC 7.4 step
		// 7's one log commit), as the error tells the caller. Should the
		// cut fail too, the next append cuts a torn line, and whole lines
		// stay: the error says so.
		if terr := f.Truncate(end); terr != nil {
			return nil, fmt.Errorf("appending to the log: %w (and part of the batch may stay in it: %v)", err, terr)
		}
		return nil, fmt.Errorf("appending to the log: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("syncing the log: %w", err)
	}
	if end == 0 {
		syncDir(l.Dir)
	}
	return seqs, nil
}

// lastRecord finds where the last complete line ends (the torn line after
// it is cut by the caller, DESIGN.md section 3) and the seq of the last
// record, reading each line as Parse does: a blank line is skipped, so the
// last record is the last complete line that is not blank, and a log of
// blank lines only has none (seq 0). It reads backwards in chunks, so its
// cost does not grow with the log, only with the blank lines at its end.
func lastRecord(f *os.File, size int64) (end int64, seq int64, err error) {
	// The first read is small (a record is about 1 KiB: a 64 KiB buffer
	// cost each append of a rollback its page faults, issue 16); each
	// next one twice the last, up to 64 KiB.
	chunk := int64(4 << 10)
	// buf holds the log's bytes from pos: up to size until the last newline
	// is found, then up to the newline that ends the line being looked at.
	var buf []byte
	pos := size
	end = -1
	for {
		if end < 0 {
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				end = pos + int64(i) + 1
				buf = buf[:i]
			}
		}
		if end >= 0 {
			for {
				j := bytes.LastIndexByte(buf, '\n')
				if j < 0 && pos > 0 {
					break // the line starts before buf: read more
				}
				line := buf[j+1:]
				if !blank(line) {
					r, err := record(line)
					if err != nil {
						return 0, 0, fmt.Errorf("log record before offset %d is corrupt: %w", pos+int64(len(buf)), err)
					}
					return end, r.Seq, nil
				}
				if j < 0 {
					return end, 0, nil // blank lines only
				}
				buf = buf[:j]
			}
		} else if pos == 0 {
			return 0, 0, nil // no newline: empty, or only a torn line
		}
		n := chunk
		if chunk < 64<<10 {
			chunk *= 2
		}
		if pos < n {
			n = pos
		}
		pos -= n
		b := make([]byte, n, n+int64(len(buf)))
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return 0, 0, fmt.Errorf("reading the log: %w", err)
		}
		buf = append(b, buf...)
	}
}

// ReadAll returns every complete record in order. A torn last line (no
// newline, from a crash mid-append) is left out and reported by torn.
// A corrupt line elsewhere is an error: the log is the truth, and guessing
// around damage could make a checkpoint look like something it is not.
func (l *Log) ReadAll() (recs []Raw, torn bool, err error) {
	data, err := os.ReadFile(l.Path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the log: %w", err)
	}
	return Parse(data)
}

// Parse splits log data into records (see ReadAll).
func Parse(data []byte) (recs []Raw, torn bool, err error) {
	lineNo := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, true, nil
		}
		line := data[:i]
		data = data[i+1:]
		lineNo++
		if blank(line) {
			continue
		}
		r, err := record(line)
		if err != nil {
			return nil, false, fmt.Errorf("log line %d: %w", lineNo, err)
		}
		r.Line = append(json.RawMessage(nil), line...)
		recs = append(recs, r)
	}
	return recs, false, nil
}

// blank reports whether a complete line of the log holds no record: readers
// skip it, and the append path looks past it for the last record.
func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// record reads the header of a line that is not blank, as both the readers
// and the append path do. Line is left unset.
func record(line []byte) (Raw, error) {
	r, ok := header(line)
	if !ok {
		// Not the shape Append writes (edited by hand, or another
		// writer): the general decoder reads it, or says why not.
		if err := json.Unmarshal(line, &r); err != nil {
			return Raw{}, err
		}
	}
	if r.Type == "" {
		return Raw{}, errors.New("record has no type")
	}
	return r, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// header reads the seq, ts and type of a line in the exact form Append
// writes, `{"seq":N,"ts":"...","type":"...",` or `...}`, without decoding
// the rest: replay decodes each body once, into its record type, so the
// header is not worth a second full JSON pass (it was half of replay's
// cost). Anything else returns ok false and goes to encoding/json.
func header(line []byte) (r Raw, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !found {
		return r, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		r.Seq = r.Seq*10 + int64(rest[i]-'0')
		i++
		if i > 18 {
			return r, false
		}
	}
	if i == 0 {
		return r, false
	}
	if rest, found = bytes.CutPrefix(rest[i:], []byte(`,"ts":"`)); !found {
		return r, false
	}
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return r, false
	}
	r.TS = string(rest[:j])
	if rest, found = bytes.CutPrefix(rest[j+1:], []byte(`,"type":"`)); !found {
		return r, false
	}
	j = bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return r, false
	}
	r.Type = string(rest[:j])
	rest = rest[j+1:]
	if len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return r, false
	}
	// The body decoder still checks the whole line is valid JSON.
	if !json.Valid(line) {
		return r, false
	}
	return r, true
}
