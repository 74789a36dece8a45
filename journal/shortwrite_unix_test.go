//go:build unix

package journal_test

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestAppendCutShortLeavesNoRecord: a batch the file system takes only in
// part (a full disk, a file size limit: the write stops part way, after
// some of the batch's lines) leaves none of them. RFC 7.4 step 7 commits a
// rollback's end, its binding and its notes "in one log commit", and a
// caller told that the append failed says nothing was logged (a rollback:
// "the next command records it as interrupted"). Found with `ulimit -f`
// under git venom-rollback: rollback.ended {ok: true} stayed in the log
// beside a torn note.pending, so no command ever called the rollback
// interrupted, and its note was lost. The file size limit
// (RLIMIT_FSIZE) makes the short write here, as ENOSPC would; the Go
// runtime ignores the SIGXFSZ that comes with it. Not parallel: the limit
// is the process's.
func TestAppendCutShortLeavesNoRecord(t *testing.T) {
	l := openLog(t)
	if _, err := l.Append(taken("a1", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	// Three records of about 400 bytes; the limit falls inside the second.
	batch := []journal.Entry{taken("a1", "k2", nil), taken("a1", "k3", nil), taken("a1", "k4", nil)}
	limit := uint64(len(before)) + 600

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip("no RLIMIT_FSIZE:", err)
	}
	lim := old
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip("cannot set RLIMIT_FSIZE:", err)
	}
	_, appendErr := l.Append(batch...)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if appendErr == nil {
		t.Fatal("the append past the file size limit succeeded")
	}
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, before) {
		t.Errorf("a failed append left %d bytes of its batch in the log:\n%s", len(data)-len(before), data[len(before):])
	}
	st, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Agents["a1"].Checkpoints); n != 1 || st.Torn {
		t.Errorf("after the failed append: %d checkpoints (want 1), torn %v", n, st.Torn)
	}
	// And the log takes the next append as if nothing had happened.
	seqs, err := l.Append(taken("a1", "k2", nil))
	if err != nil || len(seqs) != 1 || seqs[0] != 2 {
		t.Errorf("the next append: seqs %v, err %v; want [2]", seqs, err)
	}
}
