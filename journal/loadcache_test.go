package journal_test

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// entriesFor returns n records of every kind replay reads, for agent ag,
// numbered from k: their bodies share slices and pointers the way a replay
// keeps them (a turn end's pending harness end, an edit's paths, a
// rollback's drops).
func entriesFor(ag string, k, n int, rng *rand.Rand) []journal.Entry {
	var es []journal.Entry
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("k%d", k+i)
		turn := fmt.Sprintf("t%d", k+i)
		switch rng.Intn(9) {
		case 0:
			es = append(es, journal.Entry{Type: journal.TypeAgentRegistered, Body: journal.AgentRegistered{Agent: ag, Path: "/tree/" + ag, Isolation: "worktree"}})
		case 1:
			es = append(es, journal.Entry{Type: journal.TypeTurnStarted, Body: &journal.TurnStarted{Agent: ag, Turn: turn, Checkpoint: id}}, taken(ag, id, &turn))
		case 2:
			es = append(es, journal.Entry{Type: journal.TypeTurnEnded, Body: &journal.TurnEnded{Agent: ag, Turn: fmt.Sprintf("t%d", k+i-1),
				HarnessEndPending: &journal.EndPending{Transcript: "/tmp/x.jsonl", After: id}}})
		case 3:
			es = append(es, journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: ag, Turn: turn, Paths: []string{"a/" + id, "b\nc"}, Path: "/tree/" + ag}})
		case 4:
			es = append(es, journal.Entry{Type: journal.TypeCheckpointReused, Body: journal.Reused{Agent: ag, Checkpoint: fmt.Sprintf("k%d", k+i-1), Reason: "turn_end", Label: "l" + id}})
		case 5:
			es = append(es, journal.Entry{Type: journal.TypeCheckpointPruned, Body: journal.Pruned{Agent: ag, Checkpoints: []string{fmt.Sprintf("k%d", k+i-2)}}})
		case 6:
			es = append(es, journal.Entry{Type: journal.TypeRollbackStarted, Body: journal.RollbackStarted{Agent: ag, Checkpoint: id, Safety: id, Restore: "all", Plan: "p1-0", Path: "/tree/" + ag}})
		case 7:
			es = append(es, journal.Entry{Type: journal.TypeRollbackEnded, Body: journal.RollbackEnded{Agent: ag, Checkpoint: id, Safety: id, Restore: "all", OK: true, Drops: []string{turn}}})
		case 8:
			es = append(es, journal.Entry{Type: journal.TypeNotePending, Body: journal.NotePending{Agent: ag, Text: "note " + id}},
				journal.Entry{Type: journal.TypeAgentBinding, Body: journal.AgentBinding{Agent: ag, Harness: "claude-code", HarnessSession: id}})
		}
	}
	return es
}

// fresh is what a process that never read the log before gets: the whole
// file read and replayed (and no file kept open, which would keep its
// inode from another file).
func fresh(t *testing.T, l *journal.Log) (*journal.State, error) {
	t.Helper()
	recs, torn, err := (&journal.Log{Dir: l.Dir}).ReadAll()
	if err != nil {
		return nil, err
	}
	st, err := journal.Replay(recs)
	if err != nil {
		return nil, err
	}
	st.Torn = torn
	return st, nil
}

// sameAsFresh loads with l, which read the log before, and checks the
// state is the one a fresh read gives.
func sameAsFresh(t *testing.T, l *journal.Log, what string) *journal.State {
	t.Helper()
	got, err := l.Load()
	want, werr := fresh(t, l)
	if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("%s: Load error %v, a fresh read's %v", what, err, werr)
	}
	if err != nil {
		return nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Load gives a state a fresh read does not:\n got %+v\nwant %+v", what, got, want)
	}
	return got
}

// TestLoadAfterAppends: a Log that loaded before sees exactly what a fresh
// read sees after other processes appended, after a torn line and its
// cut, after the file was replaced or rewritten in place, and after the
// caller changed a state Load gave it.
func TestLoadAfterAppends(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(7))
	l := openLog(t)
	writer := &journal.Log{Dir: l.Dir} // another process
	sameAsFresh(t, l, "no log yet")
	k := 1
	for round := 0; round < 30; round++ {
		n := rng.Intn(4)
		if n > 0 {
			if _, err := writer.Append(entriesFor(fmt.Sprintf("a%d", rng.Intn(3)), k, n, rng)...); err != nil {
				t.Fatal(err)
			}
			k += n
		}
		st := sameAsFresh(t, l, fmt.Sprintf("round %d", round))
		// The caller's state is its own: changing it changes no later Load.
		for _, a := range st.Agents {
			for _, s := range a.Checkpoints {
				s.Label, s.Pruned = "changed by the caller", true
			}
			for _, tt := range a.Turns {
				tt.EndSeq = -1
			}
			a.Captures = append(a.Captures[:0], journal.Capture{Type: "x"})
			a.Trees["/elsewhere"] = "in_place"
			a.Dropped["t999"] = true
			a.OpenRollback = nil
		}
	}

	// A torn line (a crash mid-append), then the next append cuts it.
	appendRaw(t, l, `{"seq":999,"ts":"2026-01-02T03:04:05.000Z","type":"edit","ag`)
	if st := sameAsFresh(t, l, "torn line"); !st.Torn {
		t.Fatal("a torn last line was not reported")
	}
	if _, err := writer.Append(entriesFor("a1", k, 3, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 3
	if st := sameAsFresh(t, l, "torn line cut by an append"); st.Torn {
		t.Fatal("torn after the append cut the line")
	}

	// Blank lines after the last record (a person's editor), then records
	// after them.
	appendRaw(t, l, "\n  \n\n")
	sameAsFresh(t, l, "blank lines at the end")
	if _, err := writer.Append(entriesFor("a0", k, 2, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 2
	sameAsFresh(t, l, "records after blank lines")

	// Cut back in place (the last records removed by hand), then grown
	// past the point read last by new records: the bytes there are not
	// the line read there.
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.Truncate(l.Path(), int64(len(data)-len(lines[len(lines)-2])-len(lines[len(lines)-3]))); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Append(entriesFor("b1", k, 4, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 4
	if st := sameAsFresh(t, l, "cut back, then appended to"); st.Agents["b1"] == nil {
		t.Fatal("the new records were not read")
	}

	// The last line read rewritten in place, same size, then one more
	// appended: the line read is not there any more.
	if _, err := writer.Append(taken("z1", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	sameAsFresh(t, l, "before the rewrite")
	data, err = os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Path(), []byte(strings.ReplaceAll(string(data), `"z1"`, `"z2"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Append(taken("z3", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	if st := sameAsFresh(t, l, "last line rewritten"); st.Agents["z2"] == nil || st.Agents["z1"] != nil {
		t.Fatal("the rewritten record was not read again")
	}

	// Removed and written again, an earlier record changed at the same
	// length: a file system may give the new file the old one's inode
	// (ext4 does at once), unless the old one is still open.
	if _, err := writer.Append(taken("y1", "k1", nil), taken("y9", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	sameAsFresh(t, l, "before the removal")
	data, err = os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(l.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Path(), []byte(strings.Replace(string(data), `"y1"`, `"y2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := sameAsFresh(t, l, "removed and written again"); st.Agents["y2"] == nil {
		t.Fatal("the record changed in the new file was not read")
	}

	// Replaced by another file holding more than was read.
	other := openLog(t)
	if _, err := other.Append(entriesFor("c1", 1, 40, rng)...); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other.Path(), l.Path()); err != nil {
		t.Fatal(err)
	}
	if st := sameAsFresh(t, l, "replaced"); st.Agents["a0"] != nil {
		t.Fatal("records of the replaced file are still there")
	}

	// A corrupt line appended: the same error, with its true line number.
	appendRaw(t, l, "{\"seq\":2,\n")
	if _, err := l.Load(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("log line %d", countLines(t, l.Path()))) {
		t.Fatalf("corrupt line: %v", err)
	}
	sameAsFresh(t, l, "corrupt line")

	// Removed: no records.
	if err := os.Remove(l.Path()); err != nil {
		t.Fatal(err)
	}
	if st := sameAsFresh(t, l, "removed"); len(st.Agents) != 0 {
		t.Fatalf("agents of a removed log: %v", st.Agents)
	}
}

// appendRaw appends text to l's file as it is, as a crash or a person's
// editor may leave it.
func appendRaw(t *testing.T, l *journal.Log, text string) {
	t.Helper()
	f, err := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// BenchmarkLoad is a command's second Load of a log of 2,000 records
// (a rollback loads it five times): with nothing appended since the
// first, it decodes nothing.
func BenchmarkLoad(b *testing.B) {
	l, err := journal.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for k := 1; k <= 2000; k += 100 {
		if _, err := l.Append(entriesFor("a1", k, 100, rng)...); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := (&journal.Log{Dir: l.Dir}).Load(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := l.Load(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
