package plumbing

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Graft is a submodule's side of a diff that goes into submodules (issue
// 18): Path is its path relative to the top, Repo its repository (which
// holds Tree's objects), Tree a tree or commit of it.
type Graft struct {
	Path string
	Repo *Repo
	Tree string
}

// Flatten returns the tree of r that is tree with each graft's tree in
// place of its gitlink (grafts in repos order, a parent before the
// submodules in it, so a nested one goes into its parent's grafted tree),
// and the environment a git command of r needs to read the grafted blobs
// (GIT_ALTERNATE_OBJECT_DIRECTORIES naming each graft's objects; nil with
// no grafts). It is how a diff narrowed by a pathspec goes into
// submodules as `git grep --recurse-submodules` does: one diff of two
// flattened trees, matched by git against each path from the top, so
// diff-tree, --numstat and --stat read it as one tree. Cost: one
// `ls-tree -r` a repository, one update-index and one write-tree; the new
// objects are the trees from the top down to each graft (the rest are
// the submodules' own, found through the alternates), never referenced.
func (r *Repo) Flatten(ctx context.Context, tree string, grafts []Graft) (OID, []string, error) {
	if len(grafts) == 0 {
		return OID(tree), nil, nil
	}
	grafted := map[string]bool{}
	var alts []string
	for _, g := range grafts {
		grafted[g.Path] = true
		alts = append(alts, filepath.Join(g.Repo.CommonDir, "objects"))
	}
	env := []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + strings.Join(alts, string(filepath.ListSeparator))}
	var in bytes.Buffer
	add := func(repo *Repo, tree, prefix string) error {
		out, err := repo.Run(ctx, Options{NoWorkTree: true}, "ls-tree", "-r", "-z", "--full-tree", tree)
		if err != nil {
			return fmt.Errorf("listing %s of %s: %w", tree, repo.WorkTree, err)
		}
		for _, rec := range bytes.Split(out, []byte{0}) {
			meta, p, ok := bytes.Cut(rec, []byte{'\t'})
			if !ok {
				continue
			}
			full := prefix + string(p)
			if bytes.HasPrefix(meta, []byte("160000 ")) && grafted[full] {
				continue
			}
			in.Write(meta)
			in.WriteByte('\t')
			in.WriteString(full)
			in.WriteByte(0)
		}
		return nil
	}
	if err := add(r, tree, ""); err != nil {
		return "", nil, err
	}
	for _, g := range grafts {
		if err := add(g.Repo, g.Tree, g.Path+"/"); err != nil {
			return "", nil, err
		}
	}
	idx, err := r.PrivateIndex("flatten")
	if err != nil {
		return "", nil, err
	}
	defer RemovePrivateIndex(idx)
	ienv := append([]string{"GIT_INDEX_FILE=" + idx}, env...)
	if _, err := r.Run(ctx, Options{Env: ienv, Stdin: &in}, "update-index", "-z", "--index-info"); err != nil {
		return "", nil, fmt.Errorf("flattening %s: %w", tree, err)
	}
	out, err := r.Line(ctx, Options{Env: ienv}, "write-tree")
	if err != nil {
		return "", nil, fmt.Errorf("flattening %s: %w", tree, err)
	}
	return OID(out), env, nil
}
