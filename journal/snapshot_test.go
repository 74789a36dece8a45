package journal_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// process is a new command's Log of the log in dir: no read cache, only
// the snapshot file to start from, written on every Load that read a
// record past it.
func process(dir string) *journal.Log {
	l := &journal.Log{Dir: dir}
	journal.SetSnapshotEvery(l, 1)
	return l
}

// loadAsNew loads the log in l.Dir as a new command does and checks the
// state is the one a fresh replay of the whole log gives.
func loadAsNew(t *testing.T, l *journal.Log, what string) *journal.State {
	t.Helper()
	st := sameAsFresh(t, process(l.Dir), what)
	if st == nil {
		return nil
	}
	// The bindings alone, as a hook reads them.
	reader := &journal.Log{Dir: l.Dir}
	journal.SetSnapshotEvery(reader, 1<<20)
	if bs, err := reader.Bindings(); err != nil || !reflect.DeepEqual(bs, st.Bindings) {
		t.Fatalf("%s: Bindings gives %v, %v; the state has %v", what, bs, err, st.Bindings)
	}
	// Each agent alone, as a capture loads it: the same as in the state.
	ids := []string{"nobody"}
	for id := range st.Agents {
		ids = append(ids, id)
	}
	for _, id := range ids {
		reader := &journal.Log{Dir: l.Dir}
		journal.SetSnapshotEvery(reader, 1<<20) // only reads: the agent alone from the snapshot
		a, err := reader.LoadAgent(id)
		if err != nil {
			t.Fatalf("%s: LoadAgent(%s): %v", what, id, err)
		}
		if !reflect.DeepEqual(a, st.Agents[id]) {
			t.Fatalf("%s: LoadAgent(%s) gives another agent than Load", what, id)
		}
	}
	return st
}

// snapshotState is what a new command's Load gives when the snapshot it
// finds is used: used reports whether that state is other than a fresh
// replay's, which here (the log changed behind the snapshot, as nothing
// ever changes it) proves the snapshot was read and only what follows its
// end was.
func snapshotUsed(t *testing.T, l *journal.Log) bool {
	t.Helper()
	got, err := process(l.Dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh(t, l)
	if err != nil {
		t.Fatal(err)
	}
	return !reflect.DeepEqual(got, want)
}

// rewriteAt replaces old by new (the same length) in the log's file, in
// place (same inode).
func rewriteAt(t *testing.T, path, old, new string) {
	t.Helper()
	if len(old) != len(new) {
		t.Fatalf("rewriteAt: %q and %q differ in length", old, new)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(old))
	if i < 0 {
		t.Fatalf("rewriteAt: %q is not in the log", old)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(new), int64(i)); err != nil {
		t.Fatal(err)
	}
}

// TestLoadReadsOnlyAfterSnapshot: a command starts from the snapshot and
// reads only the records after it. Shown by changing a record before the
// snapshot's end in place, as nothing ever does: a command that read the
// log whole would see the change; one that started from the snapshot does
// not, and still sees what was appended after it.
func TestLoadReadsOnlyAfterSnapshot(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	rng := rand.New(rand.NewSource(3))
	if _, err := l.Append(entriesFor("a1", 1, 40, rng)...); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(taken("early", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(entriesFor("a1", 41, 40, rng)...); err != nil {
		t.Fatal(err)
	}
	loadAsNew(t, l, "writes the snapshot")
	if _, _, _, ok := journal.SnapshotHeader(l); !ok {
		t.Fatal("no snapshot was written")
	}
	if c, err := l.CheckSnapshot(); err != nil || !c.Present || !c.Used || !c.Agrees {
		t.Fatalf("CheckSnapshot of a right snapshot: %+v, %v", c, err)
	}
	rewriteAt(t, l.Path(), `"agent":"early"`, `"agent":"later"`)
	// git venom-doctor sees it (the one change no check before a Load can).
	if c, err := l.CheckSnapshot(); err != nil || !c.Used || c.Agrees {
		t.Fatalf("CheckSnapshot after a record before its end changed: %+v, %v", c, err)
	}
	if _, err := l.Append(taken("after", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	st, err := process(l.Dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Agents["early"] == nil || st.Agents["later"] != nil {
		t.Fatal("the snapshot was not used: the record before it was read again")
	}
	if st.Agents["after"] == nil {
		t.Fatal("the record appended after the snapshot was not read")
	}
	if err := os.Truncate(l.Path(), 10); err != nil {
		t.Fatal(err)
	}
	if c, err := l.CheckSnapshot(); err != nil || !c.Present || c.Used {
		t.Fatalf("CheckSnapshot of a snapshot past the log's end: %+v, %v", c, err)
	}
}

// TestLoadFromSnapshot: a new command's Load, starting from the snapshot
// the previous one left, gives exactly what a fresh replay gives after
// appends, a torn line and its cut, blank lines, a log cut back, its last
// line rewritten in place, its records changed in a copy put in its place,
// another log put in its place, a log concatenated onto it, a corrupt
// line, and a removed log. Each case is one of the checks a snapshot must
// pass: without it, the test fails.
func TestLoadFromSnapshot(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(5))
	l := openLog(t)
	writer := &journal.Log{Dir: l.Dir}
	loadAsNew(t, l, "no log yet")
	k := 1
	for round := 0; round < 20; round++ {
		if n := rng.Intn(4); n > 0 {
			if _, err := writer.Append(journal.RichEntries(rng, fmt.Sprintf("a%d", rng.Intn(3)), k, n)...); err != nil {
				t.Fatal(err)
			}
			k += n
		}
		loadAsNew(t, l, fmt.Sprintf("round %d", round))
	}

	// A torn line (a crash mid-append), then the next append cuts it.
	appendRaw(t, l, `{"seq":999,"ts":"2026-01-02T03:04:05.000Z","type":"edit","ag`)
	if st := loadAsNew(t, l, "torn line"); !st.Torn {
		t.Fatal("a torn last line was not reported")
	}
	if _, err := writer.Append(entriesFor("a1", k, 3, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 3
	loadAsNew(t, l, "torn line cut by an append")

	// Blank lines after the snapshot's last record, then records.
	appendRaw(t, l, "\n  \n\n")
	loadAsNew(t, l, "blank lines at the end")
	loadAsNew(t, l, "blank lines at the end, from their snapshot")
	if _, err := writer.Append(entriesFor("a0", k, 2, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 2
	loadAsNew(t, l, "records after blank lines")

	// Size: cut back to half, far before the snapshot's end (reading on
	// from its end would read past the file's).
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	half := bytes.LastIndexByte(data[:len(data)/2], '\n') + 1
	if err := os.Truncate(l.Path(), int64(half)); err != nil {
		t.Fatal(err)
	}
	loadAsNew(t, l, "cut back to half")
	if _, err := writer.Append(entriesFor("b1", k, 30, rng)...); err != nil {
		t.Fatal(err)
	}
	k += 30
	loadAsNew(t, l, "cut back, then appended past the old end")

	// The last line: rewritten in place, same size, then one more record.
	if _, err := writer.Append(taken("z1", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	loadAsNew(t, l, "before the rewrite")
	rewriteAt(t, l.Path(), `"agent":"z1"`, `"agent":"z2"`)
	if _, err := writer.Append(taken("z3", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	if st := loadAsNew(t, l, "last line rewritten"); st.Agents["z2"] == nil || st.Agents["z1"] != nil {
		t.Fatal("the rewritten record was not read again")
	}

	// The file: a copy with an earlier record changed at the same length
	// put in the log's place (the old file still open here, so the copy
	// cannot take its inode), its last line as it was.
	if _, err := writer.Append(taken("y1", "k1", nil), taken("y9", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	loadAsNew(t, l, "before the copy")
	old, err := os.Open(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	data, err = os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	tmp := l.Path() + ".new"
	if err := os.WriteFile(tmp, bytes.Replace(data, []byte(`"y1"`), []byte(`"y2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, l.Path()); err != nil {
		t.Fatal(err)
	}
	if st := loadAsNew(t, l, "a changed copy in its place"); st.Agents["y2"] == nil {
		t.Fatal("the record changed in the copy was not read")
	}

	// The next seq: the lines of another log appended as they are (their
	// seqs start again at 1) after the log was put back whole by a copy
	// that got the old file's identity... which a copy cannot: so the
	// other log's first line is made to start where the snapshot's tail
	// ends, in the same file, by an append of raw lines.
	loadAsNew(t, l, "before the concatenation")
	other := openLog(t)
	if _, err := other.Append(entriesFor("c1", 1, 5, rng)...); err != nil {
		t.Fatal(err)
	}
	od, err := os.ReadFile(other.Path())
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, string(od))
	loadAsNew(t, l, "another log concatenated")

	// A corrupt line appended: the same error, with its true line number.
	appendRaw(t, l, "{\"seq\":2,\n")
	if _, err := process(l.Dir).Load(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("log line %d", countLines(t, l.Path()))) {
		t.Fatalf("corrupt line: %v", err)
	}
	loadAsNew(t, l, "corrupt line")

	// Removed: no records, whatever the snapshot says.
	if err := os.Remove(l.Path()); err != nil {
		t.Fatal(err)
	}
	if st := loadAsNew(t, l, "removed"); len(st.Agents) != 0 {
		t.Fatalf("agents of a removed log: %v", st.Agents)
	}
}

// TestSnapshotSeqMustFollow: a snapshot whose tail line is still where it
// was, but followed by records that do not go on from its seq (the log
// was rebuilt around that line: another log's records before and after
// it), is not used.
func TestSnapshotSeqMustFollow(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	if _, err := l.Append(taken("first", "k1", nil), taken("tail", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	loadAsNew(t, l, "writes the snapshot")
	end, seq, tail, ok := journal.SnapshotHeader(l)
	if !ok || seq != 2 {
		t.Fatalf("snapshot: ok %v seq %d", ok, seq)
	}
	// The same file, rewritten: a first line of the same length naming
	// another agent, the tail line where it was, and after it a record
	// numbered 1, as the first of another log would be.
	data, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Replace(string(data[:end-int64(len(tail))]), `"first"`, `"other"`, 1)
	after := `{"seq":1,"ts":"2026-01-02T03:04:05.000Z","type":"agent.registered","agent":"new","path":"/p","isolation":"in_place"}` + "\n"
	f, err := os.OpenFile(l.Path(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(first+tail+after), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st := loadAsNew(t, l, "records before the tail line changed, seq restarting after it"); st.Agents["other"] == nil {
		t.Fatal("the changed first record was not read")
	}
}

// TestBadSnapshots: a snapshot file that is not whole, of another
// version, fails its checksum, does not decode, or claims nothing, is
// never used: the log is read whole, and the next snapshot replaces it.
// Each crafted file holds a state the log does not give (agent "evil")
// and claims to cover the log as it is, so a check that let it through
// would show.
func TestBadSnapshots(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(9))
	evilLog := openLog(t)
	if _, err := evilLog.Append(taken("evil", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	evil, err := evilLog.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		craft func(l *journal.Log, end, seq int64, tail string) []byte
	}{
		{"right (the test's own check)", func(l *journal.Log, end, seq int64, tail string) []byte {
			return journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), end, seq, tail, evil)
		}},
		{"another magic", func(l *journal.Log, end, seq int64, tail string) []byte {
			b := journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), end, seq, tail, evil)
			b[0] = 'V'
			return b
		}},
		{"a later version", func(l *journal.Log, end, seq int64, tail string) []byte {
			return journal.CraftSnapshot(journal.SnapshotVersion+1, l.Path(), end, seq, tail, evil)
		}},
		{"checksum wrong", func(l *journal.Log, end, seq int64, tail string) []byte {
			// The file damaged on disk: a byte of a string changed.
			b := journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), end, seq, tail, evil)
			return bytes.Replace(b, []byte("evil"), []byte("evix"), 1)
		}},
		{"cut short", func(l *journal.Log, end, seq int64, tail string) []byte {
			b := journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), end, seq, tail, evil)
			return b[:len(journal.SnapshotMagic)+2]
		}},
		{"no tail", func(l *journal.Log, end, seq int64, tail string) []byte {
			size := int64(0)
			if fi, err := os.Stat(l.Path()); err == nil {
				size = fi.Size()
			}
			return journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), size, seq, "", evil)
		}},
		{"another log file", func(l *journal.Log, end, seq int64, tail string) []byte {
			return journal.CraftSnapshot(journal.SnapshotVersion, evilLog.Path(), end, seq, tail, evil)
		}},
		{"a state that does not decode", func(l *journal.Log, end, seq int64, tail string) []byte {
			b := journal.CraftSnapshot(journal.SnapshotVersion, l.Path(), end, seq, tail, &journal.State{Agents: map[string]*journal.Agent{}})
			// One more byte after the state, and the checksum made right
			// for it: written by a buggy encoder, say.
			return journal.Recrc(append(b, 7))
		}},
		{"empty", func(*journal.Log, int64, int64, string) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openLog(t)
			if _, err := l.Append(entriesFor("a1", 1, 20, rng)...); err != nil {
				t.Fatal(err)
			}
			loadAsNew(t, l, "writes a snapshot")
			end, seq, tail, ok := journal.SnapshotHeader(l)
			if !ok {
				t.Fatal("no snapshot")
			}
			if err := os.WriteFile(l.SnapshotPath(), tc.craft(l, end, seq, tail), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := process(l.Dir).Load()
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh(t, l)
			if err != nil {
				t.Fatal(err)
			}
			used := !reflect.DeepEqual(got, want)
			if tc.name == "right (the test's own check)" {
				if !used {
					t.Fatal("a right snapshot was not used: the crafted ones prove nothing")
				}
				return
			}
			if used {
				t.Fatal("the bad snapshot was used")
			}
			loadAsNew(t, l, "after the bad snapshot")
		})
	}
}

// TestSnapshotWriteFails: when the snapshot cannot be written (a
// directory in its place), Load still gives the log's state.
func TestSnapshotWriteFails(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	if err := os.Mkdir(l.SnapshotPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.SnapshotPath()+"/x", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 3; i++ {
		if _, err := l.Append(entriesFor("a1", 1+10*i, 10, rng)...); err != nil {
			t.Fatal(err)
		}
		p := process(l.Dir)
		sameAsFresh(t, p, "snapshot cannot be written")
		sameAsFresh(t, p, "again, in process")
	}
}

// TestSnapshotEvery: a snapshot is written once a Load replayed the
// threshold's number of records past the last one, not before.
func TestSnapshotEvery(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	journal.SetSnapshotEvery(l, 5)
	records := func(k, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, err := l.Append(taken("a1", fmt.Sprintf("k%d", k+i), nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	records(1, 4)
	sameAsFresh(t, l, "4 records")
	if _, err := os.Stat(l.SnapshotPath()); err == nil {
		t.Fatal("a snapshot was written before 5 records")
	}
	records(5, 1)
	sameAsFresh(t, l, "5 records")
	_, seq, _, ok := journal.SnapshotHeader(l)
	if !ok || seq != 5 {
		t.Fatalf("after 5 records: snapshot %v at seq %d", ok, seq)
	}
	records(6, 4)
	sameAsFresh(t, l, "4 more")
	if _, seq2, _, _ := journal.SnapshotHeader(l); seq2 != 5 {
		t.Fatalf("the snapshot was rewritten after 4 more records (seq %d)", seq2)
	}
	records(10, 1)
	sameAsFresh(t, l, "5 more")
	if _, seq2, _, _ := journal.SnapshotHeader(l); seq2 != 10 {
		t.Fatalf("the snapshot was not rewritten after 5 more records (seq %d)", seq2)
	}
}

// TestSnapshotConcurrent: commands appending and loading at once, each
// writing snapshots, never see another state than a fresh replay's of
// what the log held (checked at the end, and -race).
func TestSnapshotConcurrent(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < 15; i++ {
				p := process(l.Dir)
				if _, err := p.Append(entriesFor(fmt.Sprintf("w%d", w), 1+i*3, 3, rng)...); err != nil {
					errs <- err
					return
				}
				if _, err := p.Load(); err != nil {
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
	loadAsNew(t, l, "after the concurrent commands")
}

// FuzzLoadSnapshot: under any sequence of appends, torn lines, cuts, the
// last line rewritten in place, and a snapshot damaged, cut or removed,
// a new command's Load gives what a fresh replay of the log gives.
func FuzzLoadSnapshot(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 1, 2, 1, 0, 1})
	f.Add([]byte{0, 0, 0, 1, 3, 1, 0, 0, 1})
	f.Add([]byte{0, 1, 4, 1, 0, 5, 1, 6, 1, 7, 0, 1})
	f.Add([]byte{0, 0, 1, 7, 1, 2, 0, 1, 3, 3, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 24 {
			ops = ops[:24] // each op fsyncs the log or the snapshot
		}
		l := openLog(t)
		rng := rand.New(rand.NewSource(int64(len(ops))))
		k := 1
		for i, op := range ops {
			arg := int(op >> 3)
			switch op % 8 {
			case 0:
				n := 1 + arg%4
				if _, err := l.Append(journal.RichEntries(rng, fmt.Sprintf("a%d", arg%3), k, n)...); err != nil {
					t.Fatal(err)
				}
				k += n
			case 1:
				process(l.Dir).Load() // may be an error (a corrupt line): compared below
			case 2:
				if _, err := os.Stat(l.Path()); err == nil {
					appendRaw(t, l, `{"seq":5,"ts":"x","type":"edit"`)
				}
			case 3:
				data, err := os.ReadFile(l.Path())
				if err != nil || len(data) == 0 {
					continue
				}
				cut := bytes.LastIndexByte(data[:len(data)*(1+arg%4)/5], '\n') + 1
				if err := os.Truncate(l.Path(), int64(cut)); err != nil {
					t.Fatal(err)
				}
			case 4, 5, 6:
				data, err := os.ReadFile(l.SnapshotPath())
				if err != nil || len(data) == 0 {
					continue
				}
				switch op % 8 {
				case 4:
					data[arg%len(data)] ^= byte(1 + arg%255)
				case 5:
					data = data[:arg%len(data)]
				case 6:
					data = nil
				}
				if err := os.WriteFile(l.SnapshotPath(), data, 0o644); err != nil {
					t.Fatal(err)
				}
			case 7:
				data, err := os.ReadFile(l.Path())
				if err != nil {
					continue
				}
				end := bytes.LastIndexByte(data, '\n')
				if end < 0 {
					continue
				}
				start := bytes.LastIndexByte(data[:end], '\n') + 1
				if j := bytes.Index(data[start:end], []byte(`"agent":"a`)); j >= 0 {
					data[start+j+len(`"agent":"a`)] = 'b'
					if err := os.WriteFile(l.Path(), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := process(l.Dir).Load()
			want, werr := fresh(t, l)
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Fatalf("op %d (%d): Load error %v, a fresh read's %v", i, op, err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("op %d (%d): Load gives a state a fresh read does not", i, op)
			}
		}
	})
}

// TestLoadAgentWritesWholeSnapshot: a LoadAgent that replayed enough
// records to write a new snapshot writes every agent's state into it, not
// only the one it was asked for.
func TestLoadAgentWritesWholeSnapshot(t *testing.T) {
	t.Parallel()
	l := openLog(t)
	journal.SetSnapshotEvery(l, 2)
	if _, err := l.Append(taken("a", "k1", nil), taken("b", "k1", nil)); err != nil {
		t.Fatal(err)
	}
	sameAsFresh(t, l, "writes the first snapshot")
	r := &journal.Log{Dir: l.Dir}
	journal.SetSnapshotEvery(r, 2)
	if _, err := l.Append(taken("a", "k2", nil), taken("a", "k3", nil)); err != nil {
		t.Fatal(err)
	}
	if a, err := r.LoadAgent("a"); err != nil || a == nil || len(a.Checkpoints) != 3 {
		t.Fatalf("LoadAgent(a): %v, %v", a, err)
	}
	if _, seq, _, _ := journal.SnapshotHeader(l); seq != 4 {
		t.Fatalf("LoadAgent wrote no new snapshot (it is at record %d)", seq)
	}
	if st := loadAsNew(t, l, "from the snapshot LoadAgent wrote"); st.Agents["b"] == nil {
		t.Fatal("agent b is not in the snapshot LoadAgent wrote")
	}
}
