package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Fuzz targets for the sidecar log (issue 6). Seeds are in
// testdata/fuzz/<name>/; `go test` runs them, `go test -fuzz` explores
// (scripts/fuzz-long.sh runs every target).

// FuzzParse checks the log line parser on any bytes: it never panics; what
// it accepts re-parses to the same records once written back line by line;
// torn is exactly "bytes after the last newline"; the records replay
// without a panic. The append path's reading of the log's end is
// FuzzLastRecord's.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"seq":1,"ts":"2026-01-02T03:04:05.000Z","type":"agent.registered","agent":"a1","path":"/t","isolation":"in_place"}` + "\n"))
	f.Add([]byte(`{"seq":1,"type":"turn.started","agent":"a","turn":"t1"}` + "\n" + `{"seq":2,"type":"tu`))
	f.Add([]byte("\n\n{\"seq\":3,\"type\":\"x\"}\n"))
	f.Add([]byte(`{"seq":1,"type":""}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, torn, err := Parse(data)
		last := bytes.LastIndexByte(data, '\n')
		if err != nil {
			return
		}
		if want := len(data) > last+1; torn != want {
			t.Fatalf("torn %v, but %d bytes follow the last newline", torn, len(data)-last-1)
		}
		var again bytes.Buffer
		for _, r := range recs {
			if r.Type == "" {
				t.Fatalf("record %d has no type", r.Seq)
			}
			if !json.Valid(r.Line) || bytes.ContainsAny(r.Line, "\n") {
				t.Fatalf("record line %q is not one JSON value on one line", r.Line)
			}
			again.Write(r.Line)
			again.WriteByte('\n')
		}
		recs2, torn2, err := Parse(again.Bytes())
		if err != nil || torn2 || len(recs2) != len(recs) {
			t.Fatalf("written back, the records parse as %d, torn %v, %v (were %d)", len(recs2), torn2, err, len(recs))
		}
		for i := range recs {
			a, b := recs[i], recs2[i]
			if a.Seq != b.Seq || a.TS != b.TS || a.Type != b.Type || !bytes.Equal(a.Line, b.Line) {
				t.Fatalf("record %d: %+v, written back %+v", i, a, b)
			}
		}
		if st, err := Replay(recs); err == nil {
			for id, a := range st.Agents {
				_, _, _, _ = a.Latest(), a.OpenTurn(), a.LastEnded(), a.MaxTurn()
				_ = st.AgentIDs(id)
			}
		}
		// What an append reads of the log's end: FuzzLastRecord.
	})
}

// FuzzReplay builds a log of records of every type with fuzzed bodies and
// replays it: replay never panics, and what it builds answers the State
// questions commands ask.
func FuzzReplay(f *testing.F) {
	f.Add(`{"agent":"a1","checkpoint":"k1","reason":"turn_end","turn":"t1","through_turn":"t1","repos":[{"repo":".","path":"/t","commit":"c","tree":"t","head":null,"skipped":[],"submodules":[]}]}`, 0, `{"agent":"a1","turn":"t1"}`, 4)
	f.Add(`{"agent":"a1","checkpoint":"k0"}`, 0, `{"agent":"a1","turn":"tx"}`, 5)
	f.Add(`{"agent":"a1","checkpoints":["k1","k9"]}`, 3, `{"agent":"a1","removed":["k1"]}`, 13)
	f.Add(`{"agent":"a1","checkpoint":"k1","safety":"k2"}`, 6, `{"agent":"a1","ok":true,"drops":["t1"]}`, 7)
	f.Fuzz(func(t *testing.T, body1 string, type1 int, body2 string, type2 int) {
		types := []string{TypeCheckpointTaken, TypeCheckpointReused, TypeCheckpointFailed, TypeCheckpointPruned,
			TypeTurnStarted, TypeTurnEnded, TypeRollbackStarted, TypeRollbackEnded, TypeAgentRegistered,
			TypeEdit, TypeNotePending, TypeNoteDelivered, TypeAgentBinding, TypeAgentArchived}
		var recs []Raw
		for i, b := range []struct {
			body string
			typ  int
		}{{body1, type1}, {body2, type2}, {body1, type2}, {body2, type1}} {
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(b.body), &obj) != nil {
				return
			}
			typ := types[((b.typ%len(types))+len(types))%len(types)]
			obj["seq"], _ = json.Marshal(i + 1)
			obj["type"], _ = json.Marshal(typ)
			line, err := json.Marshal(obj)
			if err != nil {
				return
			}
			rs, torn, err := Parse(append(line, '\n'))
			if err != nil || torn || len(rs) != 1 {
				t.Fatalf("a marshalled record does not parse: %s: %v", line, err)
			}
			recs = append(recs, rs...)
		}
		st, err := Replay(recs)
		if err != nil {
			return
		}
		if st.Seq != 4 {
			t.Fatalf("state seq %d after 4 records", st.Seq)
		}
		for id, a := range st.Agents {
			if a.ID != id {
				t.Fatalf("agent %q filed under %q", a.ID, id)
			}
			_, _, _, _ = a.Latest(), a.OpenTurn(), a.LastEnded(), a.MaxTurn()
			for _, c := range a.Checkpoints {
				if a.Checkpoint(c.ID()) == nil {
					t.Fatalf("checkpoint %s is listed but not found by id", c.ID())
				}
			}
		}
	})
}

// FuzzAppend appends records with fuzzed types and bodies to a log with a
// torn tail and reads them back: the torn tail is cut, seqs continue, and
// each record holds what was appended.
func FuzzAppend(f *testing.F) {
	f.Add("checkpoint.taken", "k1", []byte(`{"seq":1,"type":"x"}`+"\n"+`{"seq":2,"ty`))
	f.Add("edit", "", []byte(""))
	f.Add("a\nb\"c", "\u2028", []byte("\n"))
	f.Fuzz(func(t *testing.T, typ, value string, prefix []byte) {
		if typ == "" {
			return
		}
		prev, _, err := Parse(prefix)
		if err != nil {
			return
		}
		l, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.Path(), prefix, 0o644); err != nil {
			t.Fatal(err)
		}
		// Blank lines are skipped by Append as by Parse (J1, fixed): the
		// next seq follows the last record Parse sees.
		var lastSeq int64
		if n := len(prev); n > 0 {
			lastSeq = prev[n-1].Seq
		}
		seqs, err := l.Append(Entry{Type: typ, Body: map[string]string{"value": value}}, Entry{Type: TypeEdit, Body: struct{}{}})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		if len(seqs) != 2 || seqs[0] != lastSeq+1 || seqs[1] != lastSeq+2 {
			t.Fatalf("seqs %v after %d", seqs, lastSeq)
		}
		recs, torn, err := l.ReadAll()
		if err != nil || torn || len(recs) != len(prev)+2 {
			t.Fatalf("read back %d records, torn %v, %v (want %d)", len(recs), torn, err, len(prev)+2)
		}
		got := recs[len(prev)]
		var body struct {
			Value string `json:"value"`
		}
		if err := got.Decode(&body); err != nil {
			t.Fatal(err)
		}
		wantType, _ := json.Marshal(typ)
		var wt string
		json.Unmarshal(wantType, &wt)
		wantValue, _ := json.Marshal(value)
		var wv string
		json.Unmarshal(wantValue, &wv)
		if got.Type != wt || body.Value != wv || got.Seq != lastSeq+1 {
			t.Fatalf("record %+v value %q, want type %q value %q", got, body.Value, wt, wv)
		}
	})
}
