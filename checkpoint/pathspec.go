package checkpoint

import (
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
