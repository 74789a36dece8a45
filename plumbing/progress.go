package plumbing

import (
	"bytes"
	"io"
)

// Progress hears how far a long step of a capture or a restore is: step
// names it ("capture.walk": the status walk, total 0; "capture.stage":
// the changed paths hashed into the private index, as git reads them;
// "rollback.delete" and "restore.write": the paths a rollback has deleted
// and written, which it tells itself, Report, once a path or a batch of
// writes is done), done of total paths so far. It is told at the start of
// a step (done 0) and as the step goes; capture.stage's done runs at most
// a pipe's worth (64 KiB of names) ahead of git.
type Progress func(step string, done, total int)

// progress tells r.OnProgress, if set.
func (r *Repo) progress(step string, done, total int) {
	if r.OnProgress != nil {
		r.OnProgress(step, done, total)
	}
}

// pathsReader is the NUL-terminated list of paths a git command reads on
// its stdin, telling r's progress for step how many names git has taken.
func (r *Repo) pathsReader(step string, paths []string) io.Reader {
	list := NulList(paths)
	if r.OnProgress == nil || len(paths) == 0 {
		return bytes.NewReader(list)
	}
	r.progress(step, 0, len(paths))
	return &progressReader{r: bytes.NewReader(list), list: list, total: len(paths), tell: func(n int) { r.progress(step, n, len(paths)) }}
}

// progressReader counts the NULs read so far. It seeks, as the
// bytes.Reader it wraps does, so Run can give a command the same stdin
// again after an object-store race (objectrace.go's rewinder); the count
// follows the offset back.
type progressReader struct {
	r     *bytes.Reader
	list  []byte
	off   int
	done  int
	total int
	tell  func(int)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.done += bytes.Count(p.list[p.off:p.off+n], []byte{0})
		p.off += n
		p.tell(p.done)
	}
	return n, err
}

func (p *progressReader) Seek(offset int64, whence int) (int64, error) {
	n, err := p.r.Seek(offset, whence)
	if err == nil {
		p.off = int(n)
		p.done = bytes.Count(p.list[:p.off], []byte{0})
	}
	return n, err
}

// Report tells r.OnProgress, if set, that step is done of total: for the
// steps a caller runs itself, or in batches of git commands (a rollback's
// deletes, "rollback.delete", and writes, "restore.write").
func (r *Repo) Report(step string, done, total int) { r.progress(step, done, total) }
