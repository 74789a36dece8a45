package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/venom-org/git-venom/refs"
)

// Fuzz targets for the hook JSON readers (issue 6), beside FuzzParse in
// parse_test.go: events built from fuzzed fields must read back as those
// fields, patch headers, agent ids, transcripts read backwards and the
// settings files the installer merges into. Seeds are in testdata/fuzz/.

// jsonString is s as it comes back from JSON: bytes that are not UTF-8
// become U+FFFD.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

// FuzzHookEventRoundTrip writes a hook event of every harness from fuzzed
// fields with encoding/json and parses it: the event's name, session,
// turn, directory and edit path must be what was written, and its kind the
// one the harness's table gives the name.
func FuzzHookEventRoundTrip(f *testing.F) {
	f.Add("UserPromptSubmit", "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60", "p1", "/tmp/w t", "Write", "/tmp/w t/a.go")
	f.Add("PostToolUse", "s", "", "", "MultiEdit", "rel/../x")
	f.Add("afterFileEdit", "", "g", "/r", "", "/r/\u00fc")
	f.Add("stop", "c", "g", "", "", "")
	f.Add("AfterTool", "s", "", "/x", "write_file", "/x/y")
	f.Fuzz(func(t *testing.T, name, session, turn, cwd, tool, path string) {
		for _, h := range all {
			obj := map[string]any{"hook_event_name": name, "session_id": session, "prompt_id": turn, "turn_id": turn,
				"cwd": cwd, "tool_name": tool, "tool_input": map[string]any{"file_path": path},
				"conversation_id": session, "generation_id": turn, "file_path": path}
			if cwd != "" {
				obj["workspace_roots"] = []string{cwd}
			}
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := h.Parse(data)
			if jsonString(name) == "" {
				if err == nil && h.Name != "codex" {
					t.Fatalf("%s accepted an event with no name: %s", h.Name, data)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s refused %s: %v", h.Name, data, err)
			}
			if ev.Name != jsonString(name) || ev.Session != jsonString(session) {
				t.Fatalf("%s read name %q session %q from %s", h.Name, ev.Name, ev.Session, data)
			}
			if ev.Kind < Ignore || ev.Kind > SessionEnd {
				t.Fatalf("%s: kind %v", h.Name, ev.Kind)
			}
			if cwd != "" && (len(ev.Dirs) != 1 || ev.Dirs[0] != jsonString(cwd)) {
				t.Fatalf("%s read dirs %q, wrote %q", h.Name, ev.Dirs, cwd)
			}
			for _, p := range ev.Paths {
				if p == "" {
					t.Fatalf("%s: an edit with an empty path from %s", h.Name, data)
				}
			}
			if ev.Kind == Edit && h.Name != "codex" && path != "" && (len(ev.Paths) != 1 || ev.Paths[0] != jsonString(path)) {
				t.Fatalf("%s read paths %q, wrote %q", h.Name, ev.Paths, path)
			}
			if ev.Kind != Edit && len(ev.Paths) > 0 {
				t.Fatalf("%s: a %v event with paths %q", h.Name, ev.Kind, ev.Paths)
			}
		}
	})
}

// FuzzPatchPaths checks the apply_patch header reader: every path it
// returns is non-empty, trimmed, on one line, given once, and is in the
// patch on a header line.
func FuzzPatchPaths(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a b.txt\n+x\n*** Update File: src/m.go\n*** Move to: src/n.go\n*** Delete File: old\n*** End Patch\n")
	f.Add("  *** Update File:   spaced  \r\n*** Update File: spaced\n")
	f.Add("*** Add File: \n*** Move to:\t\n")
	f.Fuzz(func(t *testing.T, patch string) {
		seen := map[string]bool{}
		for _, p := range PatchPaths(patch) {
			if p == "" || p != strings.TrimSpace(p) || strings.ContainsAny(p, "\n") {
				t.Fatalf("path %q from %q", p, patch)
			}
			if seen[p] {
				t.Fatalf("path %q twice", p)
			}
			seen[p] = true
			found := false
			for _, l := range strings.Split(patch, "\n") {
				if strings.Contains(l, p) && strings.Contains(l, "*** ") {
					found = true
				}
			}
			if !found {
				t.Fatalf("path %q is on no header line of %q", p, patch)
			}
		}
	})
}

// FuzzAgentID checks that every session id gives a valid, stable agent id
// under the harness's prefix (a ref component, RFC 5.1).
func FuzzAgentID(f *testing.F) {
	f.Add("0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60")
	f.Add("0190a5c2-7b3d-7e4f-8a9b-0c1d2e3f4a5b")
	f.Add("My Session/..lock")
	f.Add("")
	f.Add("a-b.c_d")
	f.Fuzz(func(t *testing.T, session string) {
		for _, h := range all {
			id := AgentID(h.Prefix, session)
			if err := refs.ValidAgent(id); err != nil {
				t.Fatalf("AgentID(%q, %q) = %q: %v", h.Prefix, session, id, err)
			}
			if id != h.Prefix && !strings.HasPrefix(id, h.Prefix+"-") {
				t.Fatalf("AgentID(%q, %q) = %q", h.Prefix, session, id)
			}
			if again := AgentID(h.Prefix, session); again != id {
				t.Fatalf("AgentID is not stable: %q then %q", id, again)
			}
		}
	})
}

// FuzzLastAssistant writes a transcript and checks the backward reader
// against a forward scan: the last whole line that is a main-chain
// assistant entry with a uuid.
func FuzzLastAssistant(f *testing.F) {
	f.Add([]byte(`{"type":"user","uuid":"u1"}` + "\n" + `{"type":"assistant","uuid":"a1","message":{"content":[{"type":"text","text":"hi"}]}}` + "\n"))
	f.Add([]byte(`{"type":"assistant","uuid":"a1","message":{"content":"x"}}` + "\n" + `{"type":"assistant","uuid":"a2","isSidechain":true}` + "\n" + `{"type":"assistant","uuid":"a3"`))
	f.Add([]byte("\n\n\"assistant\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		uuid, text, err := LastAssistant(p)
		if err != nil {
			t.Fatalf("LastAssistant: %v", err)
		}
		wantUUID, wantText := "", ""
		if end := bytes.LastIndexByte(data, '\n'); end >= 0 {
			for _, l := range bytes.Split(data[:end], []byte("\n")) {
				if u, tx, ok := assistantLine(l); ok {
					wantUUID, wantText = u, tx
				}
			}
		}
		if uuid != wantUUID || text != wantText {
			t.Fatalf("LastAssistant = %q %q, a forward scan finds %q %q", uuid, text, wantUUID, wantText)
		}
	})
}

// FuzzSettingsJSON checks the order-keeping JSON reader and writer the
// installer merges settings with: what it reads, it writes so that reading
// it again gives the same value and writing that the same bytes.
func FuzzSettingsJSON(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"git venom-hook claude-code","timeout":40}]}]},"z":1.50,"a":[true,null,"<&>"]}`))
	f.Add([]byte(`{"version":1,"hooks":{"stop":[{"command":"x"}]}}`))
	f.Add([]byte(`[{"": {}}, []]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeJSON(data)
		if err != nil {
			return
		}
		out := encodeJSON(v)
		if !json.Valid(out) {
			t.Fatalf("wrote invalid JSON %q", out)
		}
		v2, err := decodeJSON(out)
		if err != nil {
			t.Fatalf("cannot read what it wrote: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("read back differs:\n%#v\n%#v", v, v2)
		}
		if out2 := encodeJSON(v2); !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
