package rollback

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/failpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// apply is RFC 7.4 steps 2 to 7 for a checked plan. The caller holds the
// rollback, agent and tree locks.
func (p *plan) apply(ctx context.Context) (*Result, error) {
	t, a := p.tree, p.agent
	res := p.res
	// Step 2: the safety checkpoint, from S itself. Until it exists and is
	// logged, nothing is written (invariant 2).
	var through *string
	if last := a.LastEnded(); last != nil {
		s := last.ID()
		through = &s
	}
	// When HEAD moves, the index is reset to it (RFC 7.5), and a staged
	// version that differs from its file is in no checkpoint: its tree is
	// recorded first, and made reachable from the safety checkpoint, so
	// the undo can give it back (issue 13 item 5). So in each repository
	// whose HEAD moves (issue 18).
	plans := p.all()
	var indexTree, indexCommit plumbing.OID
	var indexTrees map[string]string
	var indexCommits map[string]plumbing.OID
	for _, q := range plans {
		if !q.headMove {
			continue
		}
		tree, commit, err := q.keepIndex(ctx)
		if err != nil {
			return nil, err
		}
		if q.rel == "" {
			indexTree, indexCommit = tree, commit
			continue
		}
		if indexTrees == nil {
			indexTrees, indexCommits = map[string]string{}, map[string]plumbing.OID{}
		}
		indexTrees[q.rel], indexCommits[q.rel] = string(tree), commit
	}
	safety, err := t.Take(ctx, checkpoint.TakeOptions{Agent: a.ID, Reason: checkpoint.ReasonPreRollback, Locked: true,
		Capture: p.capture, ThroughTurn: &through, IndexCommit: indexCommit, IndexCommits: indexCommits, Refs: p.refs})
	if err != nil {
		return nil, err
	}
	res.Safety = safety.Checkpoint.Checkpoint
	for _, q := range plans {
		q.res.Safety = res.Safety // for the way back (fail) and the backups' names
	}
	failpoint.Hit("rollback.safety-taken")
	// The appliers, one per repository in repos order, read before
	// anything is touched the permission bits no checkpoint can hold, for
	// the log; and, for an undo, those its rollback logged. Every
	// repository is written the same way (writes.go).
	began := time.Now()
	made := gitDefault
	if tmp, err := t.Repo.TmpDir(); err == nil {
		made = probeCreated(tmp)
	}
	var aps appliers
	var own []journal.PathPerm
	for _, q := range plans {
		ap := &applier{plan: q, w: newWorktree(q.tree.Path(), q.changes(), q.snap), restore: q.recordedPerms(), made: made, began: began}
		ap.w.first = q.looks
		ap.own = q.permsToRecord(ap.w, ap.made, ap.restore)
		own = append(own, prefixed(ap.own, q.prefix())...)
		aps = append(aps, ap)
	}
	// A failure up to rollback.started changes nothing (RFC 7.4 step 2):
	// failed.rollback_undone, with nothing to undo.
	notStarted := func(err error, doing string) error {
		return rfcerr.Wrap("failed.rollback_undone", err, map[string]any{"repo": ".", "reason": doing + ": " + err.Error(), "safety": res.Safety},
			"the rollback could not start (%s), and nothing was written", doing).
			WithHint("the safety checkpoint %s holds the tree as it is; retry once the log can be written", res.Safety)
	}
	perms, err := journal.EncodePerms(own)
	if err != nil {
		return nil, notStarted(err, "encoding rollback.started")
	}
	started := journal.RollbackStarted{Agent: a.ID, Checkpoint: p.target.ID(), Safety: res.Safety, Restore: res.Restore, Plan: p.digest, Path: t.Path(), Perms: perms,
		Index: string(indexTree), Indexes: indexTrees}
	if created, ok := createdIgnored(ctx, plans, &safety.Checkpoint); ok {
		if started.Created, err = journal.EncodeCreated(created); err != nil {
			return nil, notStarted(err, "encoding rollback.started")
		}
	}
	if _, err := t.Log.Append(journal.Entry{Type: journal.TypeRollbackStarted, Body: started}); err != nil {
		return nil, notStarted(err, "logging rollback.started")
	}
	failpoint.Hit("rollback.started")
	ended := journal.RollbackEnded{Agent: a.ID, Checkpoint: p.target.ID(), Safety: res.Safety, Restore: res.Restore, Path: t.Path()}

	// Step 3: the conversation. A rewind is the harness's call, made now
	// (p.rewind): Codex's thread/fork through the kept turn, whose new
	// thread the binding then names; Claude Code's print-mode fork into
	// the session the plan named. A failure here ends the rollback before
	// any file is touched (CASES BR-60); GIT_VENOM_TEST_HARNESS_REWIND=fail
	// makes one for tests.
	if res.Conversation.Rewinds && rewindFails() {
		return nil, p.endRefused(&ended, rfcerr.New("conflict.harness_fork_refused", nil,
			"the harness refused to copy the conversation").WithHint("--restore files restores the files alone"))
	}
	if b := p.binding; b != nil && res.Conversation.Rewinds && ForksAtRollback(b.Harness) {
		if p.rewind == nil {
			return nil, p.endRefused(&ended, rfcerr.New("conflict.harness_fork_refused", map[string]any{"harness": b.Harness},
				"no way to fork a %s conversation here", b.Harness))
		}
		id, err := p.rewind(ctx, b.Harness, t.Path(), b.ForkSource, b.ForkAt, b.HarnessSession, deref(p.target.Rec.ThroughTurn))
		if err != nil {
			return nil, p.endRefused(&ended, err)
		}
		b.HarnessSession = id
		res.Conversation.HarnessSession = id
		res.Conversation.Resume = ResumeArgv(b.Harness, b.ForkSource, b.ForkAt, id)
		res.Conversation.ResumeExec = ResumeExecArgv(b.Harness, id)
	}
	// The safety checkpoint is the one promise made before anything is
	// written: a `git gc --prune=now` that began before its ref existed
	// may delete its objects (issue 13 item 3). Checked now, in every
	// repository, before the first write in any, and again in each before
	// its backups go (run).
	for _, ap := range aps {
		q := ap.plan
		rs := safety.Checkpoint.RepoEntry(q.repoName())
		if rs == nil {
			return nil, aps.fail(ctx, ended, 0, fmt.Errorf("the safety checkpoint %s has no entry for %s", res.Safety, q.repoName()))
		}
		ap.safety, ap.indexTree = *rs, indexTree
		if q.rel != "" {
			ap.indexTree = plumbing.OID(indexTrees[q.rel])
		}
		if head := deref(rs.Head); q.listed && ap.indexTree == "" && rs.Tree == string(q.snap.Tree) && head == string(q.snap.Head) {
			// What of S HEAD does not hold, trees and blobs, listed with
			// the plan's diffs (issue 16): its commit, its tree and
			// those are checked, now and again before the backups go.
			ap.safetyObjs = append([]plumbing.OID{plumbing.OID(rs.Commit), plumbing.OID(rs.Tree)}, q.beyond...)
		}
		err := ap.safetyWhole(ctx)
		if lost, partial := len(ap.missing), ap.partial; err != nil && ctx.Err() == nil {
			// Written back from the files, blobs first, then S's trees
			// made again by a capture without the kept stage: the check
			// again after each.
			if ap.blobsFromDisk(ctx) > 0 {
				err = ap.safetyWhole(ctx)
			}
			if err != nil && ap.treesFromDisk(ctx) {
				err = ap.safetyWhole(ctx)
			}
			if err == nil && lost > 0 {
				// Only what the first check named: a check that failed
				// on its own (a git child that died) wrote nothing back.
				res.FromDisk += lost
				res.FromDiskPartial = res.FromDiskPartial || partial
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, aps.fail(ctx, ended, 0, err)
			}
			ended.Code = "failed.rollback_undone"
			if _, lerr := t.Log.Append(journal.Entry{Type: journal.TypeRollbackEnded, Body: ended}); lerr != nil {
				err = multierror.Append(err, lerr)
			}
			return nil, rfcerr.Wrap("failed.rollback_undone", err, map[string]any{"repo": q.repoName(), "reason": err.Error(), "safety": res.Safety},
				"nothing was written").
				WithHint("a `git gc --prune=now` beside the rollback deletes what it has just written; once none runs, plan again: `git venom-plan --agent %s %s`", a.ID, p.target.ID()).
				WithHint("if it fails the same way again, the checkpoint the safety checkpoint reuses lacked them already (a gc beside its capture): `git venom-doctor` names what is missing (checkpoints.size)").
				WithHint("`git fsck` tells a missing object from a damaged one: an empty object file is what a crash leaves; remove it, and the rollback writes it again from the file where the file is unchanged")
		}
	}
	// Steps 4 and 5: files, then HEAD, in each repository in repos order.
	// A failure in any undoes every repository touched, last first (RFC
	// 7.6).
	defer aps.cleanup()
	for i, ap := range aps {
		if err := ap.run(ctx); err != nil {
			return nil, aps.fail(ctx, ended, i, err)
		}
		// The verification's walk refreshes what was just written, in
		// the second it was written: no status index of that (Wrote).
		ap.plan.tree.Repo.Wrote()
	}

	// Step 6: capture again and compare with what the plan expected. With
	// submodules in scope, every repository is captured again (RFC 5.1: a
	// checkpoint has a ref in each).
	var after *checkpoint.Result
	tho := checkpoint.TakeOptions{Agent: a.ID, Reason: checkpoint.ReasonRollback, Locked: true,
		ThroughTurn: ptrOf(res.Conversation.ThroughTurn, through, res.Conversation.Rewinds),
		Like:        p.target, Refs: p.verificationRefs(safety), Head: p.verificationHead()}
	// A real capture, one status walk of each repository (issue 13 item
	// 6): whatever wrote anywhere while the rollback ran is in it, and
	// makes exact false.
	after, err = t.Take(ctx, tho)
	if ctx.Err() != nil && err != nil {
		// Interrupted before the tree was captured again: the rollback is
		// not done, and goes back (a verification that was taken is the
		// point of no return; what follows only reads and logs).
		return nil, aps.fail(ctx, ended, len(aps)-1, ctx.Err())
	}
	exact := false
	if err == nil {
		res.After = after.Checkpoint.Checkpoint
		ended.After = res.After
		exact = true
		// Each repository against its own plan (RFC 7.4 step 6).
		vctx, cancel := ownContext(ctx, began)
		for _, ap := range aps {
			q := ap.plan
			rs := after.Checkpoint.RepoEntry(q.repoName())
			if rs == nil {
				exact = false
				continue
			}
			ok, err := q.exact(vctx, rs.Tree, rs.Skipped, ap.headMoved || q.writesCaptureRules())
			if err != nil || !ok {
				exact = false
			}
		}
		cancel()
	}
	for i, ap := range aps {
		if len(ap.converted) > 0 {
			exact = false
			sort.Strings(ap.converted)
			ap.converted = slices.Compact(ap.converted)
			res.Repos[i].Converted = ap.converted
		}
	}
	// Before the backups go: a save made into a file the rollback moved
	// away is kept (rescue), in the repository it was made in. A save,
	// and a path left because it changed, mean something else wrote
	// meanwhile.
	rctx, cancel := ownContext(ctx, began)
	bases := append([]Repo(nil), res.Repos...) // before report(), which the end may call again
	for i, ap := range aps {
		ap.rescue(rctx)
		if len(ap.left)+len(ap.rescued) > 0 {
			exact = false
			res.Repos[i] = ap.report(res.Repos[i])
		}
	}
	cancel()
	ended.Rescued = aps.rescuedRef()
	res.Exact = &exact
	failpoint.Hit("rollback.verified")

	// Step 7: one log commit.
	ended.OK = true
	ended.Drops = res.Conversation.Drops
	entries := []journal.Entry{{Type: journal.TypeRollbackEnded, Body: ended}}
	if p.binding != nil && res.Conversation.Rewinds {
		entries = append(entries, journal.Entry{Type: journal.TypeAgentBinding, Body: *p.binding})
	}
	// The note (RFC 8, 9): the agent gets it when its conversation stays
	// (files only); each sharer always does, since its files moved under it.
	told := res.SharedWith
	if p.note != "" {
		told = append([]string{a.ID}, told...)
	}
	text := Note(t.Config.RollbackNote, p.target.Rec.ThroughTurn)
	for _, id := range told {
		entries = append(entries, journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: id, Text: text, Rollback: res.Safety, Path: t.Path()}})
	}
	// A person may keep typing in an old conversation instead of resuming
	// the copy (or, back before the first turn, instead of starting a new
	// one): its memory no longer matches the files, so it becomes an agent
	// of its own, whose next prompt gets the files-only note (DESIGN.md
	// section 6; issue 14 items 2 and 7).
	for _, o := range res.Conversation.OldSessions {
		if o.Agent != a.ID {
			entries = append(entries, journal.Entry{Type: journal.TypeAgentBinding, Body: journal.AgentBinding{Agent: o.Agent,
				Harness: o.Harness, HarnessSession: o.Session, Confirmed: true}})
		}
		entries = append(entries, journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: o.Agent, Text: text,
			Rollback: res.Safety, Path: t.Path(), Session: o.Session}})
	}
	if _, err := t.Log.Append(entries...); err != nil {
		// The files are as planned, but the log cannot say so: it holds
		// rollback.started with no end, which RFC 7.6 calls interrupted,
		// and the next command closes it so. Say that now, with the way
		// back, rather than report a rollback no record confirms.
		// What it kept (a save it rescued, one made into a backup since)
		// is named here: the next command finds no backup to name it by.
		for _, ap := range aps {
			ap.settleMovedDirs()
			ap.rescued = append(ap.rescued, ap.cleanup()...)
		}
		data := map[string]any{"repo": ".", "reason": "logging rollback.ended: " + err.Error(), "safety": res.Safety, "after": res.After}
		e := rfcerr.Wrap(checkpoint.CodeInterrupted, err, data,
			"the rollback was applied, but its end could not be logged; the next command records it as interrupted").
			WithHint("%s", aps.undoHint(a.ID, res.Safety))
		return nil, aps.withKept(e, data, res.Safety)
	}
	failpoint.Hit("rollback.ended") // a kill here leaves the backups to the next command (checkpoint.DropEndedBackups)
	// The backups go now, the directories moved whole first
	// (settleMovedDirs): a file is unlinked only after the end is logged,
	// so a save through a program that holds it open is lost only when
	// it comes after the end, as the man page says. One saved into since
	// the rescue judged it stays: a directory moved whole goes back to
	// the tree, or stays in the backup, and is left; a file is named as
	// rescued (applier.cleanup). The record is logged, so only the result
	// and the doctor say so.
	for i, ap := range aps {
		left := len(ap.left)
		ap.settleMovedDirs()
		late := ap.cleanup()
		ap.rescued = append(ap.rescued, late...)
		if len(late) > 0 || len(ap.left) > left {
			res.Repos[i] = ap.report(bases[i])
			exact = false
		}
		res.Repos[i].Backup = ap.keptBackup
	}
	res.DryRun = false
	return &res, nil
}

// verificationRefs are the refs of the top repository the verification
// may take a commit from (RFC 5.1), as this command read or made them
// under the locks it still holds: the safety checkpoint's, the latest
// now, and the target's (TakeOptions.Like). Nothing else writes an
// agent's refs under its lock; a ref missing here is read.
func (p *plan) verificationRefs(safety *checkpoint.Result) map[string]plumbing.OID {
	known := map[string]plumbing.OID{}
	tref := refs.Checkpoint(p.agent.ID, p.target.N)
	if v, ok := p.refs[tref]; ok && v != "" {
		known[tref] = v
	}
	if n, err := refs.ParseID(safety.Checkpoint.Checkpoint); err == nil {
		if rs := safety.Checkpoint.RepoEntry(checkpoint.TopRepo); rs != nil && rs.Commit != "" {
			known[refs.Checkpoint(p.agent.ID, n)] = plumbing.OID(rs.Commit)
		}
	}
	return known
}

// verificationHead is HEAD as the verification expects it where the
// rollback leaves it as S found it (no HEAD move): the capture's walk
// confirms it, with no child of its own to read it (issue 16). nil where
// HEAD moves.
func (p *plan) verificationHead() *plumbing.HeadHint {
	if p.headMove {
		return nil
	}
	return &plumbing.HeadHint{Head: p.snap.Head, Tree: p.snap.HeadTree, Branch: p.snap.Branch}
}

// endRefused ends a rollback whose conversation step failed (RFC 7.4 step
// 3): rollback.ended with the error's code, before any file is touched, and
// the error, which says so and names the safety checkpoint.
func (p *plan) endRefused(ended *journal.RollbackEnded, err error) error {
	e := rfcerr.As(err)
	if e == nil {
		e = rfcerr.Wrap("conflict.harness_fork_refused", err, nil, "%v", err)
	}
	ended.Code = e.Code
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data["safety"] = ended.Safety
	e.Message += "; no file was changed"
	if _, lerr := p.tree.Log.Append(journal.Entry{Type: journal.TypeRollbackEnded, Body: *ended}); lerr != nil {
		// Nothing was written either way: the refusal is the answer,
		// and the next command closes the record as interrupted.
		e.WithHint("its end could not be logged (%v); the next command records it as failed.rollback_interrupted", lerr)
	}
	return e
}

// keepIndex records the user's index before a rollback that moves HEAD
// resets it: its tree (plumbing.IndexTree), and a commit of that tree, with
// no parent, for the safety checkpoint's second parent. Nothing is written
// to the tree or the user's index; a failure fails the rollback before the
// safety checkpoint (failed.checkpoint_git).
func (p *plan) keepIndex(ctx context.Context) (tree, commit plumbing.OID, err error) {
	r := p.tree.Repo
	if tree, err = r.IndexTree(ctx); err != nil {
		return "", "", rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "write-tree"},
			"recording the index before HEAD moves; nothing was written")
	}
	msg := fmt.Sprintf("venom index of %s before its rollback to %s\n\nThe user's index as the rollback found it, kept for its undo.\n", p.agent.ID, p.target.ID())
	if commit, err = r.CommitTree(ctx, tree, "", msg); err != nil {
		return "", "", rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "commit-tree"},
			"recording the index before HEAD moves; nothing was written")
	}
	return tree, commit, nil
}

// report is repo, this applier's repository in the result, with files
// and left as the rollback found them: a path left because it changed
// during the rollback moves from files to left, and what was rescued is
// listed.
func (ap *applier) report(repo Repo) Repo {
	r := repo
	gone := map[string]bool{}
	for _, l := range ap.left {
		gone[l.Path] = true
	}
	files := []File{}
	for _, f := range r.Files {
		// A path left, or below a directory left (one moved whole that
		// went back to the tree with a save in it).
		left := gone[f.Path]
		for p := f.Path; !left && strings.Contains(p, "/"); {
			p = p[:strings.LastIndexByte(p, '/')]
			left = gone[p]
		}
		if !left {
			files = append(files, f)
		}
	}
	r.Files = files
	r.Left = append(append([]Left{}, r.Left...), ap.left...)
	sort.SliceStable(r.Left, func(i, j int) bool { return r.Left[i].Path < r.Left[j].Path })
	r.Rescued = ap.rescued
	return r
}

// changes is the plan's deletions, then its writes.
func (p *plan) changes() []plumbing.TreeChange {
	return append(append([]plumbing.TreeChange(nil), p.deletes...), p.writes...)
}

// writesCaptureRules reports whether the plan writes or removes a
// .gitignore, which changes what a capture leaves out, or a
// .gitattributes, which changes how it reads the files it keeps.
func (p *plan) writesCaptureRules() bool {
	for _, c := range p.changes() {
		for _, name := range []string{".gitignore", ".gitattributes"} {
			if c.Path == name || strings.HasSuffix(c.Path, "/"+name) {
				return true
			}
		}
	}
	return false
}

func ptrOf(target *string, current *string, rewinds bool) **string {
	if rewinds {
		return &target
	}
	return &current
}

// exact implements RFC 7.4 step 6: the after tree differs from S in exactly
// the planned paths, each with T's entry (or removed). Where the capture's
// rules themselves changed (flips: HEAD and the user's index moved, or the
// plan wrote an ignore file), a path the rollback did not touch may come
// into the after tree or leave it with its bytes unchanged on disk (it is
// tracked or ignored now, and was not before); such an appearance or
// disappearance is not a difference, and neither is a new entry for a
// file too big to capture in S or after (its entry there is the index's),
// nor the absence of a write the rules in force ignore (whoever changed
// them), but any other changed entry is. Such an appearance or
// disappearance is passed over only when its file is on disk and
// unchanged since S's capture began (its ctime is older): a file
// created, changed or deleted elsewhere while the rollback ran makes
// exact false, whatever the rules did (issue 13 item 6). A planned write the after capture skipped as too big (a file the target
// held as a tracked entry over maxFileBytes) is not in its tree; its bytes
// were checked against the blob when written (converted), so it counts
// as done.
//
// An after tree that is the plan's expected tree (plan.expect: T's, where
// the plan writes every path S and T differ in) differs from S in the
// planned paths alone, each with T's entry: exact, with no diff-tree
// child to say so (issue 16).
func (p *plan) exact(ctx context.Context, after string, skipped []plumbing.Skip, flips bool) (bool, error) {
	if p.expect != "" && after == p.expect {
		return true, nil
	}
	changes, err := p.tree.Repo.DiffTrees(ctx, string(p.snap.Tree), after)
	if err != nil {
		return false, err
	}
	want := map[string]plumbing.TreeChange{}
	for _, c := range p.deletes {
		want[c.Path] = c
	}
	for _, c := range p.writes {
		want[c.Path] = c
	}
	vanish := map[string]bool{}
	for _, path := range p.ignoredAtT {
		vanish[path] = true
	}
	// A nested repository is never written (left gitlink), but how a
	// capture records it follows the user's index: when HEAD moved back
	// and the index with it, its gitlink may come or go with no file
	// touched.
	nested := map[string]bool{}
	for _, l := range p.res.Repos[0].Left {
		if l.Reason == "gitlink" {
			nested[l.Path] = true
		}
	}
	// A submodule with a plan of its own is judged by that plan; the
	// gitlink here follows its HEAD.
	for _, c := range p.childPaths() {
		nested[c] = true
	}
	tooBig, keptEntry := map[string]bool{}, map[string]bool{}
	for _, sk := range p.snap.Skipped {
		if sk.Reason == "too_big" {
			keptEntry[sk.Path] = true // S's entry was the index's
		}
	}
	for _, sk := range skipped {
		if sk.Reason != "too_big" {
			continue
		}
		keptEntry[sk.Path] = true
		if w, ok := want[sk.Path]; ok && w.DstMode != "000000" {
			tooBig[sk.Path] = true
		}
	}
	done := map[string]bool{}
	ws := newWorktree(p.tree.Path(), nil, p.snap)
	for _, c := range changes {
		if vanish[c.Path] && c.DstMode == "000000" {
			continue
		}
		if nested[c.Path] && (c.SrcMode == "160000" || c.DstMode == "160000") {
			continue
		}
		w, planned := want[c.Path]
		if !planned && flips && keptEntry[c.Path] {
			// A file too big to read whose entry is the index's, which
			// moved.
			continue
		}
		if !planned && flips && (c.SrcMode == "000000" || c.DstMode == "000000") && ws.untouchedSince(c.Path, p.snapAt) {
			// Came or went with the index or the ignore rules: its file
			// is on disk, and nothing changed it since S was captured (a
			// file someone wrote meanwhile, or deleted, is a write).
			continue
		}
		switch {
		case planned && w.DstMode == c.DstMode && w.Dst == c.Dst:
		case planned && tooBig[c.Path]:
			// Written (its bytes checked against the blob), then too big
			// for the capture to read: its entry there is the index's, or
			// none when the index does not track it.
		default:
			return false, nil
		}
		done[c.Path] = true
	}
	for path := range tooBig {
		done[path] = true // written; the capture may show no change at all
	}
	if len(done) < len(want) {
		// A write the after capture leaves out because the rules in
		// force ignore it and the index does not track it: written (its
		// bytes checked), but no capture can hold it now. The rules may
		// have changed with the plan or HEAD (flips), or before the plan:
		// a person's .gitignore the plan keeps as theirs.
		var missing []string
		for path, w := range want {
			if !done[path] && w.DstMode != "000000" {
				missing = append(missing, path)
			}
		}
		if len(missing) > 0 {
			ignored, err := p.tree.Repo.IgnoredUntracked(ctx, missing)
			if err != nil {
				return false, err
			}
			for path := range ignored {
				done[path] = true
			}
		}
	}
	return len(done) == len(want), nil
}

// rewindFails is the test hook that makes the harness's rewind fail.
func rewindFails() bool {
	return os.Getenv("GIT_VENOM_TEST_HARNESS_REWIND") == "fail" || os.Getenv("VENOM_TEST_HARNESS_REWIND") == "fail"
}

// all is the top's plan and its submodules' plans, in repos order.
func (p *plan) all() []*plan {
	return append([]*plan{p}, p.subs...)
}

// createdIgnored is what rollback.started logs as created: the files the
// plans write where S holds nothing (T's entry is new) and S's own ignore
// rules ignore the path, asked of git as the undo's plan will ask
// (plumbing.Repo.IgnoredAt on S's commit), top-relative. Nothing can
// have been there: the plan leaves a write where the tree holds anything
// S does not (ignored_in_the_way). ok is false when a repository's
// answer could not be had: the record then lists none, and the undo
// keeps them all, as it did before they were logged.
func createdIgnored(ctx context.Context, ps []*plan, safety *journal.Checkpoint) (created []string, ok bool) {
	for _, q := range ps {
		var news []string
		for _, c := range q.writes {
			if c.SrcMode == "000000" && c.DstMode != "160000" {
				news = append(news, c.Path)
			}
		}
		if len(news) == 0 {
			continue
		}
		rs := safety.RepoEntry(q.repoName())
		if rs == nil {
			return nil, false
		}
		ignored, err := q.tree.Repo.IgnoredAt(ctx, plumbing.OID(rs.Commit), news)
		if err != nil {
			return nil, false
		}
		for _, path := range news {
			if ignored[path] {
				created = append(created, q.prefix()+path)
			}
		}
	}
	return created, true
}

// prefixed is ps with each path made relative to the top (prefix is the
// repository's: "" for the top).
func prefixed(ps []journal.PathPerm, prefix string) []journal.PathPerm {
	if prefix == "" {
		return ps
	}
	out := make([]journal.PathPerm, len(ps))
	for i, pp := range ps {
		pp.Path = prefix + pp.Path
		out[i] = pp
	}
	return out
}
