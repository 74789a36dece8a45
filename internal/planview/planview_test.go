package planview

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/rollback"
)

// lines renders rows as the plan prints them, without a width limit.
func lines(rows []Row) []string {
	cols := ColumnsOf(rows)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Cells(cols, 0).String()
	}
	return out
}

// test262 is the plan of issue 15: a turn deleted a 4,603-file directory
// and generated 5,000 files in another, edited one file, and a person
// edited one file between turns.
func test262() rollback.Repo {
	var r rollback.Repo
	for i := 0; i < 4603; i++ {
		r.Files = append(r.Files, rollback.File{Path: fmt.Sprintf("test/built-ins/Temporal/%s/%04d.js", []string{"Duration", "Instant", "PlainDate"}[i%3], i), Change: "create", Class: "turn"})
	}
	for i := 0; i < 5000; i++ {
		r.Files = append(r.Files, rollback.File{Path: fmt.Sprintf("harness/gen/%d/t%04d.js", i%7, i), Change: "delete", Class: "turn"})
	}
	r.Files = append(r.Files,
		rollback.File{Path: "test/built-ins/Array/length.js", Change: "modify", Class: "agent"},
		rollback.File{Path: "zz-notes.md", Change: "modify", Class: "outside"})
	r.Left = append(r.Left, rollback.Left{Path: "assets/big.bin", Reason: "too_big"})
	return r
}

// TestRowsTest262: ten thousand paths fold into a handful of rows, the
// person's first although its path sorts last, each folded directory the
// highest whose paths share one change and class, with its count.
func TestRowsTest262(t *testing.T) {
	t.Parallel()
	items := Items(test262())
	if len(items) != 9606 {
		t.Fatalf("%d items", len(items))
	}
	got := lines(Rows(items, Options{}))
	want := []string{
		"! modify  outside  zz-notes.md",
		"  delete  turn     harness/gen/  (5,000 files)",
		"  modify  agent    test/built-ins/Array/length.js",
		"  create  turn     test/built-ins/Temporal/  (4,603 files)",
		"  left    too_big  assets/big.bin",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRowsRowsHoldTheirItems: a folded row's Items are exactly the paths
// below its directory, and every item is in exactly one row.
func TestRowsRowsHoldTheirItems(t *testing.T) {
	t.Parallel()
	items := Items(test262())
	seen := map[string]int{}
	for _, r := range Rows(items, Options{}) {
		if r.Count != len(r.Items) {
			t.Errorf("%s: count %d, %d items", r.Path, r.Count, len(r.Items))
		}
		for _, it := range r.Items {
			seen[it.Path]++
			if r.Dir && !strings.HasPrefix(it.Path, r.Path) {
				t.Errorf("%s is in the row of %s", it.Path, r.Path)
			}
			if it.label() != r.label() {
				t.Errorf("%s (%v) is in the row of %s (%v)", it.Path, it.label(), r.Path, r.label())
			}
		}
	}
	for _, it := range items {
		if seen[it.Path] != 1 {
			t.Errorf("%s is in %d rows", it.Path, seen[it.Path])
		}
	}
}

// TestRowsSmallPlanListsAll: a plan that fits its budget lists every path,
// even in a directory all of whose paths share a label.
func TestRowsSmallPlanListsAll(t *testing.T) {
	t.Parallel()
	var items []Item
	for i := 0; i < 5; i++ {
		items = append(items, Item{Path: fmt.Sprintf("src/f%d.go", i), Change: "delete", Class: "turn"})
	}
	if got := Rows(items, Options{}); len(got) != 5 {
		t.Errorf("%d rows, want 5: %v", len(got), lines(got))
	}
	if got := Rows(items, Options{Budget: 2}); len(got) != 5 {
		// All five are in src/, the directory that holds every item:
		// it never folds, so a narrowed plan shows its insides.
		t.Errorf("%d rows, want 5: %v", len(got), lines(got))
	}
}

// TestRowsMixedDirectoryDoesNotFold: a directory with one path of another
// label does not fold as a whole; its uniform subdirectories do, and the
// odd path keeps its own row.
func TestRowsMixedDirectoryDoesNotFold(t *testing.T) {
	t.Parallel()
	var items []Item
	for i := 0; i < 30; i++ {
		items = append(items, Item{Path: fmt.Sprintf("gen/a/%02d", i), Change: "create", Class: "turn"})
		items = append(items, Item{Path: fmt.Sprintf("gen/b/%02d", i), Change: "create", Class: "turn"})
	}
	items = append(items, Item{Path: "gen/b/zz", Change: "create", Class: "agent"}, Item{Path: "top", Change: "modify", Class: "turn"})
	got := lines(Rows(items, Options{Budget: 10}))
	want := []string{
		"  create  turn     gen/a/  (30 files)",
		"  create  agent    gen/b/zz",
		"  modify  turn     top",
	}
	// gen/b/ holds 30 turn paths and one agent path: it cannot fold, and
	// its 30 are files of gen/b/ itself, so they stay one row each.
	if len(got) != 33 || got[0] != want[0] || got[31] != want[1] || got[32] != want[2] {
		t.Errorf("rows:\n%s", strings.Join(got, "\n"))
	}
}

// TestRowsBiggestFirst: folding stops once the rows fit, and folds the
// biggest directories first.
func TestRowsBiggestFirst(t *testing.T) {
	t.Parallel()
	var items []Item
	for i := 0; i < 40; i++ {
		items = append(items, Item{Path: fmt.Sprintf("big/%02d", i), Change: "delete", Class: "turn"})
	}
	for i := 0; i < 15; i++ {
		items = append(items, Item{Path: fmt.Sprintf("small/%02d", i), Change: "create", Class: "agent"})
	}
	got := Rows(items, Options{}) // 55 items, budget 50: folding big/ is enough
	if len(got) != 16 || !got[0].Dir || got[0].Path != "big/" || got[0].Count != 40 || got[1].Dir {
		t.Errorf("rows:\n%s", strings.Join(lines(got), "\n"))
	}
	if got := Rows(items, Options{Budget: 10}); len(got) != 2 {
		t.Errorf("budget 10: rows:\n%s", strings.Join(lines(got), "\n"))
	}
	if got := Rows(items, Options{Budget: -1}); len(got) != 55 {
		t.Errorf("budget -1 folded: %d rows", len(got))
	}
}

// TestRowsLeftDetail: left paths fold only with the same reason and
// detail, and the detail shows in the row.
func TestRowsLeftDetail(t *testing.T) {
	t.Parallel()
	var items []Item
	for i := 0; i < 60; i++ {
		items = append(items, Item{Path: fmt.Sprintf("out/%02d.o", i), Change: Left, Class: "outside", Detail: "created after the last checkpoint"})
	}
	items = append(items, Item{Path: "vendor/lib", Change: Left, Class: "gitlink", Detail: "0123456789abcdef"})
	got := lines(Rows(items, Options{}))
	want := []string{
		"! left    outside  out/  (60 files; created after the last checkpoint)",
		"  left    gitlink  vendor/lib  (0123456789abcdef)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestItemsOrder: the person's paths first whatever --outside made of
// them (restored: class outside; kept: left with reason outside), then
// the changes, then the paths left.
func TestItemsOrder(t *testing.T) {
	t.Parallel()
	r := rollback.Repo{
		Files: []rollback.File{{Path: "a", Change: "delete", Class: "turn"}, {Path: "z", Change: "modify", Class: "outside"}},
		Left:  []rollback.Left{{Path: "b", Reason: "too_big"}, {Path: "y", Reason: "outside"}},
	}
	var got []string
	for _, it := range Items(r) {
		got = append(got, it.Path)
	}
	if want := []string{"y", "z", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestCellsFit: a line wider than asked loses the start of its path (the
// end stays readable); the suffix and columns stay; no line is wider.
func TestCellsFit(t *testing.T) {
	t.Parallel()
	r := Row{Item: Item{Path: "test/built-ins/Temporal/PlainDate/", Change: "delete", Class: "turn"}, Dir: true, Count: 4603}
	cols := ColumnsOf([]Row{r})
	full := r.Cells(cols, 0).String()
	if full != "  delete  turn     test/built-ins/Temporal/PlainDate/  (4,603 files)" {
		t.Errorf("full: %q", full)
	}
	for w := 1; w <= len(full)+2; w++ {
		got := r.Cells(cols, w).String()
		if Width(got) > w {
			t.Errorf("width %d: %q is %d wide", w, got, Width(got))
		}
	}
	if got := r.Cells(cols, 50).String(); got != "  delete  turn     ...al/PlainDate/  (4,603 files)" {
		t.Errorf("width 50: %q", got)
	}
	wide := Row{Item: Item{Path: "文档/说明书.md", Change: "create", Class: "agent"}, Count: 1}
	if got := wide.Cells(cols, 29).String(); Width(got) > 29 || !strings.HasSuffix(got, "书.md") {
		t.Errorf("wide: %q (%d cells)", got, Width(got))
	}
}

func TestFitAndWidth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"hello world", 0, "hello world"},
		{"hello world", 11, "hello world"},
		{"hello world", 8, "hello..."},
		{"hello", 2, ".."},
		{"日本語のファイル", 9, "日本語..."},
	} {
		if got := Fit(c.in, c.w); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
	if Width("é") != 1 || Width("e\u0301") != 1 || Width("日本") != 4 || Width("abc") != 3 {
		t.Errorf("widths: %d %d %d %d", Width("é"), Width("e\u0301"), Width("日本"), Width("abc"))
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 4603: "4,603", 150000: "150,000", 1234567: "1,234,567", -4603: "-4,603"} {
		if got := Number(n); got != want {
			t.Errorf("Number(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSummaryTest262: the summary counts by change, by class and by
// reason, and says what happens to HEAD and the conversation, in a few
// lines.
func TestSummaryTest262(t *testing.T) {
	t.Parallel()
	head := "d30b367af9d30b367af9d30b367af9d30b367af9"
	through := "t1"
	g := true
	repo := test262()
	repo.Head = rollback.Head{From: &head, To: &head}
	res := &rollback.Result{Agent: "a1", Checkpoint: "k3", DryRun: true, Plan: "p1-0123456789abcdef", Restore: "all", Guarded: &g,
		Conversation: rollback.Conversation{Rewinds: true, ThroughTurn: &through, Drops: []string{"t2", "t3"}},
		Repos:        []rollback.Repo{repo}}
	v := New(res, Options{})
	got := append([]string{v.Summary.Title()}, v.Summary.Lines()...)
	want := []string{
		"plan p1-0123456789abcdef: roll back a1 to k3 (guarded tree: HEAD and the index stay)",
		"change:       9,605 paths: 4,603 create, 2 modify, 5,000 delete",
		"by class:     1 outside (!), 1 agent, 9,603 turn",
		"left:         1 path as it is: 1 too_big",
		"HEAD:         stays at d30b367af9",
		"conversation: rewinds to t1, dropping t2, t3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(v.Rows) != 5 || len(v.Items) != 9606 {
		t.Errorf("%d rows, %d items", len(v.Rows), len(v.Items))
	}
	only := v.Filter(func(it Item) bool { return it.Person() }, Options{})
	if len(only) != 1 || only[0].Path != "zz-notes.md" {
		t.Errorf("filter: %v", lines(only))
	}
}

// TestSummaryHeadSince: when HEAD stays with commits made since the
// checkpoint, the summary says they stay, as uncommitted reversals.
func TestSummaryHeadSince(t *testing.T) {
	t.Parallel()
	head := "0123456789abcdef0123456789abcdef01234567"
	res := &rollback.Result{Agent: "a1", Checkpoint: "k1", DryRun: true, Restore: "all",
		Repos: []rollback.Repo{{Head: rollback.Head{From: &head, To: &head, Since: 1}}}}
	var got string
	for _, l := range Summarize(res).Lines() {
		if strings.HasPrefix(l, "HEAD:") {
			got = l
		}
	}
	if want := "HEAD:         stays at 0123456789, so the 1 commit made since k1 stays; the files going back show their changes as uncommitted reversals"; got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}

// TestSavesDuringRollback: after a real call, a path left because a
// person saved it while the rollback ran is the person's (first, "!"),
// and the summary counts it and the saves kept out of the tree (rescued).
func TestSavesDuringRollback(t *testing.T) {
	t.Parallel()
	res := &rollback.Result{Agent: "a1", Checkpoint: "k1", Restore: "files",
		Repos: []rollback.Repo{{
			Files: []rollback.File{{Path: "a", Change: "delete", Class: "turn"}},
			Left: []rollback.Left{{Path: "b", Reason: "too_big"},
				{Path: "m", Reason: rollback.LeftChangedDuringRollback, Detail: "saved while the rollback ran"}},
			Rescued: []rollback.Rescued{{Path: "n1", Ref: "refs/venom/rescued/a1/3"}, {Path: "n2", Ref: "refs/venom/rescued/a1/3"},
				{Path: "n3", Ref: "refs/venom/rescued/a1/3"}, {Path: "n4", Ref: "refs/venom/rescued/a1/3"}},
		}}}
	v := New(res, Options{})
	if got := v.Rows[0]; got.Path != "m" || !got.Person() {
		t.Errorf("first row %+v, want m, the person's", got)
	}
	var got []string
	for _, l := range v.Summary.Lines() {
		if strings.HasPrefix(l, "left:") || strings.HasPrefix(l, "rescued:") {
			got = append(got, l)
		}
	}
	want := []string{
		"left:         2 paths as they are: 1 changed_during_rollback (!), 1 too_big",
		"rescued:      4 saves made while it ran into files it replaced, kept out of the tree: n1, n2, n3 and 1 more",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary %q\nwant %q", got, want)
	}
}

// TestWrap: prose breaks at spaces within the width, continuation lines
// indented; a word wider than the room stays whole; a short line is one.
func TestWrap(t *testing.T) {
	t.Parallel()
	line := "  the old session s1 (claude-code) stays as it is; resumed, it is told once that the files were rolled back"
	got := Wrap(line, 40, "    ")
	want := []string{
		"  the old session s1 (claude-code) stays",
		"    as it is; resumed, it is told once",
		"    that the files were rolled back",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Wrap:\n%q\nwant\n%q", got, want)
	}
	for _, l := range got {
		if Width(l) > 40 {
			t.Errorf("%q is %d wide", l, Width(l))
		}
	}
	long := "see git-show-refs/venom/rescued/a1/3:a/very/long/path/name.txt now"
	if got := Wrap(long, 20, "  "); !reflect.DeepEqual(got, []string{"see", "  git-show-refs/venom/rescued/a1/3:a/very/long/path/name.txt", "  now"}) {
		t.Errorf("long word: %q", got)
	}
	if got := Wrap("short", 20, "  "); !reflect.DeepEqual(got, []string{"short"}) {
		t.Errorf("short: %q", got)
	}
	if got := Wrap(line, 0, "  "); !reflect.DeepEqual(got, []string{line}) {
		t.Errorf("width 0: %q", got)
	}
}

// TestRowsAllUnderOneDirectory: 150 directories of 1,000 files, all
// deleted by the turn, all under big/: their 150 rows do not fit, so
// big/ itself folds into one row with FoldAll (a whole plan), never
// without (a directory opened). With a few directories under it, their
// rows fit and big/ shows what is inside.
func TestRowsAllUnderOneDirectory(t *testing.T) {
	t.Parallel()
	var items []Item
	for d := 0; d < 150; d++ {
		for i := 0; i < 1000; i++ {
			items = append(items, Item{Path: fmt.Sprintf("big/%d/f%d.txt", d, i), Change: "delete", Class: "turn"})
		}
	}
	if rows := Rows(items, Options{}); len(rows) != 150 {
		t.Errorf("without FoldAll: %d rows, want big/'s 150 directories", len(rows))
	}
	rows := Rows(items, Options{FoldAll: true})
	if len(rows) != 1 || rows[0].Path != "big/" || !rows[0].Dir || rows[0].Count != 150000 {
		t.Fatalf("%d rows, first %+v; want one row big/ of 150,000", len(rows), rows[0].Item)
	}
	rows = Rows(items[:5000], Options{FoldAll: true})
	if len(rows) != 5 || rows[0].Path != "big/0/" || rows[0].Count != 1000 {
		t.Errorf("5 directories: %d rows, first %q; want big/0/ .. big/4/", len(rows), rows[0].Path)
	}
}
