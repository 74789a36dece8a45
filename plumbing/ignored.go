package plumbing

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

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
