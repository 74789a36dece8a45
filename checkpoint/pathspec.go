package checkpoint

import (
	"context"
	"errors"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// SplitPathspec gives each repository of t in rels (paths relative to the
// top in repos order, TopRepo first) its share of the pathspec ps
// (plumbing.SplitPathspec: a submodule's paths are matched by their whole
// path from the top, as `git ls-files --recurse-submodules` matches them).
// A pathspec element with attr magic in a tree with a submodule in rels is
// unsupported.pathspec_magic (exit 10; data: pathspec, magic, repo): git
// cannot take it into a submodule either.
func (t *Tree) SplitPathspec(ps *plumbing.Pathspec, rels []string) ([]plumbing.RepoPathspec, error) {
	out, err := plumbing.SplitPathspec(t.Repo, ps, rels)
	var me *plumbing.MagicError
	if errors.As(err, &me) {
		return nil, rfcerr.New("unsupported.pathspec_magic", map[string]any{"pathspec": me.Arg, "magic": me.Magic, "repo": me.Repo},
			"pathspec %q: %s magic cannot go into submodule %s: git reads a path's attributes from its own repository", me.Arg, me.Magic, me.Repo).
			WithHint("give the pathspec without :(%s), or run the command inside %s, where its attributes are the repository's own", me.Magic, me.Repo)
	}
	return out, err
}

// CheckPathspec refuses a pathspec git cannot read (plumbing.CheckPathspec:
// unknown magic, an element outside the work tree) as
// invalid_params.pathspec (exit 2; data: pathspec, the elements as given),
// with git's own reason, before anything is computed or written. nil for
// an empty pathspec.
func (t *Tree) CheckPathspec(ctx context.Context, ps *plumbing.Pathspec) error {
	err := t.Repo.CheckPathspec(ctx, ps)
	var pe *plumbing.PathspecError
	if errors.As(err, &pe) {
		return rfcerr.New("invalid_params.pathspec", map[string]any{"pathspec": pe.Args},
			"bad pathspec: %s", pe.Reason).
			WithHint("a pathspec is git's (gitglossary(7)): paths relative to the current directory, and magic such as :(glob), :(icase), :(exclude) or :/")
	}
	if err != nil {
		return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": TopRepo, "reason": "ls-files"}, "reading the pathspec")
	}
	return nil
}
