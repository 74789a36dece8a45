package plumbing

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestIndexCacheRoundTrip: what storeIndexCache writes, readIndexCache
// reads back for the same key, names byte for byte (not UTF-8, spaces,
// newlines), and for no other key.
func TestIndexCacheRoundTrip(t *testing.T) {
	t.Parallel()
	r := &Repo{GitDir: t.TempDir()}
	key := indexKey{Dev: 64769, Ino: 1234567, Size: 8700000, MtimeNs: 1767323045123456789, CtimeNs: 1767323045223456789,
		Trailer: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	c := &indexCache{
		Key: key,
		Answer: indexAnswer{
			SkipWorktree:    []string{"other/\xff.bin", "other/new\nline", "other/new\nline"},
			AssumeUnchanged: []string{"local cfg.yml"},
			Gitlinks: map[string]OID{
				"vendor/lib one": "0123456789abcdef0123456789abcdef01234567",
				"ext/\xfe":       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			},
			Dirs: []string{"ext", "other", "vendor", "vendor/\xff dir\nwith newline"},
		},
		Tree:   "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
		Hidden: []string{"vendor/\xff dir\nwith newline"},
	}
	c.Answer.Attributes = true
	if err := r.storeIndexCache(c); err != nil {
		t.Fatal(err)
	}
	got, why := readIndexCache(r.indexCachePath(), key)
	if got == nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("read back %+v (%s), want %+v", got, why, c)
	}
	other := key
	other.CtimeNs++
	if got, _ := readIndexCache(r.indexCachePath(), other); got != nil {
		t.Errorf("an entry for another ctime was used")
	}
	other = key
	other.Trailer = "00" + key.Trailer[2:]
	if got, _ := readIndexCache(r.indexCachePath(), other); got != nil {
		t.Errorf("an entry for another checksum was used")
	}
	other.Trailer = ""
	if got, _ := readIndexCache(r.indexCachePath(), other); got != nil {
		t.Errorf("an entry with a checksum was used for a key without one")
	}

	// An empty answer comes back with a non-nil gitlink map.
	c = &indexCache{Key: key, Answer: indexAnswer{Gitlinks: map[string]OID{}}}
	if err := r.storeIndexCache(c); err != nil {
		t.Fatal(err)
	}
	if got, why := readIndexCache(r.indexCachePath(), key); got == nil || got.Answer.Gitlinks == nil || got.Tree != "" {
		t.Errorf("empty answer read back as %+v (%s)", got, why)
	}
}

// TestIndexTrailer: the key's checksum is the index file's last 32 bytes
// in hex, read where the file ends; none ("") for a file shorter than
// that, one ending in 20 zero bytes (index.skipHash's zeroed SHA-1 or
// SHA-256 checksum), or one that cannot be read there.
func TestIndexTrailer(t *testing.T) {
	t.Parallel()
	sum := bytes.Repeat([]byte{0xab}, 20)
	body := append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00more entries"), sum...)
	cases := []struct {
		name string
		data []byte
		size int64 // -1: len(data)
		want string
	}{
		{"sha1", body, -1, hex.EncodeToString(body[len(body)-32:])},
		{"sha256 all checksum", bytes.Repeat([]byte{7}, 40), -1, hex.EncodeToString(bytes.Repeat([]byte{7}, 32))},
		{"zeroed sha1", append(body[:len(body)-20:len(body)-20], make([]byte, 20)...), -1, ""},
		{"zeroed sha256", append(bytes.Repeat([]byte{7}, 12), make([]byte, 32)...), -1, ""},
		{"short", body[:31], -1, ""},
		{"size beyond the data", body, int64(len(body) + 5), ""},
	}
	for _, c := range cases {
		size := c.size
		if size < 0 {
			size = int64(len(c.data))
		}
		if got := indexTrailer(bytes.NewReader(c.data), size); got != c.want {
			t.Errorf("%s: trailer %q, want %q", c.name, got, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := fileTrailer(p), hex.EncodeToString(body[len(body)-32:]); got != want {
		t.Errorf("fileTrailer = %q, want %q", got, want)
	}
	if got := fileTrailer(p + ".missing"); got != "" {
		t.Errorf("fileTrailer of no file = %q", got)
	}
}

// TestIndexCacheCorrupt: a file that is not exactly a cache entry is a
// miss, never an error and never a partial answer.
func TestIndexCacheCorrupt(t *testing.T) {
	t.Parallel()
	key := indexKey{Dev: 1, Ino: 2, Size: 3, MtimeNs: 4, CtimeNs: 5}
	k := `"key":{"dev":1,"ino":2,"size":3,"mtime_ns":4,"ctime_ns":5}`
	v := fmt.Sprintf(`{"version":%d,`, indexCacheVersion)
	if got, why := readIndexCache(writeCache(t, v+k+"}\n"), key); got == nil {
		t.Fatalf("the well-formed entry the cases below break is a miss: %s", why)
	}
	// lists is a file of header v+k (unclosed) with the five lists after
	// it, their lengths and checksum right.
	lists := func(l ...string) string {
		var bs [][]byte
		for _, x := range l {
			bs = append(bs, []byte(x))
		}
		f := indexCacheFile{Version: indexCacheVersion, Key: key}
		b, err := indexCacheBytes(f, bs...)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	good := lists("sw\x00", "au\x00", "4b825dc642cb6eb9a060e54bf8d69288fbee4904 sub\x00", "d\x00d/e\x00", "d\x00")
	if got, why := readIndexCache(writeCache(t, good), key); got == nil {
		t.Fatalf("the well-formed entry with lists is a miss: %s", why)
	} else if got.Answer.SkipWorktree[0] != "sw" || got.Answer.AssumeUnchanged[0] != "au" || len(got.Answer.Dirs) != 2 ||
		got.Answer.Dirs[1] != "d/e" || got.Hidden[0] != "d" || got.Answer.Gitlinks["sub"] != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("the lists read back as %+v, hidden %q", got.Answer, got.Hidden)
	}
	head, rest, _ := strings.Cut(good, "\n")
	for name, content := range map[string]string{
		"empty":                            "",
		"truncated":                        v + k[:20],
		"no header line":                   v + k + `}`,
		"not json":                         "\x00\x01garbage\n",
		"other version":                    fmt.Sprintf(`{"version":%d,`, indexCacheVersion+1) + k + "}\n",
		"version 1 (no attributes answer)": `{"version":1,` + k + "}\n",
		"version 5 (base64 lists)":         `{"version":5,` + k + `,"dirs":"YQA="}` + "\n",
		"no version":                       `{` + k + "}\n",
		"unterminated list":                lists("a", "", "", "", ""),
		"empty name":                       lists("", "\x00a\x00", "", "", ""),
		"gitlink without oid":              lists("", "", "sub\x00", "", ""),
		"gitlink bad oid":                  lists("", "", "xyz sub\x00", "", ""),
		"bad tree":                         v + k + `,"tree":"HEAD"}` + "\n",
		"unterminated dirs":                lists("", "", "", "a", ""),
		"unterminated hidden":              lists("", "", "", "", "a"),
		"bytes after a header of no lists": v + k + "}\nd\x00",
		"lists cut short":                  good[:len(good)-1],
		"bytes after the lists":            good + "x\x00",
		"checksum mismatch":                head + "\n" + strings.Replace(rest, "d/e", "d/f", 1),
		"four lists":                       strings.Replace(head, `"lists":[3,3,`, `"lists":[6,`, 1) + "\n" + rest,
		"wrong type":                       v + k + `,"lists":"a"}` + "\n",
		"upper-case tree":                  v + k + `,"tree":"4B825DC642CB6EB9A060E54BF8D69288FBEE4904"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if got, why := readIndexCache(writeCache(t, content), key); got != nil || why == "" {
				t.Errorf("read %+v from %q", got, content)
			}
		})
	}
	if got, why := readIndexCache(filepath.Join(t.TempDir(), "none.json"), key); got != nil || why != "no cache file" {
		t.Errorf("missing file: %+v, %q", got, why)
	}
}

// writeCache writes content as an index-cache.json of its own.
func writeCache(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "index-cache.json")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIndexKeySettled: only an index both of whose times are older than
// the settle time before the read is stored.
func TestIndexKeySettled(t *testing.T) {
	read := time.Unix(1000, 0)
	old := read.Add(-indexSettle - time.Nanosecond).UnixNano()
	young := read.Add(-indexSettle).UnixNano()
	for _, c := range []struct {
		m, c int64
		want bool
	}{{old, old, true}, {young, old, false}, {old, young, false}, {young, young, false}} {
		if got := (indexKey{MtimeNs: c.m, CtimeNs: c.c}).settled(read); got != c.want {
			t.Errorf("mtime %d ctime %d: settled %v, want %v", c.m, c.c, got, c.want)
		}
	}
}

// TestIndexKeyOf: the key is the file's, and changes when git replaces
// the file (a new inode) even with the same size and times.
func TestIndexKeyOf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "index")
	if err := os.WriteFile(p, []byte("DIRC-ish"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := indexKeyOf(fi)
	if !ok {
		t.Skip("no inode and ctime on this system")
	}
	if k.Size != 8 || k.MtimeNs != fi.ModTime().UnixNano() || k.Ino == 0 || k.CtimeNs == 0 {
		t.Errorf("key %+v", k)
	}
	if _, ok := indexKeyOf(nil); ok {
		t.Error("a missing index has a key")
	}
	// Replaced by rename, with the same bytes and mtime: another inode
	// (the old one is still held by the hard link, so it is not reused).
	if err := os.Link(p, filepath.Join(dir, "old")); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "index.lock")
	if err := os.WriteFile(lock, []byte("DIRC-ish"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lock, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock, p); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := indexKeyOf(fi2); k2 == k {
		t.Errorf("a replaced index kept its key %+v", k)
	}
}

// FuzzIndexAnswer holds parseIndexAnswer, which skips plain cached
// records, to ParseLsFiles: whatever ParseLsFiles accepts, it accepts with
// the answer answerOf gives.
func FuzzIndexAnswer(f *testing.F) {
	oid := "0123456789abcdef0123456789abcdef01234567"
	for _, s := range []string{
		"",
		"H 100644 " + oid + " 0\tplain\x00",
		"H 160000 " + oid + " 0\tsub\x00H 100755 " + oid + " 0\tx y\x00",
		"S 100644 " + oid + " 0\tsparse/a\x00s 100644 " + oid + " 0\tsparse/b\x00",
		"h 100644 " + oid + " 0\tassumed\x00H 120000 " + oid + " 0\tlink\x00",
		"M 160000 " + oid + " 1\tconflict\x00M 160000 " + oid + " 2\tconflict\x00M 100644 " + oid + " 3\tconflict\x00",
		"h 160000 " + oid + " 0\tassumed sub\x00",
		"H 100644 " + oid + " 0\tno terminator",
		"H 1006\t\x00",
		"\t 100644 " + oid + " 0\ttab tag\x00",
		"H 100644 " + oid + " 0\t.gitattributes\x00",
		"H 100644 " + oid + " 0\tx.gitattributes\x00S 100644 " + oid + " 0\td/.gitattributes\x00",
		"H 100644 " + oid + " 0\td\t.gitattributes\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := ParseLsFiles(out)
		if err != nil {
			return
		}
		got, err := parseIndexAnswer(out)
		if err != nil {
			t.Fatalf("ParseLsFiles accepts %q, parseIndexAnswer: %v", out, err)
		}
		if want := answerOf(entries); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: answer %+v, want %+v", out, got, want)
		}
	})
}

// TestIndexAnswerAttributes: the answer says whether the index holds a
// .gitattributes, at the top or below, whatever its flags or stage, and
// not for names that only end like one.
func TestIndexAnswerAttributes(t *testing.T) {
	t.Parallel()
	oid := "0123456789abcdef0123456789abcdef01234567"
	rec := func(tag, path string) string { return tag + " 100644 " + oid + " 0\t" + path + "\x00" }
	for _, c := range []struct {
		out  string
		want bool
	}{
		{rec("H", "a") + rec("H", "b/c"), false},
		{rec("H", ".gitattributes"), true},
		{rec("H", "a") + rec("H", "deep/er/.gitattributes") + rec("H", "z"), true},
		{rec("S", "sparse/.gitattributes"), true},
		{rec("h", ".gitattributes"), true},
		{"M 100644 " + oid + " 2\tc/.gitattributes\x00", true},
		{rec("H", "x.gitattributes") + rec("H", "d/y.gitattributes") + rec("H", ".gitattributes.orig"), false},
		{rec("H", "d\t.gitattributes"), false},
	} {
		got, err := parseIndexAnswer([]byte(c.out))
		if err != nil {
			t.Fatal(err)
		}
		if got.Attributes != c.want {
			t.Errorf("%q: Attributes %v, want %v", c.out, got.Attributes, c.want)
		}
	}
}

// TestIndexAnswerDirs: the answer lists, sorted and once each, every
// directory with an entry below it (a gitlink's parents, not the gitlink),
// the top left out, whatever the records' tags, names with tabs and
// newlines included.
func TestIndexAnswerDirs(t *testing.T) {
	t.Parallel()
	oid := "0123456789abcdef0123456789abcdef01234567"
	rec := func(tag, mode, path string) string { return tag + " " + mode + " " + oid + " 0\t" + path + "\x00" }
	out := rec("H", "100644", "a/b/c") + rec("H", "100644", "a/b/d") + rec("H", "100644", "a/e") +
		rec("H", "100644", "a/f\tg/h") + rec("S", "100644", "sparse/x") + rec("H", "100644", "top") +
		rec("H", "160000", "x/y/sub") + rec("h", "100755", "z\nnl/w")
	got, err := parseIndexAnswer([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "a/b", "a/f\tg", "sparse", "x", "x/y", "z\nnl"}
	if !reflect.DeepEqual(got.Dirs, want) {
		t.Errorf("dirs %q, want %q", got.Dirs, want)
	}
}
