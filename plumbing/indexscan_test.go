package plumbing

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// scanRepo is a throwaway repository for the index scanner's tests.
type scanRepo struct {
	t   *testing.T
	dir string
}

func newScanRepo(t *testing.T, initArgs ...string) *scanRepo {
	t.Helper()
	r := &scanRepo{t: t, dir: t.TempDir()}
	r.git(append([]string{"init", "-q"}, initArgs...)...)
	return r
}

func (r *scanRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(CleanEnv(os.Environ()), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *scanRepo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commitSome makes a commit of files whose names have every length from 1
// to 20 (every padding of the v2/v3 layout) in a few directories.
func (r *scanRepo) commitSome() {
	r.t.Helper()
	for n := 1; n <= 20; n++ {
		r.write(strings.Repeat("n", n), "x")
		r.write("dir/sub/"+strings.Repeat("m", n), strings.Repeat("y", n))
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "c")
}

func (r *scanRepo) hashLen() int { return len(r.git("rev-parse", "HEAD^{tree}")) / 2 }

func (r *scanRepo) scan() (indexScan, bool) {
	return scanIndex(filepath.Join(r.dir, ".git", "index"), r.hashLen())
}

// check holds the scanner to git: when it answers (ok), an index ls-files
// shows any assume-unchanged or skip-worktree entry in must be Flagged, its
// Gitlinks must be exactly the stage-0 gitlinks ls-files -s lists, and a
// Root must be what write-tree prints for the same index.
// wantFast says the scan must answer and find nothing, so the capture's
// fast path is really taken.
func (r *scanRepo) check(wantFast bool) indexScan {
	r.t.Helper()
	s, ok := r.scan()
	if !ok {
		if wantFast {
			r.t.Fatalf("scan gave up on an index it should read")
		}
		return s
	}
	uses := false
	links := map[string]OID{}
	for _, rec := range strings.Split(r.git("ls-files", "-s", "-v", "-z"), "\x00") {
		if rec == "" {
			continue
		}
		if c := rec[0]; c == 'S' || (c >= 'a' && c <= 'z') {
			uses = true
		}
		meta, path, _ := strings.Cut(rec[2:], "\t")
		if f := strings.Fields(meta); f[0] == "160000" && f[2] == "0" {
			links[path] = OID(f[1])
		}
	}
	if !reflect.DeepEqual(s.Gitlinks, links) {
		r.t.Errorf("scan gitlinks %v, ls-files %v", s.Gitlinks, links)
	}
	if uses && !s.Flagged {
		r.t.Errorf("scan found nothing, ls-files lists entries a capture uses:\n%s", r.git("ls-files", "-s", "-v"))
	}
	if wantFast && s.Flagged {
		r.t.Errorf("scan flagged an index with no flagged entry:\n%s", r.git("ls-files", "-s", "-v"))
	}
	if s.Root != "" {
		if wt := r.git("write-tree"); string(s.Root) != wt {
			r.t.Errorf("scan root %s, write-tree %s", s.Root, wt)
		}
	}
	return s
}

func TestScanIndexPlain(t *testing.T) {
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			r := newScanRepo(t)
			r.commitSome()
			r.git("update-index", "--index-version", v)
			s := r.check(true)
			if s.Root != OID(r.git("rev-parse", "HEAD^{tree}")) {
				t.Errorf("root %q, want HEAD's tree after a commit", s.Root)
			}
			// A staged change invalidates the root: no root, still fast.
			r.write("dir/sub/new", "new")
			r.git("add", "dir/sub/new")
			if s := r.check(true); s.Root != "" {
				t.Errorf("root %s after a staged change, want none", s.Root)
			}
		})
	}
}

func TestScanIndexSHA256(t *testing.T) {
	r := newScanRepo(t, "--object-format=sha256")
	r.commitSome()
	if r.hashLen() != 32 {
		t.Skip("git made a SHA-1 repository")
	}
	if s := r.check(true); s.Root == "" {
		t.Error("no root in a SHA-256 index")
	}
}

func TestScanIndexFlagged(t *testing.T) {
	cases := map[string]func(r *scanRepo){
		"assume-unchanged": func(r *scanRepo) { r.git("update-index", "--assume-unchanged", "nnn") },
		"skip-worktree":    func(r *scanRepo) { r.git("update-index", "--skip-worktree", "dir/sub/mm") },
		"intent-to-add": func(r *scanRepo) {
			r.write("later", "l")
			r.git("add", "-N", "later")
		},
	}
	for name, setup := range cases {
		for _, v := range []string{"3", "4"} {
			t.Run(name+"/v"+v, func(t *testing.T) {
				r := newScanRepo(t)
				r.commitSome()
				setup(r)
				r.git("update-index", "--index-version", v)
				if s, ok := r.scan(); !ok || !s.Flagged {
					t.Errorf("scan = %+v, %v; want flagged", s, ok)
				}
				r.check(false)
			})
		}
	}
}

func TestScanIndexGitlinks(t *testing.T) {
	// Gitlinks do not send the capture to ls-files: the scan gives their
	// paths and commits, for every index version, names of every length,
	// and leaves out unmerged ones as the capture does.
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			r := newScanRepo(t)
			r.commitSome()
			head := r.git("rev-parse", "HEAD")
			long := strings.Repeat(strings.Repeat("s", 200)+"/", 21) + "sub"
			for _, p := range []string{"a", "dir/sub/lib", "dir/sub/mmmm-lib", "zz/ext/x", long} {
				r.git("update-index", "--add", "--cacheinfo", "160000,"+head+","+p)
			}
			blob := r.git("rev-parse", "HEAD:n")
			unmerged := "160000 " + head + " 1\tconflict\n160000 " + head + " 2\tconflict\n100644 " + blob + " 3\tconflict\n"
			cmd := exec.Command("git", "update-index", "--index-info")
			cmd.Dir, cmd.Stdin = r.dir, strings.NewReader(unmerged)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index --index-info: %v\n%s", err, out)
			}
			r.git("update-index", "--index-version", v)
			s := r.check(true)
			if len(s.Gitlinks) != 5 {
				t.Errorf("gitlinks %v, want the 5 stage-0 ones", s.Gitlinks)
			}
		})
	}
}

func TestScanIndexGivesUp(t *testing.T) {
	t.Run("split index", func(t *testing.T) {
		r := newScanRepo(t)
		r.commitSome()
		r.git("update-index", "--split-index")
		r.git("update-index", "--assume-unchanged", "nnn")
		if _, ok := r.scan(); ok {
			t.Error("scan read a split index")
		}
	})
	t.Run("sparse index", func(t *testing.T) {
		r := newScanRepo(t)
		r.commitSome()
		r.git("sparse-checkout", "set", "--cone", "--sparse-index", "dir/sub")
		if s, ok := r.scan(); ok && !s.Flagged {
			t.Error("scan found nothing in a sparse index")
		}
	})
	t.Run("damaged", func(t *testing.T) {
		r := newScanRepo(t)
		r.commitSome()
		p := filepath.Join(r.dir, ".git", "index")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{1, 7, 20, 21, 100, len(b) - 12} {
			if err := os.WriteFile(p, b[:len(b)-cut], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, ok := r.scan(); ok {
				t.Errorf("scan read an index cut by %d bytes", cut)
			}
		}
		// An entry's padding that is not NUL.
		bad := append([]byte(nil), b...)
		nameEnd := 12 + 62 + int(b[12+61]) // first entry: stat, name, flags (short name), name
		bad[nameEnd] = 'x'
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.scan(); ok {
			t.Error("scan read an entry with non-NUL padding")
		}
	})
	t.Run("wrong hash length", func(t *testing.T) {
		r := newScanRepo(t)
		r.commitSome()
		if _, ok := scanIndex(filepath.Join(r.dir, ".git", "index"), 32); ok {
			t.Error("scan read a SHA-1 index as SHA-256")
		}
	})
}

func TestScanIndexLongName(t *testing.T) {
	// A name of 0xfff bytes or more is stored with the length field
	// saturated and found by its NUL; no file is needed for an index entry.
	r := newScanRepo(t)
	r.commitSome()
	blob := r.git("rev-parse", "HEAD:n")
	long := strings.Repeat(strings.Repeat("d", 200)+"/", 21) + "f"
	r.git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	for _, v := range []string{"2", "4"} {
		r.git("update-index", "--index-version", v)
		r.check(true)
	}
}

func TestScanIndexMissing(t *testing.T) {
	s, ok := scanIndex(filepath.Join(t.TempDir(), "index"), 20)
	if !ok || s.Flagged || s.Root != "" {
		t.Errorf("missing index: %+v, %v; want an empty answer", s, ok)
	}
}

func TestVarint(t *testing.T) {
	// git's encode_varint: 127 -> 7f, 128 -> 80 00, 16511 -> ff 7f.
	for _, c := range []struct {
		in   []byte
		want uint64
	}{{[]byte{0}, 0}, {[]byte{0x7f}, 127}, {[]byte{0x80, 0}, 128}, {[]byte{0xff, 0x7f}, 16511}, {[]byte{0x80, 0x80, 0}, 16512}} {
		if v, n := varint(c.in); v != c.want || n != len(c.in) {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", c.in, v, n, c.want, len(c.in))
		}
	}
	if _, n := varint([]byte{0x80}); n != 0 {
		t.Error("varint read past its end")
	}
}
