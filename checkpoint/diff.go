package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// FileDiff is one member of agent.checkpoint_diff's files[] (RFC 11.1):
// Change is create, modify or delete; Added and Removed count lines (0 for
// binary files, where Binary is true).
type FileDiff struct {
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary"`
}

// Patch is agent.checkpoint_diff's patch: the text of the diff of one path,
// cut at PatchMax bytes (Truncated), and its full size in Bytes.
type Patch struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
}

// Diff is agent.checkpoint_diff's result. Pathspec is the toolkit's
// addition: the pathspec that narrowed Files, as given (absent: none).
type Diff struct {
	From     string     `json:"from"`
	To       string     `json:"to"`
	Files    []FileDiff `json:"files"`
	Patch    *Patch     `json:"patch,omitempty"`
	Pathspec []string   `json:"pathspec,omitempty"`
}

// PatchMax bounds a patch's text (RFC 11.1 harness.body_max), in bytes.
const PatchMax = 256 << 10

// ChangeName maps a diff-tree status letter to RFC 11.1's change words.
func ChangeName(status byte) string {
	switch status {
	case 'A':
		return "create"
	case 'D':
		return "delete"
	}
	return "modify"
}

// CurrentTree captures the current files without making a ref or a log
// record (RFC 7.2's S), for diffs and plans.
func (t *Tree) CurrentTree(ctx context.Context) (*plumbing.Snapshot, error) {
	snap, err := t.Repo.Capture(ctx, plumbing.CaptureOptions{MaxFileBytes: t.Config.MaxFileBytes, MaxTotalBytes: t.Config.MaxTotalBytes})
	if err != nil {
		return nil, classify(t, err)
	}
	return snap, nil
}

// CurrentAll captures every repository in scope without making a ref
// or a log record (RFC 7.2's S of each), with its RFC error.
func (t *Tree) CurrentAll(ctx context.Context) (*Capture, error) {
	c, err := t.CaptureAll(ctx)
	if err != nil {
		return nil, classify(t, err)
	}
	return c, nil
}

// TreeDiff lists the files that differ between two trees (or commits),
// with line counts: two diff-tree calls, raw (Repo.DiffTrees) and numstat,
// both -z, both listing every gitlink (the numstat with the user's index,
// whose .gitattributes say what is binary).
func (t *Tree) TreeDiff(ctx context.Context, from, to string) ([]FileDiff, error) {
	return t.TreeDiffIn(ctx, from, to, nil)
}

// TreeDiffIn is TreeDiff narrowed to the paths ps matches (nil or empty:
// all), as git matches them (plumbing.Pathspec).
func (t *Tree) TreeDiffIn(ctx context.Context, from, to string, ps *plumbing.Pathspec) ([]FileDiff, error) {
	changes, err := t.Repo.DiffTreesIn(ctx, from, to, ps)
	if err != nil {
		var gerr *plumbing.Error
		if errors.As(err, &gerr) || ctx.Err() != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff-tree"}, "comparing trees")
		}
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "diff-tree"}, "reading diff-tree")
	}
	num, err := t.Repo.Run(ctx, plumbing.Options{Dir: ps.Where()}, append([]string{"diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--numstat", from, to}, ps.Argv()...)...)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff-tree"}, "comparing trees")
	}
	counts := map[string][2]int{}
	bin := map[string]bool{}
	for _, rec := range bytes.Split(num, []byte{0}) {
		f := bytes.SplitN(rec, []byte{'\t'}, 3)
		if len(f) != 3 {
			continue
		}
		p := string(f[2])
		if string(f[0]) == "-" {
			bin[p] = true
			continue
		}
		a, _ := strconv.Atoi(string(f[0]))
		d, _ := strconv.Atoi(string(f[1]))
		counts[p] = [2]int{a, d}
	}
	files := make([]FileDiff, 0, len(changes))
	for _, c := range changes {
		n := counts[c.Path]
		files = append(files, FileDiff{Repo: ".", Path: c.Path, Change: ChangeName(c.Status), Added: n[0], Removed: n[1], Binary: bin[c.Path]})
	}
	return files, nil
}

// Stat is git's diffstat of the files that differ between two trees (or
// commits), narrowed to ps (nil: all): `git diff --stat`, run where ps was
// typed, width columns wide (0: git's default) and coloured as git
// colours it when color is true. Paths are relative to the top, as git
// diff prints them.
func (t *Tree) Stat(ctx context.Context, from, to string, ps *plumbing.Pathspec, width int, color bool) (string, error) {
	args := []string{"diff", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--stat"}
	if width > 0 {
		args[len(args)-1] = "--stat=" + strconv.Itoa(width)
	}
	if color {
		args = append(args, "--color=always")
	} else {
		args = append(args, "--no-color")
	}
	args = append(append(args, from, to), ps.Argv()...)
	out, err := t.Repo.Run(ctx, plumbing.Options{Dir: ps.Where()}, args...)
	if err != nil {
		return "", rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff"}, "making the diffstat")
	}
	return string(out), nil
}

// PathPatch is the patch text of one path between two trees, cut at
// PatchMax.
func (t *Tree) PathPatch(ctx context.Context, from, to, path string) (*Patch, error) {
	return t.pathPatch(ctx, from, to, path, false)
}

// ColorPatch is PathPatch with git's colours (`git diff --color=always`,
// so the user's color.diff.* slots apply), for a terminal: the TUI's patch
// view. A cut patch ends at its last whole line, so no colour sequence is
// cut in two. Errors are PathPatch's.
func (t *Tree) ColorPatch(ctx context.Context, from, to, path string) (*Patch, error) {
	return t.pathPatch(ctx, from, to, path, true)
}

func (t *Tree) pathPatch(ctx context.Context, from, to, path string, color bool) (*Patch, error) {
	c := "--no-color"
	if color {
		c = "--color=always"
	}
	out, err := t.Repo.Run(ctx, plumbing.Options{}, "diff", "--no-ext-diff", c, "--no-renames", from, to, "--", plumbing.Literal(path))
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "diff"}, "making the patch")
	}
	p := &Patch{Bytes: len(out)}
	if len(out) > PatchMax {
		out, p.Truncated = out[:PatchMax], true
		if i := bytes.LastIndexByte(out, '\n'); color && i >= 0 {
			out = out[:i+1]
		}
	}
	p.Text = string(out)
	return p, nil
}

// ColorWanted reports whether git would colour a diff on a terminal here:
// `git config --get-colorbool color.diff true`, which weighs color.diff
// and color.ui as git does. NO_COLOR is the caller's to check.
func (t *Tree) ColorWanted(ctx context.Context) bool {
	out, err := t.Repo.Run(ctx, plumbing.Options{}, "config", "--get-colorbool", "color.diff", "true")
	return err == nil && string(bytes.TrimSpace(out)) == "true"
}

// Since is what checkpoint s's own changes are counted from (`git
// venom-checkpoint show`, the TUI's list): the previous checkpoint in the
// same tree, else the HEAD it was taken on, else the empty tree. from is a
// commit or tree name for TreeDiff, label says which ("k2", "HEAD
// 1a2b3c4d5e", "the empty tree").
func Since(a *journal.Agent, s *journal.Saved) (from, label string) {
	if p := Previous(a, s); p != nil {
		return p.Rec.Repos[0].Commit, p.ID()
	}
	if len(s.Rec.Repos) > 0 && s.Rec.Repos[0].Head != nil {
		h := *s.Rec.Repos[0].Head
		if len(h) > 10 {
			return h, "HEAD " + h[:10]
		}
		return h, "HEAD " + h
	}
	return string(plumbing.EmptyTree), "the empty tree"
}

// Previous is the checkpoint before s in the same tree, or nil.
func Previous(a *journal.Agent, s *journal.Saved) *journal.Saved {
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		c := a.Checkpoints[i]
		if c.N < s.N && !c.Pruned && len(c.Rec.Repos) > 0 && len(s.Rec.Repos) > 0 && c.Rec.Repos[0].Path == s.Rec.Repos[0].Path {
			return c
		}
	}
	return nil
}
