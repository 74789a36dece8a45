package plumbing_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/plumbing"
)

// Fuzz targets for the -z parsers (issue 6). Each parser must never panic,
// and what it accepts must come back the same after being written out again
// in git's format (parse(format(parse(x))) == parse(x)), with the fields
// its callers index having the shape they rely on. Seeds are in
// testdata/fuzz/<name>/.

// formatStatus writes entries as `git status --porcelain=v2 -z` records.
// Fields a Status does not keep (the HEAD mode and object) are written as
// git writes them for a file with no HEAD entry.
func formatStatus(es []plumbing.Status) []byte {
	var b bytes.Buffer
	for _, e := range es {
		switch e.Kind {
		case '?', '!':
			b.WriteByte(e.Kind)
			fmt.Fprintf(&b, " %s\x00", e.Path)
		case '1':
			fmt.Fprintf(&b, "1 %s %s 000000 %s %s 0000000000000000000000000000000000000000 %s %s\x00", e.XY, e.Sub, e.ModeI, e.ModeW, e.IndexOID, e.Path)
		case 'u':
			fmt.Fprintf(&b, "u %s %s 100644 %s 100644 %s 0000000000000000000000000000000000000000 %s 0000000000000000000000000000000000000000 %s\x00", e.XY, e.Sub, e.ModeI, e.ModeW, e.IndexOID, e.Path)
		}
	}
	return b.Bytes()
}

func FuzzStatusV2RoundTrip(f *testing.F) {
	f.Add([]byte("# branch.oid abc\x001 .M N... 100644 100644 100644 0123 0123 a b\x00? new\nline\x00! ignored\x00"))
	f.Add([]byte("u UU N... 100644 100644 100644 100644 1 2 3 conflicted\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 1 1 R100 new\x00old\x00"))
	f.Add([]byte("1 .T SC.. 100644 100644 160000 1 1 sub\x00? nested/\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := plumbing.ParseStatusV2(data)
		if err != nil {
			return
		}
		for _, e := range es {
			switch e.Kind {
			case '1', 'u':
				// Capture reads XY[1] and Sub's first letter.
				if len(e.XY) != 2 {
					t.Fatalf("accepted a %c record with XY %q", e.Kind, e.XY)
				}
			case '?', '!':
				if e.Path == "" {
					t.Fatalf("accepted a %c record with no path", e.Kind)
				}
			default:
				t.Fatalf("kind %q", e.Kind)
			}
			if strings.Contains(e.Path, "\x00") {
				t.Fatalf("a path holds NUL: %q", e.Path)
			}
		}
		again, err := plumbing.ParseStatusV2(formatStatus(es))
		if err != nil {
			t.Fatalf("written back, %q does not parse: %v", formatStatus(es), err)
		}
		if !reflect.DeepEqual(nilIfEmpty(again), nilIfEmpty(es)) {
			t.Fatalf("written back, parses as %+v, was %+v", again, es)
		}
	})
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func formatLsFiles(es []plumbing.IndexEntry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		// Tag and stage are single bytes, whatever they are.
		b.WriteByte(e.Tag)
		fmt.Fprintf(&b, " %s %s ", e.Mode, e.OID)
		b.WriteByte(e.Stage + '0')
		fmt.Fprintf(&b, "\t%s\x00", e.Path)
	}
	return b.Bytes()
}

func FuzzLsFilesRoundTrip(f *testing.F) {
	f.Add([]byte("H 100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta b\x00S 100755 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\tsparse\x00h 120000 1 0\tlink\x00"))
	f.Add([]byte("H 160000 abc 0\tsub\x00M 100644 1 1\tc\x00M 100644 2 2\tc\x00M 100644 3 3\tc\x00"))
	f.Add([]byte("H 100644 1 0\t:colon\tand tab\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := plumbing.ParseLsFiles(data)
		if err != nil {
			return
		}
		for _, e := range es {
			if strings.ContainsAny(e.Mode, " \t") || strings.ContainsAny(string(e.OID), " \t") {
				t.Fatalf("a field holds a separator: %+v", e)
			}
		}
		again, err := plumbing.ParseLsFiles(formatLsFiles(es))
		if err != nil {
			t.Fatalf("written back, %q does not parse: %v", formatLsFiles(es), err)
		}
		if !reflect.DeepEqual(nilIfEmpty(again), nilIfEmpty(es)) {
			t.Fatalf("written back, parses as %+v, was %+v", again, es)
		}
	})
}

func formatDiffTree(es []plumbing.TreeChange) []byte {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, ":%s %s %s %s ", e.SrcMode, e.DstMode, e.Src, e.Dst)
		b.WriteByte(e.Status)
		fmt.Fprintf(&b, "\x00%s\x00", e.Path)
	}
	return b.Bytes()
}

func FuzzDiffTreeRawRoundTrip(f *testing.F) {
	f.Add([]byte(":100644 100644 1111 2222 M\x00a b\x00:000000 120000 0000 3333 A\x00new\nline\x00"))
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567\x00:100644 000000 1 0 D\x00gone\x00"))
	f.Add([]byte(":160000 160000 1 2 M\x00sub\x00:100644 100755 1 1 T\x00-dash\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := plumbing.ParseDiffTreeRaw(data)
		if err != nil {
			return
		}
		again, err := plumbing.ParseDiffTreeRaw(formatDiffTree(es))
		if err != nil {
			t.Fatalf("written back, %q does not parse: %v", formatDiffTree(es), err)
		}
		if !reflect.DeepEqual(nilIfEmpty(again), nilIfEmpty(es)) {
			t.Fatalf("written back, parses as %+v, was %+v", again, es)
		}
	})
}

func formatLsTree(es []plumbing.LsTreeEntry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		size := "-"
		if e.Size != -1 {
			size = fmt.Sprint(e.Size)
		}
		fmt.Fprintf(&b, "%s %s %s %7s\t%s\x00", e.Mode, e.Type, e.OID, size, e.Path)
	}
	return b.Bytes()
}

func FuzzLsTreeRoundTrip(f *testing.F) {
	f.Add([]byte("100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\ta b\x00040000 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\tdir\x00"))
	f.Add([]byte("100644 blob 1     123\tsized\x00160000 commit 2       -\tsub\x00"))
	f.Add([]byte("120000 blob 3 12\tlink\twith tab\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := plumbing.ParseLsTree(data)
		if err != nil {
			return
		}
		again, err := plumbing.ParseLsTree(formatLsTree(es))
		if err != nil {
			t.Fatalf("written back, %q does not parse: %v", formatLsTree(es), err)
		}
		if !reflect.DeepEqual(nilIfEmpty(again), nilIfEmpty(es)) {
			t.Fatalf("written back, parses as %+v, was %+v", again, es)
		}
	})
}
