package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLastRecord checks the append path's reading of the log against the
// readers' on any bytes Parse accepts, blank lines included: lastRecord ends
// the log after its last newline and numbers from the last record Parse
// returns (0 with none), so an append never refuses a log the readers take
// (J1) and never reuses a seq.
func FuzzLastRecord(f *testing.F) {
	rec := `{"seq":4,"ts":"2026-01-02T03:04:05.000Z","type":"edit","agent":"a1"}`
	f.Add([]byte(rec + "\n"))
	f.Add([]byte(rec + "\n\n"))
	f.Add([]byte(rec + "\n \t\r\n\n" + `{"seq":5,"ty`))
	f.Add([]byte("\n\n"))
	f.Add([]byte(" "))
	f.Add([]byte(`{"seq":2,"type":"x","seq":9}` + "\n\n"))
	f.Add([]byte(`{"seq":1,"ts":"x","type":"y","seq":8}` + "\n \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _, err := Parse(data)
		if err != nil {
			return
		}
		wantEnd := int64(bytes.LastIndexByte(data, '\n') + 1)
		var wantSeq int64
		if len(recs) > 0 {
			wantSeq = recs[len(recs)-1].Seq
		}
		p := filepath.Join(t.TempDir(), "log.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		end, seq, err := lastRecord(fh, int64(len(data)))
		if err != nil {
			t.Fatalf("lastRecord: %v (Parse read %d records)", err, len(recs))
		}
		if end != wantEnd || seq != wantSeq {
			t.Fatalf("lastRecord: end %d seq %d; Parse: lines end at %d, last seq %d", end, seq, wantEnd, wantSeq)
		}
	})
}
