package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Lock is an OS advisory lock (flock) on a file under locks/. The kernel
// releases it when the process dies, so a killed command never leaves a
// lock that blocks anyone (DESIGN.md section 2). flock works on Linux and
// macOS alike.
type Lock struct {
	f *os.File
}

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	return f, nil
}

// LockFile takes the lock at path, exclusive or shared, waiting as long as
// it takes.
func LockFile(path string, exclusive bool) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// TryLock takes the lock at path without waiting; ErrLocked if it is held.
func TryLock(path string, exclusive bool) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// WaitLock takes the lock at path, polling until ctx is done; it returns
// ctx's error when the wait ran out (so a capture's timeout bounds its wait
// for the lock too).
func WaitLock(ctx context.Context, path string, exclusive bool) (*Lock, error) {
	delay := 2 * time.Millisecond
	for {
		l, err := TryLock(path, exclusive)
		if err == nil || !errors.Is(err, ErrLocked) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// Unlock releases the lock. It is safe on a nil Lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
