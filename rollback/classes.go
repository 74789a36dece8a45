package rollback

import (
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

// Classes of RFC 7.3: who changed a path between the target and now.
const (
	ClassAgent   = "agent"
	ClassTurn    = "turn"
	ClassOutside = "outside"
)

// point is a capture on the way from T to S: its seq, tree-ish (commit),
// the tree the log records for it, reason and turn. A failed capture, or
// one whose checkpoint was pruned, has no commit and breaks the windows
// around it into one gap.
type point struct {
	seq    int64
	commit string
	tree   string
	reason string
	turn   string
}

// window is a pair of consecutive captures (RFC 7.3): kind is "turn",
// "rollback" or "gap"; turn names the turn of a turn window.
type window struct {
	from, to point
	kind     string
	turn     string
}

// windows builds RFC 7.3's windows for agent a in tree path, from the
// target's capture to now (S, seq +inf, commit sTree). Other agents using
// the tree make a window a gap when one of their turns overlapped it.
//
// rel names the repository (RFC 4.2 repo: "." for the top): each point is
// that repository's commit in the checkpoint, and a checkpoint that does
// not name it (taken before the submodule was added) breaks the windows
// around it into one gap, as a failed capture does.
func windows(st *journal.State, a *journal.Agent, path, rel string, target *journal.Saved, sTree string) []window {
	broken := false
	var out []window
	var prev *point
	add := func(p point, brk bool) {
		if prev != nil {
			w := window{from: *prev, to: p, kind: "gap"}
			switch {
			case brk:
			case p.reason == checkpoint.ReasonRollback:
				w.kind = "rollback"
			case prev.turn != "" && prev.turn == p.turn && prev.reason != checkpoint.ReasonTurnEnd &&
				p.reason != checkpoint.ReasonTurnStart && p.seq != 0 && !sharedTurn(st, a, path, prev.seq, p.seq):
				w.kind, w.turn = "turn", p.turn
			}
			out = append(out, w)
		}
		pp := p
		prev = &pp
	}
	// failedEnd is the turn whose turn_end capture failed, when nothing
	// but such failures broke the window since the last point: a
	// turn_end of that turn that then succeeds is its retry, and ends the
	// turn window (checkpoint.RetriedEnd). Any other failure, a pruned
	// checkpoint, or a turn_start after it leaves the window a gap.
	failedEnd := ""
	for _, c := range a.Captures {
		if c.Seq < target.Seq || c.Path != path {
			continue
		}
		if c.Type == journal.TypeCheckpointFailed {
			if c.Reason == checkpoint.ReasonTurnEnd && c.Turn != "" && (!broken || failedEnd == c.Turn) {
				failedEnd = c.Turn
			} else {
				failedEnd = ""
			}
			broken = true
			continue
		}
		sv := a.Checkpoint(c.Checkpoint)
		var rs *journal.RepoState
		if sv != nil && !sv.Pruned {
			rs = sv.Rec.RepoEntry(rel)
		}
		if rs == nil {
			broken, failedEnd = true, ""
			continue
		}
		if broken && failedEnd != "" && c.Reason == checkpoint.ReasonTurnEnd && c.Turn == failedEnd {
			broken = false // the retried turn_end of the turn
		}
		p := point{seq: c.Seq, commit: rs.Commit, tree: rs.Tree, reason: c.Reason, turn: c.Turn}
		add(p, broken)
		broken, failedEnd = false, ""
	}
	// The last window, from the newest capture to S, is always a gap.
	if prev != nil {
		out = append(out, window{from: *prev, to: point{commit: sTree, tree: sTree}, kind: "gap"})
	}
	return out
}

// treeOf is the tree-ish a diff of p takes: its tree as logged, or its
// commit when the log records none.
func treeOf(p point) string {
	if p.tree != "" {
		return p.tree
	}
	return p.commit
}

// sharedTurn reports whether another agent using tree path had a turn
// running at any time between seqs lo and hi.
func sharedTurn(st *journal.State, a *journal.Agent, path string, lo, hi int64) bool {
	for id, o := range st.Agents {
		if id == a.ID {
			continue
		}
		if _, ok := o.Trees[path]; !ok {
			continue
		}
		for _, t := range o.Turns {
			if t.StartSeq < hi && (t.EndSeq == 0 || t.EndSeq > lo) {
				return true
			}
		}
	}
	return false
}

// diffWindows is windows less the ones classify needs no diff of: a
// rollback window, and one whose two captures are the same commit.
func diffWindows(st *journal.State, a *journal.Agent, path, rel string, target *journal.Saved, sTree string) []window {
	var out []window
	for _, w := range windows(st, a, path, rel, target, sTree) {
		if w.from.commit != w.to.commit && w.kind != "rollback" {
			out = append(out, w)
		}
	}
	return out
}

// classify returns RFC 7.3's class for each of paths (the paths that differ
// between S and T): outside when a gap changed it, agent when a turn window
// changed it and an edit record of that turn inside the window names it,
// turn otherwise. ws are diffWindows' windows, diffs what changed in each
// (plumbing.DiffTrees from its first capture to its second).
//
// fresh holds the paths S has that the newest capture before it did not:
// created since the last checkpoint, so no checkpoint but S holds them.
//
// paths are relative to the repository whose plan this is; an edit
// record's paths are relative to the top, and prefix ("" for the top,
// "<submodule>/" for a submodule) is what the repository's start with.
func classify(a *journal.Agent, path, prefix string, ws []window, diffs [][]plumbing.TreeChange, paths map[string]bool) (class map[string]string, fresh map[string]bool) {
	class = make(map[string]string, len(paths))
	fresh = map[string]bool{}
	for p := range paths {
		class[p] = ClassTurn
	}
	edited := map[string]bool{} // path that a turn window's edit names and changed
	for i, w := range ws {
		changes := diffs[i]
		var names map[string]bool
		if w.kind == "turn" {
			names = map[string]bool{}
			for _, e := range a.Edits {
				if e.Turn == w.turn && e.Seq > w.from.seq && e.Seq < w.to.seq && (e.Path == "" || e.Path == path) {
					for _, p := range inRepo(e.Paths, prefix) {
						names[p] = true
					}
				}
			}
		}
		for _, c := range changes {
			if !paths[c.Path] {
				continue
			}
			switch w.kind {
			case "gap":
				class[c.Path] = ClassOutside
				// Fresh: created since the newest capture. Not when that
				// capture is a safety checkpoint with no rollback capture
				// after it: the rollback was killed or failed, and what it
				// wrote is venom's own, to be undone exactly.
				if w.to.seq == 0 && c.SrcMode == "000000" && w.from.reason != checkpoint.ReasonPreRollback {
					fresh[c.Path] = true
				}
			case "turn":
				if names[c.Path] {
					edited[c.Path] = true
				}
			}
		}
	}
	for p := range edited {
		if class[p] != ClassOutside {
			class[p] = ClassAgent
		}
	}
	return class, fresh
}

// inRepo is the paths, relative to the top, that are in the repository
// whose paths start with prefix ("" for the top: every path), relative to
// that repository. A path inside a submodule is the submodule's, so the
// top's list keeps it too (it never matches one of the top's paths: the
// top's tree holds the submodule as a gitlink).
func inRepo(paths []string, prefix string) []string {
	if prefix == "" {
		return paths
	}
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" {
			out = append(out, rest)
		}
	}
	return out
}
