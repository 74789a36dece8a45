package tui

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/venom-org/git-venom/internal/cli"
	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/rollback"
)

func strp(s string) *string { return &s }

func TestTranscriptRow(t *testing.T) {
	one := []rollback.Repo{{Files: []rollback.File{{Path: "a", Change: "modify", Class: "agent"}}}}
	two := []rollback.Repo{{Files: []rollback.File{{Path: "a"}, {Path: "b"}}}}
	for _, c := range []struct {
		res  rollback.Result
		want string
	}{
		// RFC 12's own example.
		{rollback.Result{Checkpoint: "k2", Restore: "all", Safety: "k4", Repos: one,
			Conversation: rollback.Conversation{Rewinds: true, ThroughTurn: strp("t1"), Drops: []string{"t2"}}},
			"↺ Rolled back to k2 (after t1) · 1 file · conversation too · undo: k4"},
		{rollback.Result{Checkpoint: "k1", Restore: "files", Safety: "k7", Repos: two},
			"↺ Rolled back to k1 (before the first turn) · 2 files · files only · undo: k7"},
		{rollback.Result{Checkpoint: "k3", Restore: "all", Safety: "k5", Repos: two,
			Conversation: rollback.Conversation{ThroughTurn: strp("t2")}},
			"↺ Rolled back to k3 (after t2) · 2 files · conversation unchanged · undo: k5"},
	} {
		if got := transcriptRow(&c.res); got != c.want {
			t.Errorf("transcriptRow = %q, want %q", got, c.want)
		}
	}
}

func TestWrapBreaksAtSpacesOnly(t *testing.T) {
	cmd := "  it continues in a new session 376c7784-f09a: claude --resume=11111111-2222-3333-4444-555555555555 --resume-session-at=e1 --fork-session"
	lines := wrap(cmd, 60, "    ")
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line %d is %d cells: %q", i, w, l)
		}
		if i > 0 && !strings.HasPrefix(l, "    ") {
			t.Errorf("line %d is not indented: %q", i, l)
		}
	}
	// Every word comes back whole and in order: nothing cut at a hyphen.
	if got := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); got != strings.Join(strings.Fields(cmd), " ") {
		t.Errorf("words changed:\n%q\n%q", got, cmd)
	}
	for _, l := range lines {
		if strings.HasSuffix(l, "-") {
			t.Errorf("line broken at a hyphen: %q", l)
		}
	}
	// A word longer than a line is cut into pieces, nothing lost.
	long := strings.Repeat("x", 100)
	got := wrap(long, 30, "  ")
	if strings.ReplaceAll(strings.Join(got, ""), " ", "") != long {
		t.Errorf("long word lost bytes: %q", got)
	}
	if short := wrap("fits", 30, ""); len(short) != 1 || short[0] != "fits" {
		t.Errorf("wrap of a short line = %q", short)
	}
}

func TestPlanScreenFoldsToTheScreenAndFilters(t *testing.T) {
	head := "0123456789abcdef"
	res := &rollback.Result{Agent: "a1", Checkpoint: "k1", Restore: "all", Plan: "p2-x", DryRun: true, Repos: []rollback.Repo{{
		Head: rollback.Head{From: &head, To: &head},
		Left: []rollback.Left{{Path: "notes.txt", Reason: "outside"}},
	}}}
	for i := 0; i < 10000; i++ {
		dir := "gen/a/"
		if i%2 == 1 {
			dir = "gen/b/"
		}
		res.Repos[0].Files = append(res.Repos[0].Files, rollback.File{Path: dir + itoa(i) + ".txt", Change: "delete", Class: "turn"})
	}
	res.Repos[0].Files = append(res.Repos[0].Files, rollback.File{Path: "src/app.py", Change: "modify", Class: "agent"})
	m := newModel(&app{st: newStyles()})
	s := newPlan(m, planOpts{agent: "a1", checkpoint: "k1", restore: "all", outside: "keep"}, res, "")
	screen := strings.Join(s.view(m, 80, 21), "\n")
	// The person's path first, then gen/ folded into one row, then the
	// agent's file; HEAD and the conversation in the summary above.
	for _, want := range []string{"plan p2-x: roll back a1 to k1", "HEAD:         stays at 0123456789",
		"! left    outside  notes.txt", "  delete  turn     gen/  (10,000 files)", "  modify  agent    src/app.py",
		"y confirms: git venom-rollback --agent a1 k1 --plan p2-x --outside keep"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Index(screen, "notes.txt") > strings.Index(screen, "gen/") {
		t.Errorf("the person's path is not first:\n%s", screen)
	}
	// enter on gen/ opens it: gen/a/ and gen/b/, folded.
	s.l.cur = 1
	s.update(m, tea.KeyMsg{Type: tea.KeyEnter})
	screen = strings.Join(s.view(m, 80, 21), "\n")
	if !strings.Contains(screen, "inside gen/: 10,000 paths") || !strings.Contains(screen, "gen/a/  (5,000 files)") {
		t.Errorf("after enter on gen/:\n%s", screen)
	}
	if !s.esc() || len(s.narrow) != 0 {
		t.Errorf("esc did not close gen/")
	}
	s.filter.SetValue("src/")
	screen = strings.Join(s.view(m, 80, 21), "\n")
	if !strings.Contains(screen, "1 of 10,002 paths") || !strings.Contains(screen, "src/app.py") || strings.Contains(screen, "gen/") {
		t.Errorf("filtered:\n%s", screen)
	}
	for i, l := range s.view(m, 80, 21) {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d cells: %q", i, w, l)
		}
	}
}

func TestChoiceFor(t *testing.T) {
	o := planOpts{agent: "a1", checkpoint: "k2", restore: "all"}
	out := rfcerr.New("conflict.outside_edits", map[string]any{"repos": []map[string]any{{"repo": ".", "paths": []string{"notes.txt"}}}}, "1 path(s)")
	c := choiceFor(o, out)
	if c == nil || len(c.choices) != 2 || c.choices[0].label != "keep those files" || c.choices[1].label != "overwrite them" {
		t.Fatalf("outside choice = %+v", c)
	}
	if len(c.paths) != 1 || c.paths[0] != "notes.txt" || c.l.cur != 0 {
		t.Errorf("paths %q, default %d", c.paths, c.l.cur)
	}
	for i, want := range []string{"keep", "overwrite"} {
		got := o
		c.choices[i].set(&got)
		if got.outside != want || got.restore != "all" {
			t.Errorf("choice %d sets %+v", i, got)
		}
	}
	for _, code := range []string{"unsupported.harness_capability", "conflict.checkpoint_files_only"} {
		c := choiceFor(o, rfcerr.New(code, nil, "cannot be rewound"))
		if c == nil || len(c.choices) != 1 {
			t.Fatalf("%s: %+v", code, c)
		}
		got := o
		c.choices[0].set(&got)
		if got.restore != "files" {
			t.Errorf("%s: %+v", code, got)
		}
	}
	c = choiceFor(o, rfcerr.New("conflict.head_moved", nil, "moved"))
	got := o
	c.choices[0].set(&got)
	if !got.keepHead {
		t.Errorf("head choice: %+v", got)
	}
	for _, err := range []error{rfcerr.New("denied.agent_caller", nil, "no"), rfcerr.New("conflict.rollback_stale", nil, "stale"), errors.New("plain")} {
		if choiceFor(o, err) != nil {
			t.Errorf("a choice for %v", err)
		}
	}
}

func TestCommandQuotesTheChoices(t *testing.T) {
	o := planOpts{agent: "a1", checkpoint: "k2", restore: "files", outside: "keep", keepHead: true}
	res := &rollback.Result{Agent: "a1", Checkpoint: "k2", Plan: "p2-ab"}
	if got, want := cli.RollbackCommand(res, o.options()), "git venom-rollback --agent a1 k2 --plan p2-ab --restore files --outside keep --keep-head"; got != want {
		t.Errorf("command = %q, want %q", got, want)
	}
}

func TestListKeepsTheCursorInView(t *testing.T) {
	l := list{n: 10000}
	from, to := l.window(20)
	if from != 0 || to != 20 {
		t.Fatalf("window = %d..%d", from, to)
	}
	l.key("end")
	if from, to = l.window(20); l.cur != 9999 || from != 9980 || to != 10000 {
		t.Errorf("end: cur %d window %d..%d", l.cur, from, to)
	}
	l.key("pgup")
	if from, _ = l.window(20); l.cur != 9979 || from != 9960 {
		t.Errorf("pgup: cur %d from %d", l.cur, from)
	}
	l.key("home")
	l.key("pgdown")
	if from, _ = l.window(20); l.cur != 20 || from != 20 {
		t.Errorf("pgdown from the top: cur %d from %d (the next page)", l.cur, from)
	}
	l.key("home")
	l.key("up")
	if l.cur != 0 {
		t.Errorf("up at the top: %d", l.cur)
	}
}

func TestStatusErrorNamesItsCode(t *testing.T) {
	err := rfcerr.New("denied.agent_caller", nil, "an agent may not roll back a guarded tree").WithHint("ask the person")
	if got, want := errText(err), "error (denied.agent_caller): an agent may not roll back a guarded tree; ask the person"; got != want {
		t.Errorf("errText = %q, want %q", got, want)
	}
}

// Keys typed faster than the program reads them come as one message of
// several runes: "yq" on the plan screen is y, then q, and q quits (t0011
// test 2 hung when its y and q arrived together).
func TestKeysThatArriveTogetherAreTakenOneByOne(t *testing.T) {
	head := "0123456789abcdef"
	res := &rollback.Result{Agent: "a1", Checkpoint: "k1", Restore: "all", Plan: "p2-x", DryRun: true, Repos: []rollback.Repo{{
		Head:  rollback.Head{From: &head, To: &head},
		Files: []rollback.File{{Path: "src/app.py", Change: "modify", Class: "agent"}},
	}}}
	m := newModel(&app{st: newStyles()})
	m.stack = []screen{newPlan(m, planOpts{agent: "a1", checkpoint: "k1", restore: "all"}, res, "")}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jq")})
	if cmd == nil {
		t.Fatal(`"jq" returned no command; want q's quit`)
	}
	if !quits(cmd) {
		t.Errorf(`"jq" did not quit`)
	}
	// In the filter, the runes are text: "/" opens it, then "q" is typed.
	m.stack = []screen{newPlan(m, planOpts{agent: "a1", checkpoint: "k1", restore: "all"}, res, "")}
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/q")}); cmd != nil && quits(cmd) {
		t.Errorf(`"/q" quit; want q typed into the filter`)
	}
	if s := m.top().(*planScreen); s.filter.Value() != "q" {
		t.Errorf("filter = %q, want q", s.filter.Value())
	}
}

// quits runs cmd (a tea.Sequence or a single command) and says whether it
// ends with tea.Quit.
func quits(cmd tea.Cmd) bool {
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && quits(c) {
				return true
			}
		}
	default:
		// tea.Sequence's message type is unexported: look at its commands.
		v := reflect.ValueOf(msg)
		if v.Kind() == reflect.Slice {
			for i := 0; i < v.Len(); i++ {
				if c, ok := v.Index(i).Interface().(tea.Cmd); ok && c != nil && quits(c) {
					return true
				}
			}
		}
	}
	return false
}
