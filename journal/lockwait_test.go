package journal

import (
	"errors"
	"testing"
	"time"
)

// Append waits for the log lock no longer than LockWait: a holder that is
// stuck (suspended, a hung file system) does not hold a hook past its
// timeout. It fails with ErrLogLocked and writes nothing; once the lock is
// free, appends go on.
func TestAppendBoundsItsLockWait(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l.LockWait = 50 * time.Millisecond
	held, err := LockFile(l.LockPath("log"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(Entry{Type: TypeEdit, Body: Edit{Agent: "a1", Paths: []string{"x"}}}); !errors.Is(err, ErrLogLocked) {
		t.Errorf("append with the lock held: %v, want ErrLogLocked", err)
	}
	held.Unlock()
	seqs, err := l.Append(Entry{Type: TypeEdit, Body: Edit{Agent: "a1", Paths: []string{"x"}}})
	if err != nil || len(seqs) != 1 || seqs[0] != 1 {
		t.Errorf("append after the lock is free: %v %v, want seq 1", seqs, err)
	}
}
