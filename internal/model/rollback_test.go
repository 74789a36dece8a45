package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/refs"
	"github.com/venom-org/git-venom/rollback"
)

// prediction is what the model says a plan does: a refusal (code, and the
// paths of conflict.outside_edits), or the files and left of RFC 7.4, the
// conversation and HEAD.
type prediction struct {
	code    string
	outside []string
	files   map[string]rollback.File
	left    map[string]string
	drops   []string
	rewinds bool
	// noConversation: the agent has none, so the plan says so.
	noConversation bool
	headMoves      bool
	headTo         string
	// index is what the index is set to when HEAD moves and that is not
	// HEAD's tree: in the undo of a rollback that moved HEAD, the index
	// that rollback found (rollback(1) HEAD; nil otherwise).
	index  index
	S      *expectation
	before *disk
	sub    *subPrediction // the submodule's part (sequences with one)
}

// classes implements RFC 7.3 on the model's own captures: the windows from
// T's capture to S, each path's class, and the paths created since the
// last capture (fresh).
func (s *seq) classes(c *cpModel, S treeMap, paths map[string]bool) (map[string]string, map[string]bool) {
	return s.classesOf(c, S, paths, func(e capEvent) treeMap { return e.tree }, "")
}

// classesOf is classes in one repository: treeOf is what a capture held
// in it, and prefix what the paths of an edit record inside it start with
// ("" for the top; an edit record's paths are relative to the top).
func (s *seq) classesOf(c *cpModel, S treeMap, paths map[string]bool, treeOf func(capEvent) treeMap, prefix string) (map[string]string, map[string]bool) {
	type point struct {
		idx          int
		tree         treeMap
		reason, turn string
		clock        int
	}
	type window struct {
		from, to point
		kind     string
		turn     string
		final    bool
	}
	var ws []window
	var prev *point
	broken := false
	// failedEnd: the turn whose turn_end failed, when only such failures
	// broke the window since the last point; that turn's turn_end which
	// then succeeds is its retry and ends the turn's window
	// (git-venom-plan(1) FAILED CAPTURES). Any other failure or a pruned
	// checkpoint leaves the gap.
	failedEnd := ""
	for i := c.cap; i < len(s.caps); i++ {
		e := s.caps[i]
		if e.kind == "failed" {
			if e.reason == checkpoint.ReasonTurnEnd && e.turn != "" && (!broken || failedEnd == e.turn) {
				failedEnd = e.turn
			} else {
				failedEnd = ""
			}
			broken = true
			continue
		}
		if s.cps[e.id].pruned {
			broken, failedEnd = true, ""
			continue
		}
		if broken && failedEnd != "" && e.reason == checkpoint.ReasonTurnEnd && e.turn == failedEnd {
			broken = false
		}
		failedEnd = ""
		p := point{idx: i, tree: treeOf(e), reason: e.reason, turn: e.turn, clock: e.clock}
		if prev != nil {
			w := window{from: *prev, to: p, kind: "gap"}
			switch {
			case broken:
			case p.reason == checkpoint.ReasonRollback:
				w.kind = "rollback"
			case prev.turn != "" && prev.turn == p.turn && prev.reason != checkpoint.ReasonTurnEnd && p.reason != checkpoint.ReasonTurnStart &&
				!s.sharedTurn(prev.clock, p.clock):
				w.kind, w.turn = "turn", p.turn
			}
			ws = append(ws, w)
		}
		prev, broken = &p, false
	}
	ws = append(ws, window{from: *prev, to: point{idx: len(s.caps), tree: S}, kind: "gap", final: true})

	class := map[string]string{}
	fresh := map[string]bool{}
	edited := map[string]bool{}
	for p := range paths {
		class[p] = rollback.ClassTurn
	}
	for _, w := range ws {
		if w.kind == "rollback" {
			continue
		}
		named := map[string]bool{}
		for _, e := range s.edits {
			if w.kind == "turn" && e.turn == w.turn && e.after >= w.from.idx && e.after < w.to.idx {
				for _, p := range subPaths(e.paths, prefix) {
					named[p] = true
				}
			}
		}
		for _, p := range diffTrees(w.from.tree, w.to.tree) {
			if !paths[p] {
				continue
			}
			switch w.kind {
			case "gap":
				class[p] = rollback.ClassOutside
				if _, had := w.from.tree[p]; w.final && !had && w.from.reason != checkpoint.ReasonPreRollback {
					fresh[p] = true
				}
			case "turn":
				if named[p] {
					edited[p] = true
				}
			}
		}
	}
	for p := range edited {
		if class[p] != rollback.ClassOutside {
			class[p] = rollback.ClassAgent
		}
	}
	return class, fresh
}

// predict is the model's plan for rolling back to c with o.
func (s *seq) predict(c *cpModel, o rollback.Options) *prediction {
	p := &prediction{files: map[string]rollback.File{}, left: map[string]string{}}
	if c.pruned {
		p.code = "not_found.checkpoint"
		return p
	}
	if s.turnOpen {
		p.code = "conflict.turn_running"
		return p
	}
	if s.b1Open {
		p.code = "conflict.tree_shared"
		return p
	}
	conversation := false
	for _, tm := range s.turns {
		conversation = conversation || tm.harness
	}
	// No turn of the agent came from a harness: it has no conversation,
	// and --restore all restores its files alone, refusing nothing for it
	// (rollback.hasConversation; issue 15).
	p.noConversation = !conversation
	if o.Restore == "all" && conversation {
		// RFC 8 as rollback.conversation decides it: a checkpoint whose
		// files match no point of the conversation refuses, even with
		// nothing to rewind (be0059f).
		through := 0
		if c.through != "" {
			through, _ = refs.ParseTurn(c.through)
		}
		for _, tm := range s.turns {
			if tm.n > through && tm.ended && !s.dropped[refs.Turn(tm.n)] {
				p.drops = append(p.drops, refs.Turn(tm.n))
			}
		}
		filesOnly := c.midTurn || (c.through != "" && s.dropped[c.through])
		if len(p.drops) > 0 || filesOnly {
			p.rewinds = true
			switch {
			case filesOnly:
				p.code = "conflict.checkpoint_files_only"
			case c.through == "":
			case !s.turns[through-1].harness:
				p.code = "unsupported.harness_capability"
			case !s.turns[through-1].end:
				p.code = "conflict.checkpoint_files_only"
			}
			if p.code != "" {
				return p
			}
		}
	}
	exp, d, _ := s.expectNow()
	p.S, p.before = exp, d
	if !s.isGuarded() && !o.KeepHead {
		if p.code = s.predictHead(c, p); p.code != "" {
			return p
		}
	}
	if p.headMoves && c.reason == checkpoint.ReasonPreRollback {
		// The undo of a rollback that moved HEAD gives back the index that
		// rollback found, staged versions included (8882b08).
		p.index = s.rbIndex[c.id]
	}

	changes := diffTrees(exp.Tree, c.tree)
	paths := map[string]bool{}
	for _, x := range changes {
		paths[x] = true
	}
	class, fresh := s.classes(c, exp.Tree, paths)
	outside := o.Outside
	if outside == "" {
		outside = "overwrite"
		if s.isGuarded() {
			outside = "refuse"
		}
	}
	gitlink := func(x string) bool { return exp.Tree[x].Mode == "160000" || c.tree[x].Mode == "160000" }
	p.sub = s.predictSub(c, o, outside)
	if outside == "refuse" {
		for _, x := range changes {
			if class[x] == rollback.ClassOutside && !gitlink(x) {
				p.outside = append(p.outside, x)
			}
		}
		if p.sub != nil {
			p.outside = append(p.outside, p.sub.outside...)
		}
		if len(p.outside) > 0 {
			p.code = "conflict.outside_edits"
			return p
		}
	}
	tooBig := map[string]bool{}
	for x := range c.tooBig {
		tooBig[x] = true
	}
	for x := range exp.TooBig {
		tooBig[x] = true
	}
	// Below a nested repository or gitlink of T: T never recorded what was
	// there, so nothing is deleted or written for it (rollback.go
	// nestedRoot).
	nestedT := func(x string) bool {
		for q := x; ; {
			if _, ok := c.subs[q]; ok || c.tree[q].Mode == "160000" {
				return true
			}
			i := strings.LastIndexByte(q, '/')
			if i < 0 {
				return false
			}
			q = q[:i]
		}
	}
	var cands []string
	for _, x := range changes {
		_, inT := c.tree[x]
		switch {
		case nestedT(x):
			p.left[x] = "gitlink"
		case gitlink(x):
			p.left[x] = "gitlink"
		case tooBig[x]:
			p.left[x] = "too_big"
		case class[x] == rollback.ClassOutside && outside == "keep":
			p.left[x] = "outside"
		case fresh[x] && !inT && o.Outside == "":
			p.left[x] = "outside"
		default:
			cands = append(cands, x)
		}
	}
	tRules := s.rulesOf(c.tree)
	deletes := map[string]bool{}
	var kept []string
	for _, x := range cands {
		if _, inT := c.tree[x]; !inT {
			// Not where T holds an entry above x: nothing could be at x in T.
			// Unless c is the safety checkpoint of a rollback that
			// created x (rollback.started's created).
			if tRules.matches(x) && !heldAbove(c.tree, x) && !s.createdAsWritten(c, x, exp.Tree) {
				p.left[x] = "ignored_at_target"
				continue
			}
			deletes[x] = true
		}
		kept = append(kept, x)
	}
	// A file T holds over maxFileBytes (from the index) never replaces
	// S's file, or S's directory of changing files: no capture after could
	// record it, nor the undo put back what it replaced. Where S has
	// nothing, it is written; an undo (T a safety checkpoint) writes them
	// all.
	sDirs := map[string]bool{}
	for _, x := range kept {
		if se, inS := exp.Tree[x]; inS && se.Mode != "" {
			for d := path.Dir(x); d != "."; d = path.Dir(d) {
				sDirs[d] = true
			}
		}
	}
	bigT := kept[:0:0]
	for _, x := range kept {
		se, inS := exp.Tree[x]
		te, inT := c.tree[x]
		if c.reason != checkpoint.ReasonPreRollback && ((inS && se.Mode != "") || sDirs[x]) && inT && (te.Mode == "100644" || te.Mode == "100755") && len(s.blob(te.OID)) > maxFile {
			p.left[x] = "too_big"
			continue
		}
		bigT = append(bigT, x)
	}
	kept = bigT
	for x := range s.blocked(kept, deletes, exp.Tree, c.tree, d) {
		p.left[x] = "ignored_in_the_way"
	}
	for _, x := range kept {
		if _, ok := p.left[x]; ok {
			continue
		}
		_, inS := exp.Tree[x]
		_, inT := c.tree[x]
		ch := "modify"
		switch {
		case !inS:
			ch = "create"
		case !inT:
			ch = "delete"
		}
		p.files[x] = rollback.File{Path: x, Change: ch, Class: class[x]}
	}
	// Nested repositories whose commit differs from T's record (or that
	// only one side has) are reported as gitlink.
	for _, x := range union(keys(exp.Submodules), keys(c.subs)) {
		sc, inS := exp.Submodules[x]
		tc, inT := c.subs[x]
		if _, ok := p.left[x]; !ok && (inS != inT || sc != tc) {
			if _, ok := p.files[x]; !ok {
				p.left[x] = "gitlink"
			}
		}
	}
	for x := range tooBig {
		if _, ok := p.left[x]; !ok {
			p.left[x] = "too_big"
		}
	}
	return p
}

// rulesOf parses the .gitignore a tree holds at its root.
func (s *seq) rulesOf(t treeMap) rules {
	e, ok := t[".gitignore"]
	if !ok || e.Mode == "160000" {
		return nil
	}
	rs, err := parseRules(s.blob(e.OID))
	if err != nil {
		s.fatalf("%v", err)
	}
	return rs
}

func (s *seq) blob(oid string) string { return s.git("cat-file", "blob", oid) }

// createdAsWritten reports whether x is a file the rollback whose safety
// checkpoint is c created where c's rules ignore it (rbCreated), S (sTree)
// still holds it as that rollback wrote it, and no rollback has gone back
// to c before: the undo deletes it (rollback.go createdAsWritten).
func (s *seq) createdAsWritten(c *cpModel, x string, sTree treeMap) bool {
	e, ok := s.rbCreated[c.id][x]
	return ok && !s.rbTargeted[c.id] && sTree[x] == e
}

// heldAbove reports whether t holds an entry at a directory above x.
func heldAbove(t treeMap, x string) bool {
	for d := path.Dir(x); d != "."; d = path.Dir(d) {
		if _, ok := t[d]; ok {
			return true
		}
	}
	return false
}

// blocked implements RFC 7.4's ignored_in_the_way on the disk as it is: a
// write whose path or a parent holds something S does not (a file or
// symlink the plan does not delete, a directory with anything the plan does
// not delete, or a nested repository), and a delete under such a path or
// through a parent that is not a directory.
func (s *seq) blocked(cands []string, deletes map[string]bool, S, T treeMap, d *disk) map[string]bool {
	out := map[string]bool{}
	lst := func(rel string) (fs.FileInfo, bool) {
		st, err := os.Lstat(s.abs(rel))
		return st, err == nil
	}
	var blockedWrites []string
	for _, x := range cands {
		if deletes[x] {
			continue
		}
		bad, free := false, false
		parts := strings.Split(x, "/")
		for i := 1; i < len(parts) && !bad && !free; i++ {
			q := strings.Join(parts[:i], "/")
			st, ok := lst(q)
			if !ok {
				break
			}
			if d.Nested[q] || (st.IsDir() && s.hasGit(q)) {
				// A nested repository is never written into, also one git
				// descends into because the index tracks paths below it.
				bad = true
			} else if !st.IsDir() {
				// A file or symlink the plan deletes leaves nothing below
				// it (and lstat must not look through a symlink there).
				bad, free = !deletes[q], deletes[q]
			}
		}
		if !bad && !free {
			if st, ok := lst(x); ok {
				if !st.IsDir() {
					se, inS := S[x]
					bad = !(inS && se.Mode != "160000")
				} else {
					for f := range d.Files {
						if strings.HasPrefix(f, x+"/") && !deletes[f] {
							bad = true
						}
					}
					for n := range d.Nested {
						if strings.HasPrefix(n+"/", x+"/") {
							bad = true
						}
					}
				}
			}
		}
		if bad {
			out[x] = true
			blockedWrites = append(blockedWrites, x)
		}
	}
	for x := range deletes {
		parts := strings.Split(x, "/")
		for i := 1; i < len(parts); i++ {
			st, ok := lst(strings.Join(parts[:i], "/"))
			if !ok {
				break
			}
			if !st.IsDir() || s.hasGit(strings.Join(parts[:i], "/")) {
				out[x] = true
			}
		}
		if st, ok := lst(x); ok && st.IsDir() {
			out[x] = true
		}
		for _, w := range blockedWrites {
			if strings.HasPrefix(x, w+"/") {
				out[x] = true
			}
		}
	}
	return out
}

// hasGit reports whether directory q of the tree holds a .git (directory
// or file): a repository of its own, whatever git makes of it.
func (s *seq) hasGit(q string) bool {
	_, err := os.Lstat(filepath.Join(s.abs(q), ".git"))
	return err == nil
}

// predictHead implements RFC 7.5's checks with git's own answers: ""
// when HEAD may stay or move (p says which), else the refusal.
func (s *seq) predictHead(c *cpModel, p *prediction) string {
	cur, branch := s.headNow()
	switch {
	case c.head == cur:
		return ""
	case c.head == "", cur == "", c.branch != branch:
		return "conflict.head_moved"
	case !s.gitOK("merge-base", "--is-ancestor", c.head, cur):
		// Forward is allowed (the undo of a rollback that moved HEAD
		// back): it drops no commit.
		if s.gitOK("merge-base", "--is-ancestor", cur, c.head) {
			p.headMoves, p.headTo = true, c.head
			return ""
		}
		return "conflict.head_moved"
	}
	for _, commit := range strings.Fields(s.git("rev-list", cur, "^"+c.head)) {
		if strings.TrimSpace(s.git("for-each-ref", "--contains", commit, "refs/remotes")) != "" {
			return "conflict.commits_pushed"
		}
	}
	p.headMoves, p.headTo = true, c.head
	return ""
}

// userState is what a rollback must leave alone, or change only as RFC 6
// and 7.5 allow: HEAD, the index file's bytes, the refs, the stash's log.
type userState struct {
	head, branch string
	index        string
	refs         map[string]string
	stashLog     string
	logBytes     string
}

func (s *seq) userState() *userState {
	u := &userState{refs: s.r.Refs()}
	u.head, u.branch = s.headNow()
	if s.indexPath == "" {
		// Neither moves during a sequence: ask git once.
		s.indexPath = strings.TrimSpace(s.git("rev-parse", "--path-format=absolute", "--git-path", "index"))
		s.stashLogPath = strings.TrimSpace(s.git("rev-parse", "--path-format=absolute", "--git-path", "logs/refs/stash"))
	}
	b, _ := os.ReadFile(s.indexPath)
	u.index = string(b)
	b, _ = os.ReadFile(s.stashLogPath)
	u.stashLog = string(b)
	b, _ = os.ReadFile(s.tree.Log.Path())
	u.logBytes = string(b)
	return u
}

// pickTarget chooses a checkpoint to go back to: usually a live one, now
// and then a pruned one (not_found.checkpoint).
func (s *seq) pickTarget() *cpModel {
	var live, pruned []string
	for _, id := range s.order {
		if s.cps[id].pruned {
			pruned = append(pruned, id)
		} else {
			live = append(live, id)
		}
	}
	if len(pruned) > 0 && s.rng.Intn(12) == 0 {
		return s.cps[pruned[s.rng.Intn(len(pruned))]]
	}
	if len(live) == 0 {
		return nil
	}
	// Favour recent checkpoints, as people do.
	i := len(live) - 1 - s.rng.Intn(min(len(live), 4))
	if s.rng.Intn(3) == 0 {
		i = s.rng.Intn(len(live))
	}
	return s.cps[live[i]]
}

// rollbackStep plans a rollback and, usually, makes it, checking both
// against the model. undo goes back to the last rollback's safety
// checkpoint (the rollback of a rollback).
func (s *seq) rollbackStep(undo bool) {
	var c *cpModel
	o := rollback.Options{Agent: s.agent, Restore: "files", Caller: "person"}
	if undo {
		if s.lastRB == nil || s.cps[s.lastRB.safety].pruned {
			return
		}
		c = s.cps[s.lastRB.safety]
		o.Outside = s.pick([]string{"", "overwrite", "overwrite", "keep"})
	} else {
		if c = s.pickTarget(); c == nil {
			return
		}
		if s.rng.Intn(5) == 0 {
			o.Restore = "all"
		}
		o.Outside = s.pick([]string{"", "", "refuse", "keep", "overwrite"})
		o.KeepHead = !s.isGuarded() && s.rng.Intn(5) == 0
	}
	o.Checkpoint = c.id
	for try := 0; try < 3; try++ {
		pred, res, ok := s.plan(c, o, undo)
		if !ok {
			return
		}
		if res == nil {
			// Refused as predicted: choose as a person would, and ask again.
			switch pred.code {
			case "conflict.outside_edits":
				o.Outside = s.pick([]string{"keep", "overwrite"})
			case "conflict.head_moved", "conflict.commits_pushed":
				o.KeepHead = true
			case "conflict.checkpoint_files_only", "unsupported.harness_capability":
				o.Restore = "files"
			default:
				return
			}
			continue
		}
		if s.rng.Intn(8) == 0 {
			return // a plan looked at and not applied
		}
		s.apply(c, o, pred, res, undo)
		return
	}
}

// plan runs the dry run (API or binary) and checks it: the refusal or the
// plan the model predicts, and nothing changed. ok is false when the step
// ends here.
func (s *seq) plan(c *cpModel, o rollback.Options, undo bool) (*prediction, *rollback.Result, bool) {
	pred := s.predict(c, o)
	preSnap := s.r.Snapshot()
	preUser := s.userState()
	o.DryRun = true
	viaBinary := s.rng.Intn(6) == 0
	res, code, outsidePaths := s.runRollback(o, viaBinary, nil)
	s.logf("plan %s %s restore=%s outside=%q keep-head=%v (%s): %s", map[bool]string{true: "undo to", false: "to"}[undo], c.id,
		o.Restore, o.Outside, o.KeepHead, map[bool]string{true: "binary", false: "api"}[viaBinary], orOK(code))
	if added := s.unchanged(preSnap, false); len(added) > 0 {
		s.fatalf("the dry run added refs %v", added)
	}
	if now := s.userState(); now.logBytes != preUser.logBytes {
		s.fatalf("the dry run wrote to the log:\n%s", strings.TrimPrefix(now.logBytes, preUser.logBytes))
	}
	if code != pred.code {
		extra := ""
		if pred.code == "" && pred.S != nil {
			extra = fmt.Sprintf("; the model's plan: files %v left %v", pred.files, pred.left)
		}
		if code != "" {
			extra += "; the error: " + s.lastErr
		}
		s.fatalf("plan to %s %+v: got %q, the model says %q%s", c.id, o, code, pred.code, extra)
	}
	if code == "conflict.outside_edits" {
		for i := range outsidePaths {
			outsidePaths[i] = jsonName(outsidePaths[i])
		}
		sort.Strings(outsidePaths)
		var want []string
		for _, p := range pred.outside {
			want = append(want, jsonName(p))
		}
		sort.Strings(want)
		if fmt.Sprint(outsidePaths) != fmt.Sprint(want) {
			s.fatalf("conflict.outside_edits names %q, the model %q", outsidePaths, pred.outside)
		}
	}
	if code != "" {
		return pred, nil, true
	}
	s.comparePlan(pred, res, c, o, viaBinary)
	return pred, res, true
}

func orOK(code string) string {
	if code == "" {
		return "ok"
	}
	return code
}

// comparePlan checks a plan's files, left, conversation and HEAD against
// the prediction.
func (s *seq) comparePlan(pred *prediction, res *rollback.Result, c *cpModel, o rollback.Options, viaBinary bool) {
	// The binary's JSON carries a name that is not UTF-8 in path_bytes
	// (D8), so it reads back byte for byte like the API's.
	name := func(p string) string { return p }
	if len(res.Repos) != s.repoCount() {
		s.fatalf("plan has %d repos, want %d", len(res.Repos), s.repoCount())
	}
	if s.sub != nil {
		s.compareSubPlan(pred.sub, res.Repos[1], c)
	}
	r := res.Repos[0]
	got := map[string]rollback.File{}
	for _, f := range r.Files {
		if _, dup := got[f.Path]; dup {
			s.fatalf("plan lists %q twice in files", f.Path)
		}
		got[f.Path] = f
	}
	gotLeft := map[string]string{}
	for _, l := range r.Left {
		if _, dup := gotLeft[l.Path]; dup {
			s.fatalf("plan lists %q twice in left", l.Path)
		}
		gotLeft[l.Path] = l.Reason
		if _, both := got[l.Path]; both {
			s.fatalf("plan lists %q in files and in left", l.Path)
		}
	}
	var diffs []string
	predFiles := map[string]rollback.File{}
	for x, f := range pred.files {
		f.Path = name(f.Path)
		predFiles[name(x)] = f
	}
	predLeft := map[string]string{}
	for x, r := range pred.left {
		predLeft[name(x)] = r
	}
	for _, x := range union(keys(got), keys(predFiles)) {
		if got[x] != predFiles[x] {
			diffs = append(diffs, fmt.Sprintf("files %q: got %+v, model %+v (S %v, T %v)", x, got[x], predFiles[x], pred.S.Tree[x], c.tree[x]))
		}
	}
	for _, x := range union(keys(gotLeft), keys(predLeft)) {
		if gotLeft[x] != predLeft[x] {
			diffs = append(diffs, fmt.Sprintf("left %q: got %q, model %q (S %v, T %v)", x, gotLeft[x], predLeft[x], pred.S.Tree[x], c.tree[x]))
		}
	}
	if len(diffs) > 0 {
		s.fatalf("plan to %s %+v differs from the model:\n  %s\nplan files %q\nplan left %q\nmodel files %q\nmodel left %q",
			c.id, o, strings.Join(diffs, "\n  "), r.Files, r.Left, pred.files, pred.left)
	}
	if fmt.Sprint(res.Conversation.Drops) != fmt.Sprint(nonNil(pred.drops)) || res.Conversation.Rewinds != pred.rewinds ||
		res.Conversation.NoConversation != pred.noConversation {
		s.fatalf("plan conversation %+v, the model says drops %v rewinds %v no conversation %v", res.Conversation, pred.drops, pred.rewinds, pred.noConversation)
	}
	if r.Head.Moves != pred.headMoves || (pred.headMoves && (r.Head.To == nil || *r.Head.To != pred.headTo)) {
		s.fatalf("plan head %+v, the model says moves %v to %s", r.Head, pred.headMoves, pred.headTo)
	}
	switch {
	case pred.index == nil && r.Index != "":
		s.fatalf("plan sets the index to %s, the model says it follows HEAD", r.Index)
	case pred.index != nil && r.Index == "":
		s.fatalf("plan does not give back the index the rollback to be undone found")
	case pred.index != nil:
		if got := s.treeOf(r.Index); diffTrees(treeMap(pred.index), got) != nil {
			s.fatalf("plan's index %s is not the one the rollback to be undone found:\n%s", r.Index, describeTreeDiff(treeMap(pred.index), got))
		}
	}
	if res.Guarded == nil || *res.Guarded != s.isGuarded() {
		s.fatalf("plan says guarded %v, the tree is %s (shared: %v)", res.Guarded, s.kind, s.b1Reg)
	}
	wantShared := []string{}
	if s.b1Reg {
		wantShared = []string{"b1"}
	}
	if fmt.Sprint(res.SharedWith) != fmt.Sprint(wantShared) {
		s.fatalf("plan shared_with %q, want %q", res.SharedWith, wantShared)
	}
}

// belowDeleted reports whether a directory above x is a file (or symlink)
// on disk that the plan deletes.
func (s *seq) belowDeleted(x string, files map[string]rollback.File) bool {
	parts := strings.Split(x, "/")
	for i := 1; i < len(parts); i++ {
		q := strings.Join(parts[:i], "/")
		if st, err := os.Lstat(s.abs(q)); err == nil && !st.IsDir() {
			return files[q].Change == "delete"
		}
	}
	return false
}

// jsonName is p as encoding/json writes it: each byte that is not part of
// valid UTF-8 becomes U+FFFD.
func jsonName(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

func union(a, b []string) []string {
	m := map[string]bool{}
	for _, x := range append(a, b...) {
		m[x] = true
	}
	return keys(m)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// runRollback runs rollback.Run or the binaries: the result, or the error
// code and, for conflict.outside_edits, the paths it names.
func (s *seq) runRollback(o rollback.Options, viaBinary bool, env []string) (*rollback.Result, string, []string) {
	if !viaBinary {
		// The harness's copy of the conversation (RFC 7.4 step 3) is the
		// harness package's to make, with the harness's own program; the
		// model stands in for it with a copy that always works, under the
		// id the plan chose.
		o.Rewind = func(_ context.Context, _, _, _, _, newSession, _ string) (string, error) {
			if newSession == "" {
				newSession = "model-fork"
			}
			return newSession, nil
		}
		res, err := rollback.Run(s.ctx, s.tree, o)
		if err != nil {
			s.lastErr = err.Error()
			return nil, codeOf(err), outsideOf(err)
		}
		return res, "", nil
	}
	verb := "rollback"
	args := []string{o.Checkpoint, "--json", "--agent", o.Agent, "--restore", o.Restore}
	if o.DryRun {
		verb = "plan"
	} else {
		args = append(args, "--plan", o.Plan)
	}
	if o.Outside != "" {
		args = append(args, "--outside", o.Outside)
	}
	if o.KeepHead {
		args = append(args, "--keep-head")
	}
	cr, err := runVenom(s.r.Dir, nil, env, verb, args...)
	if err != nil {
		s.fatalf("git venom-%s: %v", verb, err)
	}
	if cr.Err != nil {
		if cr.Exit != exitOf(cr.Err.Code) {
			s.fatalf("git venom-%s exited %d for %s", verb, cr.Exit, cr.Err.Code)
		}
		var paths []string
		if repos, ok := cr.Err.Data["repos"].([]any); ok {
			for _, r := range repos {
				if m, ok := r.(map[string]any); ok {
					prefix := ""
					if repo, _ := m["repo"].(string); repo != "" && repo != checkpoint.TopRepo {
						prefix = repo + "/"
					}
					if ps, ok := m["paths"].([]any); ok {
						for _, p := range ps {
							paths = append(paths, prefix+fmt.Sprint(p))
						}
					}
				}
			}
		}
		s.lastErr = cr.Err.Message
		return nil, cr.Err.Code, paths
	}
	if cr.Exit != 0 {
		s.fatalf("git venom-%s exited %d with no error object: %s %s", verb, cr.Exit, cr.Stdout, cr.Stderr)
	}
	var res rollback.Result
	if err := json.Unmarshal(cr.Stdout, &res); err != nil {
		s.fatalf("git venom-%s: %v: %s", verb, err, cr.Stdout)
	}
	return &res, "", nil
}

// outsideOf reads conflict.outside_edits' paths from an API error.
func outsideOf(err error) []string {
	if e := rfcerr.As(err); e != nil {
		if repos, ok := e.Data["repos"].([]map[string]any); ok {
			var out []string
			for _, r := range repos {
				prefix := ""
				if repo, _ := r["repo"].(string); repo != "" && repo != checkpoint.TopRepo {
					prefix = repo + "/"
				}
				if ps, ok := r["paths"].([]string); ok {
					for _, p := range ps {
						out = append(out, prefix+p)
					}
				}
			}
			return out
		}
	}
	return nil
}

// apply makes the real call with the plan and checks everything RFC 2,
// 6 and 7.4 promise.
func (s *seq) apply(c *cpModel, o rollback.Options, pred *prediction, plan *rollback.Result, undo bool) {
	o.Plan = plan.Plan
	viaBinary := s.rng.Intn(6) == 0
	if plan.Conversation.Rewinds {
		// The binary's rewind runs claude itself, which the model has
		// not: the API's, with the model's copy (runRollback).
		viaBinary = false
	}
	// An agent may not roll back a guarded tree (RFC 11.4); the person then
	// does it.
	if s.isGuarded() && viaBinary && s.rng.Intn(3) == 0 {
		pre := s.userState()
		_, code, _ := s.runRollback(o, true, []string{"GIT_VENOM_CALLER=agent"})
		if code != "denied.agent_caller" {
			s.fatalf("an agent's real rollback of a guarded tree: got %q, want denied.agent_caller", code)
		}
		if now := s.userState(); now.logBytes != pre.logBytes || fmt.Sprint(now.refs) != fmt.Sprint(pre.refs) {
			s.fatalf("a denied rollback wrote to the log or refs")
		}
	}
	// Now and then the person saves a file between the plan and the real
	// call: the plan is stale and nothing happens.
	if s.rng.Intn(15) == 0 {
		if p := s.pick(s.plainFiles(pred.before)); p != "" {
			s.writeFile(p, s.diskData(p)+"+", os.FileMode(0o644|boolMode(pred.before.Files[p].Exec)))
			s.opsSince++
			pre := s.userState()
			preDisk := s.walk()
			// The real call repeats the preflight: a refusal that now
			// applies comes first, else the plan is stale.
			want := "conflict.rollback_stale"
			if again := s.predict(c, o); again.code != "" {
				want = again.code
			}
			_, code, _ := s.runRollback(o, viaBinary, nil)
			s.logf("person saves %q after the plan; rollback: %s", p, orOK(code))
			if code != want {
				s.fatalf("a rollback after the tree changed: got %q, want %s", code, want)
			}
			now := s.userState()
			if now.logBytes != pre.logBytes || fmt.Sprint(now.refs) != fmt.Sprint(pre.refs) || now.index != pre.index {
				s.fatalf("a stale rollback wrote the log, refs or index")
			}
			s.sameFiles(preDisk, s.walk(), nil, "a stale rollback")
			return
		}
	}
	before := s.userState()
	subUser := s.subUser()
	var ixBefore index
	if pred.headMoves {
		var err error
		if ixBefore, err = parseIndex(s.git("ls-files", "-s", "-z")); err != nil {
			s.fatalf("%v", err)
		}
	}
	res, code, _ := s.runRollback(o, viaBinary, nil)
	s.logf("rollback to %s (%s): %s", c.id, map[bool]string{true: "binary", false: "api"}[viaBinary], orOK(code))
	if code != "" {
		s.fatalf("the real call with plan %s failed: %s", plan.Plan, code)
	}
	if res.Exact == nil || !*res.Exact {
		s.fatalf("rollback to %s: exact is %v (converted %v), nothing else wrote to the tree", c.id, res.Exact, res.Repos[0].Converted)
	}
	if jsonName(fmt.Sprint(res.Repos[0].Files)) != jsonName(fmt.Sprint(plan.Repos[0].Files)) || jsonName(fmt.Sprint(res.Repos[0].Left)) != jsonName(fmt.Sprint(plan.Repos[0].Left)) {
		s.fatalf("the real call did other than its plan:\n  plan files %v left %v\n  real files %v left %v",
			plan.Repos[0].Files, plan.Repos[0].Left, res.Repos[0].Files, res.Repos[0].Left)
	}

	if s.sub != nil {
		// The submodule: T's files where its plan writes, S's elsewhere;
		// its HEAD and index as they were.
		if len(res.Repos) != 2 || jsonName(fmt.Sprint(res.Repos[1].Files)) != jsonName(fmt.Sprint(plan.Repos[1].Files)) ||
			jsonName(fmt.Sprint(res.Repos[1].Left)) != jsonName(fmt.Sprint(plan.Repos[1].Left)) {
			s.fatalf("the real call did other than its plan in the submodule:\n  plan %+v\n  real %+v", plan.Repos[1:], res.Repos[1:])
		}
		if want, got := s.subAfter(pred.sub, c), s.subTreeNow(); diffTrees(want, got) != nil {
			s.fatalf("after the rollback to %s the submodule's files are not the plan's:\n%s", c.id, describeTreeDiff(want, got))
		}
		if s.subUser() != subUser {
			s.fatalf("the rollback changed the submodule's HEAD or index")
		}
	}

	// The files: T's where the plan writes, absent where it deletes, and
	// every other file (ignored ones, nested repositories, left paths)
	// byte for byte and mtime as before.
	after := s.walk()
	want := map[string]file{}
	for p, f := range pred.before.Files {
		want[p] = f
	}
	for p, f := range pred.files {
		if f.Change == "delete" {
			delete(want, p)
			continue
		}
		e := c.tree[p]
		want[p] = file{Link: e.Mode == "120000", Exec: e.Mode == "100755", Data: s.blob(e.OID)}
	}
	s.subFilesAsChecked(want, after)
	s.sameFiles(&disk{Files: want}, after, pred.files, "after the rollback to "+c.id)
	// Permission bits (CASES BR-41): a file rewritten with its own git
	// mode keeps its bits; in an undo (the target is a rollback's safety
	// checkpoint), a file that rollback logged bits for gets them back,
	// whatever is there now (the record wins), when they agree with the
	// exec bit of the mode written.
	recorded := s.recordedPerms(c.id)
	for p, f := range pred.files {
		if f.Change == "delete" || want[p].Link {
			continue
		}
		if m, ok := recorded[p]; ok && (m&0o100 != 0) == (c.tree[p].Mode == "100755") {
			if after.Files[p].Perm != m {
				s.fatalf("the undo gave %q bits %o, want %o as its rollback logged", p, after.Files[p].Perm, m)
			}
			continue
		}
		if f.Change == "modify" {
			se, te := pred.S.Tree[p], c.tree[p]
			if se.Mode == te.Mode && after.Files[p].Perm != pred.before.Files[p].Perm {
				s.fatalf("rollback changed the permission bits of %q from %o to %o (same git mode)", p, pred.before.Files[p].Perm, after.Files[p].Perm)
			}
		}
	}

	// The safety checkpoint is S, on top of the old HEAD.
	s.applyTurn(checkpoint.ReasonPreRollback, checkpoint.Harness{})
	through := s.lastEnded()
	sc := s.newCheckpoint(res.Safety, checkpoint.ReasonPreRollback, "", through, pred.S, before.head, before.branch,
		[]string{refs.Checkpoint(s.agent, s.maxN+1)})
	if sc.tree == nil {
		s.fatalf("no safety checkpoint")
	}
	sRules := s.rulesOf(pred.S.Tree)
	for p, f := range pred.files {
		if _, inS := pred.S.Tree[p]; f.Change == "create" && !inS && sRules.matches(p) {
			if s.rbCreated[sc.id] == nil {
				s.rbCreated[sc.id] = treeMap{}
			}
			s.rbCreated[sc.id][p] = c.tree[p]
		}
	}
	if s.sub != nil {
		s.checkSubCheckpoint(sc, pred.sub.S, "") // S of the submodule too (invariant 2)
	}
	// HEAD, the index, the refs.
	now := s.userState()
	switch {
	case pred.headMoves:
		if now.head != pred.headTo || now.branch != before.branch {
			s.fatalf("HEAD is %s on %q, want %s on %q", now.head, now.branch, pred.headTo, before.branch)
		}
		if pred.index != nil {
			ix, err := parseIndex(s.git("ls-files", "-s", "-z"))
			if err != nil {
				s.fatalf("%v", err)
			}
			if diffTrees(treeMap(pred.index), treeMap(ix)) != nil {
				s.fatalf("the undo did not give back the index its rollback found:\n%s", describeTreeDiff(treeMap(pred.index), treeMap(ix)))
			}
		} else if !s.gitOK("diff-index", "--cached", "--quiet", "HEAD") {
			s.fatalf("the index does not follow the moved HEAD: %s", s.git("diff-index", "--cached", "--name-status", "HEAD"))
		}
		// The index as this rollback found it is the safety checkpoint's
		// second parent, for its undo.
		if got := s.treeOf(sc.commit + "^2"); diffTrees(treeMap(ixBefore), got) != nil {
			s.fatalf("the safety checkpoint's second parent is not the index the rollback found:\n%s", describeTreeDiff(treeMap(ixBefore), got))
		}
		s.rbIndex[sc.id] = ixBefore
		if !s.gitOK("merge-base", "--is-ancestor", before.head, sc.commit) {
			s.fatalf("the dropped commits are not reachable from the safety checkpoint")
		}
	default:
		if now.head != before.head || now.branch != before.branch {
			s.fatalf("HEAD moved from %s on %q to %s on %q (guarded %v, keep-head %v)", before.head, before.branch, now.head, now.branch, s.isGuarded(), o.KeepHead)
		}
		if now.index != before.index {
			s.fatalf("the index file changed, and HEAD did not move (guarded %v)", s.isGuarded())
		}
	}
	for name, oid := range before.refs {
		if strings.HasPrefix(name, "refs/venom/") || (pred.headMoves && name == "refs/heads/"+before.branch) {
			continue
		}
		if now.refs[name] != oid {
			s.fatalf("ref %s changed from %s to %q", name, oid, now.refs[name])
		}
	}
	if now.stashLog != before.stashLog {
		s.fatalf("the stash's log changed")
	}

	// The rollback checkpoint is the tree as it is now.
	if res.Conversation.Rewinds {
		through = c.through
	}
	exp, _, _ := s.expectNow()
	head, branch := s.headNow()
	if got := s.treeOf(refs.Checkpoint(s.agent, s.maxN+1)); diffTrees(exp.Tree, got) != nil {
		s.fatalf("the rollback checkpoint %s is not the tree on disk:\n%s", res.After, describeTreeDiff(exp.Tree, got))
	}
	s.applyTurn(checkpoint.ReasonRollback, checkpoint.Harness{})
	ac := s.newCheckpoint(res.After, checkpoint.ReasonRollback, "", through, exp, head, branch, []string{refs.Checkpoint(s.agent, s.maxN+1)})
	s.checkSubCheckpoint(ac, s.subTreeNow(), "")
	if st, err := s.tree.Log.Load(); err == nil {
		big := map[string]bool{}
		for _, sk := range st.Agents[s.agent].Checkpoint(res.After).Rec.Repos[0].Skipped {
			if sk.Reason == "too_big" {
				big[sk.Path] = true
			}
		}
		if fmt.Sprint(keys(big)) != fmt.Sprint(keys(ac.tooBig)) {
			s.fatalf("the rollback checkpoint %s says it skipped %q, the model %q", res.After, keys(big), keys(ac.tooBig))
		}
	}
	if res.Conversation.Rewinds {
		for _, d := range res.Conversation.Drops {
			s.dropped[d] = true
		}
	}
	s.checkLog()

	// The rollback of a rollback, right after it, brings back every file
	// it changed (except what its own plan left).
	if undo && s.opsSince == 0 && s.lastRB != nil && s.lastRB.safety == c.id {
		leftNow := map[string]rollback.File{}
		for _, l := range res.Repos[0].Left {
			leftNow[l.Path] = rollback.File{}
		}
		touched := map[string]rollback.File{}
		for p, f := range pred.files {
			touched[p] = f
		}
		for p := range leftNow {
			touched[p] = rollback.File{}
		}
		rs := s.rulesNow()
		orig := &disk{Files: map[string]file{}}
		for p, f := range s.lastRB.before.Files {
			orig.Files[p] = f
		}
		// Files the undo may leave: what its plan left, and files the
		// first rollback wrote that the rules now ignore, but for those
		// it created where S's rules ignored them (its log's created):
		// the undo deletes them.
		for p := range after.Files {
			if _, ok := orig.Files[p]; !ok && ((rs.matches(p) && pred.files[p].Change != "delete") || underAny(p, leftNow)) {
				orig.Files[p] = after.Files[p]
			}
		}
		for p := range leftNow {
			if f, ok := after.Files[p]; ok {
				orig.Files[p] = f
			} else {
				delete(orig.Files, p)
			}
		}
		s.subFilesAsChecked(orig.Files, after)
		s.sameFiles(orig, after, touched, "after the undo of the rollback to "+s.lastRB.safety)
		// And with their permission bits: the state before the rollback
		// exactly (a 0600 file it deleted comes back 0600).
		for p := range pred.files {
			o, g := orig.Files[p], after.Files[p]
			if _, ok := after.Files[p]; ok && !o.Link && !g.Link && o.Perm != g.Perm {
				s.fatalf("after the undo of the rollback to %s, %q has bits %o, had %o before it", s.lastRB.safety, p, g.Perm, o.Perm)
			}
		}
		if s.lastRB.guarded && now.head != s.lastRB.head {
			s.fatalf("after the undo HEAD is %s, was %s", now.head, s.lastRB.head)
		}
		if s.sub != nil {
			// The submodule is as it was before that rollback, but for
			// what the undo's plan left there.
			want := treeMap{}
			for p, e := range s.lastRB.subBefore {
				want[p] = e
			}
			got := s.subTreeNow()
			for _, l := range res.Repos[1].Left {
				if e, ok := got[l.Path]; ok {
					want[l.Path] = e
				} else {
					delete(want, l.Path)
				}
			}
			if diffTrees(want, got) != nil {
				s.fatalf("after the undo of the rollback to %s the submodule is not as it was:\n%s", s.lastRB.safety, describeTreeDiff(want, got))
			}
		}
	}
	s.rbTargeted[c.id] = true
	s.lastRB = &lastRollback{safety: res.Safety, before: pred.before, head: before.head, guarded: s.isGuarded()}
	if s.sub != nil {
		s.lastRB.subBefore = pred.sub.S
	}
	s.opsSince = 0
}

// recordedPerms is the bits the rollback whose safety checkpoint is
// safety logged (rollback.started perms) for files, by path: what its undo
// gives back. None when safety is no rollback's.
func (s *seq) recordedPerms(safety string) map[string]fs.FileMode {
	out := map[string]fs.FileMode{}
	st, err := s.tree.Log.Load()
	if err != nil {
		s.fatalf("reading the log: %v", err)
	}
	a := st.Agents[s.agent]
	if a == nil {
		return out
	}
	for _, rb := range a.Rollbacks {
		if rb.Safety != safety {
			continue
		}
		ps, err := rb.PermList()
		if err != nil {
			s.fatalf("rollback.started perms: %v", err)
		}
		for _, pp := range ps {
			if m, ok := pp.FileMode(); ok && !pp.Dir {
				out[pp.Path] = m
			}
		}
	}
	return out
}

// strict is VENOM_MODEL_STRICT=1: stop at the known divergences too.
func strict() bool { return os.Getenv("VENOM_MODEL_STRICT") == "1" }

func underAny(p string, m map[string]rollback.File) bool {
	for q := range m {
		if p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// plainFiles lists the regular files an op may change (not ignored, not
// in a nested repository, not too big).
func (s *seq) plainFiles(d *disk) []string {
	regular, _, _ := s.candidates(d)
	var out []string
	for _, p := range regular {
		if len(d.Files[p].Data) < maxFile-10 {
			out = append(out, p)
		}
	}
	return out
}

// sameFiles compares want with got, content and kind, and the mtime of
// every path not in touched (a file the plan did not name must not even be
// rewritten).
func (s *seq) sameFiles(want, got *disk, touched map[string]rollback.File, what string) {
	var diffs []string
	for _, p := range union(keys(want.Files), keys(got.Files)) {
		w, wok := want.Files[p]
		g, gok := got.Files[p]
		switch {
		case !gok:
			diffs = append(diffs, fmt.Sprintf("%q is gone (want %v)", p, w))
		case !wok:
			diffs = append(diffs, fmt.Sprintf("%q appeared (%v)", p, g))
		case !w.same(g):
			diffs = append(diffs, fmt.Sprintf("%q is %v, want %v", p, g, w))
		default:
			if _, ok := touched[p]; !ok && w.MTime != 0 && w.MTime != g.MTime {
				diffs = append(diffs, fmt.Sprintf("%q was rewritten (mtime changed) but is not in the plan", p))
			}
		}
	}
	if len(diffs) > 0 {
		s.fatalf("%s, files on disk differ from the model:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}
