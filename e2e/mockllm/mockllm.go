// Package mockllm is a scripted stand-in for three vendors' model APIs, on
// loopback only, for the real-client tests of `make e2e` (e2e/README.md).
// It speaks just enough of
//
//   - Anthropic's Messages API (POST /v1/messages, SSE or JSON): Claude Code
//   - OpenAI's Responses API (POST /v1/responses, SSE) and Chat Completions
//     (POST /v1/chat/completions, SSE): Codex CLI
//   - Google's Generative Language API (POST
//     /v1beta/models/M:streamGenerateContent and :generateContent): Gemini CLI
//
// for a client to run one scripted agent turn per prompt. The script lives
// in the prompt, so one server serves every test:
//
//	do the thing [[venom-e2e: write /abs/a.txt hello ;; bash echo x > b.txt ;; say Done.]]
//
// Steps are separated by " ;; "; each model response performs the next one
// (Step). Which step is next is the number of tool calls the model already
// made after the latest user message holding a script. A request without
// tools, or whose conversation holds no script (a title, a summary, a quota
// check), gets a short text answer.
//
// Every request is kept (Requests) and, with Options.LogDir, written whole
// to LOGDIR/NNNN-<api>.json. The server stops by itself after
// Options.MaxRequests requests or Options.Lifetime, whichever comes first.
package mockllm

import (
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// Addr is where to listen: a loopback host and a port (0 for any);
	// default 127.0.0.1:0. Any other host is refused.
	Addr string
	// LogDir, when set, receives every request as NNNN-<api>.json and a
	// line per request in requests.jsonl.
	LogDir string
	// Lifetime is how long the server runs at most (default 15 minutes).
	Lifetime time.Duration
	// MaxRequests is how many requests it answers at most (default 500);
	// the one that reaches it is answered, then the server stops.
	MaxRequests int
}

// Request is one request the server received: Seq counts from 1, API names
// the endpoint (anthropic, anthropic-count, responses, chat, gemini,
// gemini-nostream, gemini-count, get, head, other), Body is the decoded
// JSON body (nil for GET and HEAD). Headers leave out credentials.
type Request struct {
	Seq     int               `json:"seq"`
	Time    time.Time         `json:"time"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	API     string            `json:"api"`
	Headers map[string]string `json:"headers"`
	Body    map[string]any    `json:"body"`
}

// Server is a running mock. Its methods are safe for concurrent use.
type Server struct {
	o     Options
	ln    net.Listener
	srv   *http.Server
	mu    sync.Mutex
	reqs  []Request
	done  chan struct{}
	once  sync.Once
	timer *time.Timer
}

// Start listens on o.Addr and serves until Close, the lifetime or the
// request limit. It refuses an address that is not loopback.
func Start(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Lifetime <= 0 {
		o.Lifetime = 15 * time.Minute
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = 500
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("mockllm: address %q: %w", o.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("mockllm: %s is not a loopback address", host)
	}
	if o.LogDir != "" {
		if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 30 * time.Second}
	// Under mu: the timer's own Close may run before this assignment is
	// seen (a short lifetime), and reads s.timer (go test -race saw it).
	s.mu.Lock()
	s.timer = time.AfterFunc(o.Lifetime, func() { s.Close() })
	s.mu.Unlock()
	go func() {
		_ = s.srv.Serve(ln)
		s.once.Do(func() { close(s.done) })
	}()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Done is closed once the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Close stops the server; open connections are cut after a second.
func (s *Server) Close() error {
	s.mu.Lock()
	s.timer.Stop()
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	s.once.Do(func() { close(s.done) })
	return err
}

// Seq is the number of requests received so far.
func (s *Server) Seq() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Requests returns the requests received after request number since (0 for
// all), in order.
func (s *Server) Requests(since int) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if since < 0 || since > len(s.reqs) {
		since = len(s.reqs)
	}
	return append([]Request(nil), s.reqs[since:]...)
}

func (s *Server) record(r *http.Request, api string, body map[string]any) {
	hdrs := map[string]string{}
	for k, v := range r.Header {
		switch strings.ToLower(k) {
		case "authorization", "x-api-key", "x-goog-api-key", "cookie":
			continue
		}
		hdrs[k] = strings.Join(v, ", ")
	}
	s.mu.Lock()
	req := Request{Seq: len(s.reqs) + 1, Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), API: api, Headers: hdrs, Body: body}
	s.reqs = append(s.reqs, req)
	n := req.Seq
	s.mu.Unlock()
	if s.o.LogDir != "" {
		if b, err := json.MarshalIndent(req, "", " "); err == nil {
			_ = os.WriteFile(filepath.Join(s.o.LogDir, fmt.Sprintf("%04d-%s.json", n, api)), b, 0o644)
		}
		line, _ := json.Marshal(map[string]any{"seq": n, "method": r.Method, "path": req.Path, "api": api})
		s.mu.Lock()
		if f, err := os.OpenFile(filepath.Join(s.o.LogDir, "requests.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			_, _ = f.Write(append(line, '\n'))
			f.Close()
		}
		s.mu.Unlock()
	}
	if n >= s.o.MaxRequests {
		go s.Close()
	}
}

func readBody(r *http.Request) map[string]any {
	var rd io.Reader = http.MaxBytesReader(nil, r.Body, 256<<20)
	if r.Header.Get("Content-Encoding") == "gzip" {
		if zr, err := gzip.NewReader(rd); err == nil {
			rd = zr
		}
	}
	raw, _ := io.ReadAll(rd)
	if len(strings.TrimSpace(string(raw))) == 0 {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return map[string]any{"_raw": string(raw)}
	}
	return m
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch r.Method {
	case http.MethodGet:
		s.record(r, "get", nil)
		if strings.Contains(p, "/models") {
			sendJSON(w, 200, map[string]any{"data": []any{map[string]any{"id": "mock-model", "object": "model",
				"type": "model", "display_name": "mock"}}, "models": []any{}, "object": "list"})
			return
		}
		sendJSON(w, 200, map[string]any{})
		return
	case http.MethodHead:
		s.record(r, "head", nil)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(200)
		return
	}
	body := readBody(r)
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		s.record(r, "anthropic-count", body)
		sendJSON(w, 200, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		s.record(r, "anthropic", body)
		anthropicRespond(w, body)
	case strings.HasSuffix(p, "/responses"):
		s.record(r, "responses", body)
		responsesRespond(w, body)
	case strings.HasSuffix(p, "/chat/completions"):
		s.record(r, "chat", body)
		chatRespond(w, body)
	case strings.Contains(p, ":streamGenerateContent"):
		s.record(r, "gemini", body)
		geminiRespond(w, body, true)
	case strings.Contains(p, ":generateContent"):
		s.record(r, "gemini-nostream", body)
		geminiRespond(w, body, false)
	case strings.Contains(p, ":countTokens"):
		s.record(r, "gemini-count", body)
		sendJSON(w, 200, map[string]any{"totalTokens": 10})
	default:
		s.record(r, "other", body)
		sendJSON(w, 200, map[string]any{})
	}
}

// ---------------------------------------------------------------- scripts

var scriptRE = regexp.MustCompile(`(?s)\[\[venom-e2e:(.*?)\]\]`)

// Step is one move of a script: Verb is write (PATH [CONTENT]: the vendor's
// file-write tool), edit (PATH OLD NEW: its edit tool, replacing the word
// OLD by NEW), bash (CMD: its shell tool), say (TEXT: a final answer; the
// turn ends) or fail ([STATUS]: an HTTP error, default 400).
type Step struct {
	Verb, Rest string
}

// ParseScript returns the steps of the last script in text, or nil when
// text holds none.
func ParseScript(text string) []Step {
	ms := scriptRE.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return nil
	}
	var steps []Step
	for _, raw := range strings.Split(ms[len(ms)-1][1], ";;") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		verb, rest, _ := strings.Cut(raw, " ")
		steps = append(steps, Step{verb, strings.TrimSpace(rest)})
	}
	return steps
}

// next is the step after done tool calls: the last say once the steps run
// out.
func next(steps []Step, done int) Step {
	if done < len(steps) {
		return steps[done]
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Verb == "say" {
			return steps[i]
		}
	}
	return Step{"say", "Done."}
}

// editArgs splits an edit step's PATH OLD NEW.
func editArgs(rest string) (path, old, repl string) {
	f := strings.SplitN(rest, " ", 3)
	for len(f) < 3 {
		f = append(f, "")
	}
	return f[0], f[1], f[2]
}

func failStatus(rest string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 400 && n < 600 {
		return n
	}
	return 400
}

func orDone(s string) string {
	if s == "" {
		return "Done."
	}
	return s
}

// ---------------------------------------------------------------- JSON helpers

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// newID is prefix and n random hex digits.
func newID(prefix string, n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)[:n]
}

func sendJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

type sseEvent struct {
	name string
	data any
}

// sendSSE writes events as one text/event-stream body: named events
// carry an event: line; done appends Chat Completions' [DONE].
func sendSSE(w http.ResponseWriter, evs []sseEvent, named, done bool) {
	var sb strings.Builder
	for _, e := range evs {
		if named && e.name != "" {
			fmt.Fprintf(&sb, "event: %s\n", e.name)
		}
		b, _ := json.Marshal(e.data)
		fmt.Fprintf(&sb, "data: %s\n\n", b)
	}
	if done {
		sb.WriteString("data: [DONE]\n\n")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Length", strconv.Itoa(sb.Len()))
	w.WriteHeader(200)
	_, _ = io.WriteString(w, sb.String())
}
