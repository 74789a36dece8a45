package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/venom-org/git-venom/internal/failpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Reasons a capture may give (RFC 3). The last two are a rollback's own.
const (
	ReasonTurnStart   = "turn_start"
	ReasonTurnEnd     = "turn_end"
	ReasonManual      = "manual"
	ReasonTakeover    = "takeover"
	ReasonTakeback    = "takeback"
	ReasonFork        = "fork"
	ReasonPreRollback = "pre_rollback"
	ReasonRollback    = "rollback"
)

// UserReasons are the reasons `git venom-checkpoint --reason` accepts.
var UserReasons = []string{ReasonTurnStart, ReasonTurnEnd, ReasonManual, ReasonTakeover, ReasonTakeback}

// dedups reports whether a capture with reason may reuse the latest
// checkpoint (RFC 3.2: never pre_rollback's successor, never fork).
func dedups(reason string) bool {
	switch reason {
	case ReasonPreRollback, ReasonRollback, ReasonFork:
		return false
	}
	return true
}

// Isolation values (RFC 6, DESIGN.md section 5).
const (
	IsolationInPlace  = "in_place"
	IsolationWorktree = "worktree"
	IsolationCopy     = "copy"
)

// Harness carries the ids a harness gave for a turn (issue: turns).
type Harness struct {
	Name    string
	Session string
	Turn    string
	End     string
	// EndPending, when End could not be resolved yet, says where a
	// rollback finds it later (journal.EndPending).
	EndPending *journal.EndPending
}

// TakeOptions says what capture to make. Agent must be valid (refs).
// ThroughTurn, when set, overrides RFC 3.3's rule (a rollback checkpoint
// records its target's through_turn). Locked means the caller already holds
// the agent and tree locks (a rollback's own captures).
type TakeOptions struct {
	Agent  string
	Reason string
	Label  string
	// LabelNew gives Label to a new checkpoint only: a reused one keeps
	// its own label, and the reuse record has none (a per-tool-call
	// checkpoint that found nothing changed must not rename the turn's
	// start "before Bash: ls").
	LabelNew bool
	// ToolCall marks the new checkpoint a per-tool-call one
	// (journal.Checkpoint.ToolCall).
	ToolCall    bool
	Isolation   string
	Harness     Harness
	ThroughTurn **string
	Locked      bool
	// Capture, when set, is used instead of a new capture: a rollback's
	// safety checkpoint is made from the S its plan was checked against
	// (RFC 7.4 step 2, "the same commits"), in every repository.
	// Snapshot is the same for the top repository alone.
	Capture  *Capture
	Snapshot *plumbing.Snapshot
	// IndexCommit, when set, is the checkpoint commit's second parent: a
	// commit of the user's index tree, which a rollback that moves HEAD
	// (and so resets the index) keeps reachable from its safety
	// checkpoint for as long as the checkpoint lives, so that the staged
	// versions only the index held survive a gc until the undo gives
	// them back (rollback.started's index).
	IndexCommit plumbing.OID
	// IndexCommits is IndexCommit for submodules whose HEAD a rollback
	// moves, by repo (path relative to the top).
	IndexCommits map[string]plumbing.OID
	// Refs, when set, are commits refs of the top repository named when
	// the caller read them, holding the agent's and the tree's locks
	// (Locked) in this same command, with nothing written since
	// (FindReading): whether the latest checkpoint's commit may serve
	// again (RFC 5.1) is told from its ref's value there rather than
	// read again, a git start saved (issue 16). A ref not in it is read.
	// A rollback's verification gives the refs it read or made itself
	// under its locks: the safety checkpoint's and the target's (Like).
	Refs map[string]plumbing.OID
	// Head, when set, is the top repository's HEAD as the caller read it
	// in this command under its locks: the capture takes it where its
	// walk finds HEAD there (plumbing.CaptureOptions.Head), with no child
	// of its own to read it (issue 16).
	Head *plumbing.HeadHint
	// Like, when set, is another checkpoint of the agent whose commit
	// serves a repository that is as Like holds it (the same tree, HEAD
	// and submodules) and that the latest checkpoint's commit does not
	// serve (RFC 5.1, "the same commit as before"): a rollback's
	// verification, whose exact tree is its target's, takes the target's
	// commit, a commit-tree saved (issue 16). Its ref is read with the
	// latest's, in the child that reads HEAD (or given in Refs), and must
	// still name that commit; where git refuses a ref to a commit taken
	// so (gone since it was read: the ref deleted by hand and a gc), the
	// checkpoint is made again with commits of its own.
	Like *journal.Saved
}

// Result is what Take made or reused: the checkpoint record (RFC 4.2) and
// whether it was reused (RFC 3.2).
type Result struct {
	Checkpoint journal.Checkpoint
	Reused     bool
	// Turn is the turn this capture belongs to; for a reused checkpoint it
	// may differ from the checkpoint's own (a turn_start after a turn_end).
	Turn *string
	// Ended names a turn this turn_start ended first because its turn_end
	// never came (an interrupt fires no hook); "" otherwise.
	Ended string
}

// Take implements RFC 3 and 4.1 for this tree: it captures the whole
// working tree into a new commit under refs/venom/checkpoints/<agent>/<n>,
// or reuses the agent's latest checkpoint when tree and HEAD are unchanged,
// and logs the result with the turn records its reason implies. It changes
// nothing the user can see (invariant 1). It is bounded by
// venom.checkpoints.timeout, lock wait included. A failure is logged as
// checkpoint.failed and returned with its RFC code: timeout.checkpoint,
// failed.checkpoint_too_large or failed.checkpoint_git.
func (t *Tree) Take(ctx context.Context, o TakeOptions) (*Result, error) {
	if err := refs.ValidAgent(o.Agent); err != nil {
		return nil, rfcerr.Wrap("invalid_params.agent", err, map[string]any{"agent": o.Agent}, "bad --agent")
	}
	if t.Config.Timeout > 0 {
		// The bound scales with the paths the capture finds changed
		// (PathsPerTimeout), once its walk has counted them.
		start := time.Now()
		sctx, cancel := withStretchableTimeout(ctx, t.Config.Timeout)
		defer cancel()
		ctx = sctx
		prev := t.Repo.OnProgress
		t.Repo.OnProgress = func(step string, done, total int) {
			if step == "capture.stage" && done == 0 {
				sctx.stretch(start.Add(scaledTimeout(t.Config.Timeout, total)))
			}
			if prev != nil {
				prev(step, done, total)
			}
		}
		defer func() { t.Repo.OnProgress = prev }()
	}
	if !o.Locked {
		al, err := journal.WaitLock(ctx, t.Log.LockPath(AgentLock(o.Agent)), true)
		if err != nil {
			return nil, t.fail(o, nil, nil, nil, err)
		}
		defer al.Unlock()
		tl, err := journal.WaitLock(ctx, t.Log.LockPath(TreeLock(t.Path())), false)
		if err != nil {
			return nil, t.fail(o, nil, nil, nil, err)
		}
		defer tl.Unlock()
	}
	t.Repo.CleanTmp()
	a, err := t.Log.LoadAgent(o.Agent)
	if err != nil {
		return nil, LogError(err, "reading the log")
	}
	if a == nil {
		a = &journal.Agent{ID: o.Agent}
	}
	pre, post, turn, through := t.turnRecords(a, o)
	if o.ThroughTurn != nil {
		through = *o.ThroughTurn
	}
	if _, ok := a.Trees[t.Path()]; !ok {
		iso := o.Isolation
		if iso == "" {
			iso = IsolationWorktree
			if t.Main() {
				iso = IsolationInPlace
			}
		}
		pre = append([]journal.Entry{{Type: journal.TypeAgentRegistered, Body: journal.AgentRegistered{Agent: o.Agent, Path: t.Path(), Isolation: iso}}}, pre...)
	}

	latest := a.Latest()
	known := o.Refs
	capt := o.Capture
	if capt == nil && o.Snapshot != nil {
		capt = t.Single(o.Snapshot)
	}
	if capt == nil {
		// The latest checkpoint's ref, which both the reuse (RFC 3.2)
		// and an unchanged repository's commit (RFC 5.1) must find
		// still naming its commit, is read in the child that reads
		// HEAD, under the locks: a git start saved on every reuse
		// (issue 16).
		var read []string
		if known == nil {
			for _, s := range []*journal.Saved{latest, o.Like} {
				if s != nil && !s.Pruned {
					read = append(read, refs.Checkpoint(o.Agent, s.N))
				}
			}
		}
		var err error
		capt, err = t.captureAll(ctx, read, o.Head)
		if err != nil {
			return nil, t.fail(o, pre, post, turn, err)
		}
		if v := capt.Top().Refs; len(read) > 0 && len(v) == len(read) {
			known = make(map[string]plumbing.OID, len(read))
			for i, ref := range read {
				known[ref] = v[i]
			}
		}
	}
	at := journal.Timestamp(journal.Now())

	if latest != nil && dedups(o.Reason) && t.sameAs(ctx, latest, capt, known) {
		label := o.Label
		if o.LabelNew {
			label = ""
		}
		rec := journal.Reused{Agent: o.Agent, Checkpoint: latest.ID(), Reason: o.Reason, Turn: turn,
			ThroughTurn: through, At: at, Label: label, Path: t.Path()}
		setCheckpoint(post, latest.ID())
		entries := append(append(pre, journal.Entry{Type: journal.TypeCheckpointReused, Body: rec}), post...)
		if _, err := t.Log.Append(entries...); err != nil {
			return nil, LogError(err, "logging the capture (it found checkpoint %s unchanged)", latest.ID())
		}
		out := latest.Rec
		if label != "" {
			out.Label = label
		} else {
			out.Label = latest.Label
		}
		return &Result{Checkpoint: out, Reused: true, Turn: turn, Ended: syntheticEnd(pre)}, nil
	}

	n := a.MaxN + 1
	rec := journal.Checkpoint{Agent: o.Agent, Reason: o.Reason, Turn: turn, ThroughTurn: through, At: at,
		MidTurn: turn != nil && o.Reason != ReasonTurnStart && o.Reason != ReasonTurnEnd,
		Label:   o.Label, ToolCall: o.ToolCall}
	repos := make([]journal.RepoState, len(capt.Repos))
	gits := make([]*plumbing.Repo, len(capt.Repos))
	for i, c := range capt.Repos {
		repos[i] = repoState(c, t.Path())
		gits[i] = c.Git
	}
	var made []refSet
	// fresh: a ref given another checkpoint's commit could not be made
	// (that commit may be gone: a ref read earlier in this command and
	// deleted since, and a gc), so every repository gets a commit of its
	// own from then on.
	fresh := false
	for tries := 0; ; tries++ {
		rec.Checkpoint = refs.ID(n)
		// RFC 5.1: every repository gets a ref; one unchanged since the
		// latest checkpoint gets that checkpoint's commit.
		var err error
		var reused bool // the last repository's commit was another checkpoint's
		made = made[:0]
		for i, c := range capt.Repos {
			// Made again on each try: the commit's trailers name the id.
			repos[i].Commit = ""
			reused = false
			{
				var more []plumbing.OID
				if i == 0 && o.IndexCommit != "" {
					more = append(more, o.IndexCommit)
				} else if ic := o.IndexCommits[c.Repo]; i > 0 && ic != "" {
					more = append(more, ic)
				}
				var prev string
				if !fresh && len(more) == 0 {
					if prev = t.unchanged(ctx, latest, c, repos[i], known); prev == "" && o.Like != nil {
						prev = t.unchanged(ctx, o.Like, c, repos[i], known)
					}
				}
				if prev != "" {
					repos[i].Commit, reused = prev, true
				} else {
					commit, cerr := c.Git.CommitTree(ctx, c.Snap.Tree, c.Snap.Head, commitMessage(rec), more...)
					if cerr != nil {
						return nil, t.fail(o, pre, post, turn, &RepoError{Repo: c.Repo, Err: cerr})
					}
					if i == 0 {
						failpoint.Hit("capture.commit-made")
					}
					repos[i].Commit = string(commit)
				}
			}
			ref := refs.Checkpoint(o.Agent, n)
			if err = c.Git.CreateRef(ctx, ref, plumbing.OID(repos[i].Commit), "venom checkpoint "+o.Agent+"/"+rec.Checkpoint); err != nil {
				err = &RepoError{Repo: c.Repo, Err: err}
				break
			}
			made = append(made, refSet{git: c.Git, ref: ref, commit: plumbing.OID(repos[i].Commit)})
		}
		if err == nil {
			break
		}
		fresh = fresh || reused
		// A ref could not be made. If it exists, a log that no longer
		// names it (deleted, or a crash between ref and record) used this
		// id; if not, it is most likely behind a stale <ref>.lock, left by
		// an update-ref the timeout killed (nobody else makes this agent's
		// refs past MaxN: we hold its lock), which would otherwise fail
		// every later capture of the agent. Either way, never overwrite or
		// wait: the refs made for this n go again, and the next free n past
		// every ref of the agent in every repository is taken (RFC 4.2), a
		// few times at most.
		if derr := undoRefs(ctx, made, "venom: checkpoint "+o.Agent+"/"+rec.Checkpoint+" not made"); derr != nil {
			return nil, t.fail(o, pre, post, turn, err)
		}
		if tries < 3 {
			if next, rerr := nextFree(ctx, gits, o.Agent, n); rerr == nil {
				n = next
				continue
			}
		}
		return nil, t.fail(o, pre, post, turn, err)
	}
	failpoint.Hit("capture.ref-created")
	rec.Repos = repos
	setCheckpoint(pre, rec.Checkpoint)
	setCheckpoint(post, rec.Checkpoint)
	entries := append(append(pre, journal.Entry{Type: journal.TypeCheckpointTaken, Body: rec}), post...)
	if _, err := t.Log.Append(entries...); err != nil {
		// No ref without its record (RFC 4.2).
		return nil, t.unrecorded(ctx, o.Agent, rec.Checkpoint, made, err)
	}
	if o.Reason == ReasonTurnEnd {
		// Retention runs after a turn_end (RFC 5.2). A failure is not the
		// capture's: the refs stay, and the next turn_end retries.
		if a, err := t.Log.LoadAgent(o.Agent); err == nil && a != nil {
			_, _ = t.Prune(ctx, a, journal.Now())
		}
	}
	return &Result{Checkpoint: rec, Turn: turn, Ended: syntheticEnd(pre)}, nil
}

// sameAs reports whether every repository of c has the tree and HEAD it
// has in the saved checkpoint, the same repositories are in scope, and
// the checkpoint is still whole (each ref holds the logged commit): the
// dedup rule of RFC 3.2, which holds only when no repository changed.
// Each tree holds its nested repositories' commits as gitlinks
// (plumbing/nested.go), so a commit inside one is a new tree; the nested
// repositories each lists must be the same too (paths and commits, which
// also tells apart one with no commit, which has no gitlink, appearing or
// going), so a reused checkpoint never names another repository's commit
// than the tree has. Whether one is dirty is its own files' business, not
// the tree's: it does not count. known are the values of top repository
// refs read already under this command's locks (as unchanged's); the
// ref of another repository, or one not in it, is read here.
func (t *Tree) sameAs(ctx context.Context, s *journal.Saved, c *Capture, known map[string]plumbing.OID) bool {
	if len(s.Rec.Repos) != len(c.Repos) {
		return false
	}
	for i, cr := range c.Repos {
		r := s.Rec.Repos[i]
		if r.Repo != cr.Repo || !sameRepo(r, cr, t.Path()) {
			return false
		}
	}
	ref := refs.Checkpoint(s.Rec.Agent, s.N)
	for i, cr := range c.Repos {
		v, ok := known[ref]
		if !ok || cr.Repo != TopRepo {
			var err error
			if v, err = cr.Git.RefValue(ctx, ref); err != nil {
				return false
			}
		}
		if string(v) != s.Rec.Repos[i].Commit {
			return false
		}
	}
	return true
}

// sameRepo reports whether the capture c of one repository has what r,
// its entry in a checkpoint, recorded: its tree, HEAD and branch, and the
// same paths skipped.
func sameRepo(r journal.RepoState, c Captured, top string) bool {
	snap := c.Snap
	head := ""
	if r.Head != nil {
		head = *r.Head
	}
	if r.Path != c.Git.WorkTree || r.Tree != string(snap.Tree) || head != string(snap.Head) || r.Branch != snap.Branch {
		return false
	}
	// A file that went over maxFileBytes leaves the tree as it was but
	// changes what the checkpoint can say it skipped: not the same.
	if len(r.Skipped) != len(snap.Skipped) {
		return false
	}
	for i := range r.Skipped {
		if r.Skipped[i].Path != snap.Skipped[i].Path || r.Skipped[i].Reason != snap.Skipped[i].Reason {
			return false
		}
	}
	if len(r.Submodules) != len(snap.Submodules) {
		return false
	}
	for i, sm := range r.Submodules {
		if sm.Path != snap.Submodules[i].Path || deref(sm.Commit) != deref(snap.Submodules[i].Commit) {
			return false
		}
	}
	return true
}

// unchanged is the commit of repository c in the saved checkpoint s
// when c has not changed since (sameRepo) and that commit is still
// reachable from s's ref there: RFC 5.1's "pointing at the same commit
// as before". "" otherwise.
//
// known are the values of the top repository's refs read already in this
// command under its locks (TakeOptions.Refs; nil: none).
func (t *Tree) unchanged(ctx context.Context, s *journal.Saved, c Captured, r journal.RepoState, known map[string]plumbing.OID) string {
	if s == nil || s.Pruned {
		return ""
	}
	for _, pr := range s.Rec.Repos {
		if pr.Repo != c.Repo || pr.Commit == "" || !sameRepo(pr, c, t.Path()) {
			continue
		}
		ref := refs.Checkpoint(s.Rec.Agent, s.N)
		v, ok := known[ref]
		if !ok || c.Repo != TopRepo {
			var err error
			if v, err = c.Git.RefValue(ctx, ref); err != nil {
				continue
			}
		}
		if string(v) == pr.Commit {
			return pr.Commit
		}
	}
	return ""
}

// repoState is the repos[] member (RFC 4.2) for the capture of one
// repository, without its commit.
func repoState(c Captured, top string) journal.RepoState {
	snap := c.Snap
	var head *string
	if snap.Head != "" {
		h := string(snap.Head)
		head = &h
	}
	return journal.RepoState{Repo: c.Repo, Path: c.Git.WorkTree, Tree: string(snap.Tree), Head: head, Branch: snap.Branch,
		Skipped: nonNil(snap.Skipped), Submodules: nonNilSub(snap.Submodules)}
}

// turnRecords applies RFC 3 and 3.3 to a capture: the records to log before
// and after it, the turn it belongs to and its through_turn. A turn_start
// while a turn is open first ends that turn (synthetic: an interrupt fires
// no hook); a turn_end with no open turn opens and closes a turn with no
// start, unless it retries the turn_end of the turn that just ended
// (RetriedEnd), whose end it then is. Neither is an error: a capture is
// never lost to bookkeeping.
func (t *Tree) turnRecords(a *journal.Agent, o TakeOptions) (pre, post []journal.Entry, turn, through *string) {
	open := a.OpenTurn()
	last := a.LastEnded()
	if last != nil {
		through = strp(last.ID())
	}
	next := refs.Turn(a.MaxTurn() + 1)
	switch o.Reason {
	case ReasonTurnStart:
		if open != nil {
			pre = append(pre, journal.Entry{Type: journal.TypeTurnEnded, Body: &journal.TurnEnded{Agent: o.Agent, Turn: open.ID(), Synthetic: true}})
			through = strp(open.ID())
		}
		turn = strp(next)
		post = append(post, journal.Entry{Type: journal.TypeTurnStarted, Body: &journal.TurnStarted{Agent: o.Agent, Turn: next,
			Harness: o.Harness.Name, HarnessSession: o.Harness.Session, HarnessTurn: o.Harness.Turn}})
	case ReasonTurnEnd:
		id := next
		if open != nil {
			id = open.ID()
		} else if rt := RetriedEnd(a, t.Path()); rt != nil {
			// The turn_end of the turn that just ended, whose own turn_end
			// capture failed: that turn's end, not a turn of its own.
			id = rt.ID()
		} else {
			pre = append(pre, journal.Entry{Type: journal.TypeTurnStarted, Body: &journal.TurnStarted{Agent: o.Agent, Turn: id, NoStart: true,
				Harness: o.Harness.Name, HarnessSession: o.Harness.Session, HarnessTurn: o.Harness.Turn}})
		}
		turn, through = strp(id), strp(id)
		post = append(post, journal.Entry{Type: journal.TypeTurnEnded, Body: &journal.TurnEnded{Agent: o.Agent, Turn: id,
			Harness: o.Harness.Name, HarnessSession: o.Harness.Session, HarnessTurn: o.Harness.Turn, HarnessEnd: o.Harness.End,
			HarnessEndPending: o.Harness.EndPending}})
	default:
		if open != nil {
			turn = strp(open.ID())
		}
	}
	return pre, post, turn, through
}

// RetriedEnd is the turn whose turn_end capture a turn_end now retries:
// the agent's last turn, when every capture of the agent in tree path
// since that turn's last successful one is a failed turn_end of it (a
// timeout, say) and the turn has ended by it. nil otherwise. Its retry is
// that turn's end, so RFC 7.3's windows see the turn from its start to the
// retry (classes.go), and the agent's work stays the turn's instead of
// looking like a person's (issue 15).
func RetriedEnd(a *journal.Agent, path string) *journal.Turn {
	if len(a.Turns) == 0 {
		return nil
	}
	last := a.Turns[len(a.Turns)-1]
	if last.EndSeq == 0 {
		return nil
	}
	failed := false
	for i := len(a.Captures) - 1; i >= 0; i-- {
		c := a.Captures[i]
		if c.Path != path {
			continue
		}
		if c.Type != journal.TypeCheckpointFailed {
			return nil
		}
		if c.Reason != ReasonTurnEnd || c.Turn != last.ID() {
			return nil
		}
		failed = true
		break
	}
	if !failed {
		return nil
	}
	return last
}

// setCheckpoint fills the checkpoint id into turn records made before the
// id was known.
func setCheckpoint(es []journal.Entry, id string) {
	for _, e := range es {
		switch b := e.Body.(type) {
		case *journal.TurnStarted:
			if !b.NoStart {
				b.Checkpoint = id
			}
		case *journal.TurnEnded:
			if !b.Synthetic {
				b.Checkpoint = id
			}
		}
	}
}

// fail logs checkpoint.failed (with the turn records, so a failed
// turn_start still opens its turn and the window becomes a gap, RFC 3.1)
// and returns the RFC error for err. turn is the turn the capture belongs
// to (turnRecords, RFC 3 and 3.3), the same a capture that succeeded would
// record: the open turn for a capture other than turn_start or turn_end.
// It is nil when the capture failed before the log was read (waiting for a
// lock), and then the record names no turn.
func (t *Tree) fail(o TakeOptions, pre, post []journal.Entry, turn *string, err error) error {
	e := classify(t, err)
	rec := journal.Failed{Agent: o.Agent, Reason: o.Reason, Code: e.Code, Message: e.Message, Turn: turn, Repo: repoOf(err), Path: t.Path()}
	entries := append(append(pre, journal.Entry{Type: journal.TypeCheckpointFailed, Body: rec}), post...)
	if _, lerr := t.Log.Append(entries...); lerr != nil {
		e.Hints = append(e.Hints, "the failure could not be logged either: "+lerr.Error())
	}
	return e
}

func classify(t *Tree, err error) *rfcerr.Error {
	if e := rfcerr.As(err); e != nil {
		return e
	}
	var tl *plumbing.TooLargeError
	repo := repoOf(err)
	switch {
	case errors.As(err, &tl):
		return rfcerr.New("failed.checkpoint_too_large",
			map[string]any{"repo": repo, "bytes": tl.Bytes, "largest": tl.Largest},
			"capture refused: %s", tl.Error()).
			WithHint("ignore the build output (.gitignore), or raise venom.checkpoints.maxTotalBytes")
	case errors.Is(err, context.DeadlineExceeded):
		return rfcerr.New("timeout.checkpoint", map[string]any{"repo": repo},
			"capture of %s did not finish within venom.checkpoints.timeout (%s, once for each %d changed paths)", t.Path(), t.Config.Timeout, PathsPerTimeout).
			WithHint("raise it (git config venom.checkpoints.timeout 120s) or ignore generated files; a turn_end retried for the same turn is still that turn's end")
	}
	reason := "git"
	var ge *plumbing.Error
	if errors.As(err, &ge) && len(ge.Args) > 0 {
		reason = ge.Args[0]
	}
	return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": repo, "reason": reason}, "capture failed")
}

func commitMessage(c journal.Checkpoint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "venom checkpoint %s/%s\n\nVenom-Agent: %s\nVenom-Checkpoint: %s\nVenom-Reason: %s\n",
		c.Agent, c.Checkpoint, c.Agent, c.Checkpoint, c.Reason)
	if c.Turn != nil {
		fmt.Fprintf(&b, "Venom-Turn: %s\n", *c.Turn)
	}
	return b.String()
}

func strp(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonNil(s []plumbing.Skip) []plumbing.Skip {
	if s == nil {
		return []plumbing.Skip{}
	}
	return s
}

func nonNilSub(s []plumbing.Submodule) []plumbing.Submodule {
	if s == nil {
		return []plumbing.Submodule{}
	}
	return s
}

// syntheticEnd is the turn a synthetic turn.ended among es closes, or "".
func syntheticEnd(es []journal.Entry) string {
	for _, e := range es {
		if b, ok := e.Body.(*journal.TurnEnded); ok && b.Synthetic {
			return b.Turn
		}
	}
	return ""
}
