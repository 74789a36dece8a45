package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/plumbing"
)

// RichEntries returns n records for agent ag, numbered from k, of every
// type a replay reads, with every field of every body set now and then
// (and left empty, nil or null other times): what a replay snapshot must
// give back exactly. TestSnapshotCoversEveryField checks that, over a few
// hundred of them, every field of the State types is set at least once.
func RichEntries(rng *rand.Rand, ag string, k, n int) []Entry {
	str := func(prefix string) string {
		switch rng.Intn(6) {
		case 0:
			return ""
		case 1:
			return prefix + "\n\"é\x00\xff"
		}
		return fmt.Sprintf("%s%d", prefix, rng.Intn(1000))
	}
	opt := func(prefix string) *string {
		if rng.Intn(3) == 0 {
			return nil
		}
		s := str(prefix)
		return &s
	}
	strs := func(prefix string) []string {
		switch rng.Intn(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+rng.Intn(3))
		for i := range out {
			out[i] = str(prefix)
		}
		return out
	}
	strMap := func(prefix string) map[string]string {
		if rng.Intn(3) == 0 {
			return nil // omitted when empty, so never {}
		}
		m := map[string]string{}
		for i := 0; i <= rng.Intn(2); i++ {
			m[fmt.Sprintf("%s%d", prefix, i)] = str("tree")
		}
		return m
	}
	tree := "/tree/" + ag
	var es []Entry
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("k%d", k+i)
		turn := fmt.Sprintf("t%d", k+i)
		switch rng.Intn(14) {
		case 0:
			es = append(es, Entry{Type: TypeAgentRegistered, Body: AgentRegistered{Agent: ag, Path: str(tree), Isolation: str("iso")}})
		case 1, 2:
			var repos []RepoState
			if rng.Intn(5) > 0 {
				r := RepoState{Repo: ".", Path: tree, Commit: str("c"), Tree: str("t"), Head: opt("h"), Branch: str("b")}
				if rng.Intn(2) == 0 {
					r.Skipped = []Skip{{Path: str("big"), Bytes: rng.Int63n(1 << 40), Reason: "too_big"}}
				} else if rng.Intn(2) == 0 {
					r.Skipped = []Skip{}
				}
				if rng.Intn(2) == 0 {
					r.Submodules = []plumbing.Submodule{{Path: str("sub"), Commit: opt("sc"), Dirty: rng.Intn(2) == 0}}
				} else if rng.Intn(2) == 0 {
					r.Submodules = []plumbing.Submodule{}
				}
				repos = []RepoState{r}
				if rng.Intn(4) == 0 {
					repos = append(repos, RepoState{Repo: "sub", Path: str("p")})
				}
			} else if rng.Intn(2) == 0 {
				repos = []RepoState{}
			}
			es = append(es, Entry{Type: TypeCheckpointTaken, Body: Checkpoint{Agent: ag, Checkpoint: id, Reason: str("r"),
				Turn: opt("t"), ThroughTurn: opt("t"), At: str("2026-"), MidTurn: rng.Intn(2) == 0, Overlap: rng.Intn(2) == 0,
				Label: str("l"), ToolCall: rng.Intn(2) == 0, Repos: repos}})
		case 3:
			es = append(es, Entry{Type: TypeCheckpointReused, Body: Reused{Agent: ag, Checkpoint: fmt.Sprintf("k%d", k+i-1-rng.Intn(3)),
				Reason: str("r"), Turn: opt("t"), ThroughTurn: opt("t"), At: str("a"), Label: str("l"), Path: str(tree)}})
		case 4:
			es = append(es, Entry{Type: TypeCheckpointFailed, Body: Failed{Agent: ag, Reason: str("r"), Code: str("c"), Message: str("m"), Turn: opt("t"), Path: str(tree)}})
		case 5:
			es = append(es, Entry{Type: TypeCheckpointPruned, Body: Pruned{Agent: ag, Checkpoints: []string{fmt.Sprintf("k%d", k+i-1-rng.Intn(4))}}})
		case 6:
			es = append(es, Entry{Type: TypeTurnStarted, Body: TurnStarted{Agent: ag, Turn: turn, Checkpoint: str("k"), NoStart: rng.Intn(2) == 0,
				Harness: str("h"), HarnessSession: str("s"), HarnessTurn: str("u")}})
		case 7:
			// A turn's end is known, or pending (then the end is not given).
			var p *EndPending
			end := str("e")
			if rng.Intn(2) == 0 {
				p, end = &EndPending{Transcript: str("/x"), After: str("a"), TextSHA256: str("f")}, ""
			}
			es = append(es, Entry{Type: TypeTurnStarted, Body: TurnStarted{Agent: ag, Turn: turn}},
				Entry{Type: TypeTurnEnded, Body: TurnEnded{Agent: ag, Turn: fmt.Sprintf("t%d", k+i-rng.Intn(2)), Checkpoint: str("k"),
					Synthetic: rng.Intn(2) == 0, HarnessSession: str("s"), HarnessTurn: str("u"), HarnessEnd: end, HarnessEndPending: p}})
		case 8:
			es = append(es, Entry{Type: TypeEdit, Body: Edit{Agent: ag, Turn: str("t"), Paths: strs("p"), Path: str(tree)}})
		case 9:
			var perms json.RawMessage
			if rng.Intn(2) == 0 {
				perms, _ = EncodePerms([]PathPerm{{Path: str("f"), Perm: "0600"}})
			}
			var created json.RawMessage
			switch rng.Intn(3) {
			case 0:
				created, _ = EncodeCreated(strs("c"))
			case 1:
				created, _ = EncodeCreated(nil)
			}
			es = append(es, Entry{Type: TypeRollbackStarted, Body: RollbackStarted{Agent: ag, Checkpoint: id, Safety: str("k"), Restore: str("r"),
				Plan: str("p"), Path: str(tree), Perms: perms, Index: str("i"), Indexes: strMap("sub"), Created: created}})
		case 10:
			es = append(es, Entry{Type: TypeRollbackEnded, Body: RollbackEnded{Agent: ag, Checkpoint: id, Safety: str("k"), Restore: str("r"),
				OK: rng.Intn(2) == 0, Code: str("c"), After: str("k"), Drops: strs("t"), Path: str(tree), Rescued: str("r")}})
		case 11:
			es = append(es, Entry{Type: TypeNotePending, Body: NotePending{Agent: ag, Text: str("x"), Rollback: str("k"), Path: str(tree), Session: str("s")}})
		case 12:
			es = append(es, Entry{Type: TypeNoteDelivered, Body: NoteDelivered{Agent: ag, Note: int64(rng.Intn(k + i + 1))}},
				Entry{Type: TypeAgentBinding, Body: AgentBinding{Agent: ag, Harness: str("h"), HarnessSession: str("s"),
					ForkSource: str("f"), ForkAt: str("a"), Confirmed: rng.Intn(2) == 0}})
		case 13:
			es = append(es, Entry{Type: TypeAgentArchived, Body: AgentArchived{Agent: ag, Removed: strs("k"), Kept: strs("k")}})
		}
	}
	return es
}

// Skip is plumbing's, as records carry it.
type Skip = plumbing.Skip

// replayOf is the state a fresh replay of entries gives, through their
// JSON lines as Append writes them.
func replayOf(t testing.TB, es []Entry) *State {
	t.Helper()
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(es...); err != nil {
		t.Fatal(err)
	}
	recs, _, err := l.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	st, err := Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSnapshotRoundTrip: a state encoded and decoded is the state, for
// random logs of every record type and field.
func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(11))
	for round := 0; round < 40; round++ {
		var es []Entry
		for a := 0; a < 1+rng.Intn(3); a++ {
			es = append(es, RichEntries(rng, fmt.Sprintf("a%d", a), 1+len(es), rng.Intn(60))...)
		}
		want := replayOf(t, es)
		b := encodeState(nil, want)
		got, err := decodeState(string(b))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: decoded state differs at %s", round, firstDiff(reflect.ValueOf(got), reflect.ValueOf(want), "State"))
		}
		if again := encodeState(nil, got); string(again) != string(b) {
			t.Fatalf("round %d: the decoded state encodes to other bytes", round)
		}
	}
}

func dump(st *State) string {
	b, _ := json.MarshalIndent(st, "", " ")
	return string(b)
}

// stateFields lists every field reachable from State, as Type.Field, so a
// change to the State types is seen (TestSnapshotFields).
func stateFields() []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			if seen[t] {
				return
			}
			seen[t] = true
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				out = append(out, t.Name()+"."+f.Name+" "+f.Type.String())
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeOf(State{}))
	sort.Strings(out)
	return out
}

// snapshotFields is stateFields as snapshotVersion encodes them.
const snapshotFields = `Agent.Archived bool
Agent.Binding *journal.AgentBinding
Agent.Captures []journal.Capture
Agent.Checkpoints []*journal.Saved
Agent.Dropped map[string]bool
Agent.Edits []journal.Edited
Agent.Ended []journal.RollbackEnded
Agent.ID string
Agent.MaxN int
Agent.Notes map[int64]journal.NotePending
Agent.OpenRollback *journal.RollbackStarted
Agent.Rollbacks []journal.RollbackStarted
Agent.Trees map[string]string
Agent.Turns []*journal.Turn
Agent.byID map[string]*journal.Saved
AgentBinding.Agent string
AgentBinding.Confirmed bool
AgentBinding.ForkAt string
AgentBinding.ForkSource string
AgentBinding.Harness string
AgentBinding.HarnessSession string
Capture.At string
Capture.Checkpoint string
Capture.Path string
Capture.Reason string
Capture.Seq int64
Capture.ThroughTurn *string
Capture.Turn string
Capture.Type string
Checkpoint.Agent string
Checkpoint.At string
Checkpoint.Checkpoint string
Checkpoint.Label string
Checkpoint.MidTurn bool
Checkpoint.Overlap bool
Checkpoint.Reason string
Checkpoint.Repos []journal.RepoState
Checkpoint.ThroughTurn *string
Checkpoint.ToolCall bool
Checkpoint.Turn *string
Edit.Agent string
Edit.Path string
Edit.Paths []string
Edit.Turn string
Edited.Edit journal.Edit
Edited.Seq int64
EndPending.After string
EndPending.TextSHA256 string
EndPending.Transcript string
NotePending.Agent string
NotePending.Path string
NotePending.Rollback string
NotePending.Session string
NotePending.Text string
RepoState.Branch string
RepoState.Commit string
RepoState.Head *string
RepoState.Path string
RepoState.Repo string
RepoState.Skipped []plumbing.Skip
RepoState.Submodules []plumbing.Submodule
RepoState.Tree string
RollbackEnded.After string
RollbackEnded.Agent string
RollbackEnded.Checkpoint string
RollbackEnded.Code string
RollbackEnded.Drops []string
RollbackEnded.OK bool
RollbackEnded.Path string
RollbackEnded.Rescued string
RollbackEnded.Restore string
RollbackEnded.Safety string
RollbackStarted.Agent string
RollbackStarted.Checkpoint string
RollbackStarted.Created json.RawMessage
RollbackStarted.Index string
RollbackStarted.Indexes map[string]string
RollbackStarted.Path string
RollbackStarted.Perms json.RawMessage
RollbackStarted.Plan string
RollbackStarted.Restore string
RollbackStarted.Safety string
Saved.Label string
Saved.N int
Saved.Pruned bool
Saved.Rec journal.Checkpoint
Saved.Seq int64
Skip.Bytes int64
Skip.Path string
Skip.Reason string
State.Agents map[string]*journal.Agent
State.Bindings []journal.AgentBinding
State.Seq int64
State.Torn bool
Submodule.Commit *string
Submodule.Dirty bool
Submodule.Path string
Turn.End string
Turn.EndSeq int64
Turn.Harness string
Turn.HarnessEnd string
Turn.HarnessEndPending *journal.EndPending
Turn.HarnessSession string
Turn.HarnessTurn string
Turn.N int
Turn.NoStart bool
Turn.Start string
Turn.StartSeq int64
Turn.Synthetic bool`

// TestSnapshotFields fails when a field is added to (or taken from) the
// types a State holds: the snapshot must then encode it (snapshot.go),
// snapshotVersion must change (so no older snapshot is read without it),
// RichEntries must set it, and snapshotFields must list it.
func TestSnapshotFields(t *testing.T) {
	t.Parallel()
	if got := strings.Join(stateFields(), "\n"); got != snapshotFields {
		t.Fatalf("the State types changed: encode the change in snapshot.go, bump snapshotVersion (now %d), set the field in RichEntries and update snapshotFields to:\n%s", snapshotVersion, got)
	}
}

// TestSnapshotCoversEveryField: RichEntries sets every field of the State
// types in some state, so that TestSnapshotRoundTrip checks each one
// (State.Torn excepted: a snapshot never holds it).
func TestSnapshotCoversEveryField(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(12))
	set := map[string]bool{}
	for round := 0; round < 20; round++ {
		st := replayOf(t, RichEntries(rng, fmt.Sprintf("a%d", round%3), 1, 200))
		markSet(reflect.ValueOf(st).Elem(), set)
	}
	for _, f := range stateFields() {
		name, _, _ := strings.Cut(f, " ")
		if !set[name] && name != "State.Torn" {
			t.Errorf("no generated state sets %s: make RichEntries set it", name)
		}
	}
}

// markSet records in set every Type.Field that is not its zero value
// somewhere in v.
func markSet(v reflect.Value, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			markSet(v.Elem(), set)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			markSet(v.Index(i), set)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			markSet(it.Key(), set)
			markSet(it.Value(), set)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			name := v.Type().Name() + "." + v.Type().Field(i).Name
			nonZero := !f.IsZero()
			if f.Kind() == reflect.Slice || f.Kind() == reflect.Map {
				nonZero = f.Len() > 0
			}
			if nonZero {
				set[name] = true
			}
			markSet(f, set)
		}
	}
}

// firstDiff names the first place where a and b differ, for a failure
// message.
func firstDiff(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path + ": kind"
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v, %v", path, a.IsNil(), b.IsNil())
		}
		if a.IsNil() {
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v, %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d, %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s: nil %v, %v, len %d, %d", path, a.IsNil(), b.IsNil(), a.Len(), b.Len())
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, it.Key())
			}
			if d := firstDiff(it.Value(), bv, fmt.Sprintf("%s[%v]", path, it.Key())); d != "" {
				return d
			}
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return fmt.Sprintf("%s: %v, %v", path, a, b)
		}
	}
	return ""
}

// FuzzSnapshot: any bytes read as a snapshot file never make the reader
// panic or allocate past their size, and a state decoded from them
// encodes to bytes that decode to it again; any bytes that parse as a log
// replay to a state a snapshot gives back exactly.
func FuzzSnapshot(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	st := replayOf(f, RichEntries(rng, "a1", 1, 30))
	file, _ := snapshotFile(snapshotVersion, fileID{1, 2}, 100, 7, []byte("tail\n"), st)
	f.Add(file)
	f.Add(file[:len(file)/2])
	f.Add([]byte(snapshotMagic))
	f.Add([]byte(`{"seq":1,"ts":"2026-01-02T03:04:05.000Z","type":"agent.registered","agent":"a1","path":"/t","isolation":"in_place"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if sn, err := parseSnapshot(string(data)); err == nil {
			if st, err := decodeState(sn.state); err == nil {
				again, err := decodeState(string(encodeState(nil, st)))
				if err != nil || !reflect.DeepEqual(again, st) {
					t.Fatalf("a decoded state does not encode and decode to itself: %v", err)
				}
			}
		}
		// Any bytes as the state alone, too (past the checksum).
		if st, err := decodeState(string(data)); err == nil {
			if again, err := decodeState(string(encodeState(nil, st))); err != nil || !reflect.DeepEqual(again, st) {
				t.Fatalf("a decoded state does not encode and decode to itself: %v", err)
			}
		}
		recs, _, err := Parse(data)
		if err != nil {
			return
		}
		want, err := Replay(recs)
		if err != nil {
			return
		}
		got, err := decodeState(string(encodeState(nil, want)))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("a replayed state does not come back from its snapshot: %v %s", err, firstDiff(reflect.ValueOf(got), reflect.ValueOf(want), "State"))
		}
	})
}

// TestDecodeRejectsTrailingBytes: an agent's block or a state with bytes
// after what encodeState wrote is not a state (a writer of another
// layout): decoding fails, and Load reads the log whole.
func TestDecodeRejectsTrailingBytes(t *testing.T) {
	t.Parallel()
	st := replayOf(t, RichEntries(rand.New(rand.NewSource(3)), "a1", 1, 20))
	good := encodeState(nil, st)
	if _, err := decodeState(string(good)); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeState(string(good) + "\x00"); err == nil {
		t.Fatal("a state with a byte after it decoded")
	}
	// The one agent's block with a byte more.
	b := binary.AppendVarint(nil, st.Seq)
	b = binary.AppendUvarint(b, 1)
	b = appendStr(b, "a1")
	b = appendStr(b, string(encodeAgent(nil, st.Agents["a1"]))+"\x00")
	if _, err := decodeState(string(b)); err == nil {
		t.Fatal("an agent block with a byte after it decoded")
	}
}
