package journal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

func openLog(t *testing.T) *journal.Log {
	t.Helper()
	l, err := journal.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func strp(s string) *string { return &s }

func taken(agent, id string, turn *string) journal.Entry {
	return journal.Entry{Type: journal.TypeCheckpointTaken, Body: journal.Checkpoint{
		Agent: agent, Checkpoint: id, Reason: "manual", Turn: turn, At: "2026-01-02T03:04:05.000Z",
		Repos: []journal.RepoState{{Repo: ".", Path: "/tree/" + agent, Commit: "c-" + id, Tree: "t-" + id,
			Skipped: []plumbing.Skip{}, Submodules: []plumbing.Submodule{}}},
	}}
}

func TestParse(t *testing.T) {
	t.Parallel()
	rec := func(seq int, typ string) string {
		return fmt.Sprintf(`{"seq":%d,"ts":"2026-01-02T03:04:05.000Z","type":%q,"agent":"a"}`, seq, typ)
	}
	tests := []struct {
		name    string
		in      string
		seqs    []int64
		torn    bool
		wantErr bool
	}{
		{"empty", "", nil, false, false},
		{"one", rec(1, "edit") + "\n", []int64{1}, false, false},
		{"blank lines are skipped", rec(1, "edit") + "\n\n  \n" + rec(2, "edit") + "\n", []int64{1, 2}, false, false},
		{"torn last line is left out", rec(1, "edit") + "\n" + rec(2, "edit")[:20], []int64{1}, true, false},
		{"a whole record without its newline is torn too", rec(1, "edit") + "\n" + rec(2, "edit"), []int64{1}, true, false},
		{"only a torn line", `{"seq":1,"ts"`, nil, true, false},
		{"corrupt line before the end", rec(1, "edit") + "\n{\"seq\":2,\n" + rec(3, "edit") + "\n", nil, false, true},
		{"record without a type", `{"seq":1,"ts":"x"}` + "\n", nil, false, true},
	}
	for _, tc := range tests {
		recs, torn, err := journal.Parse([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		var seqs []int64
		for _, r := range recs {
			seqs = append(seqs, r.Seq)
			if !json.Valid(r.Line) || r.Type == "" {
				t.Errorf("%s: bad record %+v", tc.name, r)
			}
		}
		if fmt.Sprint(seqs) != fmt.Sprint(tc.seqs) || torn != tc.torn {
			t.Errorf("%s: seqs %v torn %v, want %v %v", tc.name, seqs, torn, tc.seqs, tc.torn)
		}
	}
}

// TestAppendAndReplay: appends get consecutive seqs, RFC 3339 millisecond
// timestamps, the type first and the body's members after; replay gives
// back checkpoints, labels, turns and captures.
func TestAppendAndReplay(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	seqs, err := l.Append(
		journal.Entry{Type: journal.TypeAgentRegistered, Body: journal.AgentRegistered{Agent: "a1", Path: "/tree/a1", Isolation: "in_place"}},
		journal.Entry{Type: journal.TypeTurnStarted, Body: &journal.TurnStarted{Agent: "a1", Turn: "t1", Checkpoint: "k1"}},
		taken("a1", "k1", strp("t1")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1 2 3]" {
		t.Fatalf("seqs %v", seqs)
	}
	seqs, err = l.Append(
		journal.Entry{Type: journal.TypeCheckpointReused, Body: journal.Reused{Agent: "a1", Checkpoint: "k1", Reason: "turn_end", Label: "good", Path: "/tree/a1"}},
		journal.Entry{Type: journal.TypeTurnEnded, Body: &journal.TurnEnded{Agent: "a1", Turn: "t1", Checkpoint: "k1"}},
		journal.Entry{Type: journal.TypeCheckpointFailed, Body: journal.Failed{Agent: "a1", Reason: "manual", Code: "timeout.checkpoint", Path: "/tree/a1"}},
		taken("a1", "k2", nil),
		taken("b2", "k1", nil),
		journal.Entry{Type: journal.TypeCheckpointPruned, Body: journal.Pruned{Agent: "a1", Checkpoints: []string{"k2"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[4 5 6 7 8 9]" {
		t.Fatalf("seqs %v", seqs)
	}
	data, _ := os.ReadFile(l.Path())
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), data)
	}
	head := regexp.MustCompile(`^\{"seq":[0-9]+,"ts":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z","type":"[a-z._]+","agent":"[a-z0-9]+",`)
	for _, ln := range lines {
		if !head.MatchString(ln) || !json.Valid([]byte(ln)) {
			t.Errorf("line %s", ln)
		}
	}

	st, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Seq != 9 || st.Torn {
		t.Errorf("seq %d torn %v", st.Seq, st.Torn)
	}
	a := st.Agents["a1"]
	if a == nil || len(a.Checkpoints) != 2 || a.MaxN != 2 {
		t.Fatalf("agent a1: %+v", a)
	}
	if k1 := a.Checkpoint("k1"); k1 == nil || k1.Label != "good" || k1.Rec.Repos[0].Commit != "c-k1" || k1.Seq != 3 {
		t.Errorf("k1: %+v, want label set by the reuse", k1)
	}
	if k2 := a.Checkpoint("k2"); k2 == nil || !k2.Pruned {
		t.Errorf("k2: %+v, want pruned", k2)
	}
	if l := a.Latest(); l == nil || l.ID() != "k1" {
		t.Errorf("latest %+v, want k1 (k2 is pruned)", l)
	}
	if a.OpenTurn() != nil || a.LastEnded() == nil || a.LastEnded().ID() != "t1" || a.MaxTurn() != 1 {
		t.Errorf("turns %+v", a.Turns)
	}
	var kinds []string
	for _, c := range a.Captures {
		kinds = append(kinds, c.Type+"/"+c.Checkpoint)
	}
	if got := strings.Join(kinds, " "); got != "checkpoint.taken/k1 checkpoint.reused/k1 checkpoint.failed/ checkpoint.taken/k2" {
		t.Errorf("captures %s", got)
	}
	if a.Trees["/tree/a1"] != "in_place" {
		t.Errorf("trees %v", a.Trees)
	}
	if ids := st.AgentIDs("/tree/a1"); fmt.Sprint(ids) != "[a1]" {
		t.Errorf("AgentIDs = %v", ids)
	}
	if st.Agents["b2"] == nil || st.Agents["b2"].Checkpoint("k1") == nil {
		t.Error("agent b2's own k1 is missing")
	}
}

func TestAppendRejectsNonObjects(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	for _, body := range []any{"text", 3, []int{1}, nil} {
		if _, err := l.Append(journal.Entry{Type: "edit", Body: body}); err == nil {
			t.Errorf("Append(%v) succeeded, want an error", body)
		}
	}
	if _, err := os.Stat(l.Path()); err == nil {
		if data, _ := os.ReadFile(l.Path()); len(data) > 0 {
			t.Errorf("a rejected append wrote %q", data)
		}
	}
	// An empty object is a record with only its header.
	if _, err := l.Append(journal.Entry{Type: "edit", Body: struct{}{}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path())
	if !regexp.MustCompile(`^\{"seq":1,"ts":"[^"]+","type":"edit"\}\n$`).Match(data) {
		t.Errorf("log %q", data)
	}
}

// TestTornLastLine: a crash mid-append leaves half a line. Readers ignore
// it, the next append cuts it off, and seq continues from the last whole
// record, for a torn tail shorter and longer than the reader's chunk.
func TestTornLastLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		records     int
		tornBytes   int
		padRecordTo int
	}{
		{"short", 3, 25, 0},
		{"only a torn line", 0, 40, 0},
		{"tail longer than a chunk", 2, 150 << 10, 0},
		{"long log", 400, 30, 0},
		{"last record longer than a chunk", 2, 10, 100 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openLog(t)
			for i := 0; i < tc.records; i++ {
				e := taken("a1", fmt.Sprintf("k%d", i+1), nil)
				if tc.padRecordTo > 0 && i == tc.records-1 {
					c := e.Body.(journal.Checkpoint)
					c.Label = strings.Repeat("p", tc.padRecordTo)
					e.Body = c
				}
				if _, err := l.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			whole, _ := os.ReadFile(l.Path())
			torn := `{"seq":999,"ts":"2026-01-02T03:04:05.000Z","type":"checkpoint.taken","agent":"a1","label":"` + strings.Repeat("x", tc.tornBytes)
			f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(torn)
			f.Close()

			st, err := l.Load()
			if err != nil {
				t.Fatal(err)
			}
			if !st.Torn || st.Seq != int64(tc.records) {
				t.Fatalf("load: torn %v seq %d, want true %d", st.Torn, st.Seq, tc.records)
			}
			if a := st.Agents["a1"]; tc.records > 0 && (a == nil || len(a.Checkpoints) != tc.records) {
				t.Fatalf("load: %+v", a)
			}
			seqs, err := l.Append(journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"x"}}})
			if err != nil {
				t.Fatal(err)
			}
			if seqs[0] != int64(tc.records+1) {
				t.Errorf("seq after the torn line: %d, want %d", seqs[0], tc.records+1)
			}
			data, _ := os.ReadFile(l.Path())
			if !bytes.HasPrefix(data, whole) || bytes.Contains(data, []byte(`"seq":999`)) {
				t.Errorf("the torn line was not cut off cleanly")
			}
			recs, tornNow, err := journal.Parse(data)
			if err != nil || tornNow || len(recs) != tc.records+1 {
				t.Errorf("after the append: %d records, torn %v, err %v", len(recs), tornNow, err)
			}
		})
	}
}

// TestCorruptLastRecord: damage that is not a torn tail (a whole line that
// is not JSON) stops appends instead of being guessed around.
func TestCorruptLastRecord(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	if _, err := l.Append(taken("a1", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0o644)
	f.WriteString("not json\n")
	f.Close()
	if _, err := l.Append(taken("a1", "k2", nil)); err == nil {
		t.Error("append after a corrupt record succeeded")
	}
	if _, err := l.Load(); err == nil {
		t.Error("load of a corrupt log succeeded")
	}
}

// TestConcurrentAppends: appends from many goroutines, each its own open
// of the log as separate processes would be, get unique consecutive seqs
// and whole lines.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			l, err := journal.Open(dir)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < each; i++ {
				e := journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: fmt.Sprintf("w%d", w), Turn: "t1", Paths: []string{strings.Repeat("p", 100*w)}}}
				if _, err := l.Append(e, e); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l, _ := journal.Open(dir)
	recs, torn, err := l.ReadAll()
	if err != nil || torn {
		t.Fatalf("read: torn %v err %v", torn, err)
	}
	if len(recs) != 2*workers*each {
		t.Fatalf("%d records, want %d", len(recs), 2*workers*each)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
	}
	// The two entries of one Append are adjacent: one write.
	for i := 0; i < len(recs); i += 2 {
		var a, b journal.Edit
		recs[i].Decode(&a)
		recs[i+1].Decode(&b)
		if a.Agent != b.Agent {
			t.Fatalf("records %d and %d of one append are split: %s %s", i+1, i+2, a.Agent, b.Agent)
		}
	}
}

// TestLocks: flock semantics the toolkit relies on, between separate opens
// (as between processes): exclusive excludes everything, shared admits
// shared, release lets the next one in, and WaitLock gives up with the
// context's error.
func TestLocks(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	p := l.LockPath("agent-a1")
	ex, err := journal.TryLock(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := journal.TryLock(p, true); !errors.Is(err, journal.ErrLocked) {
		t.Errorf("second exclusive: %v, want ErrLocked", err)
	}
	if _, err := journal.TryLock(p, false); !errors.Is(err, journal.ErrLocked) {
		t.Errorf("shared under exclusive: %v, want ErrLocked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := journal.WaitLock(ctx, p, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitLock on a held lock: %v, want DeadlineExceeded", err)
	}
	got := make(chan error, 1)
	go func() {
		lk, err := journal.WaitLock(context.Background(), p, true)
		lk.Unlock()
		got <- err
	}()
	ex.Unlock()
	ex.Unlock() // twice is harmless
	if err := <-got; err != nil {
		t.Errorf("WaitLock after release: %v", err)
	}

	s1, err := journal.TryLock(p, false)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := journal.TryLock(p, false)
	if err != nil {
		t.Errorf("second shared: %v", err)
	}
	if _, err := journal.TryLock(p, true); !errors.Is(err, journal.ErrLocked) {
		t.Errorf("exclusive under shared: %v, want ErrLocked", err)
	}
	s1.Unlock()
	s2.Unlock()
	if lk, err := journal.TryLock(p, true); err != nil {
		t.Errorf("exclusive after release: %v", err)
	} else {
		lk.Unlock()
	}
	var nilLock *journal.Lock
	nilLock.Unlock()

	// Append waits for the log lock instead of writing beside its holder.
	hold, err := journal.LockFile(l.LockPath("log"), true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		l.Append(journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1"}})
		close(done)
	}()
	select {
	case <-done:
		t.Error("Append wrote while another holder had the log lock")
	case <-time.After(50 * time.Millisecond):
	}
	hold.Unlock()
	<-done
}

// TestReplayTurns: a turn opened by its end alone, a synthetic end, and
// turn numbers that only grow.
func TestReplayTurns(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	_, err := l.Append(
		journal.Entry{Type: journal.TypeTurnStarted, Body: journal.TurnStarted{Agent: "a1", Turn: "t1", NoStart: true}},
		journal.Entry{Type: journal.TypeTurnEnded, Body: journal.TurnEnded{Agent: "a1", Turn: "t1", Checkpoint: "k1"}},
		journal.Entry{Type: journal.TypeTurnStarted, Body: journal.TurnStarted{Agent: "a1", Turn: "t2", Checkpoint: "k2"}},
		journal.Entry{Type: journal.TypeTurnEnded, Body: journal.TurnEnded{Agent: "a1", Turn: "t2", Synthetic: true}},
		journal.Entry{Type: journal.TypeTurnStarted, Body: journal.TurnStarted{Agent: "a1", Turn: "t3", Checkpoint: "k2"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	a := st.Agents["a1"]
	if len(a.Turns) != 3 || !a.Turns[0].NoStart || a.Turns[0].End != "k1" || !a.Turns[1].Synthetic {
		t.Fatalf("turns %+v %+v", a.Turns[0], a.Turns[1])
	}
	if o := a.OpenTurn(); o == nil || o.ID() != "t3" || o.Start != "k2" {
		t.Errorf("open turn %+v, want t3", o)
	}
	if le := a.LastEnded(); le == nil || le.ID() != "t2" {
		t.Errorf("last ended %+v, want t2", le)
	}
	if a.MaxTurn() != 3 {
		t.Errorf("max turn %d", a.MaxTurn())
	}
}
