package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Issue 18's rows: a tree with submodules, every one of which a capture
// takes as a repository of its own. The bar: a clean capture costs no
// more than `git status` of the top, which looks inside every submodule
// (one status child each), plus a fixed cost per repository.

// subFiles is the number of files in the top and in each submodule.
const subFiles = 500

// withSubmodules returns the cached tree of n submodules, making it on
// first use: a top of subFiles files and n submodules s00.. of subFiles
// files each, added with `git submodule add` of local repositories made
// beside it, committed and checked out.
func withSubmodules(cache string, n int) (*tree, error) {
	dir := filepath.Join(cache, fmt.Sprintf("subs-%d-v1", n))
	t := &tree{title: fmt.Sprintf("generated, %d submodules of %d files and a top of %d", n, subFiles, subFiles), dir: dir, files: subFiles * (n + 1), subs: n}
	if _, err := os.Stat(filepath.Join(dir, ".git", readyMark)); err == nil {
		return t, nil
	}
	src := dir + "-src"
	for _, d := range []string{dir, src} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "venom-bench: generating %d submodules in %s (once; later runs reuse it)\n", n, dir)
	commit := func(d, msg string) error {
		if _, err := git(d, "add", "-A"); err != nil {
			return err
		}
		_, err := git(d, "-c", "user.name=venom-bench", "-c", "user.email=bench@localhost", "commit", "-q", "--no-verify", "-m", msg)
		return err
	}
	fill := func(d string) error {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if _, err := git(d, "init", "-q"); err != nil {
			return err
		}
		for i := 0; i < subFiles; i++ {
			p := filepath.Join(d, fmt.Sprintf("d%02d", i/25), fmt.Sprintf("f%03d.txt", i))
			if i%25 == 0 {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
			}
			if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d of %s\n", i, filepath.Base(d)), 8)), 0o644); err != nil {
				return err
			}
		}
		return commit(d, "venom-bench files")
	}
	if err := fill(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", ownedMark), []byte("made by git-venom bench/run.sh; safe to delete\n"), 0o644); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		s := filepath.Join(src, fmt.Sprintf("s%02d", i))
		if err := fill(s); err != nil {
			return nil, err
		}
		if _, err := git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", s, fmt.Sprintf("s%02d", i)); err != nil {
			return nil, err
		}
	}
	if err := commit(dir, "venom-bench submodules"); err != nil {
		return nil, err
	}
	if err := freshen(dir); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		s := filepath.Join(dir, fmt.Sprintf("s%02d", i))
		if _, err := git(s, "update-index", "-q", "--refresh", "--force-write-index"); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", readyMark), nil, 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// submoduleCases are the rows of a tree with submodules.
func submoduleCases(o *options) []caseFunc {
	return []caseFunc{subDedupCapture, subAloneCapture, subEditCapture}
}

// subRepos is the top and each submodule's work tree.
func subRepos(t *tree) []string {
	out := []string{t.dir}
	for i := 0; i < t.subs; i++ {
		out = append(out, filepath.Join(t.dir, fmt.Sprintf("s%02d", i)))
	}
	return out
}

// dropSubRefs deletes the checkpoint refs reset leaves in the submodules.
func dropSubRefs(t *tree) error {
	for _, d := range subRepos(t)[1:] {
		refs, err := git(d, "for-each-ref", "--format=delete %(refname)", "refs/venom/")
		if err != nil {
			return err
		}
		if len(refs) > 0 {
			if _, err := gitIn(d, refs, "update-ref", "--stdin"); err != nil {
				return err
			}
		}
	}
	return nil
}

// statusEach runs `git status` in every repository of t, one after
// another: one walk of each, what a capture of every repository must do
// at the least.
func statusEach(t *tree) func() (outcome, error) {
	var steps []func() (outcome, error)
	for _, d := range subRepos(t) {
		steps = append(steps, command(d, append(append([]string(nil), statusCmd...), "--ignore-submodules=dirty")...))
	}
	return sequence(steps...)
}

// floorEach is statusEach with, in each repository, the rev-parse of
// HEAD, its tree and its branch that a capture of it needs as well: the
// git children any capture of every repository must start, one walk and
// one HEAD each (issue 18's "plus the per-repository fixed cost", as git's
// own commands cost it).
func floorEach(t *tree) func() (outcome, error) {
	var steps []func() (outcome, error)
	for _, d := range subRepos(t) {
		steps = append(steps,
			command(d, append(append([]string(nil), statusCmd...), "--ignore-submodules=dirty")...),
			command(d, "rev-parse", "HEAD", "HEAD^{tree}", "--symbolic-full-name", "HEAD"))
	}
	return sequence(steps...)
}

// wantRepos checks a capture's JSON lists the top and every submodule.
func wantRepos(n int, reused bool) func(out []byte) error {
	return func(out []byte) error {
		r, err := parseTake(out)
		if err != nil {
			return err
		}
		if len(r.Repos) != n+1 || r.Reused != reused {
			return fmt.Errorf("want %d repositories, reused %v; got %d, reused %v", n+1, reused, len(r.Repos), r.Reused)
		}
		return nil
	}
}

// subDedupCapture: the capture with nothing changed in any repository
// (deduplicated) against `git status` of the top, which looks inside each
// submodule, and against a status in each repository.
func subDedupCapture(t *tree, o *options) (*benchCase, error) {
	if t.subs == 0 {
		return nil, nil
	}
	if err := dropSubRefs(t); err != nil {
		return nil, err
	}
	agent := "dedup-subs"
	if _, err := checkpointCmd(t.dir, &agent)(); err != nil {
		return nil, err
	}
	return &benchCase{
		name:  fmt.Sprintf("dedup capture, %d submodules", t.subs),
		venom: side{label: "git venom-checkpoint (reused)", run: checkpointCmd(t.dir, &agent), check: wantRepos(t.subs, true)},
		bases: []baseline{
			{side: side{label: labelStatusSubs, run: command(t.dir, statusCmd...), check: wantEmpty}},
			{side: side{label: labelStatusEach, run: statusEach(t)}},
			{side: side{label: labelFloorEach, run: floorEach(t)}, target: subFloorTarget},
		},
	}, nil
}

// subEditCapture: a capture after one file changed inside one submodule
// (a new checkpoint: the other repositories keep their commits).
func subEditCapture(t *tree, o *options) (*benchCase, error) {
	if t.subs == 0 {
		return nil, nil
	}
	p := filepath.Join(t.dir, "s07", "d03", "f077.txt")
	orig, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	agent := "edit-subs"
	if _, err := checkpointCmd(t.dir, &agent)(); err != nil {
		return nil, err
	}
	edit := func(run int) error { return os.WriteFile(p, []byte(fmt.Sprintf("%s run %d\n", orig, run)), 0o644) }
	return &benchCase{
		name:     fmt.Sprintf("one edit in one of %d submodules", t.subs),
		venom:    side{label: "git venom-checkpoint (new checkpoint)", prepare: edit, run: checkpointCmd(t.dir, &agent), check: wantRepos(t.subs, false)},
		bases:    []baseline{{side: side{label: labelStatusSubs, prepare: edit, run: command(t.dir, statusCmd...)}}},
		teardown: func() error { return os.WriteFile(p, orig, 0o644) },
	}, nil
}

// subAloneCapture: the dedup capture of one submodule of the tree on its
// own (run inside it, a repository of subFiles files with a log of its
// own), against its status: the fixed cost of capturing one repository,
// which issue 18's bar allows per repository (bench/README.md).
func subAloneCapture(t *tree, o *options) (*benchCase, error) {
	if t.subs == 0 {
		return nil, nil
	}
	dir := filepath.Join(t.dir, "s00")
	agent := "alone"
	if _, err := checkpointCmd(dir, &agent)(); err != nil {
		return nil, err
	}
	return &benchCase{
		name:  "dedup capture of one submodule alone",
		venom: side{label: "git venom-checkpoint (reused)", run: checkpointCmd(dir, &agent), check: wantRepos(0, true)},
		bases: []baseline{{side: side{label: labelStatus, run: command(dir, statusCmd...), check: wantEmpty}}},
	}, nil
}

// subFloorTarget is the dedup row's CPU target against floorEach.
const subFloorTarget = 2.0
