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
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A tree edit makes the tree that is a base tree with some paths changed,
// reading and writing only the trees along those paths: `git cat-file
// --batch` reads them, `git mktree --batch` writes the new ones, bottom up.
// Its cost grows with the paths and the size of their directories, never
// with the size of the whole tree, which is what a private index costs:
// on a 100,000-file tree each `update-index` or `write-tree` rewrites its
// 9 MB (bench/README.md). The paths' own entries come from git too
// (Repo.stage): an index that holds only them, updated by `git
// update-index` as a full one would be.

// Entry is a path's entry in a tree: Mode is git's octal mode text
// ("100644", "100755", "120000", "160000"), OID its blob, or its commit for
// a gitlink.
type Entry struct {
	Mode string
	OID  OID
}

// dropTree, as the entry of a change, removes whatever base has at its
// path, a whole directory included: what the index tracked below a
// nested repository with no commit (Capture, nested.go). Nothing below
// the path may be changed too.
var dropTree = &Entry{Mode: "dropTree"}

// EditTree writes the tree that is base with changes applied, each path's
// entry set (a nil entry removes the path), and returns its name. Its
// cost grows with the paths and their directories, not with the tree
// (treeEditor).
func (r *Repo) EditTree(ctx context.Context, base OID, changes map[string]*Entry) (OID, error) {
	ed, err := r.editTree(ctx, base)
	if err != nil {
		return "", err
	}
	defer ed.close()
	return ed.write(changes)
}

// write applies changes (apply) and ends the editor's processes (close),
// returning the tree once both succeeded.
func (ed *treeEditor) write(changes map[string]*Entry) (OID, error) {
	tree, err := ed.apply(changes)
	if err != nil {
		return "", err
	}
	if err := ed.close(); err != nil {
		return "", err
	}
	return tree, nil
}

// treeEditor edits one base tree (Repo.editTree): it reads trees with one `git
// cat-file --batch` and writes them with one `git mktree --batch`, each
// started when first needed, and keeps what it read and wrote in the
// Repo's treeCache. close ends both processes.
type treeEditor struct {
	r       *Repo
	ctx     context.Context
	base    OID
	cat, mk *session
	hexLen  int
	names   map[OID]map[string]treeItem // trees' entries by name, for lookup
	buf     []byte                      // cat-file's answer being read
	// keep, set by the caller, makes stage start from the kept stage
	// index kept (nil: none) and leave a copy of its own index at
	// stageIdx (pendKeptStage) with its description next, for the caller
	// to keep or remove (kept.go).
	keep     bool
	kept     *keptStage
	stageIdx string
	next     *keptStage
	same     bool        // next is kept as it is
	stamps   stageStamps // the paths staged as the caller saw them (stamps.go)
	fast     bool        // stage took kept's entries, the stamps being as they were
}

// editTree returns an editor of base, a tree's full hex name. Its mktree,
// and its cat-file unless the process's treeCache holds base, start now,
// in the background, so that their start overlaps the work before their
// first use.
func (r *Repo) editTree(ctx context.Context, base OID) (*treeEditor, error) {
	return r.editTreeLazy(ctx, base, true, true)
}

// editTreeLazy is editTree, starting its processes only when first needed
// unless eager (its mktree only if eagerMk too).
func (r *Repo) editTreeLazy(ctx context.Context, base OID, eager, eagerMk bool) (*treeEditor, error) {
	ed := &treeEditor{r: r, ctx: ctx, base: base, hexLen: len(base), names: map[OID]map[string]treeItem{}}
	if !eager {
		return ed, nil
	}
	if _, ok := r.trees.get(base); !ok {
		if _, err := ed.session(&ed.cat, "cat-file", "--batch"); err != nil {
			return nil, err
		}
	}
	if !eagerMk {
		return ed, nil
	}
	if _, err := ed.session(&ed.mk, "mktree", "-z", "--batch"); err != nil {
		ed.close()
		return nil, err
	}
	return ed, nil
}

// session returns the editor's process running args, starting it the
// first time.
func (ed *treeEditor) session(s **session, args ...string) (*session, error) {
	if *s == nil {
		started, err := ed.r.startSession(ed.ctx, Options{NoWorkTree: true}, args...)
		if err != nil {
			return nil, err
		}
		*s = started
	}
	return *s, nil
}

// close ends the editor's git processes and returns the first failure.
func (ed *treeEditor) close() error {
	var err error
	for _, s := range []*session{ed.cat, ed.mk} {
		if s == nil {
			continue
		}
		if serr := s.close(); err == nil {
			err = serr
		}
	}
	return err
}

// treeCache keeps, for the life of the process, the entries of each tree
// a tree edit read or wrote, by its name: a tree's entries never change,
// and the trees a rollback's second capture reads along the paths it
// wrote are mostly the ones its first capture wrote along the same paths.
// Safe for concurrent use; the lists in it are never changed.
type treeCache struct {
	mu    sync.Mutex
	trees map[OID][]treeItem
}

func (c *treeCache) get(oid OID) ([]treeItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list, ok := c.trees[oid]
	return list, ok
}

// tree is the entries of oid, read before (readAll) or written by this
// process; nil when it is neither.
func (ed *treeEditor) tree(oid OID) []treeItem {
	list, _ := ed.r.trees.get(oid)
	return list
}

func (c *treeCache) put(oid OID, list []treeItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trees == nil {
		c.trees = map[OID][]treeItem{}
	}
	c.trees[oid] = list
}

// prefetch reads, a level at a time, the trees of base along paths (their
// parent directories), so that lookup of them asks git nothing more: one
// batch of requests per level of depth, not one request per tree.
func (ed *treeEditor) prefetch(paths []string) error {
	return ed.prefetchIn(ed.base, paths)
}

// prefetchIn is prefetch in the tree root.
func (ed *treeEditor) prefetchIn(root OID, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	top := &editNode{}
	for _, p := range paths {
		if !validTreePath(p) {
			return fmt.Errorf("editing a tree: bad path %q", p)
		}
		top.add(p, nil)
	}
	level := map[*editNode]OID{top: root}
	for len(level) > 0 {
		var oids []OID
		for _, oid := range level {
			oids = append(oids, oid)
		}
		if err := ed.readAll(oids); err != nil {
			return err
		}
		next := map[*editNode]OID{}
		for n, oid := range level {
			for _, it := range ed.tree(oid) {
				if k := n.kids[it.name]; k != nil && len(k.kids) > 0 && it.mode == "40000" {
					next[k] = it.oid
				}
			}
		}
		level = next
	}
	return nil
}

// lookup returns path's entry in the base tree: nil when nothing is
// there, or when a directory is. Trees prefetch did not read are read one
// by one.
func (ed *treeEditor) lookup(path string) (*Entry, error) {
	e, _, err := ed.shapeIn(ed.base, path)
	return e, err
}

// shapeIn returns path's entry in the tree root (nil when nothing is
// there, or a directory is) and whether root is plain along path: no
// tree at path itself, nothing but trees at the directories above it,
// and no empty tree on the way below root. Where it is plain, an entry
// set or removed at path changes that path alone, as in an index, and a
// directory left with nothing in it is one the tree does not have
// (memoDelta). Trees not read before are read one by one.
func (ed *treeEditor) shapeIn(root OID, path string) (*Entry, bool, error) {
	if !validTreePath(path) {
		return nil, false, fmt.Errorf("editing a tree: bad path %q", path)
	}
	cur := root
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if err := ed.readAll([]OID{cur}); err != nil {
			return nil, false, err
		}
		if i > 0 && len(ed.tree(cur)) == 0 {
			return nil, false, nil
		}
		byName := ed.names[cur]
		if byName == nil {
			list := ed.tree(cur)
			byName = make(map[string]treeItem, len(list))
			for _, it := range list {
				byName[it.name] = it
			}
			ed.names[cur] = byName
		}
		it, ok := byName[name]
		switch {
		case !ok:
			return nil, true, nil
		case i == len(parts)-1 && it.mode == "40000":
			return nil, false, nil
		case i == len(parts)-1:
			return &Entry{Mode: it.mode, OID: it.oid}, true, nil
		case it.mode != "40000":
			return nil, false, nil
		}
		cur = it.oid
	}
	return nil, true, nil
}

// apply returns the tree that is the base with changes applied: each path
// of changes gets its entry, or loses it when the entry is nil, as
// `git update-index --force-remove` would have it: a directory at that
// path stays (dropTree removes it). Directories are made as entries need them and leave the
// tree when nothing is left in them, as an index's tree would have it; an
// entry at a path that is a directory in base replaces the directory, as
// `update-index --replace` does, and anything changes holds below it must
// then be a removal. Every object an entry names must exist, except
// gitlinks' commits (mktree checks). Trees are read a level at a time
// going down, and written a level at a time coming back up. Errors are
// git's, wrapped, or a description of changes that contradict themselves.
func (ed *treeEditor) apply(changes map[string]*Entry) (OID, error) {
	if len(changes) == 0 {
		return ed.base, nil
	}
	root := &editNode{}
	for p, e := range changes {
		if !validTreePath(p) {
			return "", fmt.Errorf("editing a tree: bad path %q", p)
		}
		root.add(p, e)
	}
	// Down: each directory to make, with its old tree's entries and the
	// changes of its own names applied.
	top := &dirJob{node: root, old: ed.base}
	levels := [][]*dirJob{{top}}
	for d := 0; d < len(levels); d++ {
		var oids []OID
		for _, j := range levels[d] {
			if j.old != "" {
				oids = append(oids, j.old)
			}
		}
		if err := ed.readAll(oids); err != nil {
			return "", err
		}
		var next []*dirJob
		for _, j := range levels[d] {
			kids, err := ed.open(j)
			if err != nil {
				return "", err
			}
			next = append(next, kids...)
		}
		if len(next) > 0 {
			levels = append(levels, next)
		}
	}
	// Up: each directory's tree, once its subdirectories' are known.
	for d := len(levels) - 1; d >= 0; d-- {
		var lists [][]treeItem
		var jobs []*dirJob
		for _, j := range levels[d] {
			for _, k := range j.subdirs {
				if k.empty {
					j.del(k.name)
				} else {
					j.set(treeItem{mode: "40000", name: k.name, oid: k.tree})
				}
			}
			if j.live == 0 && j != top {
				j.empty = true
				continue
			}
			lists = append(lists, j.list())
			jobs = append(jobs, j)
		}
		oids, err := ed.writeAll(lists)
		if err != nil {
			return "", err
		}
		for i, j := range jobs {
			j.tree = oids[i]
		}
	}
	return top.tree, nil
}

// dirJob is one directory apply makes: its path, its tree in base (old,
// "" when there is none), its entries as they become, the directories
// below it that are made too, and the result: tree, or empty when nothing
// is left in it.
//
// items starts as the old tree's entries, in their order, and only the
// names the changes touch are looked up (pos): a directory of thousands
// of files with one changed costs a copy of its list, not a map of it.
// A removed entry stays in items with no mode until list drops it; live
// counts the others.
type dirJob struct {
	node    *editNode
	name    string
	path    string
	old     OID
	items   []treeItem
	pos     map[string]int // index in items of each name of node.kids there
	live    int
	subdirs []*dirJob
	tree    OID
	empty   bool
}

// get returns the entry name has now, of a name of j.node.kids.
func (j *dirJob) get(name string) (treeItem, bool) {
	if i, ok := j.pos[name]; ok && j.items[i].mode != "" {
		return j.items[i], true
	}
	return treeItem{}, false
}

// set gives it.name the entry it, of a name of j.node.kids.
func (j *dirJob) set(it treeItem) {
	i, ok := j.pos[it.name]
	if !ok {
		j.pos[it.name] = len(j.items)
		j.items = append(j.items, it)
		j.live++
		return
	}
	if j.items[i].mode == "" {
		j.live++
	}
	j.items[i] = it
}

// del removes name's entry, if it has one, of a name of j.node.kids.
func (j *dirJob) del(name string) {
	if i, ok := j.pos[name]; ok && j.items[i].mode != "" {
		j.items[i].mode = ""
		j.live--
	}
}

// list is j's entries, the removed ones left out (items is not used
// after).
func (j *dirJob) list() []treeItem {
	if j.live == len(j.items) {
		return j.items
	}
	list := j.items[:0]
	for _, it := range j.items {
		if it.mode != "" {
			list = append(list, it)
		}
	}
	return list
}

// open fills j's entries from its old tree (already read) and the changes
// of its own names, and returns the directories below it to make.
func (ed *treeEditor) open(j *dirJob) ([]*dirJob, error) {
	kids := j.node.kids
	var old []treeItem
	if j.old != "" {
		old = ed.tree(j.old)
	}
	j.items = make([]treeItem, 0, len(old)+len(kids))
	j.pos = make(map[string]int, len(kids))
	for _, it := range old {
		if _, ok := kids[it.name]; ok {
			j.pos[it.name] = len(j.items)
		}
		j.items = append(j.items, it)
	}
	j.live = len(j.items)
	for name, k := range kids {
		path := name
		if j.path != "" {
			path = j.path + "/" + name
		}
		if k.set && k.entry == dropTree {
			if len(k.kids) > 0 {
				return nil, fmt.Errorf("editing a tree: %q is removed with all below it, and changed below", path)
			}
			j.del(name)
			continue
		}
		if k.set && k.entry != nil {
			if err := onlyRemovals(k, path); err != nil {
				return nil, err
			}
			j.set(treeItem{mode: k.entry.Mode, name: name, oid: k.entry.OID})
			continue
		}
		if it, ok := j.get(name); k.set && ok && it.mode != "40000" {
			j.del(name)
		}
		if len(k.kids) == 0 {
			continue
		}
		var sub OID
		if it, ok := j.get(name); ok && it.mode == "40000" {
			sub = it.oid
		}
		if sub == "" && onlyRemovals(k, path) == nil {
			// Nothing to remove from a directory that is not there.
			continue
		}
		j.subdirs = append(j.subdirs, &dirJob{node: k, name: name, path: path, old: sub})
	}
	return j.subdirs, nil
}

// add records entry e (nil for a removal) at path p below n.
func (n *editNode) add(p string, e *Entry) {
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

// readAll reads the trees of oids that were not read before into the
// Repo's treeCache, with one batch of requests to `git cat-file --batch`: they are
// written while the answers are read, so neither pipe fills up.
func (ed *treeEditor) readAll(oids []OID) error {
	var want []OID
	seen := map[OID]bool{}
	for _, o := range oids {
		if _, ok := ed.r.trees.get(o); ok || seen[o] {
			continue
		}
		seen[o] = true
		want = append(want, o)
	}
	if len(want) == 0 {
		return nil
	}
	cat, err := ed.session(&ed.cat, "cat-file", "--batch")
	if err != nil {
		return err
	}
	var req bytes.Buffer
	for _, o := range want {
		fmt.Fprintf(&req, "%s\n", o)
	}
	wrote := cat.send(req.Bytes())
	for _, o := range want {
		list, err := ed.readOne(o)
		if err != nil {
			return err
		}
		ed.r.trees.put(o, list)
	}
	if err := <-wrote; err != nil {
		return fmt.Errorf("cat-file: %w", err)
	}
	return nil
}

// readOne reads cat-file's answer about oid: its header, then the tree.
func (ed *treeEditor) readOne(oid OID) ([]treeItem, error) {
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
	if cap(ed.buf) < size+1 {
		ed.buf = make([]byte, size+1)
	}
	body := ed.buf[:size+1]
	if _, err := io.ReadFull(ed.cat.out, body); err != nil {
		return nil, fmt.Errorf("cat-file: %w", err)
	}
	return parseTree(body[:size], ed.hexLen/2)
}

// parseTree reads a tree object's body: "<octal mode> <name>\0<raw object
// name>" per entry, the name hashLen bytes long (20 for SHA-1, 32 for
// SHA-256).
func parseTree(b []byte, hashLen int) ([]treeItem, error) {
	// Two passes: the first checks the shape and counts, so that the
	// second makes the entries' strings as slices of two strings (the
	// body's text, the hex of its object names), not three per entry.
	n := 0
	for rest := b; len(rest) > 0; n++ {
		sp := bytes.IndexByte(rest, ' ')
		nul := bytes.IndexByte(rest, 0)
		if sp < 1 || nul < sp+2 || len(rest) < nul+1+hashLen {
			return nil, errors.New("bad tree object")
		}
		rest = rest[nul+1+hashLen:]
	}
	if n == 0 {
		return nil, nil
	}
	text := string(b)
	hexLen := 2 * hashLen
	hb := make([]byte, n*hexLen)
	res := make([]treeItem, n)
	off := 0
	for i := range res {
		sp := off + strings.IndexByte(text[off:], ' ')
		nul := sp + strings.IndexByte(text[sp:], 0)
		hex.Encode(hb[i*hexLen:], b[nul+1:nul+1+hashLen])
		res[i] = treeItem{mode: text[off:sp], name: text[sp+1 : nul]}
		off = nul + 1 + hashLen
	}
	hs := string(hb)
	for i := range res {
		res[i].oid = OID(hs[i*hexLen : (i+1)*hexLen])
	}
	return res, nil
}

// writeAll makes a tree of each of lists with one batch to `git mktree
// -z --batch`, and returns their names in order.
func (ed *treeEditor) writeAll(lists [][]treeItem) ([]OID, error) {
	if len(lists) == 0 {
		return nil, nil
	}
	mk, err := ed.session(&ed.mk, "mktree", "-z", "--batch")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	n := 0 // the exact size: one Grow, no copy as it fills
	for _, list := range lists {
		n++
		for _, it := range list {
			n += len(it.mode) + len(" commit ") + ed.hexLen + len(it.name) + 2
		}
	}
	b.Grow(n)
	// In no order: mktree sorts each tree's entries as git does (by
	// name, a directory's as if it ended in "/"), and no reader of
	// treeCache's lists needs them sorted.
	for _, list := range lists {
		for k, it := range list {
			typ := "blob"
			switch it.mode {
			case "040000":
				list[k].mode = "40000" // as git stores it, for the cache
				fallthrough
			case "40000":
				typ = "tree"
			case "160000":
				typ = "commit"
			}
			b.WriteString(it.mode)
			b.WriteByte(' ')
			b.WriteString(typ)
			b.WriteByte(' ')
			b.WriteString(string(it.oid))
			b.WriteByte('\t')
			b.WriteString(it.name)
			b.WriteByte(0)
		}
		b.WriteByte(0)
	}
	wrote := mk.send(b.Bytes())
	oids := make([]OID, 0, len(lists))
	for range lists {
		line, err := mk.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("mktree: %w", mk.ended(err))
		}
		oid := strings.TrimSpace(line)
		if len(oid) != ed.hexLen {
			return nil, fmt.Errorf("mktree: %q", oid)
		}
		oids = append(oids, OID(oid))
	}
	if err := <-wrote; err != nil {
		return nil, fmt.Errorf("mktree: %w", err)
	}
	// What mktree wrote is what a read of it would give: these entries,
	// the modes as git stores them (the caller lets go of the lists).
	for i, list := range lists {
		ed.r.trees.put(oids[i], list)
	}
	return oids, nil
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

// send writes b to the process's input from another goroutine, so that the
// caller can read the answers meanwhile, and returns where the write's
// outcome arrives.
func (s *session) send(b []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.in.Write(b)
		done <- err
	}()
	return done
}

// ended is why the session's output ended early with err: the process's
// own failure (a *Error with git's stderr, which says what went wrong),
// or err when it exited cleanly. It closes the session.
func (s *session) ended(err error) error {
	if perr := s.close(); perr != nil {
		return perr
	}
	return err
}

// close ends the session's input and output and returns how the process
// ended.
func (s *session) close() error {
	if !s.shut {
		s.shut = true
		// Its output is closed too before the wait: a process that
		// still has answers to write (the caller stopped reading after
		// an error) then ends on EPIPE instead of waiting for a reader.
		s.in.Close()
		s.outFile.Close()
		s.err = <-s.done
	}
	return s.err
}

// stage returns the entries `git update-index --add --remove --replace`
// gives paths, each nil when git leaves it out (gone from the work tree),
// as it would in a full index: it runs in an index that holds only what
// that takes, which costs what the paths cost, not what the tree does.
// That is the paths themselves, with their entries in the editor's base,
// and the .gitattributes files of their
// directories in the editor's base (git reads attributes from the index
// when the work tree has none: a sparse checkout), except those in
// without (removed from the full index before it is updated). The modes
// update-index gives depend on the file system alone, and not on the
// full index's old entries, only where modesFromDisk says so: callers ask
// it first. info is more `--index-info` records applied after (submodule
// commits, kept entries), about the paths infoPaths, which are in the
// answer too; a path git refuses to stage although it is there is not
// (its entry in base stands, as in a full index). A failure to read the
// paths is a *stageError.
func (r *Repo) stage(ctx context.Context, ed *treeEditor, paths []string, without []string, info []byte, infoPaths []string) (map[string]*Entry, error) {
	idx, err := r.PrivateIndex("stage")
	if err != nil {
		return nil, err
	}
	defer RemovePrivateIndex(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	skip := make(map[string]bool, len(without)+len(paths)) // removed, or staged as one of paths
	for _, p := range without {
		skip[p] = true
	}
	for _, p := range paths {
		skip[p] = true
	}
	// The index starts as the stage index the last capture kept, when
	// there is one (kept.go): its entries of paths staged again keep the
	// stat data that spares git hashing an unchanged file again. Those of
	// other paths go, and its attributes files too unless it was made on
	// the same base; what it lacks is seeded below.
	// Only on the same base (its attributes files are the index's), when
	// no attributes file is among the paths now or was then (what the
	// entries were hashed under would differ), and the configuration and
	// attributes files outside the tree are as they were (keptEnvID).
	taint := attrsChanged(paths) || attrsChanged(without)
	envID := r.keptEnvID()
	ks := ed.kept
	if ks != nil && (ks.Base != ed.base || ks.Tainted || taint || ks.Env != envID) {
		ks = nil
	}
	// Nor where it holds far more paths than are staged now: what it
	// costs grows with its paths, what it spares with these (keptUsable).
	if ks != nil && !keptUsable(ks.Count, len(paths)) {
		r.trace.printf("capture: the kept stage index holds %d paths, far more than the %d staged now: staged without it", ks.Count, len(paths))
		ks = nil
	}
	// The same paths as the kept stage index's, each file's stamp as it
	// was when that index was made and then settled (stamps.go): git
	// would find every entry clean and hash nothing, so its listing's
	// entries are the answer, and no update-index is started. (The
	// stamps' sum is taken once, for this and to keep.)
	statSum, statSettled, statOK := ed.stamps.sum(paths)
	if ks != nil && len(info) == 0 && ks.StatSum != "" && ks.Count == len(paths) {
		if statOK && statSum == ks.StatSum {
			if listing := r.keptListing(ks); listing != nil {
				if list, err := ParseLsFiles(listing); err == nil {
					if res, err := r.stagedEntries(list, paths, nil); err == nil {
						r.trace.printf("capture: the %d staged paths are as the kept stage index's stamps say; its entries taken", len(paths))
						ed.fast = true
						return res, nil
					}
				}
			}
		}
	}
	// Past the fast path, its sets (the sum of the stamps names the paths
	// already): without them, it is not used.
	if ks != nil && !r.loadSets(ks) {
		r.trace.printf("capture: the kept stage index's sets are not whole: staged without it")
		ks = nil
	}
	copiedSum := "" // the checksum at the end of the copy of the kept stage index, as made
	if ks != nil {
		if fi, err := copyKeepMtime(filepath.Join(r.keptDir(), ks.Index), idx); err != nil || fi == nil {
			RemovePrivateIndex(idx)
			ks = nil
		} else {
			copiedSum = fileTrailer(idx)
		}
	}
	have := make(map[string]bool, len(paths)) // paths the index holds an entry of now
	haveDir := map[string]bool{}
	var same map[string]os.FileInfo // paths left out of update-index, with their lstats
	var again []TreeChange          // the kept entries recorded again (Unsure)
	if ks != nil {
		asked := make(map[string]bool, len(paths))
		for _, p := range paths {
			asked[p] = true
		}
		// An entry made of a change git cannot tell from a later write
		// (Unsure) loses its stat data: it is recorded again, same mode
		// and object, with the seed below (as --cacheinfo arguments of
		// the update-index that stages the paths, or --index-info), so
		// git reads the file again. git
		// compares whole seconds, so a later write in that second that
		// kept the size and put the mtime back (cp -p, touch -d) would
		// look clean to it, and the old entry would stand for the new
		// bytes. Without the kept listing to say its mode and object,
		// it goes with the others.
		var unsure map[string]IndexEntry
		for p := range ks.Unsure {
			if asked[p] && ks.Paths[p] {
				unsure = map[string]IndexEntry{}
				break
			}
		}
		if unsure != nil {
			if list, err := ParseLsFiles(r.keptListing(ks)); err == nil {
				for _, e := range list {
					if e.Stage == 0 && asked[e.Path] && ks.Unsure[e.Path] {
						unsure[e.Path] = e
					}
				}
			}
		}
		var drop []string
		for p := range ks.Paths {
			e, isAgain := unsure[p]
			switch {
			case isAgain:
				have[p] = true
				again = append(again, TreeChange{Path: p, DstMode: e.Mode, Dst: e.OID})
			case asked[p] && !ks.Unsure[p]:
				have[p] = true
			default:
				drop = append(drop, p)
			}
		}
		haveDir = ks.Dirs
		// Of the others, a path whose file's stamp is as the kept
		// stamps say (stamps.go) has its entry as made from these very
		// bytes, and settled since: git is not asked about it again.
		if len(info) == 0 && len(ed.stamps.fis) == len(paths) {
			if kept := r.keptStamps(ks); kept != nil {
				for i, p := range paths {
					want, ok := kept[p]
					if !ok || !have[p] || ks.Unsure[p] {
						continue
					}
					if rec, settled, ok := ed.stamps.stamp(ed.stamps.fis[i]); ok && settled && rec == want {
						if same == nil {
							same = map[string]os.FileInfo{}
						}
						same[p] = ed.stamps.fis[i]
					}
				}
			}
		}
		if len(drop) > 0 {
			sort.Strings(drop)
			var records bytes.Buffer // --index-info: the drops (mode 0)
			for _, p := range drop {
				fmt.Fprintf(&records, "0 %s 0\t%s\x00", strings.Repeat("0", ed.hexLen), p)
			}
			if _, err := r.Run(ctx, Options{Env: env, Stdin: &records}, "update-index", "-z", "--index-info"); err != nil {
				return nil, fmt.Errorf("dropping the kept stage index's other entries: %w", err)
			}
		}
	}
	seed := again     // Path, DstMode, Dst: an entry the index starts with
	var look []string // paths whose entries in base are looked up
	for _, p := range paths {
		if !have[p] {
			look = append(look, p)
		}
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		for d := p; d != ""; {
			d = parentDir(d)
			if dirs[d] {
				break
			}
			dirs[d] = true
		}
	}
	var lookDirs []string
	for d := range dirs {
		if !haveDir[d] {
			lookDirs = append(lookDirs, d)
			attr := ".gitattributes"
			if d != "" {
				attr = d + "/" + attr
			}
			look = append(look, attr)
		}
	}
	if err := ed.prefetch(look); err != nil {
		return nil, err
	}
	// The paths' own entries: update-index decides a path that is now a
	// directory by the entry it had (removed; a gitlink kept up to date),
	// and fails on one it never had.
	for _, p := range paths {
		if have[p] {
			continue
		}
		e, err := ed.lookup(p)
		if err != nil {
			return nil, err
		}
		if e != nil {
			seed = append(seed, TreeChange{Path: p, DstMode: e.Mode, Dst: e.OID})
		}
	}
	attrs := map[string]bool{}
	if ks != nil {
		for a := range ks.Attrs {
			attrs[a] = true
		}
	}
	for _, d := range lookDirs {
		attr := ".gitattributes"
		if d != "" {
			attr = d + "/" + attr
		}
		if skip[attr] {
			continue
		}
		e, err := ed.lookup(attr)
		if err != nil {
			return nil, err
		}
		if e != nil && e.Mode != "160000" {
			seed = append(seed, TreeChange{Path: attr, DstMode: e.Mode, Dst: e.OID})
			attrs[attr] = true
		}
	}
	// The seed goes in with the update as --cacheinfo arguments, one git
	// process fewer, unless they would make a long command line. A path
	// git refuses to name (core.protectNTFS) makes --cacheinfo fail where
	// --index-info leaves it out ("Ignoring path"): then, having written
	// nothing, it is done in two steps.
	// The Unsure entries recorded again are in the seed too. (A kept
	// stage index racily clean for a file needs no forced write: that
	// file's entry is Unsure, recorded again, and git writes the index
	// anew in this later second.)
	var cacheinfo []string
	size := 0
	for _, e := range seed {
		arg := e.DstMode + "," + string(e.Dst) + "," + e.Path
		size += len(arg) + len("--cacheinfo") + 2
		cacheinfo = append(cacheinfo, "--cacheinfo", arg)
	}
	update := paths
	if len(same) > 0 {
		r.trace.printf("capture: %d of the %d staged paths are as the kept stage index's stamps say; git is asked about the others", len(same), len(paths))
		update = make([]string, 0, len(paths)-len(same))
		for _, p := range paths {
			if same[p] == nil {
				update = append(update, p)
			}
		}
	}
	merged := len(update) > 0 && (len(seed) > 0 || len(cacheinfo) > 0) && size <= maxSeedArgs
	if merged {
		err := r.updateIndex(ctx, env, update, cacheinfo...)
		var ge *Error
		if err != nil && !(errors.As(err, &ge) && strings.Contains(ge.Stderr, "--cacheinfo cannot add")) {
			return nil, &stageError{err}
		}
		merged = err == nil
	}
	if !merged {
		if len(seed) > 0 {
			if err := r.indexInfo(ctx, env, seed); err != nil {
				return nil, fmt.Errorf("seeding an index: %w", err)
			}
		}
		if len(update) > 0 {
			if err := r.updateIndex(ctx, env, update); err != nil {
				return nil, &stageError{err}
			}
		}
	}
	if len(info) > 0 {
		if _, err := r.Run(ctx, Options{Env: env, Stdin: bytes.NewReader(info)}, "update-index", "-z", "--index-info"); err != nil {
			return nil, &stageError{fmt.Errorf("recording submodule commits and kept entries: %w", err)}
		}
	}
	// A copy of the kept stage index that still ends in the checksum it
	// was copied with holds what the kept one held, and its listing, kept
	// with it, is not asked for again. Not the file's identity and mtime:
	// git renames a new file over an index it changes, and two rewrites
	// in one second may give the new file the old one's inode (a drop,
	// then an update, on a file system of 1 s timestamps: the second's
	// listing was lost). An index without a checksum (index.skipHash) is
	// listed again.
	_, nowErr := os.Stat(idx)
	unchanged := ks != nil && nowErr == nil && sameIndexContent(copiedSum, idx)
	var out []byte
	var list []IndexEntry
	var listing []byte
	if unchanged {
		listing = r.keptListing(ks)
	}
	if len(listing) > 0 {
		if list, err = ParseLsFiles(listing); err == nil {
			out = listing
			r.trace.printf("capture: the kept stage index is as it was; its listing kept")
		}
	}
	if out == nil {
		if out, err = r.Run(ctx, Options{Env: env}, "ls-files", "-s", "-v", "-z"); err != nil {
			return nil, fmt.Errorf("listing the staged paths: %w", err)
		}
		if list, err = ParseLsFiles(out); err != nil {
			return nil, err
		}
	}
	if ed.keep {
		// Left for the caller to keep (storeKeptStage), with what it holds:
		// the paths of its entries, but the attributes files seeded from
		// base. Not where an entry has a bit that would make git trust it
		// without looking (core.ignoreStat sets assume-unchanged).
		next := &keptStage{Base: ed.base, Paths: make(map[string]bool, len(list)), Attrs: attrs, Dirs: make(map[string]bool, len(haveDir)+len(dirs)),
			Tainted: taint, Env: envID, Listing: out}
		keepable := true
		for _, e := range list {
			if e.AssumeUnchanged() || e.SkipWorktree() {
				keepable = false
			}
			if !attrs[e.Path] || skip[e.Path] {
				next.Paths[e.Path] = true
			}
		}
		for d := range haveDir {
			next.Dirs[d] = true
		}
		for d := range dirs {
			next.Dirs[d] = true
		}
		if keepable && nowErr == nil {
			// Unsure: by the lstats before git read the files, and
			// again now, after it did; a path git was not asked about
			// (same) by the one before alone.
			next.Unsure = ed.stamps.unsure(paths, func(p string) os.FileInfo {
				if fi := same[p]; fi != nil {
					return fi
				}
				fi, err := os.Lstat(r.inTree(p))
				if err != nil {
					return nil
				}
				return fi
			})
			// The paths' stamps, where every file had settled and the
			// index holds nothing but them (stamps.go).
			if statOK && statSettled && len(info) == 0 {
				next.StatSum = statSum
			}
			if len(paths) >= keptStampsMin && len(info) == 0 {
				next.Stamps = ed.stamps.settledRecords(paths)
			}
			// Out of tmp at once: a capture killed now leaves no private
			// index there that an ended one would not.
			if pend := r.pendKeptStage(idx); pend != "" {
				ed.stageIdx, ed.next = pend, next
			}
			// Unchanged when git did not rewrite the copy and it holds the
			// same paths on the same base, with its listing: nothing to
			// keep anew.
			if unchanged && len(listing) > 0 && sameSet(ks.Paths, next.Paths) &&
				sameSet(ks.Attrs, next.Attrs) && sameSet(ks.Dirs, next.Dirs) && sameSet(ks.Unsure, next.Unsure) &&
				ks.StatSum == next.StatSum && ks.StampsSum == stampsSum(next.Stamps) {
				ed.same = true
			}
		}
	}
	return r.stagedEntries(list, paths, infoPaths)
}

// stagedEntries returns what Repo.stage answers from list, the entries of
// its index: the entry of each of paths and infoPaths, nil for one the
// index has none of (removed), and none at all for a path git left out
// although it is there.
func (r *Repo) stagedEntries(list []IndexEntry, paths, infoPaths []string) (map[string]*Entry, error) {
	res := make(map[string]*Entry, len(paths)+len(infoPaths))
	for _, p := range paths {
		res[p] = nil
	}
	for _, p := range infoPaths {
		res[p] = nil
	}
	for _, e := range list {
		if _, asked := res[e.Path]; !asked {
			continue // a seeded .gitattributes
		}
		if e.Stage != 0 {
			return nil, fmt.Errorf("staging: %q is unmerged", e.Path)
		}
		res[e.Path] = &Entry{Mode: e.Mode, OID: e.OID}
	}
	// A path git left out although it is there is one it refuses (it
	// says "Ignoring path", e.g. git~1 under core.protectNTFS): a full
	// index keeps whatever entry it had, so its entry in base stays.
	for _, p := range paths {
		if res[p] == nil && r.Exists(p) {
			delete(res, p)
		}
	}
	return res, nil
}

// sameIndexContent reports whether the index file at idx still ends in
// the checksum sum (indexTrailer), so holds the bytes it held when sum
// was read; false when sum is "" (no checksum to trust).
func sameIndexContent(sum, idx string) bool { return sum != "" && fileTrailer(idx) == sum }

// parentDir is the directory of git path p, "" for the top.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// KnowModesFromDisk gives the Repo modesFromDisk's answer, read by the
// caller with its own config call (checkpoint.LoadConfig), so a capture
// runs no `git config` of its own. Only the first answer counts.
func (r *Repo) KnowModesFromDisk(ok bool) {
	r.modes.once.Do(func() { r.modes.ok = ok })
}

// modesFromDisk reports whether `git update-index` takes a path's mode
// from the file system alone: core.fileMode and core.symlinks both true
// (git's defaults where the file system has executable bits and
// symlinks). Otherwise it keeps the mode of the entry the index had
// (ce_mode_from_stat), which an index of the changed paths alone does not
// have for every path (an intent-to-add entry is in no tree), and tree
// editing is not used. The answer is git's, read once per Repo, unless
// the caller gave it (KnowModesFromDisk).
func (r *Repo) modesFromDisk(ctx context.Context) (bool, error) {
	r.modes.once.Do(func() {
		out, err := r.Run(ctx, Options{}, "config", "-z", "--type=bool", "--get-regexp", `^core\.(filemode|symlinks)$`)
		if err != nil && !IsExit(err, 1) {
			r.modes.err = err
			return
		}
		r.modes.ok = true
		for _, rec := range strings.Split(string(out), "\x00") {
			if _, v, found := strings.Cut(rec, "\n"); found && v != "true" {
				r.modes.ok = false
			}
		}
	})
	return r.modes.ok, r.modes.err
}

// stageError is a failure of Repo.stage to read the paths themselves:
// git would fail the same way in a full index, so a capture fails with it
// rather than trying the full way.
type stageError struct{ error }

func (e *stageError) Unwrap() error { return e.error }

// maxSeedArgs bounds, in bytes, the --cacheinfo arguments stage gives
// update-index: far below any system's limit on a command line (256 KiB
// on macOS, with the environment).
const maxSeedArgs = 32 << 10

// updateIndex runs `git update-index -z --add --remove --replace
// [--cacheinfo <mode>,<object>,<path>]... --stdin` for paths in the index
// env names; the --cacheinfo entries (pairs of arguments in cacheinfo) go
// in first, as `--index-info` would put them. Paths on stdin are literal (never
// pathspecs, so ':todo.md' is a name: BR-38); --replace lets a file become
// a directory and back (BR-32). A file that shrinks while git hashes it (an
// agent or editor rewriting it) makes update-index die with "short read
// while indexing" before it writes the index, so the step is run again, on
// the file's new content; only a file that keeps changing fails it.
func (r *Repo) updateIndex(ctx context.Context, env []string, paths []string, cacheinfo ...string) error {
	args := append(append([]string{"update-index", "-z", "--add", "--remove", "--replace"}, cacheinfo...), "--stdin")
	for try := 1; ; try++ {
		_, err := r.Run(ctx, Options{Env: env, Stdin: r.pathsReader("capture.stage", paths)}, args...)
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

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// attrsChanged reports whether an attributes file is among paths.
func attrsChanged(paths []string) bool {
	for _, p := range paths {
		if p == attrFile || strings.HasSuffix(p, "/"+attrFile) {
			return true
		}
	}
	return false
}
