package model_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
)

// expectNow is the model's capture of the tree as it is.
func (s *seq) expectNow() (*expectation, *disk, index) {
	d := s.walk()
	ix, err := parseIndex(s.git("ls-files", "-s", "-z"))
	if err != nil {
		s.fatalf("%v", err)
	}
	heads := map[string]string{}
	for n := range d.Nested {
		out, err := s.r.GitErr("-C", s.abs(n), "rev-parse", "-q", "--verify", "HEAD")
		if err == nil {
			heads[n] = strings.TrimSpace(out)
		}
	}
	return expect(d, ix, s.rulesNow(), maxFile, heads), d, ix
}

// headNow is HEAD's commit ("" when unborn) and branch ("" when detached).
func (s *seq) headNow() (string, string) {
	h, _ := s.r.GitErr("rev-parse", "-q", "--verify", "HEAD")
	b, _ := s.r.GitErr("symbolic-ref", "-q", "--short", "HEAD")
	return strings.TrimSpace(h), strings.TrimSpace(b)
}

func (s *seq) latest() *cpModel {
	for i := len(s.order) - 1; i >= 0; i-- {
		if c := s.cps[s.order[i]]; !c.pruned {
			return c
		}
	}
	return nil
}

func (s *seq) openTurn() *turnModel {
	if s.turnOpen {
		return s.turns[len(s.turns)-1]
	}
	return nil
}

// retriedEnd is the turn a turn_end with no open turn retries
// (checkpoint.RetriedEnd): the last turn, when the agent's last capture
// was a failed turn_end of it. nil otherwise.
func (s *seq) retriedEnd() *turnModel {
	if s.turnOpen || len(s.turns) == 0 || len(s.caps) == 0 {
		return nil
	}
	last, c := s.turns[len(s.turns)-1], s.caps[len(s.caps)-1]
	if c.kind == "failed" && c.reason == checkpoint.ReasonTurnEnd && c.turn == refs.Turn(last.n) {
		return last
	}
	return nil
}

// treeOf lists a commit's tree.
func (s *seq) treeOf(rev string) treeMap {
	m, err := parseTree(s.git("ls-tree", "-r", "-z", "--full-tree", rev))
	if err != nil {
		s.fatalf("%v", err)
	}
	return m
}

// takeOutput is `git venom-checkpoint --json`'s result.
type takeOutput struct {
	Checkpoint string              `json:"checkpoint"`
	Reused     bool                `json:"reused"`
	Repos      []journal.RepoState `json:"repos"`
}

// capture takes a checkpoint with reason, through the Go API or (one time
// in eight) the binary, and checks it against the model: invariant 1, the
// tree it holds, dedup, ids, skipped and nested repositories, and the turn
// records.
func (s *seq) capture(reason string) {
	exp, _, ix := s.expectNow()
	head, branch := s.headNow()
	pre := s.r.Snapshot()
	latest := s.latest()

	// One capture in twenty runs with a tiny max_total_bytes, so it fails
	// when it has anything new to hash (failed.checkpoint_too_large).
	tiny := s.rng.Intn(20) == 0
	var newBytes int64
	for p, e := range exp.Tree {
		if ie, ok := ix[p]; (!ok || ie != e) && e.Mode != "160000" && e.Mode != "120000" && !exp.TooBig[p] {
			newBytes += int64(len(s.diskData(p)))
		}
	}
	// max_total_bytes holds in each repository (a submodule's capture
	// is its own).
	wantFail := tiny && (newBytes > 10 || s.subNewBytes() > 10)
	subNow := s.subTreeNow()

	var h checkpoint.Harness
	tm := s.openTurn()
	if tm == nil && reason == checkpoint.ReasonTurnEnd {
		tm = s.retriedEnd()
	}
	switch reason {
	case checkpoint.ReasonTurnStart:
		if s.rng.Intn(2) == 0 {
			h = checkpoint.Harness{Name: "claude-code", Session: "sess-" + strconv.FormatInt(s.seed, 10), Turn: "u" + strconv.Itoa(len(s.turns)+1)}
		}
	case checkpoint.ReasonTurnEnd:
		harness := tm != nil && tm.harness
		if tm == nil {
			harness = s.rng.Intn(2) == 0
		}
		if harness {
			h = checkpoint.Harness{Name: "claude-code", Session: "sess-" + strconv.FormatInt(s.seed, 10)}
			if s.rng.Intn(5) > 0 {
				h.End = "end-" + strconv.Itoa(len(s.history))
			}
		}
	}
	iso := ""
	if len(s.caps) == 0 && s.kind == "unguarded" {
		iso = checkpoint.IsolationWorktree
	}

	var got *takeOutput
	var code string
	viaBinary := s.rng.Intn(8) == 0 && !tiny
	if viaBinary {
		args := []string{"--json", "--agent", s.agent, "--reason", reason}
		if iso != "" {
			args = append(args, "--isolation", iso)
		}
		if h.Name != "" {
			args = append(args, "--harness", h.Name, "--harness-session", h.Session)
			if h.Turn != "" {
				args = append(args, "--harness-turn", h.Turn)
			}
			if h.End != "" {
				args = append(args, "--harness-end", h.End)
			}
		}
		res, err := runVenom(s.r.Dir, nil, nil, "checkpoint", args...)
		if err != nil {
			s.fatalf("git venom-checkpoint: %v", err)
		}
		if res.Err != nil {
			code = res.Err.Code
			if res.Exit != exitOf(code) {
				s.fatalf("git venom-checkpoint exited %d for %s", res.Exit, code)
			}
		} else {
			got = new(takeOutput)
			if err := json.Unmarshal(res.Stdout, got); err != nil || res.Exit != 0 {
				s.fatalf("git venom-checkpoint: exit %d, %v: %s %s", res.Exit, err, res.Stdout, res.Stderr)
			}
		}
	} else {
		saved := s.tree.Config.MaxTotalBytes
		if tiny {
			s.tree.Config.MaxTotalBytes = 10
		}
		res, err := s.tree.Take(s.ctx, checkpoint.TakeOptions{Agent: s.agent, Reason: reason, Isolation: iso, Harness: h})
		s.tree.Config.MaxTotalBytes = saved
		if err != nil {
			code = codeOf(err)
		} else {
			got = &takeOutput{Checkpoint: res.Checkpoint.Checkpoint, Reused: res.Reused, Repos: res.Checkpoint.Repos}
		}
	}
	how := "api"
	if viaBinary {
		how = "binary"
	}
	switch {
	case got == nil:
		s.logf("capture %s (%s): %s", reason, how, code)
	case got.Reused:
		s.logf("capture %s (%s): reused %s", reason, how, got.Checkpoint)
	default:
		s.logf("capture %s (%s): took %s", reason, how, got.Checkpoint)
	}

	// Invariant 1: nothing the user sees changed; at most one ref added
	// (and, after a turn_end, checkpoint refs pruned: RFC 5.2).
	added := s.unchanged(pre, reason == checkpoint.ReasonTurnEnd)

	// The turn records the capture implies (RFC 3, 3.3), applied to the
	// model whether or not the capture itself worked.
	turn, through := s.applyTurn(reason, h)

	if wantFail {
		if code != "failed.checkpoint_too_large" {
			s.fatalf("capture with max_total_bytes 10 and %d new bytes: got %q, want failed.checkpoint_too_large", newBytes, code)
		}
		if len(added) != 0 {
			s.fatalf("a failed capture added refs %v", added)
		}
		s.clock++
		s.caps = append(s.caps, capEvent{kind: "failed", reason: reason, turn: turn, clock: s.clock})
		s.checkLog()
		return
	}
	if code != "" {
		s.fatalf("capture %s failed: %s", reason, code)
	}

	wantReuse := latest != nil && reason != checkpoint.ReasonPreRollback && reason != checkpoint.ReasonRollback &&
		diffTrees(latest.tree, exp.Tree) == nil && latest.head == head && latest.branch == branch &&
		// A file that went over max_file_bytes changes what the checkpoint
		// says it skipped: not the same (84cd61c).
		fmt.Sprint(keys(latest.tooBig)) == fmt.Sprint(keys(exp.TooBig)) &&
		// So do the nested repositories it lists and their commits (one
		// with no commit, which has no gitlink, appearing: 76dea53).
		fmt.Sprint(latest.subs) == fmt.Sprint(exp.Submodules) &&
		// A change in the submodule alone is a new checkpoint (issue 18).
		(s.sub == nil || diffTrees(latest.subTree, subNow) == nil)
	if got.Reused != wantReuse {
		why := "nothing to reuse"
		if latest != nil {
			why = fmt.Sprintf("latest %s: head %s/%s now %s/%s, tree diff:\n%s", latest.id, short(latest.head), latest.branch,
				short(head), branch, describeTreeDiff(exp.Tree, latest.tree))
		}
		if !got.Reused && len(got.Repos) >= 1 {
			why += "; the new checkpoint's tree against the model:\n" + describeTreeDiff(exp.Tree, s.treeOf(got.Repos[0].Commit))
		}
		s.fatalf("capture %s: reused %v, want %v (%s)", reason, got.Reused, wantReuse, why)
	}
	if got.Reused {
		if got.Checkpoint != latest.id {
			s.fatalf("reused %s, want the latest %s", got.Checkpoint, latest.id)
		}
		if len(added) != 0 {
			s.fatalf("a reused capture added refs %v", added)
		}
		s.clock++
		s.caps = append(s.caps, capEvent{kind: "reused", id: latest.id, reason: reason, turn: turn, tree: exp.Tree, clock: s.clock, subTree: subNow})
		s.checkLog()
		return
	}
	c := s.newCheckpoint(got.Checkpoint, reason, turn, through, exp, head, branch, added)
	if len(got.Repos) != s.repoCount() || got.Repos[0].Commit != c.commit {
		s.fatalf("capture result repos %+v, ref says %s", got.Repos, c.commit)
	}
	if s.sub != nil {
		if got.Repos[1].Repo != subPath {
			s.fatalf("capture result's second repository is %q, want %s", got.Repos[1].Repo, subPath)
		}
		s.checkSubCheckpoint(c, subNow, got.Repos[1].Commit)
	}
	s.checkRecord(c, got.Repos[0])
	s.checkLog()
}

// unchanged implements the check of RFC 2 invariant 1 against a
// gittest snapshot: every file of the work tree and the git directory (but
// objects and the toolkit's own) with bytes and mtime, HEAD, and every ref
// but refs/venom/checkpoints/ ones added (or, when pruning may run,
// removed). It returns the refs added.
func (s *seq) unchanged(before *gittest.State, mayPrune bool) []string {
	after := s.r.Snapshot()
	var diffs []string
	cmp := func(where string, b, a map[string]string) {
		for _, k := range union(keys(b), keys(a)) {
			if b[k] != a[k] {
				root, rel, _ := strings.Cut(k, "\x00")
				diffs = append(diffs, fmt.Sprintf("%s: %q in %s: %q -> %q", where, rel, root, b[k], a[k]))
			}
		}
	}
	cmp("work tree", states(before.Work), states(after.Work))
	cmp("git directory", states(before.Git), states(after.Git))
	if before.Head != after.Head {
		diffs = append(diffs, fmt.Sprintf("HEAD moved: %q -> %q", before.Head, after.Head))
	}
	var added []string
	for _, name := range union(keys(before.Refs), keys(after.Refs)) {
		b, inB := before.Refs[name]
		a, inA := after.Refs[name]
		switch {
		case b == a:
		case !inB && strings.HasPrefix(name, "refs/venom/checkpoints/"):
			added = append(added, name)
		case !inA && mayPrune && strings.HasPrefix(name, "refs/venom/checkpoints/"):
		default:
			diffs = append(diffs, fmt.Sprintf("ref %s: %q -> %q", name, b, a))
		}
	}
	if len(diffs) > 0 {
		s.fatalf("the capture changed what the user sees (invariant 1):\n  %s", strings.Join(diffs, "\n  "))
	}
	return added
}

// states prints a snapshot's file states, to compare them.
func states[V any](m map[string]V) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// b1Capture is a capture of the second agent, b1: turns that open and
// close around a1's, and now and then a manual one.
func (s *seq) b1Capture() {
	reason := checkpoint.ReasonTurnStart
	switch n := s.rng.Intn(10); {
	case s.b1Open && n < 7, !s.b1Open && n == 0:
		reason = checkpoint.ReasonTurnEnd
	case n >= 8:
		reason = checkpoint.ReasonManual
	}
	s.b1Take(reason)
}

func (s *seq) b1Take(reason string) {
	pre := s.r.Snapshot()
	res, err := s.tree.Take(s.ctx, checkpoint.TakeOptions{Agent: "b1", Reason: reason})
	if err != nil {
		s.fatalf("capture of b1 (%s): %v", reason, err)
	}
	s.unchanged(pre, reason == checkpoint.ReasonTurnEnd)
	s.clock++
	s.b1Reg = true
	s.b1Caps++
	switch reason {
	case checkpoint.ReasonTurnStart:
		if s.b1Open {
			s.b1Turns[len(s.b1Turns)-1].end = s.clock
		}
		s.b1Turns = append(s.b1Turns, sharerTurn{start: s.clock})
		s.b1Open = true
	case checkpoint.ReasonTurnEnd:
		if !s.b1Open {
			s.b1Turns = append(s.b1Turns, sharerTurn{start: s.clock})
		}
		s.b1Turns[len(s.b1Turns)-1].end = s.clock
		s.b1Open = false
	}
	s.logf("b1: capture %s: %s (reused %v)", reason, res.Checkpoint.Checkpoint, res.Reused)
	s.checkLog()
}

// diskData is the bytes of a file on disk ("" when unreadable).
func (s *seq) diskData(rel string) string {
	b, _ := os.ReadFile(s.abs(rel))
	return string(b)
}

// lastEnded is RFC 3.3's through_turn: the newest turn that has ended and
// that no rewind dropped ("" before the first).
func (s *seq) lastEnded() string {
	for i := len(s.turns) - 1; i >= 0; i-- {
		if tm := s.turns[i]; tm.ended && !s.dropped[refs.Turn(tm.n)] {
			return refs.Turn(tm.n)
		}
	}
	return ""
}

// applyTurn updates the model's turns for a capture with reason and
// returns the capture's turn and through_turn (RFC 3, 3.3).
func (s *seq) applyTurn(reason string, h checkpoint.Harness) (turn, through string) {
	through = s.lastEnded()
	switch reason {
	case checkpoint.ReasonTurnStart:
		if tm := s.openTurn(); tm != nil {
			tm.ended = true // a synthetic end: it has no harness_end
			through = refs.Turn(tm.n)
		}
		tm := &turnModel{n: len(s.turns) + 1, harness: h.Name != ""}
		s.turns = append(s.turns, tm)
		s.turnOpen = true
		turn = refs.Turn(tm.n)
	case checkpoint.ReasonTurnEnd:
		tm := s.openTurn()
		if tm == nil {
			// A retry of the last turn's failed turn_end is that turn's
			// end (issue 15); any other turn_end with no open turn is a
			// turn of its own.
			tm = s.retriedEnd()
		}
		if tm == nil {
			tm = &turnModel{n: len(s.turns) + 1, harness: h.Name != ""}
			s.turns = append(s.turns, tm)
		}
		// A harness_end already recorded stays (journal: a turn.ended
		// with none keeps the earlier one).
		tm.ended, tm.end = true, tm.end || (h.End != "" && tm.harness)
		s.turnOpen = false
		turn, through = refs.Turn(tm.n), refs.Turn(tm.n)
	default:
		if tm := s.openTurn(); tm != nil {
			turn = refs.Turn(tm.n)
		}
	}
	return turn, through
}

// newCheckpoint checks a checkpoint just made (its id, ref and commit:
// the tree the model expects, HEAD as its parent) and adds it to the
// model.
func (s *seq) newCheckpoint(id, reason, turn, through string, exp *expectation, head, branch string, added []string) *cpModel {
	n, err := refs.ParseID(id)
	if err != nil {
		s.fatalf("bad checkpoint id %q", id)
	}
	if n != s.maxN+1 {
		s.fatalf("checkpoint id %s, want k%d (ids are never reused and have no gaps here)", id, s.maxN+1)
	}
	if _, dup := s.cps[id]; dup {
		s.fatalf("checkpoint id %s used twice", id)
	}
	ref := refs.Checkpoint(s.agent, n)
	if len(added) != 1 || added[0] != ref {
		s.fatalf("capture added refs %v, want exactly %s", added, ref)
	}
	commit := strings.TrimSpace(s.git("rev-parse", ref))
	got := s.treeOf(commit)
	if diffTrees(exp.Tree, got) != nil {
		s.fatalf("checkpoint %s holds a tree other than the files on disk:\n%s", id, describeTreeDiff(exp.Tree, got))
	}
	parent, _ := s.r.GitErr("rev-parse", "-q", "--verify", commit+"^")
	if strings.TrimSpace(parent) != head {
		s.fatalf("checkpoint %s has parent %q, HEAD was %q", id, strings.TrimSpace(parent), head)
	}
	c := &cpModel{id: id, n: n, reason: reason, cap: len(s.caps), tree: exp.Tree, tooBig: exp.TooBig, subs: exp.Submodules, head: head, branch: branch,
		through: through, midTurn: turn != "" && reason != checkpoint.ReasonTurnStart && reason != checkpoint.ReasonTurnEnd, commit: commit}
	s.cps[id] = c
	s.order = append(s.order, id)
	s.maxN = n
	s.clock++
	s.caps = append(s.caps, capEvent{kind: "taken", id: id, reason: reason, turn: turn, tree: exp.Tree, clock: s.clock})
	return c
}

// checkRecord compares a checkpoint's log record with the model.
func (s *seq) checkRecord(c *cpModel, r journal.RepoState) {
	var big []string
	for _, sk := range r.Skipped {
		if sk.Reason == "too_big" {
			big = append(big, sk.Path)
		}
	}
	sort.Strings(big)
	if fmt.Sprint(big) != fmt.Sprint(keys(c.tooBig)) {
		s.fatalf("checkpoint %s skipped too_big %q, the model says %q", c.id, big, keys(c.tooBig))
	}
	subs := map[string]string{}
	for _, sm := range r.Submodules {
		subs[sm.Path] = ""
		if sm.Commit != nil {
			subs[sm.Path] = *sm.Commit
		}
	}
	if fmt.Sprint(subs) != fmt.Sprint(c.subs) {
		s.fatalf("checkpoint %s lists nested repositories %q, the model says %q", c.id, subs, c.subs)
	}
	head := ""
	if r.Head != nil {
		head = *r.Head
	}
	if head != c.head || r.Branch != c.branch || r.Tree == "" || r.Path != s.r.Dir {
		s.fatalf("checkpoint %s record: head %q branch %q path %q, want %q %q %q", c.id, head, r.Branch, r.Path, c.head, c.branch, s.r.Dir)
	}
}

// checkLog replays the log and compares it with the model: every record
// replays, sequence numbers run 1, 2, 3 with no torn line, every
// checkpoint's ref holds its logged commit (or it was pruned, and the ref
// is gone), the captures and edits are the model's, and through_turn is
// RFC 3.3's.
func (s *seq) checkLog() {
	recs, torn, err := s.tree.Log.ReadAll()
	if err != nil || torn {
		s.fatalf("the log does not read back: torn %v, %v", torn, err)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			s.fatalf("log record %d has seq %d", i+1, r.Seq)
		}
	}
	st, err := journal.Replay(recs)
	if err != nil {
		s.fatalf("the log does not replay: %v", err)
	}
	if b := st.Agents["b1"]; (b == nil && s.b1Caps > 0) || (b != nil && len(b.Captures) != s.b1Caps) {
		s.fatalf("the log's captures of b1 are not the %d the model made", s.b1Caps)
	}
	a := st.Agents[s.agent]
	if a == nil {
		if len(s.caps) > 0 {
			s.fatalf("the log has no agent %s", s.agent)
		}
		return
	}
	if len(a.Captures) != len(s.caps) {
		s.fatalf("the log has %d captures of %s, the model %d", len(a.Captures), s.agent, len(s.caps))
	}
	for i, c := range a.Captures {
		m := s.caps[i]
		if strings.TrimPrefix(c.Type, "checkpoint.") != m.kind || c.Checkpoint != m.id || c.Reason != m.reason || c.Turn != m.turn {
			s.fatalf("log capture %d is %s %s %s turn %q, the model says %s %s %s turn %q", i, c.Type, c.Checkpoint, c.Reason, c.Turn,
				m.kind, m.id, m.reason, m.turn)
		}
	}
	if len(a.Edits) != len(s.edits) {
		s.fatalf("the log has %d edit records, the model %d", len(a.Edits), len(s.edits))
	}
	refsNow := s.r.Refs()
	seen := map[string]bool{}
	for _, sv := range a.Checkpoints {
		if seen[sv.ID()] {
			s.fatalf("checkpoint id %s logged twice", sv.ID())
		}
		seen[sv.ID()] = true
		m := s.cps[sv.ID()]
		if m == nil {
			s.fatalf("the log has checkpoint %s the model does not", sv.ID())
		}
		if sv.Pruned && !m.pruned {
			m.pruned = true
		}
		ref := refs.Checkpoint(s.agent, sv.N)
		switch {
		case sv.Pruned && refsNow[ref] != "":
			s.fatalf("checkpoint %s was pruned, but %s still exists", sv.ID(), ref)
		case !sv.Pruned && refsNow[ref] != sv.Rec.Repos[0].Commit:
			s.fatalf("%s is %q, the log says %s", ref, refsNow[ref], sv.Rec.Repos[0].Commit)
		}
		s.checkSubLog(sv)
		through := ""
		if sv.Rec.ThroughTurn != nil {
			through = *sv.Rec.ThroughTurn
		}
		if through != m.through {
			s.fatalf("checkpoint %s has through_turn %q, the model says %q (RFC 3.3)", sv.ID(), through, m.through)
		}
		if sv.Rec.MidTurn != m.midTurn {
			s.fatalf("checkpoint %s has mid_turn %v, the model says %v", sv.ID(), sv.Rec.MidTurn, m.midTurn)
		}
	}
	for _, id := range s.order {
		if !seen[id] {
			s.fatalf("checkpoint %s is not in the log", id)
		}
	}
	if a.OpenRollback != nil {
		s.fatalf("a rollback is left open in the log: %+v", a.OpenRollback)
	}
	if (a.OpenTurn() != nil) != s.turnOpen {
		s.fatalf("the log's open turn %v, the model's %v", a.OpenTurn() != nil, s.turnOpen)
	}
}

// recordEdit logs an edit record of paths (relative to the root), through
// the API or, one time in six, `git venom-checkpoint edit`.
func (s *seq) recordEdit(paths []string) {
	turn := ""
	if tm := s.openTurn(); tm != nil {
		turn = refs.Turn(tm.n)
	}
	if s.rng.Intn(6) == 0 {
		args := []string{"edit", "--json", "--agent", s.agent}
		for _, p := range paths {
			args = append(args, "--path="+p)
		}
		res, err := runVenom(s.r.Dir, nil, nil, "checkpoint", args...)
		if err != nil || res.Exit != 0 {
			s.fatalf("git venom-checkpoint edit %q: %v %+v", paths, err, res)
		}
	} else if _, err := s.tree.RecordEdit(s.ctx, s.agent, paths); err != nil {
		s.fatalf("RecordEdit %q: %v", paths, err)
	}
	// The record names each path as RelPath spells it (its directories
	// resolved through symlinks: a write through a symlinked directory
	// changes the file it leads to). FuzzRelPath checks RelPath itself.
	var logged []string
	for _, p := range paths {
		rel, err := s.tree.RelPath(p)
		if err != nil {
			s.fatalf("RelPath(%q): %v", p, err)
		}
		logged = append(logged, rel)
	}
	s.edits = append(s.edits, editEvent{after: len(s.caps) - 1, turn: turn, paths: logged})
	s.logf("edit record %q (turn %q)", paths, turn)
}

// codeOf is an error's RFC code ("" for nil, "?" for an error with none).
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	if e := rfcerr.As(err); e != nil {
		return e.Code
	}
	return "?" + err.Error()
}
