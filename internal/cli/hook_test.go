package cli

import (
	"io"
	"testing"
	"time"
)

// readEvent never holds the hook on a stdin the harness leaves open: it
// returns as soon as a whole JSON object is in, and gives up after its
// wait when none comes. A closed stdin gives whatever was written.
func TestReadEvent(t *testing.T) {
	event := `{"hook_event_name":"Stop","session_id":"s"}`

	r, w := io.Pipe()
	go func() {
		w.Write([]byte(event[:10]))
		time.Sleep(20 * time.Millisecond)
		w.Write([]byte(event[10:] + "\n")) // and never closed
	}()
	start := time.Now()
	got, err := readEvent(r, 5*time.Second)
	if string(got) != event+"\n" || err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("open pipe: %q, %v after %v", got, err, time.Since(start))
	}

	r, w = io.Pipe()
	go w.Write([]byte(`{"hook_event_name":`))
	got, err = readEvent(r, 100*time.Millisecond)
	if got != nil || err == nil {
		t.Errorf("half an event, never closed: %q, %v; want an error", got, err)
	}

	r, w = io.Pipe()
	go func() {
		w.Write([]byte("not json"))
		w.Close()
	}()
	got, err = readEvent(r, 5*time.Second)
	if string(got) != "not json" || err != nil {
		t.Errorf("closed pipe: %q, %v", got, err)
	}
}
