package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/venom-org/git-venom/plumbing"
	"github.com/venom-org/git-venom/refs"
)

// Disk is what the objects only checkpoints hold (reachable from
// refs/venom/ and from no branch, tag or remote-tracking ref) take on
// disk: Objects of them, Loose of those loose files; LooseBytes is those
// files' size on disk, as the file system allocates it (as `du` and `git
// count-objects -v` count loose objects: a 40-byte object takes a block);
// PackedBytes the rest's share of the packs (`git cat-file
// --batch-check=%(objectsize:disk)`).
type Disk struct {
	Objects, Loose          int
	LooseBytes, PackedBytes int64
}

// Bytes is the total on disk.
func (d Disk) Bytes() int64 { return d.LooseBytes + d.PackedBytes }

// CheckpointDisk measures Disk: `git rev-list --objects` lists the
// objects, `git cat-file --batch-check` their sizes in the packs, and a
// stat of each loose object's file (objects/xx/yyy… in the common git
// directory) its allocated size. Its cost follows the number of such
// objects.
func (t *Tree) CheckpointDisk(ctx context.Context) (Disk, error) {
	var d Disk
	out, err := t.Repo.Run(ctx, plumbing.Options{NoWorkTree: true}, "rev-list", "--objects", "--glob="+refs.Prefix+"*", "--not", "--branches", "--tags", "--remotes")
	if err != nil {
		return d, fmt.Errorf("listing the objects only checkpoints hold: %w", err)
	}
	var oids bytes.Buffer
	for _, l := range strings.Split(string(out), "\n") {
		if oid, _, _ := strings.Cut(l, " "); oid != "" {
			oids.WriteString(oid + "\n")
		}
	}
	if oids.Len() == 0 {
		return d, nil
	}
	sizes, err := t.Repo.Run(ctx, plumbing.Options{NoWorkTree: true, Stdin: &oids}, "cat-file", "--batch-check=%(objectname) %(objectsize:disk)")
	if err != nil {
		return d, fmt.Errorf("reading the objects' sizes: %w", err)
	}
	objects := filepath.Join(t.Repo.CommonDir, "objects")
	sc := bufio.NewScanner(bytes.NewReader(sizes))
	for sc.Scan() {
		oid, size, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || err != nil || len(oid) < 3 {
			continue // "<oid> missing": not there to count
		}
		d.Objects++
		if fi, err := os.Lstat(filepath.Join(objects, oid[:2], oid[2:])); err == nil {
			d.Loose++
			d.LooseBytes += allocated(fi)
			continue
		}
		d.PackedBytes += n
	}
	return d, nil
}

// HumanBytes is n bytes as people read them: "1.5 GiB", "12.0 KiB", "40 B".
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// missingObject is how `git rev-list --objects` says an object it walks
// to is not in the store: its type and name.
var missingObject = regexp.MustCompile(`missing (blob|tree|commit) object '?([0-9a-f]{40,64})`)

// LooseWarn is how many loose objects only checkpoints hold above which
// the doctor suggests `git gc`, when gc.auto does not say: git's own
// default for gc.auto.
const LooseWarn = 6700

// diskCheck is the doctor's checkpoints.size: what the objects only
// checkpoints hold take on disk (CheckpointDisk), a warning above
// SizeWarn in all or above gc.auto (LooseWarn) loose ones, each with its
// fix.
func (t *Tree) diskCheck(ctx context.Context) Check {
	d, err := t.CheckpointDisk(ctx)
	if m := missingObject.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		// A checkpoint lacks an object: a `git gc --prune=now` beside a
		// capture deletes what it has just written (issue 16's break-it
		// pass), and the checkpoints that reuse it lack it too.
		return Check{ID: "checkpoints.size", Level: "warn",
			Message: fmt.Sprintf("a checkpoint lacks the %s object %s (a `git gc --prune=now` beside a capture deletes what the capture has just written); a rollback whose starting state holds it writes it back from the files while they are as that state had them (a blob, or a directory's tree); otherwise a plan or rollback that needs it refuses with nothing written", m[1], m[2]),
			Fix:     "run no `git gc --prune=now` while an agent works; `git fsck --connectivity-only` lists what is missing, and the tree that names it"}
	}
	if err != nil {
		return Check{ID: "checkpoints.size", Level: "warn", Message: fmt.Sprintf("cannot measure the objects only checkpoints hold: %v", err)}
	}
	looseWarn := LooseWarn
	if v, ok, err := t.Repo.UserConfig(ctx, "gc.auto"); err == nil && ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			looseWarn = n
		}
	}
	// The exact count too, in bytes, for a script (and the field case
	// BR-26) to compare.
	msg := fmt.Sprintf("objects only checkpoints hold take %d bytes (%s) on disk: %s loose (%s, as files) and %s packed (%s)",
		d.Bytes(), HumanBytes(d.Bytes()), plural(d.Loose, "object"), HumanBytes(d.LooseBytes), plural(d.Objects-d.Loose, "object"), HumanBytes(d.PackedBytes))
	c := Check{ID: "checkpoints.size", Level: "ok", Message: msg}
	switch {
	case d.Bytes() > SizeWarn:
		c.Level, c.Fix = "warn", "lower venom.checkpoints.keep or keepFor, ignore generated files, then run `git gc` to pack what is left"
	case d.Loose > looseWarn:
		c.Level, c.Fix = "warn", fmt.Sprintf("run `git gc`: it packs the loose objects (over gc.auto, %d) and keeps every checkpoint, whose refs hold them", looseWarn)
	}
	return c
}

func plural(n int, one string) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " " + one
	}
	return s + " " + one + "s"
}
