package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/venom-org/git-venom/internal/failpoint"
	"github.com/venom-org/git-venom/journal"
	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// A rollback never unlinks what S held at a path it writes or deletes: it
// moves it into a backup directory in the worktree's scratch directory
// (rollback/writes.go), named BackupPrefix(agent, safety) and a random
// tail, and records each move in the directory's manifest (one Moved a
// line, MovedFile) before it makes it. A save a person made into such a
// file (a program that held it open) is there, and nowhere else. The
// rollback compares each backup with what it moved before it removes
// them (SavesAmong), and keeps any save (KeepSaves), as it does what a
// directory it moved whole holds that no record names (foreignIn). A rollback killed
// before it got there leaves the directory, and the next command that
// closes it as interrupted does the same from the manifest
// (CloseInterrupted): a person's save is never lost, not even then
// (issue 13 item 2).

// ManifestFile is the name of a backup directory's manifest.
const ManifestFile = plumbing.BackupManifest

// BackupPrefix is the name a rollback's backup directory starts with:
// the agent and the safety checkpoint, so that the rollback can be told
// from its directory.
func BackupPrefix(agent, safety string) string { return "backup-" + agent + "-" + safety + "-" }

// Moved is one file or symlink a rollback moved out of its tree (or, with
// Dir, a directory it moved whole): Path in
// the tree, File where it is now (absolute), and what it was when moved,
// which was S's: its device, inode, size and mtime (ns), whether it is a
// symlink, S's blob Src, and, for a file whose last change was too near
// S's capture for those to prove it unchanged (Racy), Raw, the hash of its
// bytes as found to be S's. Copied is a copy (the backup directory is on
// another device), made after the last look, so no save can be in it.
type Moved struct {
	Path   string `json:"path"`
	File   string `json:"file"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Size   int64  `json:"size"`
	Mtime  int64  `json:"mtime_ns"`
	Link   bool   `json:"link,omitempty"`
	Src    string `json:"src"`
	Racy   bool   `json:"racy,omitempty"`
	Raw    string `json:"raw,omitempty"`
	Copied bool   `json:"copied,omitempty"`
	// Dir is a directory the rollback moved whole (its files are named
	// by records of their own, at their places in it): anything else
	// found in it is a person's, made there after the rollback looked.
	// Path and File are the directory's, Dev and Ino what was moved.
	Dir bool `json:"dir,omitempty"`
}

// MarshalJSON writes m as a manifest line. A path is any bytes but NUL,
// and JSON strings hold only UTF-8, so a Path or File that is not valid
// UTF-8 is also carried byte for byte, in base64, in path_bytes or
// file_bytes (docs/json.md's convention): a file below a directory moved
// whole is named by its real name in the backup, and a mangled one would
// name nothing, so that every file of it looked like a person's.
//
// A record whose strings need no escaping (printable ASCII but for '"',
// '\', '<', '>' and '&': every path a generated tree or a formatter
// writes) is written by hand, byte for byte what encoding/json writes
// (TestMovedPlainJSONIsEncodingJSONs): a rollback of 50,000 deletions
// writes a record per file, and reflection cost 0.24 s of its CPU (issue
// 16). Any other goes through encoding/json.
func (m Moved) MarshalJSON() ([]byte, error) {
	if b, ok := m.appendPlain(make([]byte, 0, 96+len(m.Path)+len(m.File)+len(m.Src)+len(m.Raw))); ok {
		return b, nil
	}
	return m.marshalReflect()
}

// marshalReflect is MarshalJSON through encoding/json, for any record.
func (m Moved) marshalReflect() ([]byte, error) {
	type plain Moved
	b, err := plumbing.MarshalPathBytes(plain(m), m.Path)
	if err != nil {
		return nil, err
	}
	return plumbing.AddPathBytes(b, "file_bytes", m.File)
}

// appendPlain appends m's manifest line (no newline) to b, as
// encoding/json writes it, when each of its strings is plainJSON; ok is
// false otherwise, and b is then to be dropped.
func (m Moved) appendPlain(b []byte) (_ []byte, ok bool) {
	if !plainJSON(m.Path) || !plainJSON(m.File) || !plainJSON(m.Src) || !plainJSON(m.Raw) {
		return b, false
	}
	str := func(key, v string) {
		b = append(b, key...)
		b = append(b, '"')
		b = append(b, v...)
		b = append(b, '"')
	}
	str(`{"path":`, m.Path)
	str(`,"file":`, m.File)
	b = strconv.AppendUint(append(b, `,"dev":`...), m.Dev, 10)
	b = strconv.AppendUint(append(b, `,"ino":`...), m.Ino, 10)
	b = strconv.AppendInt(append(b, `,"size":`...), m.Size, 10)
	b = strconv.AppendInt(append(b, `,"mtime_ns":`...), m.Mtime, 10)
	if m.Link {
		b = append(b, `,"link":true`...)
	}
	str(`,"src":`, m.Src)
	if m.Racy {
		b = append(b, `,"racy":true`...)
	}
	if m.Raw != "" {
		str(`,"raw":`, m.Raw)
	}
	if m.Copied {
		b = append(b, `,"copied":true`...)
	}
	if m.Dir {
		b = append(b, `,"dir":true`...)
	}
	return append(b, '}'), true
}

// plainJSON reports whether encoding/json writes s as it is, between
// quotes: printable ASCII with nothing it escapes (its HTML escaping
// included).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Moved) UnmarshalJSON(b []byte) error {
	type plain Moved
	var v plain
	if err := plumbing.UnmarshalPathBytes(b, &v, func(v *plain) *string { return &v.Path }); err != nil {
		return err
	}
	if err := plumbing.PathBytesOf(b, "file_bytes", &v.File); err != nil {
		return err
	}
	*m = Moved(v)
	return nil
}

// Rescued is one member of a rollback's repos[].rescued (the toolkit's
// addition, issue 13 item 2): bytes a person saved into a path while the
// rollback ran, into the file it had moved away. They are kept as Blob,
// at Path in the tree of the commit Ref names (the safety checkpoint's
// tree with the rescued files in it, its parent the safety checkpoint):
// `git show <ref>:<path>`. When they could not be stored, File is where
// they are on disk instead (the backup is kept).
//
// Repo is the submodule the save was made in, relative to the top, whose
// git dir holds Ref (issue 18); empty for the top repository.
type Rescued struct {
	Repo string `json:"repo,omitempty"`
	Path string `json:"path"`
	Blob string `json:"blob,omitempty"`
	Ref  string `json:"ref,omitempty"`
	File string `json:"file,omitempty"`
}

// ShowRescued is the git command that shows the save rs kept under its
// ref: `git show <ref>:<path>`, run in rs's repository (`git -C <repo>`
// for a submodule's).
func ShowRescued(rs Rescued) string {
	if rs.Repo != "" && rs.Repo != TopRepo {
		return fmt.Sprintf("git -C %s show %s:%s", rs.Repo, rs.Ref, rs.Path)
	}
	return fmt.Sprintf("git show %s:%s", rs.Ref, rs.Path)
}

// SavesAmong returns those of moved whose file no longer holds what was
// moved: a symlink that is not the same inode (one cannot be written in
// place), a file that is not the same inode, size and mtime, or, where
// those prove nothing (Racy) or differ, whose bytes (one `git hash-object
// --no-filters`) are not S's blob (nor, for a racy one, Raw). A copy, a
// backup that is gone, and one that cannot be read are not saves (the
// last are kept by the caller's not removing what it cannot judge).
// What each file was when it was looked at, before its bytes were read,
// goes in sn (when not nil), for RemoveNamed.
func (t *Tree) SavesAmong(ctx context.Context, moved []Moved, sn Seen) []Moved {
	saves, _ := t.savesAmong(ctx, moved, sn)
	return saves
}

// Seen is what each file of a backup directory was when it was judged
// (SavesAmong, foreignIn, Look), by its absolute name: RemoveNamed
// unlinks a file only while it is still so, so that a save made into it
// after the judging (a program that holds it open), while the rescue
// stores what it found or the rollback logs its end, is never unlinked.
type Seen map[string]fileStamp

// Look records in sn what the file at name is now (nothing when it
// cannot be lstat'ed): before its bytes are read, so that a later change
// keeps it.
func (sn Seen) Look(name string) {
	if st, err := os.Lstat(name); err == nil {
		sn[name] = stampOf(st)
	}
}

// fileStamp is what an lstat says of a file that a save into it changes.
type fileStamp struct {
	dev, ino    uint64
	size, mtime int64
	mode        fs.FileMode
}

func stampOf(st fs.FileInfo) fileStamp {
	dev, ino, _, _ := plumbing.StatIdentity(st)
	return fileStamp{dev, ino, st.Size(), st.ModTime().UnixNano(), st.Mode()}
}

// Unchanged reports whether the file at name is as seen, and was seen.
func (sn Seen) Unchanged(name string) bool {
	was, ok := sn[name]
	st, err := os.Lstat(name)
	return ok && err == nil && stampOf(st) == was
}

// savesAmong is SavesAmong, which records in sn (when not nil) what each
// file it looked at was when it looked, before its bytes were hashed.
func (t *Tree) savesAmong(ctx context.Context, moved []Moved, sn Seen) ([]Moved, Seen) {
	var hash []string
	byFile := map[string]Moved{}
	var saves []Moved
	for _, m := range moved {
		if m.Dir {
			continue
		}
		st, err := os.Lstat(m.File)
		if err != nil {
			continue
		}
		if sn != nil {
			sn[m.File] = stampOf(st)
		}
		if m.Copied {
			continue // made after the last look: no save can be in it
		}
		dev, ino, _, _ := plumbing.StatIdentity(st)
		same := dev == m.Dev && ino == m.Ino && st.Size() == m.Size && st.ModTime().UnixNano() == m.Mtime
		switch {
		case st.Mode()&os.ModeSymlink != 0 || m.Link:
			if !same || st.Mode()&os.ModeSymlink == 0 {
				saves = append(saves, m)
			}
		case st.Mode().IsRegular() && (m.Racy || !same):
			hash = append(hash, m.File)
			byFile[m.File] = m
		}
	}
	if len(hash) > 0 {
		raw, err := t.Repo.RawHashes(ctx, hash)
		for _, f := range hash {
			m := byFile[f]
			h, ok := raw[f]
			switch {
			case err != nil || !ok:
				saves = append(saves, m)
			case m.Racy && string(h) == m.Raw:
			case !m.Racy && string(h) == m.Src:
				// Touched, not changed: the same bytes as S's blob.
			default:
				saves = append(saves, m)
			}
		}
	}
	sort.Slice(saves, func(i, j int) bool { return saves[i].Path < saves[j].Path })
	return saves, sn
}

// KeepSaves stores the files of saves as they are (blobs, no filters), in
// the safety checkpoint's tree (safety: its record) at their paths, in a
// commit whose parent is the safety checkpoint, under
// refs/venom/rescued/<agent>/<n> (n the safety checkpoint's number; a
// second rescue of the same rollback gets its own ref, the number
// suffixed), and checks they are all in the object store. It returns them
// as rescued[], and stored false when that failed: then each is named by
// its file, which the caller must keep.
func (t *Tree) KeepSaves(ctx context.Context, agent, target, safetyID string, safety journal.RepoState, saves []Moved) (out []Rescued, stored bool) {
	r := t.Repo
	// A save whose file is gone (put back in the tree since it was
	// found) has nothing left to keep: the rest are kept all the same.
	saves = slices.DeleteFunc(slices.Clone(saves), func(m Moved) bool {
		_, err := os.Lstat(m.File)
		return err != nil
	})
	if len(saves) == 0 {
		return nil, true
	}
	byFile := func() ([]Rescued, bool) {
		var out []Rescued
		for _, m := range saves {
			out = append(out, Rescued{Path: m.Path, File: m.File})
		}
		return out, false
	}
	// One tree holds one entry a path: two saves of one path (a file a
	// person made in a directory moved whole, and the backup of the same
	// path) are both kept on disk, named by their files.
	once := map[string]bool{}
	for _, m := range saves {
		if once[m.Path] {
			return byFile()
		}
		once[m.Path] = true
	}
	var files []string
	entries := map[string]*plumbing.Entry{}
	// A symlink's target is stored from a file of its own, in a directory
	// of its own: one beside the link, in the backup, could be a person's
	// file, and would keep the backup directory (RemoveNamed).
	targets := ""
	defer func() {
		if targets != "" {
			os.RemoveAll(targets)
		}
	}()
	for i, m := range saves {
		st, err := os.Lstat(m.File)
		if err != nil {
			return byFile()
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(m.File)
			if err != nil {
				return byFile()
			}
			if targets == "" {
				d, err := r.TmpDir()
				if err != nil {
					return byFile()
				}
				if targets, err = os.MkdirTemp(d, "targets-"); err != nil {
					return byFile()
				}
			}
			tf := filepath.Join(targets, strconv.Itoa(i))
			if err := os.WriteFile(tf, []byte(target), 0o600); err != nil {
				return byFile()
			}
			files = append(files, tf)
			entries[m.Path] = &plumbing.Entry{Mode: "120000"}
			continue
		}
		files = append(files, m.File)
		mode := "100644"
		if st.Mode()&0o100 != 0 {
			mode = "100755"
		}
		entries[m.Path] = &plumbing.Entry{Mode: mode}
	}
	var paths []string
	for _, m := range saves {
		paths = append(paths, m.Path)
	}
	msg := fmt.Sprintf("venom: %d save(s) made during the rollback of %s to %s\n\nThe safety checkpoint %s with the files a person saved while the rollback\nran, which it had replaced: %s\n",
		len(saves), agent, target, safetyID, strings.Join(paths, ", "))
	// write stores the blobs, the tree and the commit (again: git writes
	// what is missing, and keeps what is there), and returns the commit
	// and the names of every object it must reach: the blobs, the commit,
	// its tree and each tree on the way to a save.
	write := func() (plumbing.OID, []plumbing.OID, error) {
		oids, err := r.StoreRaw(ctx, files)
		if err != nil || len(oids) != len(files) {
			return "", nil, fmt.Errorf("storing the saves: %v", err)
		}
		var objs []plumbing.OID
		dirs := map[string]bool{}
		for i, m := range saves {
			entries[m.Path].OID = oids[files[i]]
			objs = append(objs, oids[files[i]])
			for d := path.Dir(m.Path); d != "." && !strings.Contains(d, "\n"); d = path.Dir(d) {
				dirs[d] = true
			}
		}
		tree, err := r.EditTree(ctx, plumbing.OID(safety.Tree), entries)
		if err != nil {
			return "", nil, err
		}
		commit, err := r.CommitTree(ctx, tree, plumbing.OID(safety.Commit), msg)
		if err != nil {
			return "", nil, err
		}
		objs = append(objs, commit, tree)
		for d := range dirs {
			objs = append(objs, plumbing.OID(string(tree)+":"+d)) // cat-file takes <tree>:<path> too
		}
		return commit, objs, nil
	}
	commit, objs, err := write()
	if err != nil {
		return byFile()
	}
	n, _ := refs.ParseID(safetyID)
	ref := refs.Rescued(agent, n)
	for i := 2; ; i++ {
		err := r.CreateRef(ctx, ref, commit, "venom: saves made during a rollback")
		if err == nil {
			break
		}
		if have, _ := r.RefValue(ctx, ref); have == "" || i > 20 {
			return byFile()
		}
		ref = fmt.Sprintf("%s-%d", refs.Rescued(agent, n), i)
	}
	failpoint.Hit("rescue.ref-created")
	// A gc beside the rollback may prune these as it may the safety
	// checkpoint's: one that began before the ref existed can still
	// remove what the ref reaches (a tree on the way to a save, say; the
	// stress test of make fuzz-long saw a rescued ref whose tree was
	// gone). The files stay until all of it is found whole; what is
	// missing is written again, and the ref moved to it, a few times.
	for try := 0; ; try++ {
		missing, err := r.Missing(ctx, objs)
		if err == nil && len(missing) == 0 {
			break
		}
		if try == 3 {
			r.UpdateRef(ctx, ref, "", commit, "venom: a rescue that a gc pruned")
			return byFile()
		}
		next, nobjs, err := write()
		if err != nil {
			r.UpdateRef(ctx, ref, "", commit, "venom: a rescue that a gc pruned")
			return byFile()
		}
		if next != commit {
			if err := r.UpdateRef(ctx, ref, next, commit, "venom: saves made during a rollback"); err != nil {
				return byFile()
			}
		}
		commit, objs = next, nobjs
	}
	for _, m := range saves {
		out = append(out, Rescued{Path: m.Path, Blob: string(entries[m.Path].OID), Ref: ref})
	}
	return out, true
}

// SafetyWhole checks that the objects of the checkpoint rs (a safety
// checkpoint's record) are all in the object store: its commit, its tree,
// and every blob of that tree that rs's HEAD does not hold (HEAD and its
// reflog keep the rest); and, when the rollback recorded the user's index
// (index: rollback.started's index, "" for none), that tree and its blobs
// HEAD does not hold. Its cost follows what differs from HEAD
// (plumbing.BlobsBeyond), not the tree. A `git gc --prune=now` whose walk
// of what is reachable began before the ref existed deletes them although
// the ref now names them; a tree object gone makes the listing itself
// fail, and is then the one named missing (plumbing.UnreadTree), or the
// listing's error. objs, when not nil, is the list an earlier call returned, checked
// again without the listing. It returns the list, each object once, and
// those missing. With read, an object git cannot read (an empty or
// damaged loose file, what a crash leaves) is missing too
// (plumbing.Repo.Unreadable): the first check of a safety checkpoint,
// and any check after a crash; a later check of a list already read
// asks only that each object is still there, which is all a gc changes.
func (t *Tree) SafetyWhole(ctx context.Context, rs journal.RepoState, index plumbing.OID, objs []plumbing.OID, read bool) (list, missing []plumbing.OID, err error) {
	r := t.Repo
	check := r.Missing
	if read {
		check = r.Unreadable
	}
	if objs == nil {
		trees := []plumbing.OID{plumbing.OID(rs.Tree)}
		if index != "" {
			trees = append(trees, index)
		}
		objs = append([]plumbing.OID{plumbing.OID(rs.Commit)}, trees...)
		var head plumbing.OID
		if rs.Head != nil {
			head = plumbing.OID(*rs.Head)
		}
		for _, tree := range trees {
			blobs, err := r.BlobsBeyond(ctx, tree, head)
			if err != nil {
				// A tree gone fails the listing: say which, if it is so
				// (the root's, or the subtree git names).
				if missing, merr := check(ctx, append(objs, plumbing.UnreadTree(err)...)); merr == nil && len(missing) > 0 {
					return nil, missing, nil
				}
				return nil, nil, err
			}
			objs = append(objs, blobs...)
		}
		// A blob of both S's tree and the index's is checked once.
		seen := make(map[plumbing.OID]bool, len(objs))
		uniq := objs[:0]
		for _, o := range objs {
			if !seen[o] {
				seen[o] = true
				uniq = append(uniq, o)
			}
		}
		objs = uniq
	}
	missing, err = check(ctx, objs)
	return objs, missing, err
}

// backupDirs lists the backup directories of agent's rollback whose safety
// checkpoint is safety, in this worktree's scratch directory.
func (t *Tree) backupDirs(agent, safety string) []string {
	d := filepath.Join(t.Repo.GitDir, "venom", "tmp")
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if prefix, ok := backupPrefixOf(e); ok && prefix == BackupPrefix(agent, safety) {
			out = append(out, filepath.Join(d, e.Name()))
		}
	}
	return out
}

// readManifest reads a backup directory's manifest; a line it cannot read
// (the last one, cut by a kill) is passed over.
func readManifest(dir string) []Moved {
	f, err := os.Open(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Moved
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m Moved
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.File != "" {
			out = append(out, m)
		}
	}
	return out
}

// rescueInterrupted does for rollback b, interrupted (killed) before it
// compared its backups, what it would have done: the saves among what its
// backup directories' manifests say it moved are kept (KeepSaves), and a
// directory is removed once nothing in it is needed: its saves are
// stored and the safety checkpoint is whole (else its files are the only
// copy of what the rollback replaced, and it stays, named in keptDirs).
// So in every repository the safety checkpoint names: a submodule's
// rollback keeps its backups in its own git dir (issue 18). A submodule
// that is no longer there is passed over: its git dir is not reached.
func (t *Tree) rescueInterrupted(ctx context.Context, st *journal.State, b journal.RollbackStarted) (rescued []Rescued, keptDirs []string) {
	var safety *journal.Saved
	if a := st.Agents[b.Agent]; a != nil {
		if s := a.Checkpoint(b.Safety); s != nil && len(s.Rec.Repos) > 0 {
			safety = s
		}
	}
	if safety == nil {
		out, kept := t.rescueIn(ctx, b, nil, b.Index)
		return out, kept
	}
	for _, rs := range safety.Rec.Repos {
		sub, index := t, b.Index
		if rs.Repo != TopRepo && rs.Repo != "" {
			r, err := t.RepoAt(ctx, rs)
			if err != nil {
				continue
			}
			sub, index = &Tree{Repo: r, Log: t.Log, Config: t.Config}, b.Indexes[rs.Repo]
		}
		rs := rs
		out, kept := sub.rescueIn(ctx, b, &rs, index)
		for i := range out {
			if rs.Repo != TopRepo {
				out[i].Repo = rs.Repo
			}
		}
		rescued = append(rescued, out...)
		keptDirs = append(keptDirs, kept...)
	}
	return rescued, keptDirs
}

// rescueIn is rescueInterrupted in t's repository, whose entry in the
// safety checkpoint is safety (nil when the record is not found) and
// whose index the rollback recorded as index.
func (t *Tree) rescueIn(ctx context.Context, b journal.RollbackStarted, safety *journal.RepoState, index string) (rescued []Rescued, keptDirs []string) {
	dirs := t.backupDirs(b.Agent, b.Safety)
	if len(dirs) == 0 {
		return nil, nil
	}
	whole := false
	if safety != nil {
		_, missing, err := t.SafetyWhole(ctx, *safety, plumbing.OID(index), nil, true)
		whole = err == nil && len(missing) == 0
	}
	for _, dir := range dirs {
		moved := readManifest(dir)
		saves, sn := t.savesAmong(ctx, moved, Seen{})
		saves = append(saves, foreignIn(moved, sn)...)
		stored := true
		if len(saves) > 0 {
			var out []Rescued
			if safety == nil {
				for _, m := range saves {
					out = append(out, Rescued{Path: m.Path, File: m.File})
				}
				stored = false
			} else {
				out, stored = t.KeepSaves(ctx, b.Agent, b.Checkpoint, b.Safety, *safety, saves)
			}
			rescued = append(rescued, out...)
		}
		failpoint.Hit("rescue.interrupted-stored")
		if !stored || !whole || !RemoveNamed(dir, moved, saves, sn) {
			keptDirs = append(keptDirs, dir)
		}
	}
	return rescued, keptDirs
}

// RemoveNamed removes the backup directory dir by name: each file the
// manifest (moved) or the rescue (saves) names that is still as it was
// judged (sn), reached through real directories only (never through a
// symbolic link below dir), then each directory below dir, deepest first, once empty,
// then the manifest and dir when nothing else is left; never a file
// nothing names, nor one changed since it was judged. A file made in a
// directory the rollback moved whole after the rescue listed it (by a
// program whose working directory it still is), or a save made into a
// file after it was judged, keeps dir, which is then kept, manifest and
// all, and false is returned: it is nowhere else, and a backup directory
// without its manifest is the scratch directory's to remove once it is an
// hour old (plumbing.Repo.CleanTmp).
func RemoveNamed(dir string, moved, saves []Moved, sn Seen) bool {
	in := dir + string(filepath.Separator)
	// A file is reached only through real directories below dir: a
	// directory the manifest names (moved whole) that is a symbolic link
	// now (a person swapped it for one before the rename) would lead the
	// unlink out of the backup, into their files.
	real := map[string]bool{dir: true}
	var isReal func(d string) bool
	isReal = func(d string) bool {
		if v, ok := real[d]; ok {
			return v
		}
		st, err := os.Lstat(d)
		v := err == nil && st.IsDir() && isReal(filepath.Dir(d))
		real[d] = v
		return v
	}
	for _, list := range [][]Moved{moved, saves} {
		for _, m := range list {
			if !m.Dir && strings.HasPrefix(m.File, in) && isReal(filepath.Dir(m.File)) && sn.Unchanged(m.File) {
				_ = syscall.Unlink(m.File)
			}
		}
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = syscall.Rmdir(dirs[i])
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 1 || ents[0].Name() != ManifestFile {
		return errors.Is(err, fs.ErrNotExist)
	}
	manifest := filepath.Join(dir, ManifestFile)
	_ = syscall.Unlink(manifest)
	if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
		return true
	}
	// Something came into it between the look and the rmdir: the
	// manifest goes back, so that the directory stays.
	var buf bytes.Buffer
	for _, m := range moved {
		if line, err := json.Marshal(m); err == nil {
			buf.Write(append(line, '\n'))
		}
	}
	_ = os.WriteFile(manifest, buf.Bytes(), 0o600)
	return false
}

// foreignIn returns what is in the directories of moved that a rollback
// moved whole (Moved.Dir) and that no member of moved names: a person's
// file, made in such a directory after the rollback looked (a program
// whose working directory it was), each as a Moved with its path in the
// tree and its file, for KeepSaves. Only files and symlinks. What each
// was when found goes in sn, when not nil.
func foreignIn(moved []Moved, sn Seen) []Moved {
	named := map[string]bool{}
	for _, m := range moved {
		named[m.File] = true
	}
	var out []Moved
	for _, m := range moved {
		if !m.Dir {
			continue
		}
		// The directory's own name holds a file when a person swapped
		// the directory for it before the rename (the rollback's
		// movedAmiss): that file is theirs too.
		_ = filepath.WalkDir(m.File, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || (named[p] && p != m.File) {
				return nil
			}
			if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if st, err := e.Info(); err == nil && sn != nil {
				sn[p] = stampOf(st)
			}
			rel := m.Path
			if p != m.File {
				sub, _ := filepath.Rel(m.File, p)
				rel += "/" + filepath.ToSlash(sub)
			}
			out = append(out, Moved{Path: rel, File: p})
			return nil
		})
	}
	return out
}
