package journal_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/journal"
)

// TestAppendAfterBlankLines: readers skip a blank line (DESIGN.md section 3),
// and so does the append path: after blank or whitespace-only lines at the
// end of the log, with or without a torn line after them, an append numbers
// its records after the last record, keeps the blank lines and cuts the torn
// tail (J1 in internal/model/regress_test.go).
func TestAppendAfterBlankLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("p", 100<<10) // a record longer than lastRecord's chunk
	for _, tc := range []struct {
		name    string
		records int
		label   string // of the last record
		tail    string
		want    int64 // seq of the next record
	}{
		{"one blank line", 2, "", "\n", 3},
		{"blank lines", 2, "", "\n\n\n", 3},
		{"whitespace-only lines", 1, "", " \t\n\r\n  \n", 2},
		{"blank lines then a torn line", 3, "", "\n\n" + `{"seq":99,"ty`, 4},
		{"blank lines then a torn blank", 1, "", "\n  ", 2},
		{"blank lines longer than a chunk", 2, "", strings.Repeat("\n", 200<<10), 3},
		{"a long record then blank lines", 2, long, "\n \n", 3},
		{"blank lines only", 0, "", "\n\n", 1},
		{"blank lines only, longer than a chunk, torn", 0, "", strings.Repeat(" \n", 70<<10) + "{", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openLog(t)
			for i := 0; i < tc.records; i++ {
				e := journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"x"}}}
				if i == tc.records-1 && tc.label != "" {
					e.Body = journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{tc.label}}
				}
				if _, err := l.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.tail)
			f.Close()
			before, _ := os.ReadFile(l.Path())
			whole := before[:bytes.LastIndexByte(before, '\n')+1]

			seqs, err := l.Append(journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"y"}}},
				journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1", Turn: "t1", Paths: []string{"z"}}})
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			if len(seqs) != 2 || seqs[0] != tc.want || seqs[1] != tc.want+1 {
				t.Errorf("seqs %v, want [%d %d]", seqs, tc.want, tc.want+1)
			}
			data, _ := os.ReadFile(l.Path())
			if !bytes.HasPrefix(data, whole) || bytes.Contains(data[len(whole):], []byte(`"seq":99,`)) {
				t.Errorf("the log before the append was not kept whole, or its torn tail was not cut")
			}
			recs, torn, err := journal.Parse(data)
			if err != nil || torn || len(recs) != tc.records+2 {
				t.Fatalf("after the append: %d records, torn %v, %v (want %d)", len(recs), torn, err, tc.records+2)
			}
			for i, r := range recs {
				if r.Seq != int64(i+1) {
					t.Errorf("record %d has seq %d", i, r.Seq)
				}
			}
		})
	}
}

// TestAppendRefusesWhatReadersRefuse: blank lines after a damaged record do
// not hide it; the append path refuses the same last records Parse does.
func TestAppendRefusesWhatReadersRefuse(t *testing.T) {
	t.Parallel()
	for name, last := range map[string]string{
		"not JSON":   "not json",
		"no type":    `{"seq":7}`,
		"empty type": `{"seq":7,"type":""}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := openLog(t)
			if err := os.WriteFile(l.Path(), []byte(last+"\n\n \n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := journal.Parse([]byte(last + "\n")); err == nil {
				t.Fatalf("Parse reads %q", last)
			}
			if _, err := l.Append(journal.Entry{Type: journal.TypeEdit, Body: journal.Edit{Agent: "a1"}}); err == nil ||
				!strings.Contains(err.Error(), "is corrupt") {
				t.Errorf("append after %q: %v, want a corrupt record", last, err)
			}
		})
	}
}
