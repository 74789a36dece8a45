package plumbing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"
)

// SetTrace sends r's trace lines to w, as GIT_VENOM_TRACE=1 sends them to
// stderr, so a test can see which git children a capture ran.
func SetTrace(r *Repo, w io.Writer) { r.trace = &tracer{w: w} }

// IndexCachePath is the worktree's index cache file.
func IndexCachePath(r *Repo) string { return r.indexCachePath() }

// IndexSettledAt is the moment from which a capture stores answers about
// the index file at path (indexSettle after its later timestamp); ok is
// false where the cache is not used.
func IndexSettledAt(path string) (at time.Time, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return at, false
	}
	k, ok := indexKeyOf(fi)
	if !ok {
		return at, false
	}
	return time.Unix(0, max(k.MtimeNs, k.CtimeNs)).Add(indexSettle), true
}

// RekeyIndexCache rewrites r's index cache file so that its entry names
// the stat identity (device, inode, size, both times) of the real index
// as it is now, keeping all else (the checksum it was stored with and the
// answers): what the kernel's reuse of an inode number within one tick of
// the file system's clock can make of a later index file.
func RekeyIndexCache(r *Repo) error {
	fi, err := os.Stat(r.RealIndex())
	if err != nil {
		return err
	}
	k, ok := indexKeyOf(fi)
	if !ok {
		return errors.New("no stat identity on this system")
	}
	b, err := os.ReadFile(r.indexCachePath())
	if err != nil {
		return err
	}
	head, lists, _ := bytes.Cut(b, []byte("\n"))
	var f map[string]json.RawMessage
	if err := json.Unmarshal(head, &f); err != nil {
		return err
	}
	var key map[string]any
	if err := json.Unmarshal(f["key"], &key); err != nil {
		return err
	}
	key["dev"], key["ino"], key["size"], key["mtime_ns"], key["ctime_ns"] = k.Dev, k.Ino, k.Size, k.MtimeNs, k.CtimeNs
	if f["key"], err = json.Marshal(key); err != nil {
		return err
	}
	if b, err = json.Marshal(f); err != nil {
		return err
	}
	return os.WriteFile(r.indexCachePath(), append(append(b, '\n'), lists...), 0o644)
}

// TrimChosen is trimChosen: whether env already sets glibc's heap trim
// threshold, so that CleanEnv adds none.
var TrimChosen = trimChosen
