// Package checkpoint is the domain on top of plumbing, refs and journal:
// taking checkpoints (RFC 3, 4), listing, showing and diffing them (RFC
// 11.1), and the locks that keep captures and rollbacks of one agent and
// one tree apart (RFC 3.1).
package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// Tree is one working tree the toolkit acts on: its git runner, the
// repository's log and the venom.* configuration.
type Tree struct {
	Repo   *plumbing.Repo
	Log    *journal.Log
	Config Config
	// subRepos are the runners of submodules found by RepoAt, by path.
	subRepos map[string]*plumbing.Repo
	// swept is set once DropEndedBackups has run: once a command.
	swept bool
}

// Path is the tree's canonical path, its identity (RFC 2 "compared by
// canonical path").
func (t *Tree) Path() string { return t.Repo.WorkTree }

// Main reports whether this is the repository's main worktree (not one
// added with `git worktree add`).
func (t *Tree) Main() bool { return t.Repo.GitDir == t.Repo.CommonDir }

// OpenTree finds the tree containing dir (the whole worktree, even from a
// subdirectory), opens its log and reads its config. Outside a repository
// it is unsupported.checkpoint_no_repo (exit 10), as for a bare repository,
// which has no tree to capture, and as for a folder of a repository that
// holds none of the files its index tracks (data.why "not_tracked"): an
// untracked or ignored folder, such as a project not yet `git init`ed
// inside a dotfiles repository at $HOME, is no part of that repository's
// work, and a checkpoint from there would take the whole enclosing tree
// (RFC 4.1: venom checks that the tree is a git root of its own). At the
// top of a tree that check costs nothing; in a subdirectory, one `git
// ls-files` of it (Repo.TracksBelowPrefix), beside the config read.
func OpenTree(ctx context.Context, dir string) (*Tree, error) {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			// RFC 11.3: "the tree is missing" (removed under the process).
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "getwd"}, "reading the current directory")
		}
	}
	// The config is read beside the discovery, not after it: a hook pays
	// one git start in wall time for both (plumbing.RunDiscovered).
	type answer struct {
		out []byte
		err error
	}
	cfgc := make(chan answer, 1)
	go func() {
		out, err := plumbing.RunDiscovered(ctx, dir, configArgs...)
		cfgc <- answer{out, err}
	}()
	r, err := plumbing.Open(ctx, dir)
	switch {
	case errors.Is(err, plumbing.ErrNoRepo):
		return nil, rfcerr.New("unsupported.checkpoint_no_repo", map[string]any{"path": dir},
			"%s is not in a git working tree; checkpoints live in a repository", dir).
			WithHint("run it inside a git repository, or `git init` one first")
	case errors.Is(err, plumbing.ErrBare):
		return nil, rfcerr.New("unsupported.checkpoint_no_repo", map[string]any{"path": dir, "why": "bare"},
			"%s is a bare repository: it has no working tree to capture", dir)
	case err != nil:
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "rev-parse"}, "finding the repository")
	}
	if tracked, err := r.TracksBelowPrefix(ctx); err != nil {
		<-cfgc
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "ls-files"}, "finding the repository")
	} else if !tracked {
		<-cfgc
		return nil, notTracked(dir, r)
	}
	lg, err := journal.Open(r.CommonDir)
	if err != nil {
		return nil, LogError(err, "opening the log")
	}
	a := <-cfgc
	cfg, err := parseConfig(a.out, a.err)
	if err != nil && rfcerr.As(err) == nil {
		// Discovery from dir may differ from Open's answer in the one case
		// Open corrects (a hook's GIT_DIR without GIT_WORK_TREE): ask
		// again the pinned way before calling it a failure.
		cfg, err = LoadConfig(ctx, r)
	}
	if err != nil {
		if rfcerr.As(err) != nil {
			return nil, err
		}
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"reason": "config"}, "reading config")
	}
	if cfg.Timeout > 0 {
		lg.LockWait = cfg.Timeout // no append waits past a capture's bound
	}
	r.KnowModesFromDisk(cfg.ModesFromDisk) // read already: no second git config
	r.KnowConfigFiles(cfg.HashFiles, cfg.HashOnBranch)
	return &Tree{Repo: r, Log: lg, Config: cfg}, nil
}

// notTracked is OpenTree's refusal of dir, a folder of r's tree that holds
// no path r's index tracks.
func notTracked(dir string, r *plumbing.Repo) error {
	return rfcerr.New("unsupported.checkpoint_no_repo", map[string]any{"path": dir, "why": "not_tracked", "repository": r.WorkTree},
		"%s holds no file the repository at %s tracks (it is untracked or ignored there), so it is no part of that repository's work: a checkpoint from here would take that whole tree", dir, r.WorkTree).
		WithHint("to checkpoint this folder, make it a repository of its own first: `git init`").
		WithHint("to act on the enclosing repository instead, run from its top, or with `-C %s`", r.WorkTree)
}

func hashName(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// AgentLock is the name of the lock a capture of agent holds (RFC 3.1: an
// agent's captures run one at a time).
func AgentLock(agent string) string { return "agent-" + agent }

// TreeLock is the name of the lock on one tree: captures hold it shared,
// a rollback exclusive, so no capture reads a tree a rollback is writing.
func TreeLock(path string) string { return "tree-" + hashName(path) }

// RollbackLock is the name of the lock a rollback of a tree holds.
func RollbackLock(path string) string { return "rollback-" + hashName(path) }

// Pending reports whether a capture of agent is running now (RFC 11.1
// agent.checkpoints pending, conflict.checkpoint_pending).
func (t *Tree) Pending(agent string) bool {
	l, err := journal.TryLock(t.Log.LockPath(AgentLock(agent)), true)
	if err != nil {
		return errors.Is(err, journal.ErrLocked)
	}
	l.Unlock()
	return false
}
