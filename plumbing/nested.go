package plumbing

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
// status, more of the outer tree. Capture finds those itself
// (hiddenNested: one lstat of <dir>/.git a directory), and what status
// says below one found is left out, as is every entry the index has
// below it. Which directories it looks at:
//
//   - every one the index tracks paths below (indexAnswer.Dirs), when the
//     capture asked git about the index (no cache entry for it: the index
//     changed since the last capture);
//   - else those the cache entry remembers holding a .git
//     (indexCache.Hidden: found by an earlier capture of the same index),
//     and the tracked directories above each path status lists, so that a
//     repository whose files differ in any way from the index's (a clone
//     with other files, an untracked file in it, a tracked file deleted)
//     is found by the capture that first sees the difference.
//
// Looking at every directory on every capture would cost one system call
// per tracked directory, about 6% of a no-op capture's CPU on the bench's
// 100k-file tree (5,260 directories). What that leaves unseen, until the
// index changes or a file below it does, is a repository made where the
// index's files are with exactly the index's files (`git init` in place,
// nothing else): such a capture holds those files, at the index's
// content, as the tree's; a rollback writes nothing into it all the same
// (rollback/worktree.go looks for a .git in every parent it writes below).

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

// trackedAncestors returns, sorted and once each, the parent directories
// of paths ("dir/" for a directory) that are among dirs (sorted).
func trackedAncestors(paths, dirs []string) []string {
	seen := map[string]bool{}
	for _, p := range paths {
		for d := parentDir(strings.TrimSuffix(p, "/")); d != "" && !seen[d]; d = parentDir(d) {
			seen[d] = true
		}
	}
	var out []string
	for d := range seen {
		if _, ok := slices.BinarySearch(dirs, d); ok {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// outermost returns dirs sorted, once each, without those below another.
func outermost(dirs []string) []string {
	sort.Strings(dirs)
	out := dirs[:0]
	for _, d := range dirs {
		if len(out) > 0 && under(d, out[len(out)-1]) {
			continue
		}
		out = append(out, d)
	}
	return out
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
