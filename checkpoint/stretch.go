package checkpoint

import (
	"context"
	"sync"
	"time"
)

// PathsPerTimeout is how many changed paths one venom.checkpoints.timeout
// covers: a capture that finds more gets the timeout once for each
// PathsPerTimeout of them (150,000 new files: six times 30 s), so the bound
// scales with the work a turn left, as git-venom-checkpoint(1) says. The
// capture of 150,000 new files took 16 s of CPU here (user+sys of its git
// children, 2 cores; issue 15), some 9,000 paths a second.
const PathsPerTimeout = 25000

// stretchable is a context whose deadline can move later (stretch); it
// ends when its parent does or its deadline passes, and then Err is
// context.DeadlineExceeded, as for context.WithDeadline.
type stretchable struct {
	context.Context
	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
	done     chan struct{}
	err      error
}

// withStretchableTimeout is context.WithTimeout(parent, d) whose deadline
// stretch can move later. cancel releases it.
func withStretchableTimeout(parent context.Context, d time.Duration) (*stretchable, context.CancelFunc) {
	s := &stretchable{Context: parent, deadline: time.Now().Add(d), done: make(chan struct{})}
	s.timer = time.AfterFunc(d, func() { s.end(context.DeadlineExceeded) })
	stop := context.AfterFunc(parent, func() { s.end(parent.Err()) })
	return s, func() { stop(); s.timer.Stop(); s.end(context.Canceled) }
}

func (s *stretchable) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		close(s.done)
	}
}

// stretch moves the deadline to start+total when that is later and the
// context has not ended.
func (s *stretchable) stretch(to time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || !to.After(s.deadline) {
		return
	}
	s.deadline = to
	s.timer.Reset(time.Until(to))
}

func (s *stretchable) Deadline() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline, true
}

func (s *stretchable) Done() <-chan struct{} { return s.done }

func (s *stretchable) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// scaledTimeout is the bound of a capture that found changed paths:
// timeout once for each PathsPerTimeout of them, at least once.
func scaledTimeout(timeout time.Duration, changed int) time.Duration {
	n := (changed + PathsPerTimeout - 1) / PathsPerTimeout
	if n < 1 {
		n = 1
	}
	return time.Duration(n) * timeout
}
