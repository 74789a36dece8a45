package plumbing_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/plumbing"
)

const (
	oidA = "1111111111111111111111111111111111111111"
	oidB = "2222222222222222222222222222222222222222"
	oidZ = "0000000000000000000000000000000000000000"
)

// trickyNames are file names that break parsers and pathspecs (CASES BR-38):
// spaces, newlines, tabs, pathspec magic, globs, dashes, non-UTF-8 bytes.
var trickyNames = []string{
	"sp ace.txt", "two  spaces ", "new\nline.txt", "tab\tx.txt", ":todo.md", ":(top)x.md",
	"*.md", "[ab].md", "-rf", "--", "back\\slash", "quo\"te", "\xff\xfe.bin", "caf\xc3\xa9", " lead",
}

// namesFor is trickyNames without the ones r's filesystem cannot hold
// (names that are not UTF-8, on APFS).
func namesFor(t *testing.T, r *gittest.Repo) []string {
	if gittest.NonUTF8Names(t, r.Dir) {
		return trickyNames
	}
	var out []string
	for _, n := range trickyNames {
		if utf8.ValidString(n) {
			out = append(out, n)
		}
	}
	return out
}

func TestParseStatusV2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []plumbing.Status
	}{
		{"empty", "", nil},
		{"headers skipped", "# branch.oid " + oidA + "\x00# branch.head main\x00", nil},
		{
			"changed with spaces in path",
			"1 .M N... 100644 100644 100644 " + oidA + " " + oidB + " a b c.txt\x00",
			[]plumbing.Status{{Kind: '1', XY: ".M", Sub: "N...", ModeI: "100644", ModeW: "100644", IndexOID: oidB, Path: "a b c.txt"}},
		},
		{
			"deleted in work tree",
			"1 .D N... 100644 100644 000000 " + oidA + " " + oidA + " gone\x00",
			[]plumbing.Status{{Kind: '1', XY: ".D", Sub: "N...", ModeI: "100644", ModeW: "000000", IndexOID: oidA, Path: "gone"}},
		},
		{
			"submodule with new commits",
			"1 .M SC.. 160000 160000 160000 " + oidA + " " + oidA + " sub\x00",
			[]plumbing.Status{{Kind: '1', XY: ".M", Sub: "SC..", ModeI: "160000", ModeW: "160000", IndexOID: oidA, Path: "sub"}},
		},
		{
			"unmerged",
			"u UU N... 100644 100755 100644 100644 " + oidA + " " + oidB + " " + oidA + " conf licted\x00",
			[]plumbing.Status{{Kind: 'u', XY: "UU", Sub: "N...", ModeI: "100755", ModeW: "100644", IndexOID: oidB, Path: "conf licted", AddMode: "100755", AddOID: oidB}},
		},
		{
			// No stage 2 (deleted by us): git add takes stage 1's mode;
			// with stage 3 alone, stage 3's.
			"unmerged without our side",
			"u DU N... 100755 000000 100644 000000 " + oidA + " " + oidZ + " " + oidB + " a\x00" +
				"u UA N... 000000 000000 120000 100644 " + oidZ + " " + oidZ + " " + oidB + " b\x00",
			[]plumbing.Status{
				{Kind: 'u', XY: "DU", Sub: "N...", ModeI: "000000", ModeW: "000000", IndexOID: oidZ, Path: "a", AddMode: "100755", AddOID: oidA},
				{Kind: 'u', XY: "UA", Sub: "N...", ModeI: "000000", ModeW: "100644", IndexOID: oidZ, Path: "b", AddMode: "120000", AddOID: oidB},
			},
		},
		{
			"untracked, ignored and a nested repository",
			"? new\nline.txt\x00! build/out.o\x00? nested/\x00",
			[]plumbing.Status{{Kind: '?', Path: "new\nline.txt"}, {Kind: '!', Path: "build/out.o"}, {Kind: '?', Path: "nested/"}},
		},
		{
			"rename splits into the new path and a deletion",
			"2 R. N... 100644 100644 100644 " + oidA + " " + oidB + " R100 new name\x00old name\x00? x\x00",
			[]plumbing.Status{
				{Kind: '1', XY: "R.", Sub: "N...", ModeI: "100644", ModeW: "100644", IndexOID: oidB, Path: "new name"},
				{Kind: '1', XY: ".D", Sub: "N...", ModeW: "000000", Path: "old name"},
				{Kind: '?', Path: "x"},
			},
		},
	}
	for _, tc := range tests {
		got, err := plumbing.ParseStatusV2([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{
		"? a",                          // no NUL terminator
		"1 .M N... 100644 a\x00",       // too few fields
		"X what\x00",                   // unknown record
		"?a\x00",                       // no space after the kind
		"2 R. N... 1 2 3 a b R1 p\x00", // rename without its original path
	} {
		if got, err := plumbing.ParseStatusV2([]byte(bad)); err == nil {
			t.Errorf("ParseStatusV2(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseLsFiles(t *testing.T) {
	t.Parallel()
	in := "H 100644 " + oidA + " 0\tsp ace.txt\x00" +
		"h 100755 " + oidB + " 0\tassumed\tname\x00" +
		"S 100644 " + oidA + " 0\tsparse/x\x00" +
		"s 100644 " + oidA + " 0\tboth\x00" +
		"M 160000 " + oidB + " 2\t:todo.md\x00" +
		"H 120000 " + oidA + " 0\tnew\nline\x00"
	got, err := plumbing.ParseLsFiles([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []plumbing.IndexEntry{
		{Tag: 'H', Mode: "100644", OID: oidA, Stage: 0, Path: "sp ace.txt"},
		{Tag: 'h', Mode: "100755", OID: oidB, Stage: 0, Path: "assumed\tname"},
		{Tag: 'S', Mode: "100644", OID: oidA, Stage: 0, Path: "sparse/x"},
		{Tag: 's', Mode: "100644", OID: oidA, Stage: 0, Path: "both"},
		{Tag: 'M', Mode: "160000", OID: oidB, Stage: 2, Path: ":todo.md"},
		{Tag: 'H', Mode: "120000", OID: oidA, Stage: 0, Path: "new\nline"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	flags := []struct{ assumed, skip bool }{{false, false}, {true, false}, {false, true}, {true, true}, {false, false}, {false, false}}
	for i, e := range got {
		if e.AssumeUnchanged() != flags[i].assumed || e.SkipWorktree() != flags[i].skip {
			t.Errorf("%q: assume-unchanged %v skip-worktree %v, want %v %v", e.Path, e.AssumeUnchanged(), e.SkipWorktree(), flags[i].assumed, flags[i].skip)
		}
	}
	for _, bad := range []string{"H 100644 " + oidA + " 0\tno-nul", "H100644\x00", "H 100644 " + oidA + "\tp\x00", "H 100644 " + oidA + " 10\tp\x00"} {
		if got, err := plumbing.ParseLsFiles([]byte(bad)); err == nil {
			t.Errorf("ParseLsFiles(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseDiffTreeRaw(t *testing.T) {
	t.Parallel()
	in := oidA + "\x00" + // the commit id diff-tree prints first when given one
		":100644 100644 " + oidA + " " + oidB + " M\x00sp ace\x00" +
		":000000 100755 " + oidZ + " " + oidB + " A\x00new\nline\x00" +
		":120000 000000 " + oidA + " " + oidZ + " D\x00:todo.md\x00" +
		":100644 120000 " + oidA + " " + oidB + " T\x00tab\tx\x00"
	got, err := plumbing.ParseDiffTreeRaw([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []plumbing.TreeChange{
		{SrcMode: "100644", DstMode: "100644", Src: oidA, Dst: oidB, Status: 'M', Path: "sp ace"},
		{SrcMode: "000000", DstMode: "100755", Src: oidZ, Dst: oidB, Status: 'A', Path: "new\nline"},
		{SrcMode: "120000", DstMode: "000000", Src: oidA, Dst: oidZ, Status: 'D', Path: ":todo.md"},
		{SrcMode: "100644", DstMode: "120000", Src: oidA, Dst: oidB, Status: 'T', Path: "tab\tx"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{":100644 100644 a b M\x00", ":100644 " + oidA + " M\x00p\x00", ":1 2 3 4 M"} {
		if got, err := plumbing.ParseDiffTreeRaw([]byte(bad)); err == nil {
			t.Errorf("ParseDiffTreeRaw(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseLsTree(t *testing.T) {
	t.Parallel()
	in := "100644 blob " + oidA + "     12\tsp ace\x00" +
		"160000 commit " + oidB + "       -\tsub\x00" +
		"040000 tree " + oidB + "\tdir\nname\x00"
	got, err := plumbing.ParseLsTree([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []plumbing.LsTreeEntry{
		{Mode: "100644", Type: "blob", OID: oidA, Size: 12, Path: "sp ace"},
		{Mode: "160000", Type: "commit", OID: oidB, Size: -1, Path: "sub"},
		{Mode: "040000", Type: "tree", OID: oidB, Size: -1, Path: "dir\nname"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestParsersOnRealGit feeds each parser what git 2.x really prints for the
// tricky names, so a change in git's format shows here first.
func TestParsersOnRealGit(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	trickyNames := namesFor(t, r)
	r.Write("base", "base\n")
	for _, n := range trickyNames {
		r.Write("t/"+n, n+"\n")
	}
	r.Commit("init")
	for _, n := range trickyNames {
		r.Write("t/"+n, n+" changed\n")
		r.Write("u/"+n, n+"\n")
	}
	r.Git("update-index", "--assume-unchanged", "base")

	out := r.Git("status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=all")
	st, err := plumbing.ParseStatusV2([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]byte{}
	for _, s := range st {
		seen[s.Path] = s.Kind
	}
	for _, n := range trickyNames {
		if seen["t/"+n] != '1' || seen["u/"+n] != '?' {
			t.Errorf("status of %q: tracked %q untracked %q", n, seen["t/"+n], seen["u/"+n])
		}
	}

	ls, err := plumbing.ParseLsFiles([]byte(r.Git("ls-files", "-s", "-v", "-z")))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]plumbing.IndexEntry{}
	for _, e := range ls {
		paths[e.Path] = e
	}
	if e := paths["base"]; !e.AssumeUnchanged() || e.Mode != "100644" {
		t.Errorf("base: %+v, want assume-unchanged 100644", e)
	}
	for _, n := range trickyNames {
		if e, ok := paths["t/"+n]; !ok || e.OID != plumbing.OID(r.HashBlob(n+"\n")) {
			t.Errorf("ls-files lost %q: %+v", n, e)
		}
	}

	r.Commit("changed")
	dt, err := plumbing.ParseDiffTreeRaw([]byte(r.Git("diff-tree", "-r", "-z", "--no-renames", "HEAD~1", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string]byte{}
	for _, c := range dt {
		changed[c.Path] = c.Status
	}
	for _, n := range trickyNames {
		if changed["t/"+n] != 'M' || changed["u/"+n] != 'A' {
			t.Errorf("diff-tree of %q: %q %q", n, changed["t/"+n], changed["u/"+n])
		}
	}
	tr, err := plumbing.ParseLsTree([]byte(r.Git("ls-tree", "-r", "-z", "-l", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 1+2*len(trickyNames) {
		t.Errorf("ls-tree: %d entries, want %d", len(tr), 1+2*len(trickyNames))
	}
}

func TestNulListAndLiteral(t *testing.T) {
	t.Parallel()
	if got := string(plumbing.NulList([]string{"a b", "new\nline", ":x"})); got != "a b\x00new\nline\x00:x\x00" {
		t.Errorf("NulList = %q", got)
	}
	if got := plumbing.Literal(":(top)*.md"); got != ":(literal):(top)*.md" {
		t.Errorf("Literal = %q", got)
	}
	if !strings.HasPrefix(plumbing.Literal("x"), ":(literal)") {
		t.Error("Literal must use the literal magic")
	}
}

func FuzzParseStatusV2(f *testing.F) {
	f.Add([]byte("1 .M N... 100644 100644 100644 " + oidA + " " + oidA + " a b\x00? c\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 " + oidA + " " + oidA + " R100 n\x00o\x00"))
	f.Add([]byte("u UU N... 100644 100644 100644 100644 " + oidA + " " + oidB + " " + oidA + " c\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := plumbing.ParseStatusV2(b)
		if err != nil {
			return
		}
		for _, s := range st {
			switch s.Kind {
			case '1', 'u', '?', '!':
			default:
				t.Fatalf("kind %q", s.Kind)
			}
		}
	})
}

func FuzzParseLsFiles(f *testing.F) {
	f.Add([]byte("H 100644 " + oidA + " 0\tp q\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := plumbing.ParseLsFiles(b)
		if err != nil {
			return
		}
		for _, e := range es {
			if strings.ContainsRune(e.Path, 0) {
				t.Fatalf("path with NUL: %q", e.Path)
			}
		}
	})
}

func FuzzParseDiffTreeRaw(f *testing.F) {
	f.Add([]byte(":100644 100644 " + oidA + " " + oidB + " M\x00p\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = plumbing.ParseDiffTreeRaw(b)
	})
}

// TestStatusBranch: the commit and branch of `status --porcelain=v2 -z
// --branch`'s header are read as git writes them, its records left alone;
// output with no header gives "".
func TestStatusBranch(t *testing.T) {
	out := []byte("# branch.oid 0123456789abcdef0123456789abcdef01234567\x00# branch.head topic/x y\x00" +
		"# branch.upstream origin/topic\x00# branch.ab +? -?\x00? new.txt\x00")
	oid, branch := plumbing.StatusBranch(out)
	if oid != "0123456789abcdef0123456789abcdef01234567" || branch != "topic/x y" {
		t.Errorf("StatusBranch = %q, %q", oid, branch)
	}
	if oid, branch := plumbing.StatusBranch([]byte("# branch.oid (initial)\x00# branch.head (detached)\x00")); oid != "(initial)" || branch != "(detached)" {
		t.Errorf("StatusBranch of an unborn, detached HEAD = %q, %q", oid, branch)
	}
	if oid, branch := plumbing.StatusBranch([]byte("? a\x00# branch.oid x\x00")); oid != "" || branch != "" {
		t.Errorf("StatusBranch read a header after a record: %q, %q", oid, branch)
	}
	st, err := plumbing.ParseStatusV2(out)
	if err != nil || len(st) != 1 || st[0].Path != "new.txt" {
		t.Errorf("ParseStatusV2 of the same output: %+v, %v", st, err)
	}
}
