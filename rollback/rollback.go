// Package rollback implements RFC 6 and 7: the preflight, the plan and its
// digest (the dry run), the real call that applies a plan path by path after
// a safety checkpoint, HEAD in unguarded trees, and the undo when git fails.
// It never prints, parses flags or exits.
package rollback

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/venom-org/git-venom/checkpoint"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Options are agent.rollback's parameters (RFC 11.1). Restore is "all"
// (default) or "files"; Outside is "", "refuse", "keep" or "overwrite"
// ("" means refuse in a guarded tree and overwrite elsewhere). A dry run has
// DryRun set and no Plan; a real call has a Plan.
type Options struct {
	Agent      string
	Checkpoint string
	Restore    string
	Outside    string
	KeepHead   bool
	DryRun     bool
	Plan       string
	// Pathspec, when not empty, narrows the plan and its rollback to the
	// paths it matches, as git matches them (`-- <pathspec>...`); the
	// capture S and the safety checkpoint still hold the whole tree. It
	// enters the plan id with the directory it is relative to.
	Pathspec *plumbing.Pathspec
	// Caller is "agent" when an agent's harness runs the command (RFC 11.4),
	// else "person".
	Caller string
	// ResolveEnd, when set, finds a turn's harness_end that its harness
	// could not resolve when the turn ended (journal.EndPending: Claude
	// Code's transcript lagged); "" when it still cannot. The harness
	// package provides it (harness.ResolveEnd).
	ResolveEnd func(harness string, p *journal.EndPending) string
	// Rewind makes the copy of a conversation (ForksAtRollback: Codex's
	// thread/fork through the kept turn, Claude Code's print-mode fork at
	// the kept turn's last entry): the tree's path, the source session,
	// the harness's id of the point to copy through, the new session's id
	// when the toolkit chooses it (Claude Code; "" for Codex, which
	// chooses) and the kept turn (tN, "" for none) in, the copy's session
	// id out. It runs at RFC 7.4 step 3, and its error
	// (conflict.harness_fork_refused, not_found.harness_session,
	// timeout.harness_request) ends the rollback there, before any file
	// is touched. The harness package provides it (harness.Rewind); nil
	// refuses such a rewind.
	Rewind RewindFunc
}

// RewindFunc is Options.Rewind's type.
type RewindFunc func(ctx context.Context, harness, dir, session, at, newSession, through string) (string, error)

// File is one member of repos[].files (RFC 11.1): Change is create,
// modify or delete (what the rollback does), Class agent, turn or outside
// (RFC 7.3).
type File struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	Class  string `json:"class"`
}

// Left is one member of repos[].left (RFC 7.4): a path the rollback does
// not touch, and why. The real call adds changed_during_rollback: a path
// that was not as S had it when the rollback came to write it (a person
// saved it meanwhile), left as it is (issue 13 item 2).
type Left struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// LeftChangedDuringRollback is the reason of a path a real call left
// because it was not as S had it when the rollback came to it: a
// person's save (or something in the way) while it ran (issue 13 item 2).
const LeftChangedDuringRollback = "changed_during_rollback"

// Head says what happens to HEAD (RFC 11.1): From and To are commits (nil
// when unborn), Commits the number of commits it leaves behind.
type Head struct {
	Moves   bool    `json:"moves"`
	From    *string `json:"from"`
	To      *string `json:"to"`
	Commits int     `json:"commits"`
	// Since is the toolkit's addition: when HEAD stays (a guarded tree,
	// --keep-head) and commits were made on it since the checkpoint's
	// HEAD, how many (git rev-list HEAD ^<checkpoint's HEAD>). They stay,
	// and the files the rollback puts back show their changes as
	// uncommitted reversals. 0 otherwise.
	Since int `json:"since,omitempty"`
}

// Repo is one member of the result's repos[]. Commit (the checkpoint's
// commit) and Tree (S's tree: the tree as the call found it, captured with
// no ref) are the toolkit's additions, so that a client can recompute the
// plan id from the result alone (PlanDocument).
type Repo struct {
	Repo   string `json:"repo"`
	Path   string `json:"path"`
	Commit string `json:"commit"`
	Tree   string `json:"tree"`
	Head   Head   `json:"head"`
	// Index is the tree the user's index is set to when HEAD moves, when
	// that is not HEAD's own tree: the staged state the rollback being
	// undone found (rollback.started's index), given back by its undo.
	// Absent otherwise.
	Index        string   `json:"index,omitempty"`
	Files        []File   `json:"files"`
	Left         []Left   `json:"left"`
	IgnoredEdits []string `json:"ignored_edits"`
	// Converted lists written files whose bytes on disk are not their
	// blob's (an end-of-line conversion or a filter): the rollback cannot
	// promise they are byte for byte as captured. Real call only.
	Converted []string `json:"converted,omitempty"`
	// Rescued lists saves a person made while the rollback ran into files
	// it then replaced, and where their bytes are kept (issue 13 item 2).
	// Real call only.
	Rescued []Rescued `json:"rescued,omitempty"`
	// Backup is the backup directory of this repository, kept whole
	// because the safety checkpoint lost objects (a `git gc
	// --prune=now` beside the rollback) after the rollback checked it:
	// what the rollback replaced is there, and perhaps nowhere else.
	// Absent otherwise. Real call only.
	Backup string `json:"backup,omitempty"`
}

// Conversation is the result's conversation member (RFC 8, 11.1). Resume is
// the toolkit's addition: the exact argv that continues the rewound
// conversation, when the harness resumes by command.
type Conversation struct {
	Rewinds     bool     `json:"rewinds"`
	ThroughTurn *string  `json:"through_turn"`
	Drops       []string `json:"drops"`
	// Harness names the harness whose conversation rewinds (claude-code,
	// codex), when one does.
	Harness string `json:"harness,omitempty"`
	// ForkSource and ForkAt say what the rollback copies for a rewind: the
	// session, and the harness's id of the point it copies through (Claude
	// Code: the kept turn's last transcript entry, harness_end; Codex: the
	// kept turn's id).
	ForkSource     string   `json:"fork_source,omitempty"`
	ForkAt         string   `json:"fork_at,omitempty"`
	HarnessSession string   `json:"harness_session,omitempty"`
	Resume         []string `json:"resume,omitempty"`
	// ResumeExec is the non-interactive form of Resume, for a script: the
	// next prompt goes after it as one more argument. Empty when the
	// harness has none.
	ResumeExec []string `json:"resume_exec,omitempty"`
	// OldSessions are the harness sessions a rewind leaves behind: the
	// source of the copy, and every session a dropped turn ran in. Each
	// still holds what the agent remembered before the rollback, so each
	// becomes an agent of its own (issue 14 item 7: its turns would
	// otherwise interleave with the copy's), told once, if it is resumed,
	// that the files were rolled back.
	OldSessions []OldSession `json:"old_sessions,omitempty"`
	// NoConversation is true for an agent that has none: no turn of it
	// came from a harness (its checkpoints were taken by hand, from a
	// shell), so nothing rewinds and --restore all restores its files.
	// Absent otherwise.
	NoConversation bool `json:"no_conversation,omitempty"`
}

// OldSession is a harness session a rewind leaves behind (RFC 8's source
// conversation), and the agent its events belong to from the rollback on.
type OldSession struct {
	Harness string `json:"harness"`
	Session string `json:"session"`
	Agent   string `json:"agent"`
}

// oldSessions lists the sessions a rewind of a leaves behind: the binding's
// fork source, then the sessions of the dropped turns, once each, in the
// order their turns ran; each named the agent a.ID + "-old" + n, n the
// smallest number no agent of st has yet. When that id would not be valid
// (a long agent id) the session stays a's (Agent is a.ID): it is still
// told, but its turns go on under a.
func oldSessions(st *journal.State, a *journal.Agent, drops []string, b *journal.AgentBinding) []OldSession {
	dropped := map[string]bool{}
	for _, d := range drops {
		dropped[d] = true
	}
	type hs struct{ harness, session string }
	var order []hs
	seen := map[hs]bool{}
	add := func(h, s string) {
		k := hs{h, s}
		if s == "" || h == "" || seen[k] {
			return
		}
		seen[k] = true
		order = append(order, k)
	}
	add(b.Harness, b.ForkSource)
	for _, tu := range a.Turns {
		if dropped[tu.ID()] {
			add(tu.Harness, tu.HarnessSession)
		}
	}
	var out []OldSession
	n := 1
	for _, k := range order {
		id := ""
		for ; id == ""; n++ {
			c := a.ID + "-old" + strconv.Itoa(n)
			if refs.ValidAgent(c) != nil {
				break
			}
			if st.Agents[c] == nil {
				id = c
			}
		}
		if id == "" {
			id = a.ID
		}
		out = append(out, OldSession{Harness: k.harness, Session: k.session, Agent: id})
	}
	return out
}

// Result is agent.rollback's result (RFC 11.1). Plan and Guarded are for a
// dry run; Safety, After and Exact for a real call. Note is the text the
// agent is told after a files-only rollback (RFC 8).
type Result struct {
	Agent        string       `json:"agent"`
	Checkpoint   string       `json:"checkpoint"`
	DryRun       bool         `json:"dry_run"`
	Plan         string       `json:"plan,omitempty"`
	Restore      string       `json:"restore"`
	Guarded      *bool        `json:"guarded,omitempty"`
	Conversation Conversation `json:"conversation"`
	SharedWith   []string     `json:"shared_with"`
	Children     []string     `json:"children"`
	Repos        []Repo       `json:"repos"`
	Safety       string       `json:"safety,omitempty"`
	After        string       `json:"after,omitempty"`
	Exact        *bool        `json:"exact,omitempty"`
	Note         string       `json:"note,omitempty"`
	// FromDisk is how many objects (blobs, trees) the safety checkpoint
	// was found without before the first write and that were written
	// back from the files that still held them (applier.blobsFromDisk,
	// applier.treesFromDisk); the command says so on stderr. Not in the
	// JSON result. FromDiskPartial: S's objects could not all be listed
	// (a tree of them was missing), so FromDisk counts the trees git
	// named, not what was below them. A mend after a check that named
	// nothing (a git child that failed) is not counted.
	FromDisk        int  `json:"-"`
	FromDiskPartial bool `json:"-"`
	// Pathspec is the plan's pathspec as given, and Prefix the directory
	// (relative to the top, with a trailing "/", or "") it is relative
	// to; both absent when the plan is not narrowed.
	Pathspec []string `json:"pathspec,omitempty"`
	Prefix   string   `json:"prefix,omitempty"`
}

// plan is a computed plan: the result to show and what the real call
// needs to apply it.
type plan struct {
	res    Result
	tree   *checkpoint.Tree
	st     *journal.State
	agent  *journal.Agent
	target *journal.Saved
	snap   *plumbing.Snapshot
	snapAt time.Time // just before S's capture began
	// capture is S in every repository in scope (capture.Top() is snap).
	capture  *checkpoint.Capture
	deletes  []plumbing.TreeChange
	writes   []plumbing.TreeChange
	headMove bool
	headFrom plumbing.OID
	headTo   plumbing.OID
	// indexTree is what the index is set to when HEAD moves, when it is
	// not headTo's tree: in the undo of a rollback that moved HEAD, the
	// index that rollback found (its rollback.started's Index).
	indexTree plumbing.OID
	branch    string
	guarded   bool
	digest    string
	binding   *journal.AgentBinding
	rewind    RewindFunc
	// ignoredAtT are paths kept because T's rules ignore them: once T's
	// .gitignore is back they leave the capture, which is as planned.
	ignoredAtT []string
	note       string
	// looks is each planned path's lstat as the plan's check took it
	// (worktree.looks), for the looks before the first write.
	looks map[string]looked
	// beyond is what of S (its trees and blobs) HEAD does not hold, as
	// the plan's diffs listed it beside them (listed), for the safety
	// checkpoint's checks (applier.safetyWhole).
	beyond []plumbing.OID
	listed bool
	// expect is the tree the verification capture has when the rollback
	// did exactly what it planned, where the plan writes and deletes
	// every path that differs between S and T, unnarrowed: T's tree
	// (exact). "" otherwise.
	expect string
	// refs are the commits of the top repository's refs read under the
	// locks with S's capture, for the safety checkpoint
	// (checkpoint.TakeOptions.Refs).
	refs map[string]plumbing.OID
	// ps is the plan's pathspec as it applies to this repository (empty:
	// not narrowed).
	ps plumbing.RepoPathspec
	// rel is the submodule's path relative to the top, "" for the top's
	// plan; top is the top's plan, for a submodule's; subs are the plans
	// of the submodules in scope that the target names, in repos order
	// (issue 18), on the top's plan only.
	rel  string
	top  *plan
	subs []*plan
}

// Run implements agent.rollback: with o.DryRun the dry run of RFC 7.2 (it
// writes no ref and no log record and returns the plan id), otherwise the
// real call of RFC 7.4, which repeats the preflight and capture, refuses a
// stale plan, and applies it. Errors carry their RFC 11.3 codes.
func Run(ctx context.Context, t *checkpoint.Tree, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := t.CheckPathspec(ctx, o.Pathspec); err != nil {
		return nil, err
	}
	st, err := t.Log.Load()
	if err != nil {
		return nil, checkpoint.LogError(err, "reading the log")
	}
	if _, err := t.CloseInterrupted(ctx, st); err != nil {
		return nil, checkpoint.LogError(err, "closing an interrupted rollback")
	}
	if _, _, err := preflightState(t, st, o); err != nil {
		return nil, err
	}
	// Items 5 and 6: a rollback or a capture of this agent under way.
	rl, err := journal.TryLock(t.Log.LockPath(checkpoint.RollbackLock(t.Path())), true)
	if err != nil {
		return nil, rfcerr.New("conflict.rollback_running", map[string]any{"agent": o.Agent},
			"a rollback of this tree is running").WithHint("wait for it to finish")
	}
	defer rl.Unlock()
	al, err := journal.TryLock(t.Log.LockPath(checkpoint.AgentLock(o.Agent)), true)
	if err != nil {
		return nil, pendingErr(o.Agent)
	}
	defer al.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	tl, err := journal.WaitLock(wctx, t.Log.LockPath(checkpoint.TreeLock(t.Path())), true)
	cancel()
	if err != nil {
		// Any capture in the tree holds it (another agent's, a sharer's
		// hook), not only one of o.Agent's, which its lock above rules out.
		return nil, rfcerr.New("conflict.checkpoint_pending", map[string]any{"agent": o.Agent},
			"a capture is running in this tree (another agent's, or one by hand)").WithHint("retry in a moment")
	}
	defer tl.Unlock()
	// Re-read under the locks: what we checked may have changed.
	if st, err = t.Log.Load(); err != nil {
		return nil, checkpoint.LogError(err, "reading the log")
	}
	p, err := compute(ctx, t, st, o)
	if err != nil {
		return nil, err
	}
	if o.DryRun {
		return &p.res, nil
	}
	if o.Plan != p.digest {
		return nil, staleErr(o, p.digest)
	}
	return p.apply(ctx)
}

// staleErr is RFC 7.2's conflict.rollback_stale for a real call whose plan
// is not the one the tree gives now (current). A plan id of an older
// version (RFC 7.2's p1) is stale too, whatever it digests: it binds
// neither the agent, the target commit nor the decisions the plan showed,
// so no p1 plan can say what the real call would do; the message says so.
func staleErr(o Options, current string) error {
	again := fmt.Sprintf("run `git venom-plan --agent %s %s` again (with the same choices) and read the new plan before you confirm it", o.Agent, o.Checkpoint)
	if v, _, ok := strings.Cut(o.Plan, "-"); ok && v != PlanVersion && len(v) >= 2 && v[0] == 'p' {
		why := fmt.Sprintf("it binds neither the agent, the target commit nor the decisions the plan showed (a %s plan id does)", PlanVersion)
		if v != "p1" {
			// Not RFC 7.2's p1: another version's id (a newer toolkit's, on
			// a shared repository), which this one cannot check.
			why = fmt.Sprintf("this version makes and checks %s plan ids only", PlanVersion)
		}
		return rfcerr.New("conflict.rollback_stale", map[string]any{"checkpoint": o.Checkpoint, "plan_version": v},
			"plan %s is a %s plan id, which this version does not accept: %s", o.Plan, v, why).
			WithHint("%s", again)
	}
	return rfcerr.New("conflict.rollback_stale", map[string]any{"checkpoint": o.Checkpoint},
		"the tree, HEAD, the choices or a decision of the plan changed since plan %s was made (now %s)", o.Plan, current).
		WithHint("%s", again)
}

func pendingErr(agent string) error {
	return rfcerr.New("conflict.checkpoint_pending", map[string]any{"agent": agent},
		"a capture of agent %s is running in this tree", agent).WithHint("retry in a moment")
}

func (o *Options) check() error {
	if o.Restore == "" {
		o.Restore = "all"
	}
	if o.Restore != "all" && o.Restore != "files" {
		return rfcerr.New("invalid_params.restore", map[string]any{"restore": o.Restore}, "--restore must be all or files, not %q", o.Restore)
	}
	switch o.Outside {
	case "", "refuse", "keep", "overwrite":
	default:
		return rfcerr.New("invalid_params.outside", map[string]any{"outside": o.Outside}, "--outside must be refuse, keep or overwrite, not %q", o.Outside)
	}
	if o.DryRun == (o.Plan != "") {
		return rfcerr.New("invalid_params.plan", nil, "give either a dry run or the plan it printed, not both or neither").
			WithHint("run `git venom-plan %s` first, then `git venom-rollback %s --plan <id>`", o.Checkpoint, o.Checkpoint)
	}
	return nil
}

// preflightState runs RFC 7.1's checks that need only the log: items 1 and
// 4 (and 11.4's caller rule, before anything is captured). Item 1's ref
// is not read here: compute reads it with S's capture, under the locks
// (issue 16: each read is a git start).
func preflightState(t *checkpoint.Tree, st *journal.State, o Options) (*journal.Agent, *journal.Saved, error) {
	a := st.Agents[o.Agent]
	if a == nil {
		return nil, nil, rfcerr.New("not_found.agent", map[string]any{"agent": o.Agent}, "no agent %s in this repository's log", o.Agent).
			WithHint("`git venom-checkpoint list --agent <id>`; GIT_VENOM_AGENT sets the default")
	}
	target, err := t.FindLogged(st, o.Agent, o.Checkpoint)
	if err != nil {
		return nil, nil, err
	}
	if a.Archived {
		return nil, nil, rfcerr.New("conflict.invalid_transition", map[string]any{"agent": o.Agent},
			"agent %s is archived; its checkpoints are still git commits", o.Agent).
			WithHint("its checkpoints, which git can read: git venom-checkpoint list --agent %s", o.Agent)
	}
	if open := a.OpenTurn(); open != nil {
		since := ""
		for _, c := range a.Captures {
			if c.Turn == open.ID() && c.Reason == checkpoint.ReasonTurnStart {
				if s := a.Checkpoint(c.Checkpoint); s != nil {
					since = " since " + s.Rec.At
				}
			}
		}
		return nil, nil, rfcerr.New("conflict.turn_running", map[string]any{"agent": o.Agent, "turn": open.ID()},
			"turn %s of %s is still open%s", open.ID(), o.Agent, since).
			WithHint("stop the agent first; if it was interrupted, end the turn with `git venom-checkpoint --agent %s --reason turn_end`", o.Agent)
	}
	if !o.DryRun && o.Caller == "agent" && Guarded(t, st, a) {
		return nil, nil, rfcerr.New("denied.agent_caller", map[string]any{"agent": o.Agent},
			"an agent may not roll back a guarded tree: a person's work can only be overwritten by a person").
			WithHint("ask the person to run `git venom-rollback` themselves; a dry run (`git venom-plan`) is allowed")
	}
	return a, target, nil
}

// sharers lists the other non-archived agents registered in the tree.
func sharers(t *checkpoint.Tree, st *journal.State, a *journal.Agent) []string {
	var out []string
	for id, o := range st.Agents {
		if id == a.ID {
			continue
		}
		if _, ok := o.Trees[t.Path()]; ok && !o.Archived {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Guarded implements RFC 6: whether a's tree t is guarded, that is, an
// in_place tree (the main worktree, unless a registered another
// isolation) or any tree another non-archived agent also uses. In a
// guarded tree HEAD and the index stay, outside paths refuse by default,
// and an agent caller may not roll back (RFC 11.4). The TUI shows it.
func Guarded(t *checkpoint.Tree, st *journal.State, a *journal.Agent) bool {
	iso, ok := a.Trees[t.Path()]
	if !ok {
		iso = checkpoint.IsolationWorktree
		if t.Main() {
			iso = checkpoint.IsolationInPlace
		}
	}
	return iso == checkpoint.IsolationInPlace || len(sharers(t, st, a)) > 0
}

// compute runs the rest of the preflight (RFC 7.1 items 9 to 13), captures
// S and builds the plan and its digest (RFC 7.2). Where git cannot
// compare S with the target, S is captured once more without what the
// last capture kept (plumbing.Repo.ForgetKeptStage), and the plan made
// from that: a tree that capture memoized may have lost a subtree to a
// `git gc --prune=now` beside it, and reusing it failed every plan after
// (issue 16). A failure of that second try is the plan's error
// (failed.checkpoint_git), nothing written.
func compute(ctx context.Context, t *checkpoint.Tree, st *journal.State, o Options) (*plan, error) {
	p, err := computeOnce(ctx, t, st, o)
	var u *unreadableS
	if errors.As(err, &u) && ctx.Err() == nil {
		for _, c := range u.capture.Repos {
			c.Git.ForgetKeptStage("git could not compare S with the target: " + u.err.Error())
		}
		p, err = computeOnce(ctx, t, st, o)
	}
	if errors.As(err, &u) {
		err = u.err
	}
	return p, err
}

// unreadableS is computeRepo's error when git could not compare S with
// the target (err, failed.checkpoint_git): compute then tries once more
// without the kept stages of the repositories capture captured.
type unreadableS struct {
	err     error
	capture *checkpoint.Capture
}

func (e *unreadableS) Error() string { return e.err.Error() }
func (e *unreadableS) Unwrap() error { return e.err }

// computeOnce is compute, from one capture of S.
func computeOnce(ctx context.Context, t *checkpoint.Tree, st *journal.State, o Options) (_ *plan, err error) {
	a, target, err := preflightState(t, st, o)
	if err != nil {
		return nil, err
	}
	p := &plan{tree: t, st: st, agent: a, target: target, guarded: Guarded(t, st, a)}
	shared := sharers(t, st, a)
	var live []string
	for _, id := range shared {
		if st.Agents[id].OpenTurn() != nil {
			live = append(live, id)
		}
	}
	if len(live) > 0 {
		return nil, rfcerr.New("conflict.tree_shared", map[string]any{"agents": live},
			"agent(s) %s share this tree and have a turn running", strings.Join(live, ", ")).
			WithHint("wait until their turns end")
	}
	if op := t.Repo.Operation(); op != "" {
		return nil, rfcerr.New("conflict.git_operation", map[string]any{"repo": ".", "operation": op},
			"a %s is in progress in %s", op, t.Path()).
			WithHint("finish or abort the %s first; venom never aborts it for you", op)
	}
	conv, binding, err := conversation(t, a, target, o)
	if err != nil {
		return nil, err
	}
	p.binding, p.rewind = binding, o.Rewind
	if binding != nil {
		conv.Harness, conv.ForkSource, conv.ForkAt = binding.Harness, binding.ForkSource, binding.ForkAt
	}
	if conv.Rewinds && binding != nil {
		conv.OldSessions = oldSessions(st, a, conv.Drops, binding)
	}
	if o.Restore == "files" && hasConversation(a) {
		// An agent with no conversation has no next prompt to tell.
		p.note = Note(t.Config.RollbackNote, target.Rec.ThroughTurn)
	}
	// RFC 7.1 item 1's ref, and the latest checkpoint's, which the
	// safety checkpoint may reuse (RFC 5.1), read with S's HEAD.
	read := []string{refs.Checkpoint(o.Agent, target.N)}
	if l := a.Latest(); l != nil && l.N != target.N {
		read = append(read, refs.Checkpoint(o.Agent, l.N))
	}
	p.snapAt = time.Now()
	// Each submodule's own ref of the target is read with its HEAD too:
	// it is what keeps that side of T from the submodule's gc.
	if p.capture, err = t.CurrentAllReadingIn(ctx, read, read[:1]); err != nil {
		return nil, err
	}
	p.snap = p.capture.Top()
	if err := t.RefHolds(ctx, o.Agent, target, p.snap.Refs[0]); err != nil {
		return nil, err
	}
	p.refs = map[string]plumbing.OID{}
	for i, ref := range read {
		p.refs[ref] = p.snap.Refs[i]
	}
	// Every repository in scope, in repos order (RFC 7.4): the top, then
	// each submodule in S that the target names too, each with its own
	// S, files, left and head (issue 18). A submodule added since the
	// target, or gone since, has no plan of its own: its parent leaves
	// its gitlink (RFC 7.4 reason gitlink, T's commit in detail), and
	// nothing of its work tree or git dir is touched.
	// The pathspec, split over the repositories in scope (issue 18): a
	// submodule's paths are matched by their whole path from the top, as
	// git's --recurse-submodules commands match them.
	rels := []string{checkpoint.TopRepo}
	for _, c := range p.capture.Repos[1:] {
		if target.Rec.RepoEntry(c.Repo) != nil {
			rels = append(rels, c.Repo)
		}
	}
	split, err := t.SplitPathspec(o.Pathspec, rels)
	if err != nil {
		return nil, err
	}
	p.ps = split[0]
	outsideBy := map[string][]File{}
	repo, out, err := p.computeRepo(ctx, o)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		outsideBy[checkpoint.TopRepo] = out
	}
	repos := []Repo{repo}
	for i, rel := range rels[1:] {
		c := p.capture.Find(rel)
		if err := p.subRefHolds(ctx, c, read[0]); err != nil {
			return nil, err
		}
		sp := &plan{tree: &checkpoint.Tree{Repo: c.Git, Log: t.Log, Config: t.Config}, st: st, agent: a, target: target,
			snap: c.Snap, snapAt: p.snapAt, guarded: p.guarded, rel: c.Repo, top: p, ps: split[i+1]}
		if op := c.Git.Operation(); op != "" {
			return nil, rfcerr.New("conflict.git_operation", map[string]any{"repo": c.Repo, "operation": op},
				"a %s is in progress in submodule %s", op, c.Repo).
				WithHint("finish or abort the %s first; venom never aborts it for you", op)
		}
		r, out, err := sp.computeRepo(ctx, o)
		if err != nil {
			return nil, err
		}
		if !sp.ps.Empty() && len(out) == 0 && len(r.Files) == 0 && len(r.Left) == 0 && len(r.IgnoredEdits) == 0 {
			// A narrowed plan has a section for a submodule the
			// pathspec reaches: one it names (its gitlink: the whole
			// submodule, as far as its paths match too), or one with a
			// path it matches. Any other is left as it is, HEAD and all.
			named, err := sp.ps.Names(ctx)
			if err != nil {
				return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "ls-files"}, "matching the pathspec")
			}
			if !named {
				continue
			}
		}
		if len(out) > 0 {
			outsideBy[c.Repo] = out
		}
		sp.res = Result{Agent: o.Agent, Checkpoint: target.ID(), Restore: o.Restore, Repos: []Repo{r}}
		p.subs = append(p.subs, sp)
		repos = append(repos, r)
	}
	if len(outsideBy) > 0 {
		return nil, outsideErr(repos, outsideBy)
	}
	// A submodule whose HEAD goes back to the target's gitlink is not
	// left by its parent: its own plan moves it.
	for _, sp := range p.subs {
		h := sp.res.Repos[0].Head
		if !h.Moves {
			continue
		}
		parent, rel := p.parentOf(sp.rel)
		pr := &repos[parent]
		kept := pr.Left[:0]
		for _, l := range pr.Left {
			if !(l.Path == rel && l.Reason == "gitlink" && h.To != nil && l.Detail == *h.To) {
				kept = append(kept, l)
			}
		}
		pr.Left = kept
	}
	for i := range p.subs {
		p.subs[i].res.Repos[0] = repos[i+1]
	}
	p.res = Result{Agent: o.Agent, Checkpoint: target.ID(), DryRun: o.DryRun, Restore: o.Restore,
		Conversation: conv, SharedWith: nonNil(shared), Children: []string{}, Repos: repos, Note: p.note}
	if o.DryRun {
		g := p.guarded
		p.res.Guarded = &g
	}
	if !o.Pathspec.Empty() {
		p.res.Pathspec = o.Pathspec.Args
		if p.res.Prefix, err = prefixOf(ctx, t, o.Pathspec.Dir); err != nil {
			return nil, err
		}
	}
	// The id binds what the plan shows, so it is made from the result
	// itself (RFC 7.2, version p2).
	p.digest = PlanID(PlanDocument(&p.res, p.guarded, o))
	if o.DryRun {
		p.res.Plan = p.digest
	}
	if b := p.binding; b != nil && b.ForkSource != "" && ChoosesSession(b.Harness) {
		// Derived from the plan and the agent's rollbacks so far: the
		// plan and its real call name the same new session, and a later
		// rollback never names one already used.
		b.HarnessSession = sessionID(p.digest, a.ID, len(a.Rollbacks))
		p.res.Conversation.HarnessSession = b.HarnessSession
		p.res.Conversation.Resume = ResumeArgv(b.Harness, b.ForkSource, b.ForkAt, b.HarnessSession)
		p.res.Conversation.ResumeExec = ResumeExecArgv(b.Harness, b.HarnessSession)
	}
	return p, nil
}

// subRefHolds checks the submodule c's own ref of the target, ref, read
// with its HEAD by the capture (or on its own when the capture could not
// read it): not the commit the target's record gives that submodule is
// not_found.checkpoint naming it (checkpoint.RefHoldsIn), before any of
// its plan is computed from objects its gc may have removed.
func (p *plan) subRefHolds(ctx context.Context, c *checkpoint.Captured, ref string) error {
	var v plumbing.OID
	if len(c.Snap.Refs) > 0 {
		v = c.Snap.Refs[0]
	} else {
		vals, err := c.Git.RefValues(ctx, ref)
		if err != nil {
			return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": c.Repo, "reason": "rev-parse"}, "reading %s in submodule %s", ref, c.Repo)
		}
		v = vals[0]
	}
	return p.tree.RefHoldsIn(ctx, p.agent.ID, p.target, c.Repo, c.Git, v)
}

// computeRepo builds the plan of one repository (RFC 7.3, 7.4, 7.5):
// what differs between its S (p.snap) and its entry in the target, each
// path's class from the windows of its own commits, what is left and why,
// HEAD's move, the deletions and writes. refused lists the outside paths
// when --outside (as given, or by default in a guarded tree) refuses
// them; the caller gathers them from every repository.
func (p *plan) computeRepo(ctx context.Context, o Options) (repo Repo, refused []File, err error) {
	t, a, st, target := p.tree, p.agent, p.st, p.target
	tr := *target.Rec.RepoEntry(p.repoName())
	repo = Repo{Repo: p.repoName(), Path: t.Path(), Commit: tr.Commit, Tree: string(p.snap.Tree), Files: []File{}, Left: []Left{}, IgnoredEdits: []string{}}
	cur := optOID(p.snap.Head)
	repo.Head = Head{From: cur, To: cur}
	if !p.guarded && !o.KeepHead {
		if err := p.checkHead(ctx, tr, &repo.Head); err != nil {
			return Repo{}, nil, err
		}
	}
	// The undo of a rollback that moved HEAD moves it back, and the index
	// becomes what that rollback found, staged versions included, instead
	// of HEAD's tree. Only then: in a guarded tree, or with --keep-head,
	// HEAD stays and the index is never written (invariant 4).
	if rs := p.undone(); p.headMove && rs != nil {
		idx := rs.Index
		if p.rel != "" {
			idx = rs.Indexes[p.rel]
		}
		if idx != "" && t.Repo.TreeExists(ctx, plumbing.OID(idx)) {
			p.indexTree = plumbing.OID(idx)
			repo.Index = idx
		}
	}
	if !repo.Head.Moves && cur != nil && tr.Head != nil && *tr.Head != *cur {
		// HEAD stays where commits were made since the checkpoint (a
		// guarded tree, --keep-head): they stay, and the files going back
		// show their changes as uncommitted reversals.
		_, since, err := t.Repo.RevListParents(ctx, p.snap.Head, plumbing.OID(*tr.Head))
		if err != nil {
			return Repo{}, nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "rev-list"}, "counting the commits since the checkpoint")
		}
		repo.Head.Since = len(since)
	}

	// What differs between S and T, and what changed in each window
	// between them (RFC 7.3), asked of git at once: of their trees, as
	// the log records them with each commit, which one diff-tree
	// --stdin takes (DiffTreePairs); a commit where none is recorded.
	ws := diffWindows(st, a, p.root().tree.Path(), p.repoName(), target, string(p.snap.Tree))
	pairs := [][2]string{{string(p.snap.Tree), treeOf(point{commit: tr.Commit, tree: tr.Tree})}}
	for _, w := range ws {
		pairs = append(pairs, [2]string{treeOf(w.from), treeOf(w.to)})
	}
	// A submodule's git cannot take the top's pathspec: its diffs are
	// whole, and S's changes are narrowed by their paths from the top.
	var direct *plumbing.Pathspec
	if p.rel == "" {
		direct = o.Pathspec
	}
	// And, where the diffs are whole, what of S HEAD does not hold, trees
	// too: the safety checkpoint's listing (SafetyWhole), from the same
	// child. A listing that fails is made again after the safety
	// checkpoint, as without this.
	listing := direct.Empty() && (p.snap.Head == "" || p.snap.HeadTree != "")
	if listing {
		base := p.snap.HeadTree
		if p.snap.Head == "" {
			base = plumbing.EmptyTreeOf(p.snap.Tree)
		}
		pairs = append(pairs, [2]string{string(base), string(p.snap.Tree)})
	}
	diffs, bad, err := t.Repo.DiffTreePairs(ctx, pairs, direct, listing)
	if err != nil && listing && bad == len(pairs)-1 {
		listing, pairs = false, pairs[:len(pairs)-1]
		diffs, bad, err = t.Repo.DiffTreePairs(ctx, pairs, direct, false)
	}
	if err == nil && listing {
		p.beyond, p.listed = plumbing.ObjectsBeyond(diffs[len(diffs)-1]), true
		diffs = diffs[:len(diffs)-1]
		for i := range diffs {
			diffs[i] = plumbing.FilesOnly(diffs[i])
		}
	}
	if err != nil {
		what := "finding who changed what"
		if bad == 0 {
			what = "comparing S with " + target.ID()
		}
		e := rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "diff-tree"}, "%s", what)
		if lost := plumbing.UnreadTree(err); lost != nil {
			// A checkpoint from k to now lacks a tree that no capture of
			// the files as they are makes again.
			e = e.WithHint("a checkpoint lacks the tree %s, and the files as they are no longer make it (a `git gc --prune=now` beside its capture deletes what the capture has just written); `git venom-doctor` names what is missing (checkpoints.size)", lost[0])
		}
		if bad == 0 {
			return Repo{}, nil, &unreadableS{capture: p.root().capture, err: e}
		}
		return Repo{}, nil, e
	}
	changes := diffs[0]
	if p.rel != "" && !p.ps.Empty() {
		if changes, err = p.narrowChanges(ctx, changes); err != nil {
			return Repo{}, nil, err
		}
	}
	paths := make(map[string]bool, len(changes))
	for _, c := range changes {
		paths[c.Path] = true
	}
	class, fresh := classify(a, p.root().tree.Path(), p.prefix(), ws, diffs[1:], paths)
	outside := o.Outside
	if outside == "" {
		outside = "overwrite"
		if p.guarded {
			outside = "refuse"
		}
	}
	if outside == "refuse" {
		for _, c := range changes {
			if class[c.Path] == ClassOutside && !isGitlink(c) {
				refused = append(refused, File{Path: c.Path, Change: changeOf(c), Class: ClassOutside})
			}
		}
		if len(refused) > 0 {
			return Repo{Repo: p.repoName()}, refused, nil
		}
	}

	skipped := map[string]string{}
	for _, s := range tr.Skipped {
		skipped[s.Path] = s.Reason
	}
	for _, s := range p.snap.Skipped {
		skipped[s.Path] = s.Reason
	}
	left := map[string]bool{}
	addLeft := func(l Left) {
		if !left[l.Path] {
			left[l.Path] = true
			repo.Left = append(repo.Left, l)
		}
	}
	// The target's nested repositories and gitlinks: what was below them
	// then was the nested repository's, which T never recorded, so a path
	// there is never deleted or written for T's sake (as for a file T's
	// ignore rules ignore).
	nestedT := map[string]string{}
	for _, sm := range tr.Submodules {
		nestedT[sm.Path] = deref(sm.Commit)
	}
	for _, c := range changes {
		if c.DstMode == "160000" {
			nestedT[c.Path] = string(c.Dst)
		}
	}
	var cands []plumbing.TreeChange
	for _, c := range changes {
		root, inNestedT := nestedRoot(c.Path, nestedT)
		switch {
		case inNestedT:
			addLeft(Left{Path: c.Path, Reason: "gitlink", Detail: nestedT[root]})
		case isGitlink(c):
			d := ""
			if c.DstMode == "160000" {
				d = string(c.Dst)
			}
			addLeft(Left{Path: c.Path, Reason: "gitlink", Detail: d})
		case skipped[c.Path] != "":
			addLeft(Left{Path: c.Path, Reason: skipped[c.Path]})
		case class[c.Path] == ClassOutside && outside == "keep":
			addLeft(Left{Path: c.Path, Reason: "outside"})
		case fresh[c.Path] && c.DstMode == "000000" && o.Outside == "":
			// Created after the last checkpoint: no checkpoint but S ever
			// held it. Without an explicit --outside overwrite it is kept,
			// so a rollback never deletes a file venom first saw in the
			// rollback itself (CASES BR-01: outputs a script just wrote).
			addLeft(Left{Path: c.Path, Reason: "outside", Detail: "created after the last checkpoint"})
		default:
			cands = append(cands, c)
		}
	}
	// A file T's own ignore rules ignore was never T's to record: its
	// absence from T says nothing, so it is never deleted (CASES BR-05 B).
	// Unless T holds a file, symlink or gitlink at a directory above it:
	// then nothing could be there in T, ignored or not, and T's entry
	// cannot be written while it stays (the undo of a rollback that made
	// a directory where a file was would otherwise keep the directory).
	entriesT := map[string]string{}
	for _, c := range changes {
		if c.DstMode != "000000" {
			entriesT[c.Path] = c.DstMode
		}
	}
	var dels []string
	for _, c := range cands {
		if c.DstMode != "000000" {
			continue
		}
		if i := strings.LastIndexByte(c.Path, '/'); i > 0 {
			if _, above := nestedRoot(c.Path[:i], entriesT); above {
				continue
			}
		}
		dels = append(dels, c.Path)
	}
	ignoredAtT, err := t.Repo.IgnoredAt(ctx, plumbing.OID(tr.Commit), dels)
	if err != nil {
		return Repo{}, nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "check-ignore"}, "reading the target's ignore rules")
	}
	// Unless T is the safety checkpoint of a rollback that created the
	// file (rollback.started's created) and it is still as that rollback
	// wrote it: nothing was there when T was taken, so the undo deletes
	// it as any other file its rollback wrote.
	created, err := p.createdAsWritten(ctx, cands, ignoredAtT)
	if err != nil {
		return Repo{}, nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "diff-tree"}, "comparing the files a rollback created with what it wrote")
	}
	kept := cands[:0]
	for _, c := range cands {
		if ignoredAtT[c.Path] && !created[c.Path] {
			addLeft(Left{Path: c.Path, Reason: "ignored_at_target"})
			p.ignoredAtT = append(p.ignoredAtT, c.Path)
			continue
		}
		kept = append(kept, c)
	}
	cands = kept
	// A file the target holds over maxFileBytes (its capture took it from
	// the index, where a commit had put it) does not replace the file or
	// the directory of files at its path: no capture after could record
	// what it wrote, so the undo could not put back what was there (RFC
	// 7.4's too_big, on T's side). Where nothing is, it is written: a big file deleted in a turn comes
	// back (D12). The undo of a rollback (its target a safety checkpoint)
	// writes them all: putting back the state before the rollback comes
	// first, and a big file the rollback replaced is in that checkpoint.
	if target.Rec.Reason != checkpoint.ReasonPreRollback {
		if cands, err = leaveTooBig(ctx, t, cands, addLeft); err != nil {
			return Repo{}, nil, err
		}
	}
	w := newWorktree(t.Path(), cands, p.snap)
	w.looks = map[string]looked{}
	p.looks = w.looks
	for _, l := range w.blocked() {
		addLeft(l)
	}
	for _, c := range cands {
		if left[c.Path] {
			continue
		}
		if c.Dst.Zero() && c.DstMode == "000000" {
			p.deletes = append(p.deletes, c)
		} else {
			p.writes = append(p.writes, c)
		}
		repo.Files = append(repo.Files, File{Path: c.Path, Change: changeOf(c), Class: class[c.Path]})
	}
	if o.Pathspec.Empty() && p.ps.Empty() && len(p.deletes)+len(p.writes) == len(changes) {
		// Every path S and T differ in is planned, with T's entry
		// (deletes and writes are the changes themselves, each once).
		p.expect = tr.Tree
	}
	// Nested repositories are in neither tree (a capture records their
	// commit beside it): one that differs is reported, never touched (RFC 4).
	subS := map[string]*string{}
	for _, sm := range p.snap.Submodules {
		subS[sm.Path] = sm.Commit
	}
	subT := map[string]*string{}
	for _, sm := range tr.Submodules {
		subT[sm.Path] = sm.Commit
	}
	var nestedDiff []string
	for path, tc := range subT {
		if sc, ok := subS[path]; !ok || deref(sc) != deref(tc) {
			nestedDiff = append(nestedDiff, path)
		}
	}
	for path := range subS {
		if _, ok := subT[path]; !ok {
			nestedDiff = append(nestedDiff, path)
		}
	}
	// A submodule T captured dirty that is no longer checked out (git
	// submodule deinit, or its git dir gone) has the same gitlink on both
	// sides, but what T holds inside it is not restored: it is left too,
	// so that the plan does not say the tree matches T.
	for _, sm := range tr.Submodules {
		rel := p.prefix() + sm.Path
		if sm.Dirty && p.target.Rec.RepoEntry(rel) != nil && p.root().capture.Find(rel) == nil && !slices.Contains(nestedDiff, sm.Path) {
			nestedDiff = append(nestedDiff, sm.Path)
		}
	}
	sort.Strings(nestedDiff)
	if nestedDiff, err = p.narrowNested(ctx, nestedDiff); err != nil {
		return Repo{}, nil, err
	}
	for _, path := range nestedDiff {
		addLeft(Left{Path: path, Reason: "gitlink", Detail: deref(subT[path])})
	}
	// Too-big files are listed even when they are in neither tree: the
	// rollback cannot say anything about them (CASES BR-01, BR-24). So is
	// a skip-worktree path that only one of S and T skipped: S holds the
	// index's entry for it, which may equal T's while the file differs
	// from both; one both skipped is the sparse checkout's, and is not
	// listed (it would list every path outside the cone).
	skippedT, skippedS := map[string]bool{}, map[string]bool{}
	for _, s := range tr.Skipped {
		skippedT[s.Path] = s.Reason == "skip_worktree"
	}
	for _, s := range p.snap.Skipped {
		skippedS[s.Path] = s.Reason == "skip_worktree"
	}
	var big []Left
	for pth, why := range skipped {
		switch {
		case left[pth]:
		case why == "too_big":
			big = append(big, Left{Path: pth, Reason: "too_big"})
		case why == "skip_worktree" && skippedS[pth] != skippedT[pth]:
			big = append(big, Left{Path: pth, Reason: "skip_worktree"})
		}
	}
	sort.Slice(big, func(i, j int) bool { return big[i].Path < big[j].Path })
	bigPaths := make([]string, len(big))
	for i, l := range big {
		bigPaths[i] = l.Path
	}
	inSpec, err := p.narrow(ctx, bigPaths)
	if err != nil {
		return Repo{}, nil, err
	}
	for i, l := range big {
		if len(inSpec) > 0 && inSpec[0] == bigPaths[i] {
			inSpec = inSpec[1:]
			addLeft(l)
		}
	}
	if repo.IgnoredEdits, err = ignoredEdits(ctx, t, a, target, p.root().tree.Path(), p.prefix()); err != nil {
		return Repo{}, nil, err
	}
	if repo.IgnoredEdits, err = p.narrow(ctx, repo.IgnoredEdits); err != nil {
		return Repo{}, nil, err
	}
	return repo, nil, nil
}

// outsideErr is RFC 7.3's conflict.outside_edits for the outside paths of
// every repository (data.repos: [{repo, paths}], in repos order). A
// submodule's paths are named relative to the top in the message.
func outsideErr(repos []Repo, by map[string][]File) error {
	var data []map[string]any
	var all []string
	for _, r := range repos {
		fs := by[r.Repo]
		if len(fs) == 0 {
			continue
		}
		ps, chg := make([]string, len(fs)), make([]string, len(fs))
		for i, f := range fs {
			ps[i], chg[i] = f.Path, f.Change
		}
		data = append(data, map[string]any{"repo": r.Repo, "paths": ps, "changes": chg})
		for _, q := range ps {
			if r.Repo != checkpoint.TopRepo {
				q = r.Repo + "/" + q
			}
			all = append(all, q)
		}
	}
	// A few paths in the hint, never thousands: the CLI shows them folded
	// (data has every one).
	first, more := all, ""
	if len(all) > 3 {
		first, more = all[:3], fmt.Sprintf(" and %d more", len(all)-3)
	}
	return rfcerr.New("conflict.outside_edits", map[string]any{"repos": data},
		"%d path(s) changed outside the agent's turns; choose --outside=keep or --outside=overwrite", len(all)).
		WithHint("outside: %s%s", strings.Join(first, ", "), more).
		WithHint("keep leaves them as they are; overwrite restores them too (their content stays in the safety checkpoint)")
}

// root is the plan of the top repository: p itself, or the plan p is a
// submodule's part of.
func (p *plan) root() *plan {
	if p.top != nil {
		return p.top
	}
	return p
}

// repoName is p's repo member: "." for the top, else the submodule's
// path relative to the top.
func (p *plan) repoName() string {
	if p.rel == "" {
		return checkpoint.TopRepo
	}
	return p.rel
}

// what names p's repository in a message: "submodule <rel>", or "the
// top repository".
func (p *plan) what() string {
	if p.rel == "" {
		return "the top repository"
	}
	return "submodule " + p.rel
}

// prefix is what a path relative to the top starts with when it is in
// p's repository: "" for the top, "<rel>/" for a submodule.
func (p *plan) prefix() string {
	if p.rel == "" || p.rel == checkpoint.TopRepo {
		return ""
	}
	return p.rel + "/"
}

// parentOf is the index in repos order (0 the top, i+1 subs[i]) of the
// repository holding submodule rel (the deepest whose path is a prefix of
// rel), and rel's path within it.
func (p *plan) parentOf(rel string) (int, string) {
	best, within := 0, rel
	for i, sp := range p.subs {
		if strings.HasPrefix(rel, sp.rel+"/") && (best == 0 || len(sp.rel) > len(p.subs[best-1].rel)) {
			best, within = i+1, strings.TrimPrefix(rel, sp.rel+"/")
		}
	}
	return best, within
}

// childPaths are the paths, within p's repository, of the submodules in
// it that have plans of their own.
func (p *plan) childPaths() []string {
	root := p.root()
	var out []string
	for _, sp := range root.subs {
		parent, within := root.parentOf(sp.rel)
		if (parent == 0 && p == root) || (parent > 0 && root.subs[parent-1] == p) {
			out = append(out, within)
		}
	}
	return out
}

// undone is the rollback whose safety checkpoint is the target, when the
// plan is its undo (a rollback to that checkpoint in the same tree); nil
// otherwise. The newest, should a safety checkpoint be named twice.
func (p *plan) undone() *journal.RollbackStarted {
	if p.target.Rec.Reason != checkpoint.ReasonPreRollback {
		return nil
	}
	rs := p.agent.Rollbacks
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Safety == p.target.ID() && rs[i].Path == p.root().tree.Path() {
			return &rs[i]
		}
	}
	return nil
}

// createdAsWritten is, of the candidates ignoredAtT names, those (paths
// relative to p's repository) the rollback this plan undoes created
// (rollback.started's created) and that S holds as it wrote them: the
// entry of its target, asked of git in one diff-tree of the two trees
// at those paths. Only in the first rollback to that rollback's safety
// checkpoint: a later one (after its undo, and turns since) may find a
// file a person made there since, which it never deletes. None when
// this is no such undo, the record lists none, or its target is gone.
func (p *plan) createdAsWritten(ctx context.Context, cands []plumbing.TreeChange, ignoredAtT map[string]bool) (map[string]bool, error) {
	rs := p.undone()
	if rs == nil || len(ignoredAtT) == 0 {
		return nil, nil
	}
	for _, later := range p.agent.Rollbacks {
		if later.Checkpoint == p.target.ID() && later.Path == rs.Path {
			return nil, nil // undone already
		}
	}
	paths, ok, err := rs.CreatedList()
	if !ok || err != nil {
		return nil, nil
	}
	listed := make(map[string]bool, len(paths))
	for _, path := range paths {
		listed[path] = true
	}
	out := map[string]bool{}
	var args []string
	for _, c := range cands {
		if ignoredAtT[c.Path] && listed[p.prefix()+c.Path] {
			out[c.Path] = true
			args = append(args, ":(literal)"+c.Path)
		}
	}
	wrote := p.agent.Checkpoint(rs.Checkpoint)
	if len(out) == 0 || wrote == nil || wrote.Pruned {
		return nil, nil
	}
	re := wrote.Rec.RepoEntry(p.repoName())
	if re == nil {
		return nil, nil
	}
	differ, err := p.tree.Repo.DiffTreesIn(ctx, treeOf(point{commit: re.Commit, tree: re.Tree}), string(p.snap.Tree), &plumbing.Pathspec{Args: args})
	if err != nil {
		return nil, err
	}
	for _, c := range differ {
		delete(out, c.Path)
	}
	return out, nil
}

// narrow returns the members of paths (relative to p's repository, in
// their order) that p's pathspec matches, asked of git
// (plumbing.RepoPathspec.Match); all of them when it is empty.
func (p *plan) narrow(ctx context.Context, paths []string) ([]string, error) {
	if p.ps.Empty() || len(paths) == 0 {
		return paths, nil
	}
	in, err := p.ps.Match(ctx, paths)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "ls-files"}, "matching the pathspec")
	}
	out := []string{}
	for _, p := range paths {
		if in[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// narrowNested narrows nested, the paths of p's repository where a
// nested repository differs between S and T and has no plan of its own
// (added or gone since the target, or no submodule), to those the
// pathspec names (narrow) or reaches into: it matches a path of the
// submodule there as S holds it, "lib/l" of a submodule lib added since
// (issue 18). Each is then left as a gitlink (RFC 7.4), so that a plan of
// "-- lib/l" says lib is left rather than that the tree matches the
// target. A nested repository S did not capture (no submodule) is not
// looked into, nor one gone since (S holds none).
func (p *plan) narrowNested(ctx context.Context, nested []string) ([]string, error) {
	named, err := p.narrow(ctx, nested)
	if err != nil || p.ps.Empty() {
		return named, err
	}
	keep := make(map[string]bool, len(named))
	for _, n := range named {
		keep[n] = true
	}
	for _, n := range nested {
		c := p.root().capture.Find(p.prefix() + n)
		if keep[n] || c == nil || c.Snap == nil || c.Snap.Tree == "" {
			continue
		}
		paths, err := c.Git.TreePaths(ctx, c.Snap.Tree)
		if err != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": c.Repo, "reason": "ls-tree"}, "listing submodule %s", c.Repo)
		}
		in, err := plumbing.RepoPathspec{Spec: p.ps.Spec, Top: p.ps.Top, Prefix: c.Repo + "/"}.Match(ctx, paths)
		if err != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "ls-files"}, "matching the pathspec")
		}
		keep[n] = len(in) > 0
	}
	out := nested[:0:0]
	for _, n := range nested {
		if keep[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// narrowChanges returns the members of changes (in their order) whose
// paths p's pathspec matches (narrow).
func (p *plan) narrowChanges(ctx context.Context, changes []plumbing.TreeChange) ([]plumbing.TreeChange, error) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	in, err := p.narrow(ctx, paths)
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(in))
	for _, q := range in {
		keep[q] = true
	}
	var out []plumbing.TreeChange
	for _, c := range changes {
		if keep[c.Path] {
			out = append(out, c)
		}
	}
	return out, nil
}

// prefixOf is dir relative to the top of t, with a trailing "/" ("" at
// the top): where a pathspec typed in dir is relative to, as git's
// `rev-parse --show-prefix` says it.
func prefixOf(ctx context.Context, t *checkpoint.Tree, dir string) (string, error) {
	out, err := t.Repo.Line(ctx, plumbing.Options{Dir: dir}, "rev-parse", "--show-prefix")
	if err != nil {
		return "", rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "rev-parse"}, "finding the pathspec's directory")
	}
	return out, nil
}

func isGitlink(c plumbing.TreeChange) bool { return c.SrcMode == "160000" || c.DstMode == "160000" }

// leaveTooBig returns cands without the writes of regular files whose
// blob is over the tree's maxFileBytes over something of S: a file at the
// path, or a directory of S's files there (the changes deleting them are
// in cands), each given to addLeft as too_big. One `git cat-file
// --batch-check` reads the sizes.
func leaveTooBig(ctx context.Context, t *checkpoint.Tree, cands []plumbing.TreeChange, addLeft func(Left)) ([]plumbing.TreeChange, error) {
	max := t.Config.MaxFileBytes
	// The directories S has a path below that changes: a big file
	// written there would take the place of S's directory, and the undo
	// could not put it back with the big file, in no capture, in its way.
	sDirs := map[string]bool{}
	for _, c := range cands {
		if c.SrcMode == "000000" {
			continue
		}
		for d := c.Path; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			if sDirs[d] {
				break
			}
			sDirs[d] = true
		}
	}
	regular := func(c plumbing.TreeChange) bool {
		return (c.DstMode == "100644" || c.DstMode == "100755") && (c.SrcMode != "000000" || sDirs[c.Path])
	}
	var blobs []plumbing.OID
	for _, c := range cands {
		if regular(c) {
			blobs = append(blobs, c.Dst)
		}
	}
	if max <= 0 || len(blobs) == 0 {
		return cands, nil
	}
	sizes, err := t.Repo.BlobSizes(ctx, blobs)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "cat-file"}, "reading the sizes of the target's files")
	}
	kept := cands[:0]
	for _, c := range cands {
		if regular(c) && sizes[c.Dst] > max {
			addLeft(Left{Path: c.Path, Reason: "too_big"})
			continue
		}
		kept = append(kept, c)
	}
	return kept, nil
}

// nestedRoot returns the member of nested that path is or is below.
func nestedRoot(path string, nested map[string]string) (string, bool) {
	for p := path; ; {
		if _, ok := nested[p]; ok {
			return p, true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return "", false
		}
		p = p[:i]
	}
}

func changeOf(c plumbing.TreeChange) string {
	switch {
	case c.SrcMode == "000000":
		return "create"
	case c.DstMode == "000000":
		return "delete"
	}
	return "modify"
}

func optOID(o plumbing.OID) *string {
	if o == "" {
		return nil
	}
	s := string(o)
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkHead implements RFC 7.5's checks for an unguarded tree: HEAD goes
// back to the checkpoint's head when that is an ancestor on the same branch
// and none of the commits it drops is on a remote-tracking ref.
func (p *plan) checkHead(ctx context.Context, tr journal.RepoState, h *Head) error {
	cur := p.snap.Head
	if tr.Head != nil && plumbing.OID(*tr.Head) == cur {
		return nil
	}
	if tr.Head == nil && cur == "" {
		return nil
	}
	data := map[string]any{"repo": p.repoName(), "expected": tr.Head, "actual": optOID(cur)}
	if tr.Branch != "" {
		data["branch"] = tr.Branch
	}
	moved := func(format string, args ...any) error {
		return rfcerr.New("conflict.head_moved", data, format, args...).
			WithHint("--keep-head restores the files and leaves HEAD where it is")
	}
	if tr.Head == nil {
		return moved("the checkpoint was taken before the first commit; HEAD cannot go back to nothing")
	}
	if cur == "" {
		return moved("HEAD has no commit now, but the checkpoint's HEAD was %s", short(*tr.Head))
	}
	if tr.Branch != p.snap.Branch {
		return moved("HEAD %s, but the checkpoint was taken %s", headPlace(p.snap.Branch, "is detached", "is on"), headPlace(tr.Branch, "with HEAD detached", "on"))
	}
	th := plumbing.OID(*tr.Head)
	ok, err := p.tree.Repo.IsAncestor(ctx, th, cur)
	if err != nil {
		return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "merge-base"}, "checking ancestry")
	}
	if !ok {
		// Forward is safe too: when HEAD is an ancestor of the checkpoint's
		// (the undo of a rollback that moved HEAD back), the move drops no
		// commit, so nothing can have been pushed that it loses.
		fwd, err := p.tree.Repo.IsAncestor(ctx, cur, th)
		if err != nil {
			return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "merge-base"}, "checking ancestry")
		}
		if fwd {
			if p.tree.Repo.IndexLocked() {
				return indexLocked(p.tree, p.repoName())
			}
			p.headMove, p.headFrom, p.headTo, p.branch = true, cur, th, p.snap.Branch
			h.Moves, h.To = true, optOID(th)
			return nil
		}
	}
	if !ok {
		return moved("the checkpoint's HEAD %s is not an ancestor of HEAD %s (history was rewritten)", short(string(th)), short(string(cur)))
	}
	parents, order, err := p.tree.Repo.RevListParents(ctx, cur, th)
	if err != nil {
		return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "rev-list"}, "listing the commits HEAD would leave")
	}
	// A dropped commit on a remote-tracking ref is also below one of the
	// dropped commits whose parents are all kept (the roots), so checking
	// the roots finds every pushed one.
	var pushed []string
	refSet := map[string]bool{}
	for _, c := range order {
		root := true
		for _, par := range parents[c] {
			if _, in := parents[par]; in {
				root = false
			}
		}
		if !root {
			continue
		}
		rr, err := p.tree.Repo.RemoteRefsContaining(ctx, c)
		if err != nil {
			return rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": p.repoName(), "reason": "for-each-ref"}, "checking remote-tracking refs")
		}
		if len(rr) > 0 {
			pushed = append(pushed, string(c))
			for _, r := range rr {
				refSet[r] = true
			}
		}
	}
	if len(pushed) > 0 {
		var rs []string
		for r := range refSet {
			rs = append(rs, r)
		}
		sort.Strings(rs)
		return rfcerr.New("conflict.commits_pushed", map[string]any{"repo": p.repoName(), "commits": pushed, "refs": rs},
			"moving HEAD back would drop %d commit(s) already on %s", len(pushed), strings.Join(rs, ", ")).
			WithHint("--keep-head restores the files and leaves HEAD, so the next push needs no force")
	}
	if p.tree.Repo.IndexLocked() {
		return indexLocked(p.tree, p.repoName())
	}
	p.headMove, p.headFrom, p.headTo, p.branch = true, cur, th, p.snap.Branch
	h.Moves, h.To, h.Commits = true, optOID(th), len(order)
	return nil
}

func indexLocked(t *checkpoint.Tree, repo string) error {
	return rfcerr.New("conflict.index_locked", map[string]any{"repo": repo, "lock": t.Repo.RealIndex() + ".lock"},
		"another git process holds %s.lock, and moving HEAD must write the index", t.Repo.RealIndex()).
		WithHint("wait for that git command to finish; if none is running, the lock is stale and `git` says how to remove it")
}

// headPlace says where HEAD is for a conflict.head_moved message: detached
// when branch is "" (HEAD names a commit, not a branch), else on is followed
// by "branch <name>".
func headPlace(branch, detached, on string) string {
	if branch == "" {
		return detached
	}
	return on + " branch " + branch
}

func short(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// ignoredEdits lists paths edit records named since the target that are
// ignored now, so the rollback cannot restore them (RFC 11.1, CASES BR-07).
//
// A path now inside a gitlink or beyond a symlink (a directory the agent
// edited in became one later) is not listed: no path there is in the tree
// a capture writes. A nested repository is its own, recorded beside the tree
// and never written by a rollback (RFC 4, RFC 7.4 reason gitlink), and git
// never looks beyond a symlink; so such an edit is no ignored file of this
// tree that the rollback leaves unrestored. check-ignore would die on the
// first such path and fail every plan (D6, D9 in internal/model), so these
// are left out before it runs, by git's own tests (plumbing's OutOfReach).
// The cost follows the number of edited paths, not the size of the tree.
func ignoredEdits(ctx context.Context, t *checkpoint.Tree, a *journal.Agent, target *journal.Saved, top, prefix string) ([]string, error) {
	seen := map[string]bool{}
	var paths []string
	for _, e := range a.Edits {
		if e.Seq <= target.Seq || (e.Path != "" && e.Path != top) {
			continue
		}
		for _, p := range inRepo(e.Paths, prefix) {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	if len(paths) > 0 {
		away, err := t.Repo.OutOfReach(ctx, paths)
		if err != nil {
			return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "ls-files"}, "checking ignored edits")
		}
		kept := paths[:0]
		for _, p := range paths {
			if _, ok := away[p]; !ok {
				kept = append(kept, p)
			}
		}
		paths = kept
	}
	if len(paths) == 0 {
		return []string{}, nil
	}
	ignored, err := t.Repo.IgnoredUntracked(ctx, paths)
	if err != nil {
		return nil, rfcerr.Wrap("failed.checkpoint_git", err, map[string]any{"repo": ".", "reason": "check-ignore"}, "checking ignored edits")
	}
	res := []string{}
	for p := range ignored {
		res = append(res, p)
	}
	sort.Strings(res)
	return res, nil
}

// Note is RFC 8's files-only note with {when} filled in: "after turn tN",
// or "before your first turn" for a checkpoint taken before any turn ended.
func Note(tmpl string, through *string) string {
	when := "before your first turn"
	if through != nil {
		when = "after turn " + *through
	}
	return strings.ReplaceAll(tmpl, "{when}", when)
}

// conversation decides RFC 8's conversation member for the rollback, and
// the binding a rewind records. restore=files never rewinds.
func conversation(t *checkpoint.Tree, a *journal.Agent, target *journal.Saved, o Options) (Conversation, *journal.AgentBinding, error) {
	c := Conversation{ThroughTurn: target.Rec.ThroughTurn, Drops: []string{}}
	if !hasConversation(a) {
		// Checkpoints taken by hand: there is no conversation to keep in
		// step with the files, so --restore all is --restore files with
		// nobody to tell.
		c.NoConversation = true
		return c, nil, nil
	}
	if o.Restore == "files" {
		return c, nil, nil
	}
	through := 0
	if tt := target.Rec.ThroughTurn; tt != nil {
		n, err := refs.ParseTurn(*tt)
		if err != nil {
			return c, nil, checkpoint.LogError(err, "reading the through_turn of checkpoint %s", target.ID())
		}
		through = n
	}
	// A checkpoint that cannot bring the conversation back (its files match
	// no point of it, or that point was dropped) refuses --restore all even
	// when nothing seems to need rewinding: the agent's memory would not
	// match the files (RFC 8 "What decides it").
	why := ""
	switch {
	case target.Rec.MidTurn:
		why = "mid_turn"
	case target.Rec.Overlap:
		why = "overlap"
	case target.Rec.Reason == checkpoint.ReasonFork:
		why = "fork"
	case target.Rec.ThroughTurn != nil && a.Dropped[*target.Rec.ThroughTurn]:
		why = "dropped_turn"
	}
	for _, tu := range a.Turns {
		if tu.N > through && tu.EndSeq != 0 && !a.Dropped[tu.ID()] {
			c.Drops = append(c.Drops, tu.ID())
		}
	}
	if len(c.Drops) == 0 && why == "" {
		return c, nil, nil // nothing to rewind: works on any harness
	}
	if !o.Pathspec.Empty() && why == "" {
		// Some paths go back and the rest stay: the files match no point
		// of the conversation.
		why = "pathspec"
	}
	c.Rewinds = true
	if target.Rec.ThroughTurn == nil && why == "" {
		// Back to before the first turn: the next send starts a new
		// conversation; no harness call is needed (RFC 8).
		return c, &journal.AgentBinding{Agent: a.ID}, nil
	}
	files := func(why string) error {
		return rfcerr.New("conflict.checkpoint_files_only", map[string]any{"why": why},
			"checkpoint %s cannot bring the conversation back (%s)", target.ID(), why).
			WithHint("--restore files restores the files and tells the agent")
	}
	if why != "" {
		return c, nil, files(why)
	}
	var turn *journal.Turn
	for _, tu := range a.Turns {
		if tu.ID() == *target.Rec.ThroughTurn {
			turn = tu
		}
	}
	harness := ""
	if turn != nil {
		harness = turn.Harness
	}
	if !CanRewind(harness) {
		name := harness
		if name == "" {
			name = "no harness"
		}
		return c, nil, rfcerr.New("unsupported.harness_capability", map[string]any{"fix": "--restore=files", "harness": harness},
			"the conversation of %s (%s) cannot be rewound to %s", a.ID, name, *target.Rec.ThroughTurn).
			WithHint("--restore files restores the files and leaves a note for the agent")
	}
	end := turn.HarnessEnd
	if end == "" && turn.HarnessEndPending != nil && o.ResolveEnd != nil {
		// The transcript lagged when the turn ended; it has had time since.
		end = o.ResolveEnd(harness, turn.HarnessEndPending)
	}
	if harness == "codex" {
		// Codex forks through the kept turn's own id (RFC 8's codex
		// row: thread/fork's lastTurnId is its harness_turn); Claude Code
		// through the turn's last transcript entry, harness_end.
		if turn.HarnessTurn == "" || turn.HarnessSession == "" {
			return c, nil, files("no_harness_id")
		}
		return c, &journal.AgentBinding{Agent: a.ID, Harness: harness,
			ForkSource: turn.HarnessSession, ForkAt: turn.HarnessTurn}, nil
	}
	if end == "" || turn.HarnessSession == "" {
		return c, nil, files("no_harness_id")
	}
	// The new session id is chosen once the plan id is known (compute), so
	// the dry run shows the same resume command the real call returns.
	return c, &journal.AgentBinding{Agent: a.ID, Harness: harness,
		ForkSource: turn.HarnessSession, ForkAt: end}, nil
}

// hasConversation reports whether agent a has a conversation: a turn of
// it that a harness reported (a hook's capture, or --harness by hand), a
// binding to a harness session, or a fork of another agent's (RFC 10).
// An agent whose checkpoints were all taken by hand has none.
func hasConversation(a *journal.Agent) bool {
	if a.Binding != nil {
		return true
	}
	for _, tu := range a.Turns {
		if tu.Harness != "" {
			return true
		}
	}
	for _, s := range a.Checkpoints {
		if s.Rec.Reason == checkpoint.ReasonFork {
			return true
		}
	}
	return false
}

// CanRewind reports whether a harness can continue a conversation from a
// past turn (RFC 8 rewind): Claude Code can, by resuming a fork of the
// session at a message; Codex can, by a thread/fork of its app-server
// through the kept turn; Gemini CLI and Cursor cannot (Gemini CLI 0.61's
// /rewind is interactive and rewrites the session in place).
func CanRewind(harness string) bool { return harness == "claude-code" || harness == "codex" }

// ForksAtRollback reports whether a harness's rewind is a call the
// rollback makes before any file moves (RFC 7.4 step 3): Codex's
// thread/fork, and Claude Code's print-mode fork (issue 14: Claude Code
// honours --resume-session-at in print mode only, so a fork left to the
// person's `claude --resume` at a terminal kept every dropped turn).
func ForksAtRollback(harness string) bool { return harness == "codex" || harness == "claude-code" }

// ChoosesSession reports whether the toolkit names a harness's new
// session itself, from the plan (Claude Code's --session-id), so the dry
// run shows the command the real call prints; Codex names its fork.
func ChoosesSession(harness string) bool { return harness == "claude-code" }

// ResumeArgv is the command that continues a rewound conversation at a
// terminal (DESIGN.md section 6), once the rollback has made the copy
// newSession: `claude --resume=<newSession>` (flags in --flag=value form)
// or `codex resume <newSession>`. session and at, the source and the
// point copied through, are the rollback's to use, not the person's.
func ResumeArgv(harness, session, at, newSession string) []string {
	if harness == "codex" {
		return []string{"codex", "resume", newSession}
	}
	return []string{"claude", "--resume=" + newSession}
}

// ResumeExecArgv is ResumeArgv's form for a script, the prompt to follow
// as its last argument: `claude -p --resume=<newSession>`, `codex exec
// resume <newSession>`.
func ResumeExecArgv(harness, newSession string) []string {
	if harness == "codex" {
		return []string{"codex", "exec", "resume", newSession}
	}
	return []string{"claude", "-p", "--resume=" + newSession}
}

// sessionID is a version 4 style UUID drawn from the plan id, the agent
// and its count of rollbacks (the new conversation's id, RFC 8).
func sessionID(plan, agent string, n int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", plan, agent, n)))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
