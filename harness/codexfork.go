package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// CodexForkTimeout bounds a whole Codex rewind: starting `codex
// app-server`, the three calls, and its exit. codex 0.171 does it in
// under a second on a small thread store.
const CodexForkTimeout = 30 * time.Second

// CodexFork is RFC 8's codex rewind: it starts `codex app-server` (JSON-RPC
// over stdio, one JSON object a line) in dir, calls initialize, sends
// initialized, calls thread/fork {threadId: thread, lastTurnId: turn,
// excludeTurns: true} and thread/unsubscribe on the copy, then closes the
// server's stdin and waits for it to exit. It returns the copy's thread id.
// The source thread is not changed: Codex copies its stored history
// through turn (inclusive) into a new thread, which keeps the copied turns'
// ids. The thread store is $CODEX_HOME (default ~/.codex), as for the
// `codex resume` that continues the copy.
//
// command is the program to run, nil for `codex app-server` from PATH.
// Everything is bounded by timeout (CodexForkTimeout when 0): past it the
// server and what it started are killed and the error is
// timeout.harness_request. A server that cannot start, or that answers the
// fork with an error or without a thread id, is
// conflict.harness_fork_refused, with codex's own message. An error from
// thread/unsubscribe is not one: the copy exists, and the server stops
// right after.
func CodexFork(ctx context.Context, dir, thread, turn string, command []string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = CodexForkTimeout
	}
	if len(command) == 0 {
		command = []string{"codex", "app-server"}
	}
	data := map[string]any{"harness": "codex", "thread": thread, "turn": turn}
	refused := func(format string, args ...any) error {
		return rfcerr.New("conflict.harness_fork_refused", data, "codex did not fork thread %s through turn %s: %s",
			thread, turn, fmt.Sprintf(format, args...)).
			WithHint("--restore files restores the files alone and tells the agent")
	}
	if _, err := exec.LookPath(command[0]); err != nil {
		return "", refused("%s is not on PATH (a Codex rewind runs `codex app-server`)", command[0])
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir = dir
	plumbing.Bound(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", refused("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", refused("%v", err)
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := plumbing.Start(cmd); err != nil {
		return "", refused("starting %s: %v", strings.Join(command, " "), err)
	}
	c := &rpcConn{in: stdin, lines: make(chan []byte), done: make(chan struct{}), stop: make(chan struct{})}
	go c.read(stdout)
	exited := make(chan error, 1)
	go func() {
		<-c.done // Wait closes stdout: read it all first
		exited <- cmd.Wait()
	}()
	fail := func(err error) (string, error) {
		_ = stdin.Close()
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		close(c.stop)
		<-exited
		if timedOut {
			return "", rfcerr.Wrap("timeout.harness_request", err, data,
				"codex app-server did not fork thread %s within %s", thread, timeout).
				WithHint("--restore files restores the files alone and tells the agent")
		}
		if e := rfcerr.As(err); e != nil {
			return "", e
		}
		msg := err.Error()
		if s := stderr.last(); s != "" {
			msg += " (codex said: " + s + ")"
		}
		return "", refused("%s", msg)
	}

	if _, err := c.call(ctx, 0, "initialize", map[string]any{"clientInfo": map[string]any{"name": "git-venom", "version": "1"}}); err != nil {
		return fail(err)
	}
	if err := c.send(map[string]any{"method": "initialized"}); err != nil {
		return fail(err)
	}
	res, err := c.call(ctx, 1, "thread/fork", map[string]any{"threadId": thread, "lastTurnId": turn, "excludeTurns": true})
	if err != nil {
		return fail(err)
	}
	var forked struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if json.Unmarshal(res, &forked) != nil || forked.Thread.ID == "" {
		return fail(refused("its reply names no thread: %.200s", res))
	}
	data["fork"] = forked.Thread.ID
	// The copy is made; unsubscribing lets the server drop it before it
	// stops, and an error here changes nothing.
	_, _ = c.call(ctx, 2, "thread/unsubscribe", map[string]any{"threadId": forked.Thread.ID})
	_ = stdin.Close()
	close(c.stop)
	<-exited // bounded: the deadline kills the server's process group
	return forked.Thread.ID, nil
}

// rpcConn is one JSON-RPC connection over a child's stdin and stdout, in
// codex app-server's framing: one JSON object a line, no "jsonrpc" member.
type rpcConn struct {
	mu    sync.Mutex
	in    io.Writer
	lines chan []byte
	// done is closed when the server's stdout ends; stop when no reply is
	// awaited any more.
	done, stop chan struct{}
	err        error
}

func (c *rpcConn) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		select {
		case c.lines <- line:
		case <-c.stop:
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
	c.err = sc.Err()
}

func (c *rpcConn) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	_, err = c.in.Write(append(b, '\n'))
	c.mu.Unlock()
	if err != nil {
		// A server that exited closed the pipe: say that, once its
		// stdout has ended too.
		select {
		case <-c.done:
			return fmt.Errorf("%v: the server exited without a reply", msg["method"])
		case <-time.After(time.Second):
		}
	}
	return err
}

// call sends request id and waits for its response, skipping the
// notifications (and requests) the server sends meanwhile. A response with
// an error member is a refusal carrying the server's message.
func (c *rpcConn) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: writing the request: %w", method, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w", method, ctx.Err())
		case <-c.done:
			if c.err != nil {
				return nil, fmt.Errorf("%s: reading the reply: %w", method, c.err)
			}
			return nil, fmt.Errorf("%s: the server exited without a reply", method)
		case line := <-c.lines:
			var msg struct {
				ID     *json.RawMessage `json:"id"`
				Method string           `json:"method"`
				Result json.RawMessage  `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(bytes.TrimSpace(line), &msg) != nil || msg.ID == nil || msg.Method != "" {
				continue // a notification, a server request, or noise
			}
			var got int
			if json.Unmarshal(*msg.ID, &got) != nil || got != id {
				continue
			}
			if msg.Error != nil {
				return nil, rfcerr.New("conflict.harness_fork_refused", map[string]any{"harness": "codex", "method": method, "rpc_code": msg.Error.Code},
					"codex app-server refused %s: %s", method, msg.Error.Message).
					WithHint("--restore files restores the files alone and tells the agent")
			}
			return msg.Result, nil
		}
	}
}

// tailBuffer keeps the last 4 KiB written to it (a child's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if n := len(b.buf); n > 4096 {
		b.buf = b.buf[n-4096:]
	}
	return len(p), nil
}

// last is the last non-empty line written before any "Stack backtrace:"
// section: what the program said, not the last frame of the backtrace a
// Rust program (codex) prints after its error.
func (b *tailBuffer) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := string(b.buf)
	if i := strings.LastIndex(text, "\nStack backtrace:"); i >= 0 {
		text = text[:i]
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Rewind is rollback.Options.Rewind: the copy of a conversation, made by
// the rollback (RFC 7.4 step 3) for a harness that rewinds by a fork.
// Codex: CodexFork of thread session through turn at, in the tree dir; the
// harness names the copy, whose id is returned. Claude Code: ClaudeFork of
// session through its entry at into newSession (the id the plan chose),
// titled after turn through; newSession is returned.
func Rewind(ctx context.Context, harness, dir, session, at, newSession, through string) (string, error) {
	switch harness {
	case "codex":
		return CodexFork(ctx, dir, session, at, nil, 0)
	case claudeCode.Name:
		if err := ClaudeFork(ctx, dir, session, at, newSession, through, 0); err != nil {
			return "", err
		}
		return newSession, nil
	}
	return "", rfcerr.New("conflict.harness_fork_refused", map[string]any{"harness": harness},
		"%s has no fork a rollback can call", harness)
}
