package plumbing

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// A repository's own gc can run beside a capture: `git commit` starts `git
// gc --auto` in the background, and its `git prune-packed` (and `git
// prune`) removes each objects/xx directory it leaves empty. git makes a
// loose object by creating a temporary file in objects/xx, and, when that
// directory is missing, by making it and trying once more
// (object-file.c, create_tmpfile); a prune that removes the directory
// between those two steps makes the write fail with
//
//	error: unable to create temporary file: No such file or directory
//
// and the command dies (update-index: "failed to insert into database";
// write-tree, mktree, commit-tree: "unable to write ..."). Measured on
// main before this: 3 of 40 captures of 300 changed files failed so
// against a prune-packed loop (issue 13 item 9). Nothing was lost or
// half written: the objects already written are whole (git renames each
// into place), and the index a command updates is written, by lock and
// rename, only when it succeeds. So running the same command again is
// what a second writer does after the gc, and it is what Run does.

// objectWriteTries bounds how many times Run runs a command that failed
// so (objectRace): the first run and seven more. The race is a few
// microseconds wide per directory, but a command that writes hundreds of
// objects meets it once per directory a gc empties while it runs: with
// five runs, 1 capture of 300 files in about 250 failed against the
// test's gc loop on a loaded 2-core machine (TestCapturesBesideAGcLoop,
// 2026-12-05). Each retry waits (retryWait), so the later runs give the
// gc time to finish, and the caller's context (venom.checkpoints.timeout,
// for a capture) bounds the whole.
const objectWriteTries = 8

// objectWriters are the commands Run may run again after an object-store
// race: each writes objects, which are named by their content (writing
// one twice is writing it once), and at most the index it is given, only
// when it succeeds. A command that writes the work tree, a ref or HEAD is
// never run again by Run.
var objectWriters = map[string]bool{
	"update-index": true,
	"write-tree":   true,
	"mktree":       true,
	"commit-tree":  true,
	"hash-object":  true,
}

// objectRace reports whether err is git failing to create an object's
// temporary file because its directory went away (see above). Only git's
// own message counts (children run with LC_ALL=C).
func objectRace(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "unable to create temporary file: No such file or directory")
}

// IsObjectRace reports whether err, from any depth of wrapping, is a git
// command that failed to write an object because a concurrent gc removed
// its directory (objectRace): a step whose caller may run it again.
func IsObjectRace(err error) bool { return objectRace(err) }

// retryWait is how long Run waits before the n-th run again (n from 1):
// 5 ms, doubled each time, so the eight runs span about 0.6 s.
func retryWait(n int) time.Duration { return 5 * time.Millisecond << (n - 1) }

// rewinder returns, for a command's stdin, a function that puts it back
// at its start for another run, or nil when it cannot be (a pipe; a
// reader that is not an io.Seeker). A nil stdin needs none.
func rewinder(stdin io.Reader) (func() bool, bool) {
	if stdin == nil {
		return func() bool { return true }, true
	}
	s, ok := stdin.(io.Seeker)
	if !ok {
		return nil, false
	}
	start, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, false // a pipe or a terminal
	}
	return func() bool {
		_, err := s.Seek(start, io.SeekStart)
		return err == nil
	}, true
}

// sleepCtx waits d, or less when ctx ends first; it reports whether the
// whole wait passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
