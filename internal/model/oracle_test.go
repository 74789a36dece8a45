package model_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The model's own view of trees: what it expects a capture to hold, worked
// out from the files on disk without the toolkit's code. git is used only
// as the user's own tool would be: to read the index, ignore rules are
// matched here.

// entry is one path of a tree: its git mode and object name.
type entry struct {
	Mode string
	OID  string
}

func (e entry) String() string { return e.Mode + " " + short(e.OID) }

// treeMap is a whole tree, path to entry (blobs, symlinks and gitlinks).
type treeMap map[string]entry

// file is what is on disk at a path: a regular file (Exec when the owner
// may execute it) or a symlink (Data is its target), with its mtime.
type file struct {
	Link  bool
	Exec  bool
	Data  string
	MTime int64
	Perm  fs.FileMode
}

// same compares two files without their mtimes.
func (f file) same(g file) bool {
	return f.Link == g.Link && f.Exec == g.Exec && f.Data == g.Data
}

func (f file) String() string {
	switch {
	case f.Link:
		return fmt.Sprintf("symlink -> %q", f.Data)
	case f.Exec:
		return fmt.Sprintf("exec %d bytes %.24q", len(f.Data), f.Data)
	}
	return fmt.Sprintf("file %d bytes %.24q", len(f.Data), f.Data)
}

// entry is the tree entry git makes of f.
func (f file) entry() entry {
	switch {
	case f.Link:
		return entry{"120000", blobID(f.Data)}
	case f.Exec:
		return entry{"100755", blobID(f.Data)}
	}
	return entry{"100644", blobID(f.Data)}
}

// disk is a walk of a work tree: every file and symlink (ignored files and
// nested repositories' contents included, the tree's own .git excluded),
// the directories, and the nested repositories (directories below the root
// holding a .git).
type disk struct {
	Files  map[string]file
	Dirs   map[string]bool
	Nested map[string]bool
}

// walkDisk reads root.
func walkDisk(root string) (*disk, error) {
	d := &disk{Files: map[string]file{}, Dirs: map[string]bool{}, Nested: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case st.IsDir():
			d.Dirs[rel] = true
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				d.Nested[rel] = true
			}
		case st.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			d.Files[rel] = file{Link: true, Data: t, MTime: st.ModTime().UnixNano()}
		case st.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			d.Files[rel] = file{Exec: st.Mode()&0o100 != 0, Data: string(b), MTime: st.ModTime().UnixNano(), Perm: st.Mode().Perm()}
		}
		return nil
	})
	return d, err
}

// inGitDir reports whether p is in a directory named .git at any depth
// (a nested repository's own, which git never adds).
func inGitDir(p string) bool {
	return strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/")
}

// nestedRoot returns the outermost nested repository p is in or is (""
// when none).
func (d *disk) nestedRoot(p string) string {
	best := ""
	for n := range d.Nested {
		if (p == n || strings.HasPrefix(p, n+"/")) && (best == "" || len(n) < len(best)) {
			best = n
		}
	}
	return best
}

// blobID is git's SHA-1 object name of a blob with content data.
func blobID(data string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil))
}

// rules is a parsed .gitignore of the limited kind the model writes:
// patterns without '!' or inner '/', optionally anchored with a leading
// '/' and directory-only with a trailing '/'.
type rules []rule

type rule struct {
	pat      string
	anchored bool
	dirOnly  bool
}

// parseRules reads .gitignore text. A pattern outside the supported kind is
// a model error: the model must never write one.
func parseRules(text string) (rules, error) {
	var rs rules
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var r rule
		if strings.HasPrefix(l, "/") {
			r.anchored, l = true, l[1:]
		}
		if strings.HasSuffix(l, "/") {
			r.dirOnly, l = true, strings.TrimSuffix(l, "/")
		}
		if l == "" || strings.ContainsAny(l, "/!\\") || strings.HasPrefix(l, "**") {
			return nil, fmt.Errorf("model: unsupported ignore pattern %q", l)
		}
		if _, err := path.Match(l, "x"); err != nil {
			return nil, fmt.Errorf("model: bad ignore pattern %q", l)
		}
		r.pat = l
		rs = append(rs, r)
	}
	return rs, nil
}

// matches reports whether the rules ignore p as git does for an untracked
// path: a directory above it matches any rule, or its own name matches a
// rule that is not directory-only (p is a file or symlink).
func (rs rules) matches(p string) bool {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		last := i == len(parts)-1
		for _, r := range rs {
			if r.anchored && i != 0 {
				continue
			}
			if last && r.dirOnly {
				continue
			}
			if ok, _ := path.Match(r.pat, c); ok {
				return true
			}
		}
	}
	return false
}

// index is the user's index as `git ls-files -s -z` shows it: stage-0
// entries by path.
type index map[string]entry

func parseIndex(out string) (index, error) {
	ix := index{}
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("ls-files: bad record %q", rec)
		}
		if f[2] == "0" {
			ix[p] = entry{f[0], f[1]}
		}
	}
	return ix, nil
}

// parseTree reads `git ls-tree -r -z --full-tree` output.
func parseTree(out string) (treeMap, error) {
	m := treeMap{}
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("ls-tree: bad record %q", rec)
		}
		m[p] = entry{f[0], f[2]}
	}
	return m, nil
}

// expectation is what the model says a capture of the tree holds now: the
// tree, the paths it must skip for size (RFC 4: new or changed files over
// max_file_bytes keep the index's entry), and the nested repositories and
// gitlinks it reports.
type expectation struct {
	Tree       treeMap
	TooBig     map[string]bool
	Submodules map[string]string // path -> commit ("" when it has none)
	// Ignored are the files on disk a capture must leave out (untracked
	// and matched by the ignore rules).
	Ignored map[string]bool
}

// expect works out a capture of d, given the index, the ignore rules in
// force, max_file_bytes and the HEAD of each nested repository ("" when it
// has no commit).
func expect(d *disk, ix index, rs rules, maxFile int64, nestedHead map[string]string) *expectation {
	e := &expectation{Tree: treeMap{}, TooBig: map[string]bool{}, Submodules: map[string]string{}, Ignored: map[string]bool{}}
	tracked := func(p string) bool { _, ok := ix[p]; return ok }
	trackedBelow := func(n string) bool {
		for p := range ix {
			if strings.HasPrefix(p, n+"/") {
				return true
			}
		}
		return false
	}
	for p, f := range d.Files {
		if d.nestedRoot(p) != "" || inGitDir(p) {
			// Inside a nested repository: nothing of it is captured, not
			// even a file the user's index tracks there (issue 13 item 12:
			// a repository made where tracked files were is nested too).
			continue
		}
		if !tracked(p) && rs.matches(p) {
			e.Ignored[p] = true
			continue
		}
		fe := f.entry()
		if !f.Link && maxFile > 0 && int64(len(f.Data)) > maxFile {
			ie, ok := ix[p]
			if ok {
				e.Tree[p] = ie
			}
			if !ok || ie != fe {
				e.TooBig[p] = true
			}
			continue
		}
		e.Tree[p] = fe
	}
	for n := range d.Nested {
		if inner := d.nestedRoot(n); inner != n {
			continue // a repository inside a nested one is the nested one's
		}
		ie, ok := ix[n]
		switch {
		case ok && ie.Mode == "160000":
			oid := nestedHead[n]
			if oid == "" {
				oid = ie.OID
			}
			e.Tree[n] = entry{"160000", oid}
			e.Submodules[n] = oid
		case ok:
			// A tracked file where a nested repository now is: status calls
			// it a type change to a submodule, and the capture records the
			// repository's commit (or, with no commit, a deleted file).
			if h := nestedHead[n]; h != "" {
				e.Tree[n] = entry{"160000", h}
				e.Submodules[n] = h
			}
		case trackedBelow(n) || !rs.matches(n+"/x"):
			// A nested repository status lists (untracked), or one it walks
			// into because the index tracks paths below it (issue 13 item
			// 12): a gitlink at its HEAD, none when it has no commit (RFC
			// 4.2; item 13), and reported either way.
			if h := nestedHead[n]; h != "" {
				e.Tree[n] = entry{"160000", h}
			}
			e.Submodules[n] = nestedHead[n]
		default:
			// In an ignored directory, nothing tracked below it: status
			// does not list it.
		}
	}
	return e
}

// diffTrees lists the paths whose entries differ between a and b.
func diffTrees(a, b treeMap) []string {
	var out []string
	for p, e := range a {
		if f, ok := b[p]; !ok || f != e {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// describeTreeDiff shows how got differs from want, path by path.
func describeTreeDiff(want, got treeMap) string {
	var b strings.Builder
	for _, p := range diffTrees(want, got) {
		w, wok := want[p]
		g, gok := got[p]
		ws, gs := "absent", "absent"
		if wok {
			ws = w.String()
		}
		if gok {
			gs = g.String()
		}
		fmt.Fprintf(&b, "  %q: got %s, want %s\n", p, gs, ws)
	}
	return b.String()
}

func short(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
