// Package planview turns a rollback plan (rollback.Result, RFC 7.2 and
// 11.1) into what a person reads: a summary of a few lines (counts by
// change and by class, what is left and why, HEAD and the conversation),
// then one row per path, with the person's paths first and directories
// whose paths all share one change and class folded into one row:
//
//	! modify  outside  notes/todo.md
//	  delete  turn     test/built-ins/Temporal/  (4,603 files)
//	  create  turn     gen/parser.c
//	  left    too_big  assets/video.mp4
//
// It is pure: it prints nothing, runs nothing and reads no terminal. The
// command line (internal/cli) and the terminal UI build their output on
// it; /work/notes/planview-api.md (and docs/man/git-venom-plan.md) says how
// the rows are chosen.
package planview

import (
	"sort"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/rollback"
)

// Left is the Change of an Item the rollback leaves as it is.
const Left = "left"

// Item is one path of a plan: a path the rollback changes, with Change
// create, modify or delete and Class agent, turn or outside (RFC 7.3); or
// a path it leaves as it is (RFC 7.4), with Change Left, Class its reason
// (outside, too_big, skip_worktree, gitlink, ignored_in_the_way,
// ignored_at_target, and after a real call changed_during_rollback) and
// Detail the reason's detail ("" when none). Path is
// relative to the tree's top, with "/", as git stores it (any byte but
// NUL); Quote makes it printable.
type Item struct {
	Path   string
	Change string
	Class  string
	Detail string
}

// Person reports whether the item is the person's: it changed outside the
// agent's turns (class outside, to be restored or kept), or, after a real
// call, a person saved it while the rollback ran and it was left as they
// saved it (reason changed_during_rollback). The plan marks these with
// "!" and shows them first (RFC 12: outside paths come first).
func (i Item) Person() bool {
	return i.Class == rollback.ClassOutside || (i.Change == Left && i.Class == rollback.LeftChangedDuringRollback)
}

// section orders items and rows: the person's, then the changes, then the
// paths left as they are.
func (i Item) section() int {
	switch {
	case i.Person():
		return 0
	case i.Change != Left:
		return 1
	}
	return 2
}

// label is what two items must share for a directory of them to fold.
type label struct{ change, class, detail string }

func (i Item) label() label { return label{i.Change, i.Class, i.Detail} }

// Items returns a plan's paths as items: repo.Files and repo.Left, the
// person's first, then the changes, then the paths left, each in the
// byte order of their paths. The result is new; repo is not changed.
func Items(repo rollback.Repo) []Item {
	items := make([]Item, 0, len(repo.Files)+len(repo.Left))
	for _, f := range repo.Files {
		items = append(items, Item{Path: f.Path, Change: f.Change, Class: f.Class})
	}
	for _, l := range repo.Left {
		items = append(items, Item{Path: l.Path, Change: Left, Class: l.Reason, Detail: l.Detail})
	}
	sortItems(items)
	return items
}

func sortItems(items []Item) {
	sort.SliceStable(items, func(a, b int) bool {
		if sa, sb := items[a].section(), items[b].section(); sa != sb {
			return sa < sb
		}
		return items[a].Path < items[b].Path
	})
}

// Row is one line of a plan's path list: one path (Dir false, Count 1), or
// a directory whose paths all share one Change, Class and Detail (Dir
// true; Path is the directory with a trailing "/", Count how many of the
// plan's paths are below it). Items are the paths it stands for, in byte
// order: a UI expands a directory's row with them.
type Row struct {
	Item
	Dir   bool
	Count int
	Items []Item
}

// DefaultBudget is the number of rows a plan's paths are folded to fit in
// when Options.Budget is 0: a plan of up to 50 paths lists every one.
const DefaultBudget = 50

// Options say how Rows folds directories.
type Options struct {
	// Budget is the number of rows the paths should fit in (0:
	// DefaultBudget; negative: never fold). While they do not fit, the
	// biggest directory whose paths all share one change, class and
	// detail is folded into one row, until they fit or none is left.
	Budget int
	// FoldAll lets the directory that holds every item fold too, when
	// nothing else makes the rows fit: for a whole plan, where that
	// directory is what a turn made (big/, 150,000 files). Not for the
	// rows of a directory being opened, or a plan narrowed to one.
	FoldAll bool
}

// Rows lays items out as rows: every item once, the person's rows first,
// then the changes, then the paths left, each in byte order. When there
// are more items than o.Budget, directories fold, biggest first (the most
// paths; ties by path), until the rows fit: only a directory all of whose
// items share one label (change, class and detail) folds, and only as a
// whole (the highest such directory; never one holding a path of another
// label, so a folded row never hides a person's path). The directory that
// holds every item (a plan narrowed to one directory) never folds, so
// narrowing a plan to a folded directory, or opening its row, shows what
// is inside it; unless o.FoldAll, when its insides cannot fit even folded
// and all its items share one label.
//
// items need not be sorted; a UI may pass any subset (a filter) and get
// rows for it.
func Rows(items []Item, o Options) []Row {
	sorted := append([]Item(nil), items...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Path < sorted[b].Path })
	budget := o.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	folded := map[int]int{} // start index in sorted -> end index (exclusive)
	if budget > 0 && len(sorted) > budget {
		var cands []span
		spans(sorted, 0, len(sorted), commonDir(sorted), &cands)
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].n() > cands[b].n() })
		rows := len(sorted)
		for _, c := range cands {
			if rows <= budget {
				break
			}
			folded[c.lo] = c.hi
			rows -= c.n() - 1
		}
		// Still too many, and every item shares one label under one
		// directory (a turn that wrote 150 directories of 1,000 files
		// under big/): with o.FoldAll that directory folds too.
		if o.FoldAll && rows > budget && uniform(sorted) && commonDir(sorted) != "" {
			folded = map[int]int{0: len(sorted)}
		}
	}
	out := make([]Row, 0, len(sorted))
	for i := 0; i < len(sorted); {
		if hi, ok := folded[i]; ok {
			it := sorted[i]
			dir := dirOf(sorted, i, hi)
			out = append(out, Row{Item: Item{Path: dir, Change: it.Change, Class: it.Class, Detail: it.Detail},
				Dir: true, Count: hi - i, Items: sorted[i:hi:hi]})
			i = hi
			continue
		}
		out = append(out, Row{Item: sorted[i], Count: 1, Items: sorted[i : i+1 : i+1]})
		i++
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].section() < out[b].section() })
	return out
}

// span is a run sorted[lo:hi] of items below one directory.
type span struct{ lo, hi int }

func (s span) n() int { return s.hi - s.lo }

// spans appends to out the highest directories below prefix, within
// items[lo:hi] (sorted by path, all below prefix), whose items share one
// label: those that can fold. Items below a directory are contiguous in
// byte order, since they share its name and "/" as a prefix.
func spans(items []Item, lo, hi int, prefix string, out *[]span) {
	for i := lo; i < hi; {
		rest := items[i].Path[len(prefix):]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			i++
			continue
		}
		dir := prefix + rest[:slash+1]
		j := i + 1
		for j < hi && strings.HasPrefix(items[j].Path, dir) {
			j++
		}
		if j-i >= 2 && uniform(items[i:j]) {
			*out = append(*out, span{i, j})
		} else {
			spans(items, i, j, dir, out)
		}
		i = j
	}
}

func uniform(items []Item) bool {
	l := items[0].label()
	for _, it := range items[1:] {
		if it.label() != l {
			return false
		}
	}
	return true
}

// commonDir is the longest directory ("a/b/", or "") that holds every item.
func commonDir(items []Item) string {
	if len(items) == 0 {
		return ""
	}
	p := items[0].Path
	for _, it := range items[1:] {
		for !strings.HasPrefix(it.Path, p) {
			p = p[:len(p)-1]
		}
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return ""
}

// dirOf is the directory that sorted[lo:hi] (a span) shares.
func dirOf(sorted []Item, lo, hi int) string {
	d := commonDir(sorted[lo:hi])
	return d
}

// Count is a name and how many items have it.
type Count struct {
	Name string
	N    int
}

// counts counts names in the order of order, leaving out zeros; a name not
// in order comes after, in byte order.
func counts(names []string, order ...string) []Count {
	m := map[string]int{}
	for _, n := range names {
		m[n]++
	}
	var out []Count
	for _, n := range order {
		if m[n] > 0 {
			out = append(out, Count{n, m[n]})
			delete(m, n)
		}
	}
	var rest []string
	for n := range m {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	for _, n := range rest {
		out = append(out, Count{n, m[n]})
	}
	return out
}

// Number writes n with a comma every three digits, as the plan prints
// counts: 4603 is "4,603".
func Number(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural is "1 file" or "4,603 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Number(n) + " " + many
}

func joinCounts(cs []Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = Number(c.N) + " " + c.Name
	}
	return strings.Join(parts, ", ")
}
