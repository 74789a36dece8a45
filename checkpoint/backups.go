package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Backup directories that outlive their rollback (F6 of break-dirmove).
// A rollback removes its backup directories after it has logged
// rollback.ended, so one killed in between leaves them; no command closes
// a rollback that ended, and the scratch directory's sweep passes over a
// backup directory with a manifest (plumbing.Repo.CleanTmp), so they
// stayed for good. The next plan or rollback in the tree removes such a
// directory by name when all it holds is what the rollback moved there,
// unchanged, and the safety checkpoint is whole and not pruned
// (DropEndedBackups). One
// that holds anything else is kept as it is: a save made into it after
// the rollback compared its backups, a file a program made in a directory
// it moved whole, a save it could not store and named by its file. git
// venom-doctor names what is kept (checkpoints.backups).

// LeftBackup is a backup directory a rollback that ended left: Dir
// (absolute), the rollback's Agent and Safety checkpoint, and Removable:
// all it holds is what the rollback moved there, unchanged (judge), and
// the safety checkpoint, which holds all of that, is whole and not
// pruned.
type LeftBackup struct {
	Dir, Agent, Safety string
	Removable          bool
	repo               *plumbing.Repo
	saved              *journal.Saved // the safety checkpoint, nil when the log no longer has it
	moved              []Moved
	seen               Seen // what each file was when judged
}

// LeftBackups lists, sorted by Dir, the backup directories of rollbacks
// that ended (st's rollback.ended records, an open rollback's are
// CloseInterrupted's) in this worktree's scratch directory, and in that
// of each submodule a rollback here covered (in its git directory under
// the top's when it is no longer checked out: plumbing.SubmoduleGitDir).
// It writes nothing. Its cost when there is none: one readdir of the
// top's scratch directory, and, when rollbacks covered submodules, one
// readdir for each submodule (and a git child for one git cannot be
// found from by its gitfile); each directory found is then judged
// (Removable), which hashes what may have changed.
func (t *Tree) LeftBackups(ctx context.Context, st *journal.State) []LeftBackup {
	left := t.leftBackups(ctx, st)
	for i := range left {
		left[i].judge(ctx, t)
	}
	return left
}

// leftBackups is LeftBackups without the judging.
func (t *Tree) leftBackups(ctx context.Context, st *journal.State) []LeftBackup {
	type owner struct {
		agent, safety string
		saved         *journal.Saved
	}
	owners := map[string]owner{} // by BackupPrefix
	var subs []journal.RepoState
	subSeen := map[string]bool{}
	for _, a := range st.Agents {
		for i := range a.Ended {
			e := &a.Ended[i]
			if e.Path != t.Path() || (a.OpenRollback != nil && a.OpenRollback.Safety == e.Safety) {
				continue
			}
			s := a.Checkpoint(e.Safety)
			owners[BackupPrefix(a.ID, e.Safety)] = owner{a.ID, e.Safety, s}
			if s == nil {
				continue
			}
			for _, rs := range s.Rec.Repos {
				if rs.Repo != TopRepo && rs.Repo != "" && !subSeen[rs.Path] {
					subSeen[rs.Path] = true
					subs = append(subs, rs)
				}
			}
		}
	}
	if len(owners) == 0 {
		return nil
	}
	repos := t.backupRepos(ctx, subs)
	var out []LeftBackup
	seen := map[string]bool{}
	for _, r := range repos {
		d := filepath.Join(r.GitDir, "venom", "tmp")
		if seen[d] {
			continue
		}
		seen[d] = true
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			prefix, ok := backupPrefixOf(e)
			if !ok {
				continue
			}
			o, ok := owners[prefix]
			if !ok {
				continue
			}
			dir := filepath.Join(d, e.Name())
			if _, err := os.Lstat(filepath.Join(dir, ManifestFile)); err != nil {
				continue // the sweep's (CleanTmp)
			}
			out = append(out, LeftBackup{Dir: dir, Agent: o.agent, Safety: o.safety, repo: r, saved: o.saved})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

// backupRepos is the top repository and each of subs (submodules a
// checkpoint holds), where their rollbacks keep their backup directories:
// a submodule no longer checked out (deinit) in its git directory under
// the top's, which keeps the backups in it.
func (t *Tree) backupRepos(ctx context.Context, subs []journal.RepoState) []*plumbing.Repo {
	repos := []*plumbing.Repo{t.Repo}
	for _, rs := range subs {
		r, err := t.RepoAt(ctx, rs)
		if err != nil {
			r, err = t.Repo.SubmoduleGitDir(ctx, rs.Repo)
		}
		if err == nil && r != t.Repo {
			repos = append(repos, r)
		}
	}
	return repos
}

// OpenBackups lists, sorted, the backup directories of the rollbacks st
// holds open in this tree (killed before they ended, not running now:
// checkpoints.rollbacks names them), in the top repository's scratch
// directory and in each submodule's their safety checkpoint holds. The
// next plan or rollback closes such a rollback and judges them
// (CloseInterrupted). It writes nothing: a glob a repository.
func (t *Tree) OpenBackups(ctx context.Context, st *journal.State) []string {
	var out []string
	for _, a := range st.Agents {
		b := a.OpenRollback
		if b == nil || b.Path != t.Path() || rollbackRunning(t, b.Path) {
			continue
		}
		var subs []journal.RepoState
		if s := a.Checkpoint(b.Safety); s != nil {
			for _, rs := range s.Rec.Repos {
				if rs.Repo != TopRepo && rs.Repo != "" {
					subs = append(subs, rs)
				}
			}
		}
		for _, r := range t.backupRepos(ctx, subs) {
			dirs, _ := filepath.Glob(filepath.Join(r.GitDir, "venom", "tmp", BackupPrefix(a.ID, b.Safety)+"*"))
			out = append(out, dirs...)
		}
	}
	sort.Strings(out)
	return out
}

// judge reads lb's manifest and sets Removable, the cheap questions
// first, so that a directory kept for a person's bytes costs later
// commands little: every entry of the directory is named by the manifest
// (a torn last line leaves a file unnamed); the safety checkpoint is not
// pruned; no save is among the files (SavesAmong: an lstat each, and
// hashing what the lstat cannot clear); nothing is in a directory moved
// whole that the manifest does not name (foreignIn); and the checkpoint's
// ref still names its commit and its objects are whole (SafetyWhole), so
// that what is removed stays somewhere. What each file was when judged is
// kept for RemoveNamed. t is the tree it was found in.
func (lb *LeftBackup) judge(ctx context.Context, t *Tree) {
	lb.moved = readManifest(lb.Dir)
	lb.Removable = false
	lb.seen = Seen{}
	if lb.saved == nil || lb.saved.Pruned || len(lb.moved) == 0 || !allNamed(lb.Dir, lb.moved) {
		return
	}
	var rs *journal.RepoState
	for i := range lb.saved.Rec.Repos {
		if q := &lb.saved.Rec.Repos[i]; q.Path == lb.repo.WorkTree || (lb.repo == t.Repo && (q.Repo == TopRepo || q.Repo == "")) {
			rs = q
		}
	}
	if rs == nil {
		return
	}
	sub := &Tree{Repo: lb.repo, Log: t.Log, Config: t.Config}
	if saves, _ := sub.savesAmong(ctx, lb.moved, lb.seen); len(saves) > 0 || len(foreignIn(lb.moved, lb.seen)) > 0 {
		return
	}
	n, err := refs.ParseID(lb.Safety)
	if err != nil {
		return
	}
	if have, err := lb.repo.RefValue(ctx, refs.Checkpoint(lb.Agent, n)); err != nil || string(have) != rs.Commit {
		return // the ref was deleted (or moved): gc may take its objects
	}
	_, missing, err := sub.SafetyWhole(ctx, *rs, "", nil, true)
	lb.Removable = err == nil && len(missing) == 0
}

// allNamed reports whether every entry of the backup directory dir is its
// manifest or a file or directory a record of moved names.
func allNamed(dir string, moved []Moved) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	named := map[string]bool{ManifestFile: true}
	for _, m := range moved {
		if filepath.Dir(m.File) == dir {
			named[filepath.Base(m.File)] = true
		}
	}
	for _, e := range ents {
		if !named[e.Name()] {
			return false
		}
	}
	return true
}

// DropEndedBackups removes each backup directory LeftBackups finds
// removable, by name (RemoveNamed: never a file the manifest does not
// name, nor one changed since it was judged). It holds no lock: no
// command but such a sweep touches the backup directory of a rollback
// that ended, once that rollback's own cleanup is done, which it knows
// from the tree's rollback lock being free (a rollback that has logged
// its end holds it until its cleanup ends), so a rollback starting
// meanwhile is not refused. It runs once for t (a command closes
// interrupted rollbacks more than once), once the lock was free: a call
// that passed over the tree leaves it to the next (a TUI keeps its tree).
// What it keeps is a person's to look at: the doctor names it
// (checkpoints.backups).
func (t *Tree) DropEndedBackups(ctx context.Context, st *journal.State) {
	if t.swept {
		return
	}
	// A rollback that logged its end still removes its backups itself,
	// holding the tree's rollback lock until it is done (and looks at
	// the files it holds open as it does): while the lock is held, the
	// sweep passes over the tree. It does not keep the lock, so that a
	// rollback starting meanwhile is not refused.
	lk, err := journal.TryLock(t.Log.LockPath(RollbackLock(t.Path())), true)
	if err != nil {
		return // and a later call on t tries again
	}
	lk.Unlock()
	t.swept = true
	for _, lb := range t.leftBackups(ctx, st) {
		if lb.judge(ctx, t); lb.Removable {
			RemoveNamed(lb.Dir, lb.moved, nil, lb.seen)
		}
	}
}

// backupPrefixOf is the BackupPrefix a backup directory's name starts
// with: the name without the digits os.MkdirTemp put at its end (an agent
// id may hold "-", so the prefix of another agent's rollback cannot
// simply be matched at the name's start).
func backupPrefixOf(e os.DirEntry) (string, bool) {
	name := e.Name()
	if !e.IsDir() || !strings.HasPrefix(name, "backup-") {
		return "", false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 || name[i-1] != '-' {
		return "", false
	}
	return name[:i], true
}
