package plumbing

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// A tree edit makes the tree that is a base tree with some paths changed,
// reading and writing only the trees along those paths: `git cat-file
// --batch` reads them, `git mktree --batch` writes the new ones, bottom up.
// Its cost grows with the paths and the size of their directories, never
// with the size of the whole tree, which is what a private index costs:
// on a 100,000-file tree each `update-index` or `write-tree` rewrites its
// 9 MB (bench/README.md). The paths' own entries come from git too
// (StagePaths): an index that holds only them, updated by `git
// update-index` as a full one would be.

// Entry is a path's entry in a tree: Mode is git's octal mode text
// ("100644", "100755", "120000", "160000"), OID its blob, or its commit for
// a gitlink.
type Entry struct {
	Mode string
	OID  OID
}

// treeEditor edits one base tree (EditTree): it reads trees with one `git
// cat-file --batch` and writes them with one `git mktree --batch`, and
// keeps what it read. close ends both processes.
type treeEditor struct {
	base    OID
	cat, mk *session
	hexLen  int
	trees   map[OID][]treeItem
}

// editTree starts an editor of base, a tree's full hex name.
func (r *Repo) editTree(ctx context.Context, base OID) (*treeEditor, error) {
	cat, err := r.startSession(ctx, Options{NoWorkTree: true}, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	mk, err := r.startSession(ctx, Options{NoWorkTree: true}, "mktree", "-z", "--batch")
	if err != nil {
		cat.close()
		return nil, err
	}
	return &treeEditor{base: base, cat: cat, mk: mk, hexLen: len(base), trees: map[OID][]treeItem{}}, nil
}

// close ends the editor's git processes and returns the first failure.
func (ed *treeEditor) close() error {
	err := ed.cat.close()
	if merr := ed.mk.close(); err == nil {
		err = merr
	}
	return err
}

// lookup returns path's entry in the base tree: nil when nothing is
// there, or when a directory is.
func (ed *treeEditor) lookup(path string) (*Entry, error) {
	if !validTreePath(path) {
		return nil, fmt.Errorf("editing a tree: bad path %q", path)
	}
	cur := ed.base
	parts := strings.Split(path, "/")
	for i, name := range parts {
		list, err := ed.read(cur)
		if err != nil {
			return nil, err
		}
		next := OID("")
		for _, it := range list {
			if it.name != name {
				continue
			}
			if it.mode == "40000" {
				next = it.oid
			} else if i == len(parts)-1 {
				return &Entry{Mode: it.mode, OID: it.oid}, nil
			}
			break
		}
		if next == "" {
			return nil, nil
		}
		cur = next
	}
	return nil, nil
}

// apply returns the tree that is the base with changes applied: each path
// of changes gets its entry, or loses it when the entry is nil, as
// `git update-index --force-remove` would have it: a directory at that
// path stays. Directories are made as entries need them and leave the
// tree when nothing is left in them, as an index's tree would have it; an
// entry at a path that is a directory in base replaces the directory, as
// `update-index --replace` does, and anything changes holds below it must
// then be a removal. Every object an entry names must exist, except
// gitlinks' commits (mktree checks). Errors are git's, wrapped, or a
// description of changes that contradict themselves.
func (ed *treeEditor) apply(changes map[string]*Entry) (OID, error) {
	if len(changes) == 0 {
		return ed.base, nil
	}
	root := &editNode{}
	for p, e := range changes {
		if !validTreePath(p) {
			return "", fmt.Errorf("editing a tree: bad path %q", p)
		}
		n := root
		for _, name := range strings.Split(p, "/") {
			if n.kids == nil {
				n.kids = map[string]*editNode{}
			}
			k := n.kids[name]
			if k == nil {
				k = &editNode{}
				n.kids[name] = k
			}
			n = k
		}
		n.set, n.entry = true, e
	}
	oid, empty, err := ed.build(root, ed.base, "")
	if err != nil {
		return "", err
	}
	if empty {
		return ed.write(nil)
	}
	return oid, nil
}

// validTreePath reports whether p can name an entry of a tree.
func validTreePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// editNode is one name of the changed paths: set when the path itself has
// a new entry (entry, nil for a removal), kids for the names below it.
type editNode struct {
	set   bool
	entry *Entry
	kids  map[string]*editNode
}

// treeItem is one entry of a tree object as stored: mode text as git
// writes it in trees ("40000" for a tree), name, object.
type treeItem struct {
	mode, name string
	oid        OID
}

// build makes the tree for directory dir (its path, for errors) from old,
// its tree in base ("" when there is none), with node's changes below it.
// It returns the new tree, or empty when nothing is left in it.
func (ed *treeEditor) build(node *editNode, old OID, dir string) (OID, bool, error) {
	items := map[string]treeItem{}
	if old != "" {
		list, err := ed.read(old)
		if err != nil {
			return "", false, fmt.Errorf("reading tree %q: %w", dir, err)
		}
		for _, it := range list {
			items[it.name] = it
		}
	}
	for name, k := range node.kids {
		path := name
		if dir != "" {
			path = dir + "/" + name
		}
		if k.set && k.entry != nil {
			if err := onlyRemovals(k, path); err != nil {
				return "", false, err
			}
			e := k.entry
			items[name] = treeItem{mode: e.Mode, name: name, oid: e.OID}
			continue
		}
		if it, ok := items[name]; k.set && ok && it.mode != "40000" {
			delete(items, name)
		}
		if len(k.kids) == 0 {
			continue
		}
		var sub OID
		if it, ok := items[name]; ok && it.mode == "40000" {
			sub = it.oid
		}
		if sub == "" && onlyRemovals(k, path) == nil {
			// Nothing to remove from a directory that is not there.
			continue
		}
		oid, empty, err := ed.build(k, sub, path)
		if err != nil {
			return "", false, err
		}
		if empty {
			delete(items, name)
		} else {
			items[name] = treeItem{mode: "40000", name: name, oid: oid}
		}
	}
	if len(items) == 0 {
		return "", true, nil
	}
	list := make([]treeItem, 0, len(items))
	for _, it := range items {
		list = append(list, it)
	}
	oid, err := ed.write(list)
	return oid, false, err
}

// onlyRemovals fails when anything below node (the path p) gets an entry:
// a path cannot be a file and a directory at once.
func onlyRemovals(node *editNode, p string) error {
	for name, k := range node.kids {
		if k.set && k.entry != nil {
			return fmt.Errorf("editing a tree: %q gets an entry below %q, which is not a directory", p+"/"+name, p)
		}
		if err := onlyRemovals(k, p+"/"+name); err != nil {
			return err
		}
	}
	return nil
}

// read returns the entries of tree oid, from `git cat-file --batch`, or
// as read before.
func (ed *treeEditor) read(oid OID) ([]treeItem, error) {
	if list, ok := ed.trees[oid]; ok {
		return list, nil
	}
	list, err := ed.readNew(oid)
	if err == nil {
		ed.trees[oid] = list
	}
	return list, err
}

func (ed *treeEditor) readNew(oid OID) ([]treeItem, error) {
	if _, err := fmt.Fprintf(ed.cat.in, "%s\n", oid); err != nil {
		return nil, err
	}
	head, err := ed.cat.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("cat-file: %w", err)
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[0] != string(oid) {
		return nil, fmt.Errorf("cat-file: %s: %q", oid, strings.TrimSpace(head))
	}
	if f[1] != "tree" {
		return nil, fmt.Errorf("cat-file: %s is a %s, not a tree", oid, f[1])
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 {
		return nil, fmt.Errorf("cat-file: bad size in %q", strings.TrimSpace(head))
	}
	body := make([]byte, size+1)
	if _, err := io.ReadFull(ed.cat.out, body); err != nil {
		return nil, fmt.Errorf("cat-file: %w", err)
	}
	return parseTree(body[:size], ed.hexLen/2)
}

// parseTree reads a tree object's body: "<octal mode> <name>\0<raw object
// name>" per entry, the name hashLen bytes long (20 for SHA-1, 32 for
// SHA-256).
func parseTree(b []byte, hashLen int) ([]treeItem, error) {
	var res []treeItem
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 1 || nul < sp+2 || len(b) < nul+1+hashLen {
			return nil, errors.New("bad tree object")
		}
		res = append(res, treeItem{mode: string(b[:sp]), name: string(b[sp+1 : nul]), oid: OID(hex.EncodeToString(b[nul+1 : nul+1+hashLen]))})
		b = b[nul+1+hashLen:]
	}
	return res, nil
}

// write makes a tree of list with `git mktree` and returns its name.
func (ed *treeEditor) write(list []treeItem) (OID, error) {
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	var b bytes.Buffer
	for _, it := range list {
		typ := "blob"
		switch it.mode {
		case "40000", "040000":
			typ = "tree"
		case "160000":
			typ = "commit"
		}
		fmt.Fprintf(&b, "%s %s %s\t%s\x00", it.mode, typ, it.oid, it.name)
	}
	b.WriteByte(0)
	if _, err := ed.mk.in.Write(b.Bytes()); err != nil {
		return "", fmt.Errorf("mktree: %w", err)
	}
	line, err := ed.mk.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("mktree: %w", err)
	}
	oid := strings.TrimSpace(line)
	if len(oid) != ed.hexLen {
		return "", fmt.Errorf("mktree: %q", oid)
	}
	return OID(oid), nil
}

// session is a git process that answers what it is given line by line
// (cat-file --batch, mktree --batch): in is its stdin, out its stdout.
// Both are pipes the process holds directly, so when it exits, out ends;
// close ends its input and waits for it.
type session struct {
	in      *os.File
	outFile *os.File
	out     *bufio.Reader
	done    chan error
	err     error
	shut    bool
}

// startSession starts git with args through Run, talking to it by pipes.
func (r *Repo) startSession(ctx context.Context, o Options, args ...string) (*session, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	s := &session{in: inW, outFile: outR, out: bufio.NewReader(outR), done: make(chan error, 1)}
	o.Stdin, o.Stdout = inR, outW
	go func() {
		_, err := r.Run(ctx, o, args...)
		inR.Close()
		outW.Close()
		s.done <- err
	}()
	return s, nil
}

// close ends the session's input and returns how the process ended.
func (s *session) close() error {
	if !s.shut {
		s.shut = true
		s.in.Close()
		s.err = <-s.done
		s.outFile.Close()
	}
	return s.err
}

// stage returns the entries `git update-index --add --remove --replace`
// gives paths, each nil when git leaves it out (gone from the work tree),
// as it would in a full index: it runs in an index that holds only the
// paths' entries in the editor's base tree (so that core.fileMode=false
// and core.symlinks=false keep their modes, as they would), which costs
// what the paths cost, not what the tree does. info is more
// `--index-info` records applied after (submodule commits, kept entries),
// about the paths infoPaths, which are in the answer too. A failure to
// read the paths is a *stageError.
func (r *Repo) stage(ctx context.Context, ed *treeEditor, paths []string, info []byte, infoPaths []string) (map[string]*Entry, error) {
	idx, err := r.PrivateIndex("stage")
	if err != nil {
		return nil, err
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	var seed bytes.Buffer
	for _, p := range paths {
		e, err := ed.lookup(p)
		if err != nil {
			return nil, err
		}
		if e != nil {
			fmt.Fprintf(&seed, "%s %s 0\t%s\x00", e.Mode, e.OID, p)
		}
	}
	if seed.Len() > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: &seed}, "update-index", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("seeding an index: %w", err)
		}
	}
	if len(paths) > 0 {
		if err := r.updateIndex(ctx, env, paths); err != nil {
			return nil, &stageError{err}
		}
	}
	if len(info) > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(info)}, "update-index", "-z", "--index-info"); err != nil {
			return nil, &stageError{fmt.Errorf("recording submodule commits and kept entries: %w", err)}
		}
	}
	out, err := r.Run(ctx, Options{Env: env}, "ls-files", "-s", "-v", "-z")
	if err != nil {
		return nil, fmt.Errorf("listing the staged paths: %w", err)
	}
	list, err := ParseLsFiles(out)
	if err != nil {
		return nil, err
	}
	res := make(map[string]*Entry, len(paths)+len(infoPaths))
	for _, p := range paths {
		res[p] = nil
	}
	for _, p := range infoPaths {
		res[p] = nil
	}
	for _, e := range list {
		if e.Stage != 0 {
			return nil, fmt.Errorf("staging: %q is unmerged", e.Path)
		}
		res[e.Path] = &Entry{Mode: e.Mode, OID: e.OID}
	}
	return res, nil
}

// stageError is a failure of Repo.stage to read the paths themselves:
// git would fail the same way in a full index, so a capture fails with it
// rather than trying the full way.
type stageError struct{ error }

func (e *stageError) Unwrap() error { return e.error }

// updateIndex runs `git update-index -z --add --remove --replace --stdin`
// for paths in the index env names. Paths on stdin are literal (never
// pathspecs, so ':todo.md' is a name: BR-38); --replace lets a file become
// a directory and back (BR-32). A file that shrinks while git hashes it (an
// agent or editor rewriting it) makes update-index die with "short read
// while indexing" before it writes the index, so the step is run again, on
// the file's new content; only a file that keeps changing fails it.
func (r *Repo) updateIndex(ctx context.Context, env []string, paths []string) error {
	for try := 1; ; try++ {
		_, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(NulList(paths))},
			"update-index", "-z", "--add", "--remove", "--replace", "--stdin")
		if err == nil {
			return nil
		}
		var ge *Error
		if try < 3 && errors.As(err, &ge) && strings.Contains(ge.Stderr, "short read while indexing") {
			continue
		}
		return fmt.Errorf("updating the private index: %w", err)
	}
}
