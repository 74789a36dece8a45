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

	have, err := t.Repo.ResolveRefs(ctx, refs.Prefix)
	if err != nil {
		add("checkpoints.refs", "fail", "", "cannot list refs: %v", err)
	} else {
		named := map[string]bool{}
		var gone, moved, tooMany []string
		for _, a := range st.Agents {
			n := 0
			for _, s := range a.Checkpoints {
				ref := refs.Checkpoint(a.ID, s.N)
				named[ref] = true
				if s.Pruned || len(s.Rec.Repos) == 0 {
					continue
				}
				n++
				switch v, ok := have[ref]; {
				case !ok:
					gone = append(gone, a.ID+"/"+s.ID())
				case string(v) != s.Rec.Repos[0].Commit:
					what := "another commit"
					if _, typ, err := t.Repo.RefObject(ctx, ref); err == nil && typ != "" && typ != "commit" {
						what = "a " + typ
					}
					moved = append(moved, fmt.Sprintf("%s/%s (now %s %s)", a.ID, s.ID(), what, short(string(v))))
				}
			}
			if t.Config.Keep > 0 && n > t.Config.Keep {
				tooMany = append(tooMany, fmt.Sprintf("%s (%d)", a.ID, n))
			}
		}
		var orphans []string
		for ref := range have {
			if !named[ref] {
				orphans = append(orphans, ref)
			}
		}
		sort.Strings(orphans)
		sort.Strings(gone)
		sort.Strings(moved)
		level, msg := "ok", fmt.Sprintf("%d checkpoint ref(s), all named by the log", len(have))
		var fix []string
		if len(orphans) > 0 {
			level = "warn"
			msg = fmt.Sprintf("%d ref(s) no log record names (ignored by every command): %s", len(orphans), strings.Join(head(orphans, 5), " "))
			fix = append(fix, "delete them with `git update-ref -d <ref>` once you know nothing needs them")
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
			fix = append(fix, "git venom-checkpoint prune --all")
		}
		add("checkpoints.refs", level, strings.Join(fix, "; "), "%s", msg)
	}

	var open, undo []string
	for _, a := range st.Agents {
		if b := a.OpenRollback; b != nil {
			open = append(open, fmt.Sprintf("%s to %s (safety %s, in %s)", a.ID, b.Checkpoint, b.Safety, b.Path))
			dir := ""
			if b.Path != t.Path() {
				dir = b.Path
			}
			undo = append(undo, UndoCommand(a.ID, b.Safety, dir))
		}
	}
	sort.Strings(open)
	sort.Strings(undo)
	if len(open) > 0 {
		add("checkpoints.rollbacks", "warn", "the next plan or rollback in that tree closes it as failed.rollback_interrupted; to get the tree back as it was, plan the way back to the safety checkpoint and confirm it: "+strings.Join(undo, "; "),
			"rollback(s) started and never ended: %s", strings.Join(open, "; "))
	} else {
		add("checkpoints.rollbacks", "ok", "", "no interrupted rollback")
	}

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

	if len(have) > 0 {
		args := []string{"rev-list", "--objects", "--disk-usage", "--glob=" + refs.Prefix + "*", "--not", "--branches", "--tags", "--remotes"}
		if n, err := t.Repo.Line(ctx, plumbing.Options{NoWorkTree: true}, args...); err == nil {
			b, _ := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
			if b > SizeWarn {
				add("checkpoints.size", "warn", "lower venom.checkpoints.keep or keepFor, ignore generated files, then let `git gc` reclaim them",
					"objects only checkpoints hold take %d bytes", b)
			} else {
				add("checkpoints.size", "ok", "", "objects only checkpoints hold take %d bytes", b)
			}
		}
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
func (t *Tree) heldLocks() []string {
	ents, err := os.ReadDir(filepath.Join(t.Log.Dir, "locks"))
	if err != nil {
		return nil
	}
	var held []string
	for _, e := range ents {
		l, err := journal.TryLock(filepath.Join(t.Log.Dir, "locks", e.Name()), true)
		if errors.Is(err, journal.ErrLocked) {
			held = append(held, strings.TrimSuffix(e.Name(), ".lock"))
			continue
		}
		l.Unlock()
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
