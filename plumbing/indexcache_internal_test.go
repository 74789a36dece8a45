package plumbing

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestIndexCacheRoundTrip: what storeIndexCache writes, readIndexCache
// reads back for the same key, names byte for byte (not UTF-8, spaces,
// newlines), and for no other key.
func TestIndexCacheRoundTrip(t *testing.T) {
	t.Parallel()
	r := &Repo{GitDir: t.TempDir()}
	key := indexKey{Dev: 64769, Ino: 1234567, Size: 8700000, MtimeNs: 1767323045123456789, CtimeNs: 1767323045223456789}
	c := &indexCache{
		Key: key,
		Answer: indexAnswer{
			SkipWorktree:    []string{"other/\xff.bin", "other/new\nline", "other/new\nline"},
			AssumeUnchanged: []string{"local cfg.yml"},
			Gitlinks: map[string]OID{
				"vendor/lib one": "0123456789abcdef0123456789abcdef01234567",
				"ext/\xfe":       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			},
		},
		Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
	}
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

	// An empty answer comes back with a non-nil gitlink map.
	c = &indexCache{Key: key, Answer: indexAnswer{Gitlinks: map[string]OID{}}}
	if err := r.storeIndexCache(c); err != nil {
		t.Fatal(err)
	}
	if got, why := readIndexCache(r.indexCachePath(), key); got == nil || got.Answer.Gitlinks == nil || got.Tree != "" {
		t.Errorf("empty answer read back as %+v (%s)", got, why)
	}
}

// TestIndexCacheCorrupt: a file that is not exactly a cache entry is a
// miss, never an error and never a partial answer.
func TestIndexCacheCorrupt(t *testing.T) {
	t.Parallel()
	key := indexKey{Dev: 1, Ino: 2, Size: 3, MtimeNs: 4, CtimeNs: 5}
	k := `"key":{"dev":1,"ino":2,"size":3,"mtime_ns":4,"ctime_ns":5}`
	for name, content := range map[string]string{
		"empty":               "",
		"truncated":           `{"version":1,` + k[:20],
		"not json":            "\x00\x01garbage",
		"other version":       `{"version":2,` + k + `}`,
		"no version":          `{` + k + `}`,
		"unterminated list":   `{"version":1,` + k + `,"skip_worktree":"YQ=="}`,    // "a"
		"empty name":          `{"version":1,` + k + `,"assume_unchanged":"AGEA"}`, // "\0a\0"
		"gitlink without oid": `{"version":1,` + k + `,"gitlinks":"c3ViAA=="}`,     // "sub\0"
		"gitlink bad oid":     `{"version":1,` + k + `,"gitlinks":"eHl6IHN1YgA="}`, // "xyz sub\0"
		"bad tree":            `{"version":1,` + k + `,"tree":"HEAD"}`,
		"bad base64":          `{"version":1,` + k + `,"skip_worktree":"%%%"}`,
		"wrong type":          `{"version":1,` + k + `,"skip_worktree":["a","b"]}`,
		"upper-case tree":     `{"version":1,` + k + `,"tree":"4B825DC642CB6EB9A060E54BF8D69288FBEE4904"}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "index-cache.json")
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, why := readIndexCache(p, key); got != nil || why == "" {
				t.Errorf("read %+v from %q", got, content)
			}
		})
	}
	if got, why := readIndexCache(filepath.Join(t.TempDir(), "none.json"), key); got != nil || why != "no cache file" {
		t.Errorf("missing file: %+v, %q", got, why)
	}
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
