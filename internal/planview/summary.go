package planview

import (
	"fmt"
	"strings"

	"github.com/venom-org/git-venom/rollback"
)

// View is a plan or a rollback laid out for a person: the summary, every
// path as an item (Items' order) and the rows they fold into.
type View struct {
	Summary Summary
	Items   []Item
	Rows    []Row
}

// New lays out res (a dry run's plan or a real call's result; its first
// repo, the only one a rollback has today) with o's folding. res is not
// changed.
func New(res *rollback.Result, o Options) *View {
	return NewRepo(res, 0, o)
}

// NewRepo is New for res.Repos[i], one repository's section of a plan of
// several (issue 18: the top is 0, then the submodules in repos order):
// its summary counts that repository's paths and HEAD, the rest is res's.
func NewRepo(res *rollback.Result, i int, o Options) *View {
	var repo rollback.Repo
	if i < len(res.Repos) {
		repo = res.Repos[i]
	}
	items := Items(repo)
	return &View{Summary: summarizeRepo(res, i), Items: items, Rows: Rows(items, o)}
}

// Filter returns the rows of the items keep accepts, folded with o: a UI's
// search box, or its "only the person's paths" view.
func (v *View) Filter(keep func(Item) bool, o Options) []Row {
	var items []Item
	for _, it := range v.Items {
		if keep(it) {
			items = append(items, it)
		}
	}
	return Rows(items, o)
}

// Summary is what a plan or rollback comes to, counted: Changes paths
// change, counted ByChange (create, modify, delete, in that order) and
// ByClass (outside, agent, turn); Left paths are left as they are,
// counted ByReason (outside first, then by name). The rest is res's, as
// RFC 11.1 has it.
type Summary struct {
	Agent, Checkpoint, Plan string
	DryRun, Guarded         bool
	Restore                 string
	Changes                 int
	ByChange, ByClass       []Count
	Left                    int
	ByReason                []Count
	Head                    rollback.Head
	// Index is the tree the index is set to when HEAD moves, when that
	// is not HEAD's own (the undo of a rollback that moved HEAD).
	Index        string
	Conversation rollback.Conversation
	SharedWith   []string
	IgnoredEdits []string
	// Rescued are the saves a person made while a real call ran into
	// files it then replaced, kept out of the tree (repos[].rescued).
	Rescued []rollback.Rescued
}

// Summarize counts res (its first repo, the top).
func Summarize(res *rollback.Result) Summary { return summarizeRepo(res, 0) }

// summarizeRepo counts res.Repos[i].
func summarizeRepo(res *rollback.Result, i int) Summary {
	s := Summary{Agent: res.Agent, Checkpoint: res.Checkpoint, Plan: res.Plan, DryRun: res.DryRun,
		Guarded: res.Guarded != nil && *res.Guarded, Restore: res.Restore,
		Conversation: res.Conversation, SharedWith: res.SharedWith}
	if i >= len(res.Repos) {
		return s
	}
	r := res.Repos[i]
	s.Head, s.IgnoredEdits, s.Index, s.Rescued = r.Head, r.IgnoredEdits, r.Index, r.Rescued
	var change, class, reason []string
	for _, f := range r.Files {
		change, class = append(change, f.Change), append(class, f.Class)
	}
	for _, l := range r.Left {
		reason = append(reason, l.Reason)
	}
	s.Changes, s.Left = len(r.Files), len(r.Left)
	s.ByChange = counts(change, "create", "modify", "delete")
	s.ByClass = counts(class, rollback.ClassOutside, rollback.ClassAgent, rollback.ClassTurn)
	s.ByReason = counts(reason, rollback.ClassOutside, rollback.LeftChangedDuringRollback)
	return s
}

// Title is the summary's first line: "plan p2-…: roll back a1 to k1
// (guarded tree: HEAD and the index stay)" for a plan, "rolled back a1 to
// k1" for a real call.
func (s Summary) Title() string {
	if !s.DryRun {
		return fmt.Sprintf("rolled back %s to %s", s.Agent, s.Checkpoint)
	}
	t := fmt.Sprintf("plan %s: roll back %s to %s", s.Plan, s.Agent, s.Checkpoint)
	if s.Guarded {
		t += " (guarded tree: HEAD and the index stay)"
	}
	return t
}

// Lines are the summary after its title, a few lines of "label: text"
// with the labels in one column:
//
//	change:       9,761 paths: 5,157 create, 1 modify, 4,603 delete
//	by class:     1 outside (!), 9,760 turn
//	left:         2 paths as they are: 1 outside, 1 too_big
//	HEAD:         stays at d30b367af9
//	index:        back to what was staged when ... (the undo of a rollback that moved HEAD)
//	conversation: rewinds to t1, dropping t2, t3
//
// The verbs are a plan's ("rewinds") or a real call's ("rewound").
func (s Summary) Lines() []string {
	out := s.RepoLines()
	add := func(label, format string, args ...any) {
		out = append(out, fmt.Sprintf("%-13s %s", label+":", fmt.Sprintf(format, args...)))
	}
	add("conversation", "%s", s.conversation())
	if len(s.SharedWith) > 0 {
		add("shared with", "%s (they get a note)", strings.Join(s.SharedWith, ", "))
	}
	if n := len(s.IgnoredEdits); n > 0 {
		add("not restored", "%s the agent edited, ignored now: %s", plural(n, "path", "paths"), FirstFew(s.IgnoredEdits, 3))
	}
	return out
}

// RepoLines are the lines of Lines that are one repository's (change, by
// class, left, HEAD, index): what a submodule's section of a plan shows
// under its name.
func (s Summary) RepoLines() []string {
	var out []string
	add := func(label, format string, args ...any) {
		out = append(out, fmt.Sprintf("%-13s %s", label+":", fmt.Sprintf(format, args...)))
	}
	verb := "change"
	if !s.DryRun {
		verb = "changed"
	}
	switch {
	case s.Changes == 0 && s.Left > 0:
		add(verb, "nothing: what differs from %s is left as it is (below)", s.Checkpoint)
	case s.Changes == 0:
		add(verb, "nothing: the tree already matches %s", s.Checkpoint)
	default:
		add(verb, "%s: %s", plural(s.Changes, "path", "paths"), joinCounts(s.ByChange))
		cl := make([]string, len(s.ByClass))
		for i, c := range s.ByClass {
			cl[i] = Number(c.N) + " " + c.Name
			if c.Name == rollback.ClassOutside {
				cl[i] += " (!)"
			}
		}
		add("by class", "%s", strings.Join(cl, ", "))
	}
	if s.Left > 0 {
		what := "paths as they are"
		if s.Left == 1 {
			what = "path as it is"
		}
		rs := make([]string, len(s.ByReason))
		for i, c := range s.ByReason {
			rs[i] = Number(c.N) + " " + c.Name
			if c.Name == rollback.ClassOutside || c.Name == rollback.LeftChangedDuringRollback {
				rs[i] += " (!)"
			}
		}
		add("left", "%s %s: %s", Number(s.Left), what, strings.Join(rs, ", "))
	}
	if n := len(s.Rescued); n > 0 {
		paths := make([]string, n)
		for i, r := range s.Rescued {
			paths[i] = r.Path
		}
		add("rescued", "%s made while it ran into files it replaced, kept out of the tree: %s",
			plural(n, "save", "saves"), FirstFew(paths, 3))
	}
	add("HEAD", "%s", s.head())
	if s.Index != "" {
		add("index", "back to what was staged when the rollback that made %s moved HEAD (tree %s), not HEAD's tree", s.Checkpoint, short(&s.Index))
	}
	return out
}

// FirstFew is the first n of paths, quoted (Quote) and joined with ", ",
// then " and 4,600 more" when there are more.
func FirstFew(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(Quotes(paths), ", ")
	}
	return strings.Join(Quotes(paths[:n]), ", ") + fmt.Sprintf(" and %s more", Number(len(paths)-n))
}

func (s Summary) head() string {
	h := s.Head
	switch {
	case h.Moves && !s.DryRun:
		return fmt.Sprintf("moved from %s to %s", short(h.From), short(h.To))
	case h.Moves && h.Commits == 0:
		return fmt.Sprintf("moves forward from %s to %s, dropping no commit", short(h.From), short(h.To))
	case h.Moves:
		return fmt.Sprintf("moves from %s to %s, leaving %s (still reachable from the safety checkpoint)",
			short(h.From), short(h.To), plural(h.Commits, "commit", "commits"))
	case h.From != nil && h.Since > 0 && s.DryRun:
		verb := "stay"
		if h.Since == 1 {
			verb = "stays"
		}
		return fmt.Sprintf("stays at %s, so the %s made since %s %s; the files going back show their changes as uncommitted reversals",
			short(h.From), plural(h.Since, "commit", "commits"), s.Checkpoint, verb)
	case h.From != nil && h.Since > 0:
		return fmt.Sprintf("stayed at %s with the %s made since %s; their changes show as uncommitted reversals (git status)",
			short(h.From), plural(h.Since, "commit", "commits"), s.Checkpoint)
	case h.From != nil:
		if s.DryRun {
			return "stays at " + short(h.From)
		}
		return "stayed at " + short(h.From)
	}
	return "stays (no commit yet)"
}

func (s Summary) conversation() string {
	c := s.Conversation
	through := "before the first turn"
	if c.ThroughTurn != nil {
		through = *c.ThroughTurn
	}
	switch {
	case c.NoConversation:
		return "none: no harness reported a turn of this agent (its checkpoints were taken by hand)"
	case s.Restore == "files":
		return "stays; the agent is told the files were rolled back"
	case c.Rewinds && s.DryRun:
		return fmt.Sprintf("rewinds to %s, dropping %s", through, strings.Join(c.Drops, ", "))
	case c.Rewinds:
		return fmt.Sprintf("rewound to %s, dropping %s", through, strings.Join(c.Drops, ", "))
	}
	return "nothing to rewind"
}

func short(p *string) string {
	if p == nil {
		return "no commit"
	}
	if s := *p; len(s) > 10 {
		return s[:10]
	}
	return *p
}
