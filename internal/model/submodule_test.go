package model_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/internal/gittest"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/refs"
	"github.com/venom-org/git-venom/rollback"
)

// A submodule in some sequences (issue 18): the tree then has one,
// subPath, added with `git submodule add` of a local repository at the
// setup, and every capture and rollback covers it as a repository of its
// own (RFC 4.2 repos[], 5.1, 7.4). The model keeps its files flat and
// regular (inner<n>.txt at its top; no ignore rules, nothing too big),
// and its HEAD where the setup left it (no commit inside it), so what a
// rollback does there is RFC 7.3's classes and 7.4's writes alone:
//
//   - a capture: the submodule's ref with the checkpoint's n holds its
//     files as they are on disk, and the checkpoint is reused only when
//     the top and the submodule are both unchanged;
//   - a plan: the submodule's section has the files and left the model
//     predicts from its own trees in the captures (the same windows as
//     the top's), and its outside paths refuse a guarded rollback with
//     the top's;
//   - a rollback: the submodule's files are then T's where planned, and
//     as they were elsewhere; its HEAD and index do not change; the
//     safety checkpoint holds it as it was, and the undo gives it back;
//   - retention: a pruned checkpoint's ref goes in the submodule too.

// subPath is the submodule's path in the sequences that have one. No
// random name (nameParts) can make it.
const subPath = "sm"

// addSubmodule adds the submodule at the setup: a repository of a few
// files beside the tree, `git submodule add`, committed.
func (s *seq) addSubmodule(main *gittest.Repo) {
	src := gittest.New(s.t)
	for i := 0; i < 2+s.rng.Intn(3); i++ {
		src.Write("inner"+strconv.Itoa(i)+".txt", s.content())
	}
	src.Commit("the submodule's files")
	main.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", src.Dir, subPath)
	main.Git("commit", "-q", "-m", "add the submodule")
	s.sub = gittest.At(s.t, filepath.Join(main.Dir, subPath))
	s.sub.Git("config", "user.name", "N")
	s.sub.Git("config", "user.email", "n@example.invalid")
}

// subOp is a change inside the submodule: a file written or deleted, by
// the agent (with an edit record, now and then) or a person.
func (s *seq) subOp(agent bool) (touched []string, desc string) {
	name := "inner" + strconv.Itoa(s.rng.Intn(5)) + ".txt"
	p := filepath.Join(s.sub.Dir, name)
	if _, err := os.Lstat(p); err == nil && s.rng.Intn(4) == 0 {
		os.Remove(p)
		desc = "delete in the submodule " + strconv.Quote(name)
	} else {
		if err := os.WriteFile(p, []byte(s.content()), 0o644); err != nil {
			s.fatalf("writing %s: %v", p, err)
		}
		desc = "write in the submodule " + strconv.Quote(name)
	}
	return []string{subPath + "/" + name}, desc
}

// subTreeNow is what a capture of the submodule holds now: its files.
func (s *seq) subTreeNow() treeMap {
	if s.sub == nil {
		return nil
	}
	d, err := walkDisk(s.sub.Dir)
	if err != nil {
		s.fatalf("walking the submodule: %v", err)
	}
	t := treeMap{}
	for p, f := range d.Files {
		t[p] = f.entry()
	}
	return t
}

// subNewBytes is what a capture of the submodule hashes: the bytes of
// its files that its index does not hold as they are.
func (s *seq) subNewBytes() int64 {
	if s.sub == nil {
		return 0
	}
	ix, err := parseIndex(s.sub.Git("ls-files", "-s", "-z"))
	if err != nil {
		s.fatalf("%v", err)
	}
	var n int64
	for p, e := range s.subTreeNow() {
		if ie, ok := ix[p]; !ok || ie != e {
			b, _ := os.ReadFile(filepath.Join(s.sub.Dir, p))
			n += int64(len(b))
		}
	}
	return n
}

// subTreeOf lists a commit's tree in the submodule.
func (s *seq) subTreeOf(rev string) treeMap {
	m, err := parseTree(s.sub.Git("ls-tree", "-r", "-z", "--full-tree", rev))
	if err != nil {
		s.fatalf("%v", err)
	}
	return m
}

// repoCount is how many repositories a checkpoint and a plan name.
func (s *seq) repoCount() int {
	if s.sub == nil {
		return 1
	}
	return 2
}

// checkSubCheckpoint checks the submodule's part of checkpoint c, which
// holds want: its ref with c's n names a commit with those files, and
// that is the one the capture result says (commit, when not "").
func (s *seq) checkSubCheckpoint(c *cpModel, want treeMap, commit string) {
	if s.sub == nil {
		return
	}
	ref := refs.Checkpoint(s.agent, c.n)
	got, err := s.sub.GitErr("rev-parse", "-q", "--verify", ref)
	if err != nil {
		s.fatalf("checkpoint %s has no ref %s in the submodule", c.id, ref)
	}
	got = strings.TrimSpace(got)
	if commit != "" && got != commit {
		s.fatalf("checkpoint %s: the submodule's ref is %s, the result says %s", c.id, got, commit)
	}
	if d := diffTrees(want, s.subTreeOf(got)); d != nil {
		s.fatalf("checkpoint %s holds a submodule tree other than its files:\n%s", c.id, describeTreeDiff(want, s.subTreeOf(got)))
	}
	c.subTree, c.subCommit = want, got
	s.caps[c.cap].subTree = want
}

// checkSubLog checks the log's record of checkpoint sv against the
// submodule: it names the submodule, and its ref holds that commit, or is
// gone once the checkpoint is pruned (RFC 5.1, 5.2).
func (s *seq) checkSubLog(sv *journal.Saved) {
	if s.sub == nil {
		return
	}
	rs := sv.Rec.RepoEntry(subPath)
	if rs == nil {
		s.fatalf("checkpoint %s does not name the submodule: %+v", sv.ID(), sv.Rec.Repos)
	}
	ref := refs.Checkpoint(s.agent, sv.N)
	got, err := s.sub.GitErr("rev-parse", "-q", "--verify", ref)
	switch {
	case sv.Pruned && err == nil:
		s.fatalf("checkpoint %s was pruned, but the submodule's %s still exists", sv.ID(), ref)
	case !sv.Pruned && strings.TrimSpace(got) != rs.Commit:
		s.fatalf("the submodule's %s is %q, the log says %s", ref, strings.TrimSpace(got), rs.Commit)
	}
}

// subPrediction is the model's plan for the submodule.
type subPrediction struct {
	S       treeMap
	outside []string // relative to the top
	files   map[string]rollback.File
	left    map[string]string
}

// predictSub is the submodule's part of predict (RFC 7.3, 7.4 in its
// repository), with the top's outside choice (outside, as in force).
func (s *seq) predictSub(c *cpModel, o rollback.Options, outside string) *subPrediction {
	if s.sub == nil {
		return nil
	}
	sp := &subPrediction{S: s.subTreeNow(), files: map[string]rollback.File{}, left: map[string]string{}}
	changes := diffTrees(sp.S, c.subTree)
	paths := map[string]bool{}
	for _, x := range changes {
		paths[x] = true
	}
	class, fresh := s.classesOf(c, sp.S, paths, func(e capEvent) treeMap { return e.subTree }, subPath+"/")
	for _, x := range changes {
		_, inS := sp.S[x]
		_, inT := c.subTree[x]
		switch {
		case class[x] == rollback.ClassOutside && outside == "refuse":
			sp.outside = append(sp.outside, subPath+"/"+x)
		case class[x] == rollback.ClassOutside && outside == "keep":
			sp.left[x] = "outside"
		case fresh[x] && !inT && o.Outside == "":
			sp.left[x] = "outside"
		default:
			ch := "modify"
			switch {
			case !inS:
				ch = "create"
			case !inT:
				ch = "delete"
			}
			sp.files[x] = rollback.File{Path: x, Change: ch, Class: class[x]}
		}
	}
	sort.Strings(sp.outside)
	return sp
}

// compareSubPlan checks the submodule's section of a plan.
func (s *seq) compareSubPlan(sp *subPrediction, r rollback.Repo, c *cpModel) {
	if r.Repo != subPath {
		s.fatalf("the plan's second repository is %q, want %s", r.Repo, subPath)
	}
	got := map[string]rollback.File{}
	for _, f := range r.Files {
		got[f.Path] = f
	}
	gotLeft := map[string]string{}
	for _, l := range r.Left {
		gotLeft[l.Path] = l.Reason
	}
	var diffs []string
	for _, x := range union(keys(got), keys(sp.files)) {
		if got[x] != sp.files[x] {
			diffs = append(diffs, fmt.Sprintf("files %q: got %+v, model %+v (S %v, T %v)", x, got[x], sp.files[x], sp.S[x], c.subTree[x]))
		}
	}
	for _, x := range union(keys(gotLeft), keys(sp.left)) {
		if gotLeft[x] != sp.left[x] {
			diffs = append(diffs, fmt.Sprintf("left %q: got %q, model %q", x, gotLeft[x], sp.left[x]))
		}
	}
	if len(diffs) > 0 {
		s.fatalf("the submodule's plan to %s differs from the model:\n  %s", c.id, strings.Join(diffs, "\n  "))
	}
	if r.Head.Moves {
		s.fatalf("the submodule's HEAD moves, and nothing committed in it")
	}
}

// subAfter is what the submodule must hold after a rollback that applied
// sp to target c: T's entries where it wrote, none where it deleted, S's
// elsewhere.
func (s *seq) subAfter(sp *subPrediction, c *cpModel) treeMap {
	want := treeMap{}
	for p, e := range sp.S {
		want[p] = e
	}
	for p, f := range sp.files {
		if f.Change == "delete" {
			delete(want, p)
		} else {
			want[p] = c.subTree[p]
		}
	}
	return want
}

// subUser is the submodule's HEAD and index file, which no rollback of
// the model may change (its HEAD never moves).
func (s *seq) subUser() string {
	if s.sub == nil {
		return ""
	}
	h := s.sub.Line("rev-parse", "HEAD")
	b, _ := os.ReadFile(filepath.Join(s.sub.GitDir, "index"))
	return h + "\x00" + string(b)
}

// subPaths is the paths of an edit record inside the submodule, relative
// to it (prefix "sm/"), or the top's paths (prefix "").
func subPaths(paths []string, prefix string) []string {
	if prefix == "" {
		return paths
	}
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// subFilesAsChecked makes want's files inside the submodule those of
// after: the top's checks of a rollback leave them to the submodule's own
// (subAfter, the undo's), which know its plan.
func (s *seq) subFilesAsChecked(want map[string]file, after *disk) {
	if s.sub == nil {
		return
	}
	for p := range want {
		if strings.HasPrefix(p, subPath+"/") {
			delete(want, p)
		}
	}
	for p, f := range after.Files {
		if strings.HasPrefix(p, subPath+"/") {
			want[p] = f
		}
	}
}
