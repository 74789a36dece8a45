package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Check is one line of `git venom-doctor` (RFC "doctor" table): ID names
// it, Level is "ok", "warn" or "fail", Fix says what to do when it is not
// ok.
type Check struct {
	ID      string `json:"id"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// SizeWarn is the size of objects reachable only from refs/venom/ above
// which the size check warns (CASES BR-26), in bytes.
const SizeWarn = 1 << 30

// Doctor runs the read-only checks of DESIGN.md section 1's doctor: git's
// version, the install, the log (torn last line), refs against the log,
// interrupted rollbacks, held locks, mirror remotes and the disk the
// checkpoints hold. It writes nothing.
func (t *Tree) Doctor(ctx context.Context) []Check {
	var out []Check
	add := func(id, level, fix, format string, args ...any) {
		out = append(out, Check{ID: id, Level: level, Message: fmt.Sprintf(format, args...), Fix: fix})
	}

	if v, err := t.Repo.Line(ctx, plumbing.Options{NoWorkTree: true}, "version"); err != nil {
		add("checkpoints.git", "fail", "install git 2.31 or newer", "cannot run git: %v", err)
	} else if major, minor, ok := gitVersion(v); !ok || major < 2 || (major == 2 && minor < 31) {
		add("checkpoints.git", "fail", "install git 2.31 or newer (--path-format)", "%s is older than 2.31", v)
	} else {
		add("checkpoints.git", "ok", "", "%s", v)
	}

	var missing []string
	for _, v := range []string{"checkpoint", "plan", "rollback", "hook", "doctor"} {
		if _, err := exec.LookPath("git-venom-" + v); err != nil {
			missing = append(missing, "git-venom-"+v)
		}
	}
	if len(missing) > 0 {
		add("checkpoints.install", "warn", "run `make install` (PREFIX=...) and put its bin on PATH", "not on PATH: %s", strings.Join(missing, ", "))
	} else {
		add("checkpoints.install", "ok", "", "all five commands are on PATH")
	}

	st, torn, err := t.loadForDoctor()
	switch {
	case err != nil:
		add("checkpoints.log", "fail", "keep a copy of "+t.Log.Path()+" and report it", "the log does not replay: %v", err)
		return out
	case torn:
		add("checkpoints.log", "warn", "nothing to do: the next record cuts the torn line off", "the log's last line is torn (a crash mid-append)")
	default:
		add("checkpoints.log", "ok", "", "%d record(s) replay", st.Seq)
	}

	switch sc, err := t.Log.CheckSnapshot(); {
	case err != nil:
		add("checkpoints.snapshot", "warn", "", "cannot check the replay snapshot: %v", err)
	case sc.Used && !sc.Agrees:
		add("checkpoints.snapshot", "warn", "remove "+t.Log.SnapshotPath()+": the next command rebuilds it from the log",
			"the replay snapshot (through record %d) disagrees with the log: was the log changed in place?", sc.Seq)
	case sc.Used:
		add("checkpoints.snapshot", "ok", "", "the replay snapshot (through record %d) agrees with the log", sc.Seq)
	case sc.Present:
		add("checkpoints.snapshot", "ok", "", "the replay snapshot no longer covers the log; the next command rebuilds it")
	default:
		add("checkpoints.snapshot", "ok", "", "no replay snapshot yet")
	}

	if msg, level, fix, err := t.doctorRefs(ctx, st); err != nil {
		add("checkpoints.refs", "fail", "", "cannot list refs: %v", err)
	} else {
		add("checkpoints.refs", level, fix, "%s", msg)
	}

	var open, undo []string
	var running []string
	for _, a := range st.Agents {
		if b := a.OpenRollback; b != nil {
			if rollbackRunning(t, b.Path) {
				// Its lock is held: it is running now, not interrupted.
				running = append(running, fmt.Sprintf("%s to %s (safety %s, in %s)", a.ID, b.Checkpoint, b.Safety, b.Path))
				continue
			}
			open = append(open, fmt.Sprintf("%s to %s (safety %s, in %s)", a.ID, b.Checkpoint, b.Safety, b.Path))
			dir := ""
			if b.Path != t.Path() {
				dir = b.Path
			}
			undo = append(undo, UndoCommand(a.ID, b.Safety, dir))
		}
	}
	// A rollback the next command closed as interrupted left the tree as
	// it was when it died, half written, and nothing has been captured
	// since: the tree is still so, though no rollback is open.
	var closed, closedUndo []string
	for _, a := range st.Agents {
		if a.OpenRollback != nil || len(a.Ended) == 0 {
			continue
		}
		e := a.Ended[len(a.Ended)-1]
		if e.Code != CodeInterrupted {
			continue
		}
		if l := a.Latest(); l == nil || l.ID() != e.Safety {
			continue // captured since: the tree moved on
		}
		closed = append(closed, fmt.Sprintf("%s to %s (safety %s, in %s)", a.ID, e.Checkpoint, e.Safety, e.Path))
		dir := ""
		if e.Path != t.Path() {
			dir = e.Path
		}
		closedUndo = append(closedUndo, UndoCommand(a.ID, e.Safety, dir))
	}
	sort.Strings(open)
	sort.Strings(undo)
	sort.Strings(closed)
	sort.Strings(closedUndo)
	switch {
	case len(open) > 0:
		add("checkpoints.rollbacks", "warn", "the next plan or rollback in that tree closes it as failed.rollback_interrupted; to get the tree back as it was, plan the way back to the safety checkpoint and confirm it: "+strings.Join(undo, "; "),
			"rollback(s) started and never ended: %s", strings.Join(open, "; "))
	case len(closed) > 0:
		add("checkpoints.rollbacks", "warn", "the tree is as the rollback left it when it stopped; to keep it so, take a checkpoint; to get it back as it was, plan the way back to the safety checkpoint and confirm it: "+strings.Join(closedUndo, "; "),
			"rollback(s) interrupted (failed.rollback_interrupted) and never undone, nothing captured since: %s", strings.Join(closed, "; "))
	case len(running) > 0:
		sort.Strings(running)
		add("checkpoints.rollbacks", "ok", "", "no interrupted rollback; running now: %s", strings.Join(running, "; "))
	default:
		add("checkpoints.rollbacks", "ok", "", "no interrupted rollback")
	}

	out = append(out, t.backupsCheck(ctx, st))

	if held := t.heldLocks(); len(held) > 0 {
		add("checkpoints.locks", "ok", "", "held now (by running commands; the kernel frees them when a process dies): %s", strings.Join(held, ", "))
	} else {
		add("checkpoints.locks", "ok", "", "no lock is held")
	}

	if mir, err := t.Repo.Run(ctx, plumbing.Options{NoWorkTree: true}, "config", "--get-regexp", `^remote\..*\.mirror$`); err == nil {
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(string(mir)), "\n") {
			k, v, _ := strings.Cut(l, " ")
			if v == "true" || v == "fetch" || v == "push" {
				names = append(names, strings.TrimSuffix(strings.TrimPrefix(k, "remote."), ".mirror"))
			}
		}
		if len(names) > 0 {
			var fix []string
			for _, n := range names {
				fix = append(fix, "git config --unset remote."+n+".mirror")
			}
			add("checkpoints.mirror", "warn", strings.Join(fix, "; "),
				"`git push --mirror` to %s would push refs/venom/, untracked files included", strings.Join(names, ", "))
		} else {
			add("checkpoints.mirror", "ok", "", "no remote mirrors refs/venom/")
		}
	} else {
		add("checkpoints.mirror", "ok", "", "no remote mirrors refs/venom/")
	}

	if have, err := t.Repo.ResolveRefs(ctx, refs.Prefix); err == nil && len(have) > 0 {
		out = append(out, t.diskCheck(ctx))
	}
	return out
}

func (t *Tree) loadForDoctor() (*journal.State, bool, error) {
	recs, torn, err := t.Log.ReadAll()
	if err != nil {
		return nil, false, err
	}
	st, err := journal.Replay(recs)
	return st, torn, err
}

// heldLocks names the locks another process holds now.
// rollbackRunning reports whether a rollback of the tree at path holds
// its lock now (RollbackLock): an open rollback.started whose lock is
// free was interrupted (RFC 7.6), one whose lock is held is running.
func rollbackRunning(t *Tree, path string) bool {
	return lockHeld(t.Log.LockPath(RollbackLock(path)))
}

// lockHeld reports whether a running command holds the lock file at
// path; it takes and frees the lock when none does.
func lockHeld(path string) bool {
	l, err := journal.TryLock(path, true)
	if errors.Is(err, journal.ErrLocked) {
		return true
	}
	if err == nil {
		l.Unlock()
	}
	return false
}

func (t *Tree) heldLocks() []string {
	ents, err := os.ReadDir(filepath.Join(t.Log.Dir, "locks"))
	if err != nil {
		return nil
	}
	var held []string
	for _, e := range ents {
		if lockHeld(filepath.Join(t.Log.Dir, "locks", e.Name())) {
			held = append(held, strings.TrimSuffix(e.Name(), ".lock"))
		}
	}
	return held
}

func gitVersion(v string) (int, int, bool) {
	f := strings.Fields(v)
	if len(f) < 3 {
		return 0, 0, false
	}
	parts := strings.Split(f[2], ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// short is an object id's first 10 hex digits.
func short(oid string) string {
	if len(oid) > 10 {
		return oid[:10]
	}
	return oid
}

func head(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("(+%d more)", len(s)-n))
	}
	return s
}

// doctorRepo is one repository's checkpoint refs, for doctorRefs.
type doctorRepo struct {
	rel   string
	git   *plumbing.Repo
	have  map[string]plumbing.OID
	named map[string]bool
}

// namedByLog calls f with each repository state of each checkpoint the
// log under commonDir records and the checkpoint's ref name, when that
// directory holds a log; it creates nothing, and a log it cannot read
// names nothing.
func namedByLog(commonDir string, f func(rs journal.RepoState, ref string)) {
	if _, err := os.Stat(filepath.Join(commonDir, "venom", "log.jsonl")); err != nil {
		return
	}
	st, err := (&journal.Log{Dir: filepath.Join(commonDir, "venom")}).Load()
	if err != nil {
		return
	}
	for _, a := range st.Agents {
		for _, s := range a.Checkpoints {
			ref := refs.Checkpoint(a.ID, s.N)
			for _, rs := range s.Rec.Repos {
				f(rs, ref)
			}
		}
	}
}

// doctorRefs is the checkpoints.refs check, in every repository (RFC 4.2,
// 5.1; issue 18): each checkpoint's ref in each repository its record
// names must hold the logged commit, and no ref under refs/venom/
// checkpoints/ of the top or of a submodule checked out now may be one no
// record names. A submodule a record names that is gone from the tree is
// passed over. The records are this log's and those of the other logs
// that keep refs in the same repositories: a submodule's own (checkpoints
// taken inside it) and, when this is a submodule, its superproject's; a
// ref one of them names is no orphan (deleting it, as the fix says, would
// lose that checkpoint once a gc ran). Nor is a submodule's ref that a
// record names for a submodule no longer at its path: a submodule moved
// with git mv keeps its git dir, so its refs are at its new path.
func (t *Tree) doctorRefs(ctx context.Context, st *journal.State) (msg, level, fix string, err error) {
	top := &doctorRepo{rel: TopRepo, git: t.Repo, named: map[string]bool{}}
	if top.have, err = t.Repo.ResolveRefs(ctx, refs.Prefix); err != nil {
		return "", "", "", err
	}
	repos := []*doctorRepo{top}
	byPath := map[string]*doctorRepo{}
	sub := func(rs journal.RepoState) *doctorRepo {
		if d, ok := byPath[rs.Path]; ok {
			return d
		}
		var d *doctorRepo
		if g, err := t.RepoAt(ctx, rs); err == nil {
			if have, err := g.ResolveRefs(ctx, refs.Prefix); err == nil {
				d = &doctorRepo{rel: rs.Repo, git: g, have: have, named: map[string]bool{}}
				repos = append(repos, d)
			}
		}
		byPath[rs.Path] = d
		return d
	}
	// The submodules checked out now, recursively, though no record may
	// name them.
	var walk func(g *plumbing.Repo, rel string)
	walk = func(g *plumbing.Repo, rel string) {
		paths, err := g.CheckedOutSubmodules(ctx)
		if err != nil {
			return
		}
		for _, p := range paths {
			r := p
			if rel != TopRepo {
				r = rel + "/" + p
			}
			d := sub(journal.RepoState{Repo: r, Path: filepath.Join(t.Path(), filepath.FromSlash(r))})
			if d != nil {
				walk(d.git, r)
			}
		}
	}
	walk(t.Repo, TopRepo)
	var gone, moved, tooMany []string
	// The refs of records whose submodule is no longer at its path: moved
	// (git mv keeps its git dir), it is at another path now, where its
	// refs are no orphans.
	unplaced := map[string]bool{}
	for _, a := range st.Agents {
		n := 0
		for _, s := range a.Checkpoints {
			ref := refs.Checkpoint(a.ID, s.N)
			top.named[ref] = true
			for i, rs := range s.Rec.Repos {
				if i > 0 {
					if d := sub(rs); d != nil {
						d.named[ref] = true
					} else {
						unplaced[ref] = true
					}
				}
			}
			if s.Pruned || len(s.Rec.Repos) == 0 {
				continue
			}
			n++
			for i, rs := range s.Rec.Repos {
				d := top
				if i > 0 {
					if d = sub(rs); d == nil {
						continue
					}
				}
				where := ""
				if i > 0 {
					where = " in " + rs.Repo
				}
				switch v, ok := d.have[ref]; {
				case !ok:
					gone = append(gone, a.ID+"/"+s.ID()+where)
				case string(v) != rs.Commit:
					what := "another commit"
					if _, typ, err := d.git.RefObject(ctx, ref); err == nil && typ != "" && typ != "commit" {
						what = "a " + typ
					}
					moved = append(moved, fmt.Sprintf("%s/%s%s (now %s %s)", a.ID, s.ID(), where, what, short(string(v))))
				}
			}
		}
		if t.Config.Keep > 0 && n > t.Config.Keep {
			tooMany = append(tooMany, fmt.Sprintf("%s (%d)", a.ID, n))
		}
	}
	// A submodule's refs/venom/checkpoints/ is also its own log's, when
	// checkpoints were taken inside it, and this repository's is also
	// its superproject's log's when this is a submodule: a ref either
	// names is no orphan (deleting it would lose that checkpoint).
	mark := func(rs journal.RepoState, ref string) {
		if rs.Path == t.Path() {
			top.named[ref] = true
		} else if d := byPath[rs.Path]; d != nil {
			d.named[ref] = true
		}
	}
	for _, d := range repos[1:] {
		namedByLog(d.git.CommonDir, mark)
	}
	if super, err := t.Repo.Line(ctx, plumbing.Options{}, "rev-parse", "--show-superproject-working-tree"); err == nil && super != "" {
		if sg, err := t.Repo.ForDir(ctx, super); err == nil {
			namedByLog(sg.CommonDir, mark)
		}
	}
	var orphans []string
	count := 0
	for _, d := range repos {
		count += len(d.have)
		for ref := range d.have {
			if !d.named[ref] && (d.rel == TopRepo || !unplaced[ref]) {
				if d.rel == TopRepo {
					orphans = append(orphans, ref)
				} else {
					orphans = append(orphans, d.rel+":"+ref)
				}
			}
		}
	}
	sort.Strings(orphans)
	sort.Strings(gone)
	sort.Strings(moved)
	level, msg = "ok", fmt.Sprintf("%d checkpoint ref(s), all named by the log", count)
	if len(repos) > 1 {
		msg += fmt.Sprintf(" (%d repositories)", len(repos))
	}
	var fixes []string
	if len(orphans) > 0 {
		level = "warn"
		msg = fmt.Sprintf("%d ref(s) no log record names (ignored by every command): %s", len(orphans), strings.Join(head(orphans, 5), " "))
		fixes = append(fixes, "delete them with `git update-ref -d <ref>` (in the submodule named before the colon: `git -C <submodule> update-ref -d <ref>`) once you know nothing needs them")
	}
	if len(gone) > 0 {
		level = "warn"
		msg += fmt.Sprintf("; %d checkpoint(s) whose ref is gone (not_found.checkpoint): %s", len(gone), strings.Join(head(gone, 5), " "))
	}
	if len(moved) > 0 {
		level = "warn"
		msg += fmt.Sprintf("; %d checkpoint(s) whose ref moved off the logged commit (not_found.checkpoint): %s", len(moved), strings.Join(head(moved, 5), " "))
	}
	if len(tooMany) > 0 {
		level = "warn"
		msg += "; more than venom.checkpoints.keep: " + strings.Join(tooMany, ", ")
		fixes = append(fixes, "git venom-checkpoint prune --all")
	}
	return msg, level, strings.Join(fixes, "; "), nil
}

// backupsCheck is checkpoints.backups: the backup directories rollbacks
// that ended left (LeftBackups). One that holds only what its safety
// checkpoint holds (a rollback killed as it ended) is ok: the next plan or
// rollback removes it. One that holds anything else is a warning: it may
// be the only copy of a person's bytes.
func (t *Tree) backupsCheck(ctx context.Context, st *journal.State) Check {
	// A rollback killed before it ended (checkpoints.rollbacks) left its
	// backup directories too: what it moved away, and any save made into
	// it, until the next plan or rollback judges and closes it.
	if killed := t.OpenBackups(ctx, st); len(killed) > 0 {
		return Check{ID: "checkpoints.backups", Level: "warn",
			Message: fmt.Sprintf("left by a rollback that did not end (checkpoints.rollbacks), holding what it moved away and any save made into it: %s", strings.Join(killed, ", ")),
			Fix:     "run git venom-plan for any checkpoint in that tree: it closes the rollback, keeps a save found there under refs/venom/rescued/, and removes the directory"}
	}
	var kept, gone []string
	for _, lb := range t.LeftBackups(ctx, st) {
		what := fmt.Sprintf("%s (the rollback of %s whose safety checkpoint is %s)", lb.Dir, lb.Agent, lb.Safety)
		if lb.Removable {
			gone = append(gone, what)
		} else {
			kept = append(kept, lb.Dir)
		}
	}
	switch {
	case len(kept) > 0:
		return Check{ID: "checkpoints.backups", Level: "warn",
			Message: fmt.Sprintf("a rollback left what no checkpoint holds in: %s", strings.Join(kept, ", ")),
			Fix:     "look at the files there (a save made into a file the rollback had moved away, or a file made in a directory it moved whole), copy back what you need, then remove the directory with rm -rf"}
	case len(gone) > 0:
		return Check{ID: "checkpoints.backups", Level: "ok",
			Message: fmt.Sprintf("left by a rollback killed as it ended, holding only what its safety checkpoint holds; the next plan or rollback removes it: %s", strings.Join(gone, ", "))}
	}
	return Check{ID: "checkpoints.backups", Level: "ok", Message: "no rollback left a backup directory"}
}
