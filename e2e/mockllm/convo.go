package mockllm

import (
	"encoding/json"
	"strings"
)

// Part is one message part of a conversation as a model request holds it:
// Role is the vendor's role (user, assistant, system, model, tool), Text
// the text, or for a tool call or result a one-line summary starting
// TOOL_USE, TOOL_RESULT, TOOL_CALL, TOOL_OUTPUT, FUNCTION_CALL or
// FUNCTION_RESPONSE.
type Part struct {
	Role, Text string
}

// mustJSON is v as compact JSON, with <, > and & as they are (as the
// vendors write tool arguments).
func mustJSON(v any) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(sb.String(), "\n")
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func flatten(role string, content any) []Part {
	if s, ok := content.(string); ok {
		return []Part{{role, s}}
	}
	var out []Part
	for _, pv := range arr(content) {
		p := obj(pv)
		if p == nil {
			continue
		}
		if t, ok := p["text"].(string); ok {
			out = append(out, Part{role, t})
			continue
		}
		switch {
		case str(p["type"]) == "tool_use":
			out = append(out, Part{role, "TOOL_USE " + str(p["name"]) + " " + mustJSON(p["input"])})
		case str(p["type"]) == "tool_result":
			out = append(out, Part{role, "TOOL_RESULT " + cut(mustJSON(p["content"]), 200)})
		case p["functionCall"] != nil:
			out = append(out, Part{role, "FUNCTION_CALL " + mustJSON(p["functionCall"])})
		case p["functionResponse"] != nil:
			out = append(out, Part{role, "FUNCTION_RESPONSE " + cut(mustJSON(p["functionResponse"]), 200)})
		}
	}
	return out
}

// Convo is the conversation a model request carries, one Part per message
// part, in order: Anthropic messages, Responses input items, Gemini
// contents. Other APIs give nil.
func (r Request) Convo() []Part {
	var parts []Part
	switch {
	case strings.HasPrefix(r.API, "anthropic"):
		for _, mv := range arr(r.Body["messages"]) {
			m := obj(mv)
			parts = append(parts, flatten(str(m["role"]), m["content"])...)
		}
	case r.API == "responses":
		for _, iv := range responsesInput(r.Body) {
			it := obj(iv)
			switch ty := str(it["type"]); ty {
			case "", "message":
				parts = append(parts, flatten(str(it["role"]), it["content"])...)
			case "function_call", "custom_tool_call":
				args := str(it["arguments"])
				if args == "" {
					args = str(it["input"])
				}
				parts = append(parts, Part{"assistant", "TOOL_CALL " + str(it["name"]) + " " + args})
			case "function_call_output", "custom_tool_call_output":
				parts = append(parts, Part{"tool", "TOOL_OUTPUT " + cut(mustJSON(it["output"]), 200)})
			}
		}
	case strings.HasPrefix(r.API, "gemini"):
		for _, cv := range arr(r.Body["contents"]) {
			c := obj(cv)
			role := str(c["role"])
			if role == "" {
				role = "user"
			}
			parts = append(parts, flatten(role, c["parts"])...)
		}
	}
	return parts
}

// Scripted reports whether a conversation holds a scripted prompt.
func Scripted(parts []Part) bool {
	for _, p := range parts {
		if strings.Contains(p.Text, "[[venom-e2e:") {
			return true
		}
	}
	return false
}

// Text is the conversation as text, one "ROLE<TAB>TEXT" line per part
// (newlines in a part written as \n), for messages and for strings.Contains.
func Text(parts []Part) string {
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Role)
		sb.WriteByte('\t')
		sb.WriteString(strings.ReplaceAll(p.Text, "\n", `\n`))
		sb.WriteByte('\n')
	}
	return sb.String()
}

// LastConvo is the conversation of the last request after request number
// since whose API starts with api ("" for any) and that carries a scripted
// prompt: the client's main request of its latest turn, not a side request.
// It is nil when there is none.
func (s *Server) LastConvo(since int, api string) []Part {
	var best []Part
	for _, r := range s.Requests(since) {
		if r.Body == nil || !strings.HasPrefix(r.API, api) {
			continue
		}
		if c := r.Convo(); Scripted(c) {
			best = c
		}
	}
	return best
}

// PromptConvo is the conversation of the last request after request number
// since whose API starts with api and that has a user part whose text is
// prompt: the client's request for that prompt. LastConvo can pick a side
// request that quotes the prompt inside its own text instead (codex 0.171's
// title request: "Generate a concise, single-line task title ... User
// prompt:\n<prompt>"), which Codex's interactive session sends right after
// the turn's. It is nil when there is none.
func (s *Server) PromptConvo(since int, api, prompt string) []Part {
	var best []Part
	for _, r := range s.Requests(since) {
		if r.Body == nil || !strings.HasPrefix(r.API, api) {
			continue
		}
		c := r.Convo()
		for _, p := range c {
			if p.Role == "user" && strings.TrimSpace(p.Text) == prompt {
				best = c
				break
			}
		}
	}
	return best
}
