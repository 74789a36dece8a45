package plumbing

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Nested repositories in a capture (RFC 4, 4.2; issue 13 items 12, 13).
//
// A nested repository is a directory below the top that holds a .git
// (a directory, or a gitfile), a submodule's included. The checkpoint's
// tree records it as git records a submodule: a gitlink (mode 160000) at
// the commit its HEAD names, and nothing of what is inside; submodules[]
// lists it with that commit and whether its own status is clean. One with
// no commit yet (unborn, or a .git git cannot read) has no entry in the
// tree, since a gitlink needs a commit, and is listed with commit null and
// dirty true (CASES BR-21): its files are its own, never the tree's.
//
// git's status reports an untracked nested repository as "dir/" and a
// submodule by its gitlink, but it descends into a directory under which
// the user's index tracks paths, whatever that directory holds: a
// repository cloned or `git init`ed where tracked files were is, to
// status, more of the outer tree. Capture finds those itself: the index's
// directories (indexAnswer.Dirs, cached with the rest of the index's
// answer) are each looked at for a .git, one lstat a directory, while the
// status walk runs (hiddenNested), and what status says below one found
// is left out, as is every entry the index has there.

// hiddenNested returns the outermost directories among dirs (tracked
// directories, relative to the top) that hold a .git: a directory or a
// regular file (a gitfile), reached through real directories only (a
// directory beyond a symbolic link is no directory of the tree: git
// never looks there). It costs one lstat a directory and starts no git;
// whether git reads each as a repository is asked later (readNested).
func (r *Repo) hiddenNested(dirs []string) []string {
	var found []string
	var st syscall.Stat_t
	for _, d := range dirs {
		if len(found) > 0 && under(d, found[len(found)-1]) {
			continue // inside one found already (dirs are sorted)
		}
		if syscall.Lstat(filepath.Join(r.WorkTree, d, ".git"), &st) != nil {
			continue
		}
		if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFDIR && m != syscall.S_IFREG {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(r.WorkTree, d)); err != nil || !fi.IsDir() || !r.Exists(d) {
			continue
		}
		found = append(found, d)
	}
	return found
}

// under reports whether path p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// nestedRootOf returns the member of roots (sorted, none inside another)
// that p is or is below, or "".
func nestedRootOf(p string, roots map[string]bool) string {
	for q := p; ; {
		if roots[q] {
			return q
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			return ""
		}
		q = q[:i]
	}
}

// readNested is describeNested, and also says whether git reads rel as a
// repository at all: false when it has no .git git accepts (a directory
// named .git that is no git directory, another owner's that
// safe.directory refuses), and then the Submodule says nothing.
func (r *Repo) readNested(ctx context.Context, rel string) (Submodule, bool) {
	sm := Submodule{Path: rel, Dirty: true}
	n := r.nestedAt(ctx, filepath.Join(r.WorkTree, rel))
	if n == nil {
		return sm, false
	}
	head, _, err := n.HeadState(ctx)
	if err != nil {
		return sm, false
	}
	if head != "" {
		c := string(head)
		sm.Commit = &c
		out, err := n.Run(ctx, Options{Env: []string{"GIT_OPTIONAL_LOCKS=0"}}, "status", "--porcelain", "-z", "--untracked-files=normal")
		sm.Dirty = err != nil || len(out) > 0
	}
	return sm, true
}

// gitlinkEntry is the tree entry of a nested repository at commit.
func gitlinkEntry(commit string) *Entry { return &Entry{Mode: "160000", OID: OID(commit)} }
