package plumbing

import (
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
