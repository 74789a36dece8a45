package rollback

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
)

func mkfile(t *testing.T, root, rel string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(rel), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func permOfPath(t *testing.T, root, rel string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode() & (os.ModePerm | specialDir)
}

// TestPermPlanNeverThroughSymlink: a recorded directory or file below a
// symlink (a person put it where the rollback had a directory) is never
// changed: not the directory the link points at, nor a file in it.
func TestPermPlanNeverThroughSymlink(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "other/deep/y", 0o644)
	mkfile(t, root, "other/f", 0o644)
	if err := os.Symlink("other", filepath.Join(root, "keys")); err != nil {
		t.Fatal(err)
	}
	w := newWorktree(root, nil, nil)
	recorded := []journal.PathPerm{{Path: "keys/deep", Perm: "0700", Dir: true}, {Path: "keys/f", Perm: "0600"}}
	writes := []plumbing.TreeChange{{Path: "keys/f", SrcMode: "000000", DstMode: "100644"}}
	pp := planPerms(w, writes, recorded, true, gitDefault, nil)
	if len(pp.dirs) != 0 {
		t.Errorf("planned directories below a symlink: %+v", pp.dirs)
	}
	// Even when planned (the link came after the plan), apply checks again.
	pp.dirs = []permOf{{path: "keys/deep", mode: 0o700, dir: true}}
	pp.files = map[string]permOf{"keys/f": {path: "keys/f", mode: 0o600}}
	if failed := pp.apply(w); failed != nil {
		t.Errorf("apply failed on %v", failed)
	}
	if got := permOfPath(t, root, "other/deep"); got != 0o755 {
		t.Errorf("other/deep is %v through the symlink keys, want 0755", got)
	}
	if got := permOfPath(t, root, "other/f"); got != 0o644 {
		t.Errorf("other/f is %v through the symlink keys, want 0644", got)
	}
}

// TestPlanPermsChoices: a recorded file gets its bits when the exec bit
// agrees with the mode written (always when modes are not read from disk),
// even over a file rewritten with its own mode; an unrecorded file
// rewritten with its own mode keeps its bits; a created one without a
// record gets git's; a recorded directory only if it does not exist.
func TestPlanPermsChoices(t *testing.T) {
	root := t.TempDir()
	mkfile(t, root, "same.txt", 0o640)
	mkfile(t, root, "recreated.txt", 0o644)
	mkfile(t, root, "there/x", 0o644)
	w := newWorktree(root, nil, nil)
	recorded := []journal.PathPerm{
		{Path: "exec.sh", Perm: "0700"},
		{Path: "recreated.txt", Perm: "0600"},
		{Path: "there", Perm: "0700", Dir: true},
		{Path: "gone/deep", Perm: "0700", Dir: true},
		{Path: "gone", Perm: "2750", Dir: true},
	}
	writes := []plumbing.TreeChange{
		{Path: "exec.sh", SrcMode: "000000", DstMode: "100644"},
		{Path: "recreated.txt", SrcMode: "100644", DstMode: "100644"},
		{Path: "same.txt", SrcMode: "100644", DstMode: "100644"},
		{Path: "new.txt", SrcMode: "000000", DstMode: "100644"},
	}
	pp := planPerms(w, writes, recorded, true, gitDefault, nil)
	got := map[string]os.FileMode{}
	for p, po := range pp.files {
		got[p] = po.mode
	}
	want := map[string]os.FileMode{"recreated.txt": 0o600, "same.txt": 0o640}
	if len(got) != len(want) || got["recreated.txt"] != want["recreated.txt"] || got["same.txt"] != want["same.txt"] {
		t.Errorf("files with modes read from disk: %v, want %v (exec.sh's 0700 disagrees with 100644)", got, want)
	}
	st, err := os.Lstat(filepath.Join(root, "same.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if gid, _ := gidOf(st); pp.files["same.txt"].gid == nil || *pp.files["same.txt"].gid != gid {
		t.Errorf("same.txt keeps its bits without its group %d: %+v", gid, pp.files["same.txt"])
	}
	var dirs []string
	for _, d := range pp.dirs {
		dirs = append(dirs, d.path)
	}
	if !slices.Equal(dirs, []string{"gone/deep", "gone"}) {
		t.Errorf("directories %v, want gone/deep then gone (there exists)", dirs)
	}
	if pp.dirs[1].mode != 0o750|os.ModeSetgid {
		t.Errorf("gone: %v, want setgid 0750", pp.dirs[1].mode)
	}
	pp = planPerms(w, writes, recorded, false, gitDefault, nil)
	if po, ok := pp.files["exec.sh"]; !ok || po.mode != 0o700 {
		t.Errorf("with core.fileMode false, exec.sh: %+v, want 0700", pp.files["exec.sh"])
	}
}

// TestPermPlanOtherGroup: a file whose recorded group the user cannot give
// back (not one of theirs) keeps only the group bits git would give, so
// group write never goes to another group. Root may chown to any group, so
// this runs as another user only.
func TestPermPlanOtherGroup(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may give any group back")
	}
	groups, _ := os.Getgroups()
	var other uint32 = 1
	for slices.Contains(groups, int(other)) || int(other) == os.Getegid() {
		other++
	}
	root := t.TempDir()
	mkfile(t, root, "team.txt", 0o644)
	w := newWorktree(root, nil, nil)
	if err := os.Mkdir(filepath.Join(root, "teamdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	pp := permPlan{files: map[string]permOf{"team.txt": {path: "team.txt", mode: 0o660, gid: &other}},
		dirs: []permOf{{path: "teamdir", mode: 0o770 | os.ModeSetgid, dir: true, gid: &other}}, made: gitDefault}
	if failed := pp.apply(w); failed != nil {
		t.Errorf("apply failed on %v", failed)
	}
	if got := permOfPath(t, root, "team.txt"); got != 0o640 {
		t.Errorf("team.txt is %v, want 0640 (group write of group %d not given to another)", got, other)
	}
	if got := permOfPath(t, root, "teamdir"); got != 0o750 {
		t.Errorf("teamdir is %v, want 0750: no group write, and no setgid bit for the wrong group", got)
	}
}

// TestProbeCreated: the bits learned are what the umask gives.
func TestProbeCreated(t *testing.T) {
	tmp := t.TempDir()
	c := probeCreated(tmp)
	if c.file&0o600 != 0o600 || c.exec&0o700 != 0o700 || c.dir&0o700 != 0o700 || c.file&0o111 != 0 {
		t.Errorf("probe: %+v", c)
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 0 {
		t.Errorf("probe left %v", ents)
	}
}
