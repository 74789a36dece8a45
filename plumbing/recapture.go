package plumbing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrRereadNotEnough is Reread's answer when reading the paths again
// would not be what Capture makes of them.
var ErrRereadNotEnough = errors.New("reread: a path needs a full capture")

// Reread makes a snapshot of the tree from an earlier one, reading again
// only paths: the ones a rollback just wrote or removed (RFC 7.4 step 6,
// "capture again"). It decides each path as Capture would: absent, or
// present but ignored and not tracked by the user's index, and it leaves
// the snapshot; otherwise its bytes and mode are read again, by `git
// update-index` in an index of those paths alone (stage), and the new tree
// is prev's tree with those entries changed (treeEditor): a rollback's
// verification costs what its writes cost, not a second walk of the tree,
// nor a rewrite of a full index (issue 3).
//
// It is a capture only while nothing else can have changed what Capture
// would say of the other paths: the user's index and HEAD as they were for
// prev, no ignore rule among paths, no smudge filter run for them. The
// caller takes a full Capture otherwise. HEAD is read again. Errors are
// git's, wrapped, or ErrRereadNotEnough when a path is one Capture treats
// apart (a regular file over maxFileBytes, or one prev skipped), or one
// git leaves out although something is there (a directory), or when
// modes do not come from the file system alone (core.fileMode or
// core.symlinks off): the caller takes a full Capture then.
func (r *Repo) Reread(ctx context.Context, prev *Snapshot, paths []string, maxFileBytes int64) (*Snapshot, error) {
	skipped := map[string]bool{}
	for _, s := range prev.Skipped {
		skipped[s.Path] = true
	}
	for _, p := range paths {
		if skipped[p] {
			return nil, ErrRereadNotEnough
		}
		if maxFileBytes > 0 {
			if st, err := os.Lstat(filepath.Join(r.WorkTree, filepath.FromSlash(p))); err == nil && st.Mode().IsRegular() && st.Size() > maxFileBytes {
				return nil, ErrRereadNotEnough
			}
		}
	}
	snap := &Snapshot{Skipped: prev.Skipped, Submodules: prev.Submodules, IndexAttributes: prev.IndexAttributes}
	// HEAD is read while the ignore rules are asked about the paths.
	head := make(chan error, 1)
	go func() {
		var err error
		snap.Head, snap.Branch, err = r.HeadState(ctx)
		head <- err
	}()
	var gone, present []string
	for _, p := range paths {
		if r.Exists(p) {
			present = append(present, p)
		} else {
			gone = append(gone, p)
		}
	}
	var ignored map[string]bool
	var err error
	if len(present) > 0 {
		ignored, err = r.IgnoredUntracked(ctx, present)
	}
	if herr := <-head; herr != nil {
		return nil, herr
	}
	if err != nil {
		return nil, err
	}
	if len(present) > 0 {
		if len(ignored) > 0 {
			kept := present[:0]
			for _, p := range present {
				if ignored[p] {
					gone = append(gone, p)
				} else {
					kept = append(kept, p)
				}
			}
			present = kept
		}
	}
	if fromDisk, err := r.modesFromDisk(ctx); err != nil || !fromDisk {
		return nil, ErrRereadNotEnough
	}
	ed, err := r.editTree(ctx, prev.Tree)
	if err != nil {
		return nil, err
	}
	defer ed.close()
	changes := map[string]*Entry{}
	if len(present) > 0 {
		if changes, err = r.stage(ctx, ed, present, gone, nil, nil); err != nil {
			return nil, err
		}
		// A path git left out although something is there (a directory
		// now, put there after the write; a name git refuses) keeps its
		// entry in S's tree, which says nothing of what is there now:
		// the full capture says what is.
		for _, p := range present {
			if _, ok := changes[p]; !ok {
				return nil, ErrRereadNotEnough
			}
		}
	}
	for _, p := range gone {
		changes[p] = nil
	}
	tree, err := ed.apply(changes)
	if err != nil {
		return nil, fmt.Errorf("writing the tree: %w", err)
	}
	if err := ed.close(); err != nil {
		return nil, fmt.Errorf("writing the tree: %w", err)
	}
	snap.Tree = tree
	return snap, nil
}

// IgnoredUntracked returns the paths among paths that the ignore rules in
// force ignore and the user's index does not track: what Capture leaves
// out. check-ignore is asked without the index (--no-index): with it, git
// compares every path with every index entry (about 3 s for 1,000 paths in
// a 100,000-file tree); the few paths the rules match are then looked up
// in the index with one ls-files. Paths must be in git's reach (OutOfReach:
// not below a symlink or a gitlink), or git refuses them. Used by Reread
// and by a plan's ignored_edits (RFC 7.3).
func (r *Repo) IgnoredUntracked(ctx context.Context, paths []string) (map[string]bool, error) {
	out, err := r.Run(ctx, Options{Stdin: bytes.NewReader(NulList(DotPaths(paths)))}, "check-ignore", "--no-index", "-z", "--stdin")
	if err != nil && !IsExit(err, 1) {
		return nil, fmt.Errorf("checking ignore rules: %w", err)
	}
	ignored := map[string]bool{}
	var matched []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			p = strings.TrimPrefix(p, "./")
			ignored[p] = true
			matched = append(matched, Literal(p))
		}
	}
	if len(matched) == 0 {
		return ignored, nil
	}
	args := []string{"ls-files", "-z"}
	if len(matched) <= 1000 {
		// Named, so git lists only them; past that many, the command line
		// grows long and listing the whole index costs no more.
		args = append(append(args, "--"), matched...)
	}
	tracked, err := r.Run(ctx, Options{}, args...)
	if err != nil {
		return nil, fmt.Errorf("listing tracked paths: %w", err)
	}
	for _, p := range strings.Split(string(tracked), "\x00") {
		delete(ignored, p)
	}
	return ignored, nil
}
