package checkpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestMovedPlainJSONIsEncodingJSONs: the manifest line written by hand
// (appendPlain) is byte for byte what encoding/json writes for the same
// record, every optional member on and off, and a record whose strings
// need escaping, or are not UTF-8, goes through encoding/json and reads
// back as it was.
func TestMovedPlainJSONIsEncodingJSONs(t *testing.T) {
	base := Moved{Path: "venom-bench-rbnew/n000/f00001.txt", File: "/r/.git/venom/backup-a-k-1/0/f00001.txt",
		Dev: 2049, Ino: 1234567, Size: 533, Mtime: 1764654000123456789, Src: "0123456789abcdef0123456789abcdef01234567"}
	var cases []Moved
	for bits := 0; bits < 32; bits++ {
		m := base
		m.Link, m.Racy, m.Copied, m.Dir = bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0
		if bits&16 != 0 {
			m.Raw = "fedcba9876543210fedcba9876543210fedcba98"
		}
		cases = append(cases, m)
	}
	big := base
	big.Dev, big.Ino, big.Size, big.Mtime = math.MaxUint64, math.MaxUint64, math.MinInt64, math.MaxInt64
	cases = append(cases, big, Moved{}, Moved{Path: "d", File: "/b/0", Dir: true})
	for _, m := range cases {
		got, ok := m.appendPlain(nil)
		if !ok {
			t.Fatalf("%+v: not written by hand", m)
		}
		want, err := m.marshalReflect()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("by hand:\n%s\nencoding/json:\n%s", got, want)
		}
		if viaMarshal, err := json.Marshal(m); err != nil || !bytes.Equal(viaMarshal, want) {
			t.Errorf("json.Marshal: %s, %v; want %s", viaMarshal, err, want)
		}
	}
	for _, p := range []string{`a"b`, `a\b`, "a<b>&c", "tab\there", "caf\u00e9", "\xffbad", "nl\n", "del\x7f"} {
		m := base
		m.Path, m.File = p, "/b/"+p
		if _, ok := m.appendPlain(nil); ok {
			t.Errorf("%q: written by hand, which escapes nothing", p)
		}
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := m.marshalReflect()
		if !bytes.Equal(got, want) {
			t.Errorf("%q: %s, want %s", p, got, want)
		}
		var back Moved
		if err := json.Unmarshal(got, &back); err != nil || back != m {
			t.Errorf("%q: read back %+v, %v", p, back, err)
		}
	}
}
