package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Every repository in the tree (issue 18; RFC 4.2 repos[], 5.1).
//
// A repository in scope is the top one and every initialized, checked-out
// submodule in it, recursively: a gitlink of its parent's index whose
// directory holds a repository at a commit, which is what
// `git submodule status --recursive` lists without a "-". Each is
// captured with the same recipe (its own private index, objects and
// refs/venom/checkpoints/<agent>/<n>, the same n in every one); its
// parent's tree holds its HEAD as the gitlink. A nested repository that
// is no submodule (no gitlink in its parent's index) is not in scope: it
// stays a gitlink of its parent's tree, never written into.

// TopRepo is the repo member of the top repository in repos[] (RFC 4.2:
// the path relative to the top).
const TopRepo = "."

// Captured is one repository of a capture of every repository in scope:
// Repo its path relative to the top (TopRepo for the top), Git its
// runner, Snap what its capture saw.
type Captured struct {
	Repo string
	Git  *plumbing.Repo
	Snap *plumbing.Snapshot
}

// Capture is one capture of every repository in scope (RFC 4.1 for each):
// Repos[0] is the top, then the submodules in repos order (sorted by
// path, so a parent comes before the submodules in it).
type Capture struct {
	Repos []Captured
}

// Top is the top repository's snapshot.
func (c *Capture) Top() *plumbing.Snapshot { return c.Repos[0].Snap }

// Find returns the member of c whose Repo is rel, or nil.
func (c *Capture) Find(rel string) *Captured {
	for i := range c.Repos {
		if c.Repos[i].Repo == rel {
			return &c.Repos[i]
		}
	}
	return nil
}

// Single is a capture of the top repository alone, from a snapshot of it.
func (t *Tree) Single(snap *plumbing.Snapshot) *Capture {
	return &Capture{Repos: []Captured{{Repo: TopRepo, Git: t.Repo, Snap: snap}}}
}

// RepoError is a failure in one repository of a multi-repository step:
// Repo is its path relative to the top, for data.repo (RFC 11.3).
type RepoError struct {
	Repo string
	Err  error
}

func (e *RepoError) Error() string {
	if e.Repo == TopRepo {
		return e.Err.Error()
	}
	return fmt.Sprintf("in submodule %s: %v", e.Repo, e.Err)
}

func (e *RepoError) Unwrap() error { return e.Err }

// repoOf is the repo a failure happened in (TopRepo when it says none).
func repoOf(err error) string {
	var re *RepoError
	if errors.As(err, &re) {
		return re.Repo
	}
	return TopRepo
}

func (t *Tree) captureOptions() plumbing.CaptureOptions {
	return plumbing.CaptureOptions{MaxFileBytes: t.Config.MaxFileBytes, MaxTotalBytes: t.Config.MaxTotalBytes, Submodules: true}
}

// CaptureAll captures every repository in scope (RFC 4.1 steps 1 to 4 in
// each, no commit and no ref): the top, then each submodule its capture
// lists in Snapshot.Scope, recursively. A submodule's entry in its
// parent's submodules[] says dirty when its own capture saw any change
// or one of its submodules is dirty. The walk costs one status per
// repository (the top's does not look inside the submodules). Errors are
// plumbing's, wrapped in a *RepoError naming the repository.
func (t *Tree) CaptureAll(ctx context.Context) (*Capture, error) {
	return t.captureAll(ctx, nil, nil)
}

// captureAll is CaptureAll, reading the commits of refs of the top
// repository with its HEAD (plumbing.CaptureOptions.Refs).
func (t *Tree) captureAll(ctx context.Context, refs []string, head *plumbing.HeadHint) (*Capture, error) {
	return t.captureAllReading(ctx, refs, nil, head)
}

// captureAllReading is captureAll, reading subRefs in each submodule
// too (their Snapshot.Refs); head is the top repository's HEAD as the
// caller expects it (plumbing.CaptureOptions.Head; nil: none).
func (t *Tree) captureAllReading(ctx context.Context, refs, subRefs []string, head *plumbing.HeadHint) (*Capture, error) {
	c := &Capture{}
	if _, err := t.captureRepo(ctx, c, TopRepo, t.Repo, refs, subRefs, head); err != nil {
		return nil, err
	}
	rest := c.Repos[1:]
	sort.Slice(rest, func(i, j int) bool { return rest[i].Repo < rest[j].Repo })
	return c, nil
}

// captureRepo captures r, the repository at rel, into c, reading refs
// with its HEAD, then its submodules, reading subRefs; it reports whether
// anything in r or below it is dirty.
func (t *Tree) captureRepo(ctx context.Context, c *Capture, rel string, r *plumbing.Repo, refs, subRefs []string, head *plumbing.HeadHint) (bool, error) {
	o := t.captureOptions()
	o.Refs, o.Head = refs, head
	snap, err := r.Capture(ctx, o)
	if err != nil {
		return false, &RepoError{Repo: rel, Err: err}
	}
	c.Repos = append(c.Repos, Captured{Repo: rel, Git: r, Snap: snap})
	dirty := snap.Changed > 0
	for _, p := range snap.Scope {
		sub, err := r.OpenSubmodule(ctx, p)
		if err == nil {
			err = knowSubmoduleConfig(ctx, sub)
		}
		if err != nil {
			// git reads no repository there: it is no submodule in
			// scope, and what it holds is unknown.
			setDirty(snap, p, true)
			dirty = true
			continue
		}
		subRel := p
		if rel != TopRepo {
			subRel = path.Join(rel, p)
		}
		d, err := t.captureRepo(ctx, c, subRel, sub, subRefs, subRefs, nil)
		if err != nil {
			return false, err
		}
		setDirty(snap, p, d)
		dirty = dirty || d
	}
	return dirty, nil
}

func setDirty(snap *plumbing.Snapshot, p string, d bool) {
	for i := range snap.Submodules {
		if snap.Submodules[i].Path == p {
			snap.Submodules[i].Dirty = d
		}
	}
}

// RepoAt returns the runner of the repository rs names in a checkpoint
// record: the tree's own for the top, else the repository at rs.Path,
// which must still be a repository's top there (a submodule removed
// since is not: nothing of it is reached, and nil is returned with the
// error). Runners are kept per path for the life of the Tree.
func (t *Tree) RepoAt(ctx context.Context, rs journal.RepoState) (*plumbing.Repo, error) {
	if rs.Repo == TopRepo || rs.Repo == "" || rs.Path == t.Path() {
		return t.Repo, nil
	}
	if r, ok := t.subRepos[rs.Path]; ok {
		return r, nil
	}
	r, err := t.Repo.OpenSubmodule(ctx, rs.Repo)
	if err == nil {
		err = knowSubmoduleConfig(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	if r.WorkTree != rs.Path {
		return nil, fmt.Errorf("submodule %s is at %s, not %s", rs.Repo, r.WorkTree, rs.Path)
	}
	if t.subRepos == nil {
		t.subRepos = map[string]*plumbing.Repo{}
	}
	t.subRepos[rs.Path] = r
	return r, nil
}

// refSet is one ref to make or delete in one repository of a
// checkpoint.
type refSet struct {
	git    *plumbing.Repo
	ref    string
	commit plumbing.OID
}

// undoRefs deletes each ref made (compare-and-swap on its commit),
// never cut short; it returns the first failure.
func undoRefs(ctx context.Context, made []refSet, why string) error {
	ctx = context.WithoutCancel(ctx)
	var first error
	for _, m := range made {
		if _, err := m.git.Run(ctx, plumbing.Options{NoWorkTree: true, GitDirOnly: true}, "update-ref", "-m", why, "-d", m.ref, string(m.commit)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// nextFree is the first n past every ref of agent in any of the
// repositories, and past n.
func nextFree(ctx context.Context, gits []*plumbing.Repo, agent string, n int) (int, error) {
	next := n + 1
	for _, g := range gits {
		have, err := g.ResolveRefs(ctx, refs.AgentPrefix(agent))
		if err != nil {
			return 0, err
		}
		for name := range have {
			if _, m, ok := refs.ParseRef(name); ok && m >= next {
				next = m + 1
			}
		}
	}
	return next, nil
}
