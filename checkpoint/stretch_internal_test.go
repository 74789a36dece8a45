package checkpoint

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestScaledTimeout: the timeout once for each PathsPerTimeout changed
// paths, at least once.
func TestScaledTimeout(t *testing.T) {
	t.Parallel()
	for changed, want := range map[int]time.Duration{0: 30 * time.Second, 1: 30 * time.Second, 25000: 30 * time.Second,
		25001: 60 * time.Second, 150000: 180 * time.Second} {
		if got := scaledTimeout(30*time.Second, changed); got != want {
			t.Errorf("scaledTimeout(30s, %d) = %v, want %v", changed, got, want)
		}
	}
}

// TestStretchable: the deadline moves later and not earlier; the context
// ends with DeadlineExceeded at the deadline it has then, or with its
// parent.
func TestStretchable(t *testing.T) {
	t.Parallel()
	ctx, cancel := withStretchableTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	ctx.stretch(start.Add(1500 * time.Millisecond))
	ctx.stretch(start.Add(10 * time.Millisecond)) // earlier: ignored
	select {
	case <-ctx.Done():
		t.Fatalf("ended after %v, before its stretched deadline", time.Since(start))
	case <-time.After(600 * time.Millisecond):
	}
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("err %v", ctx.Err())
	}
	parent, stop := context.WithCancel(context.Background())
	c2, cancel2 := withStretchableTimeout(parent, time.Hour)
	defer cancel2()
	stop()
	<-c2.Done()
	if !errors.Is(c2.Err(), context.Canceled) {
		t.Errorf("parent cancelled: err %v", c2.Err())
	}
}
