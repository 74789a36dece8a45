package mockllm

import (
	"net/http"
	"strings"
)

// anthropicTexts joins the text blocks of a message's content (a string or
// an array of blocks).
func anthropicTexts(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	var out []string
	for _, b := range arr(content) {
		if m := obj(b); m != nil && str(m["type"]) == "text" {
			out = append(out, str(m["text"]))
		}
	}
	return strings.Join(out, "\n")
}

// anthropicPlan is the step a Messages request asks for.
func anthropicPlan(body map[string]any) Step {
	msgs := arr(body["messages"])
	if len(arr(body["tools"])) == 0 {
		return Step{"say", "ok"}
	}
	idx := -1
	var steps []Step
	for i := len(msgs) - 1; i >= 0; i-- {
		m := obj(msgs[i])
		if str(m["role"]) != "user" {
			continue
		}
		if s := ParseScript(anthropicTexts(m["content"])); s != nil {
			idx, steps = i, s
			break
		}
	}
	if steps == nil {
		return Step{"say", "ok"}
	}
	done := 0
	for _, mv := range msgs[idx+1:] {
		m := obj(mv)
		if str(m["role"]) != "assistant" {
			continue
		}
		for _, b := range arr(m["content"]) {
			if str(obj(b)["type"]) == "tool_use" {
				done++
			}
		}
	}
	return next(steps, done)
}

func anthropicBlocks(st Step) ([]map[string]any, string) {
	tool := func(name string, input map[string]any) ([]map[string]any, string) {
		return []map[string]any{{"type": "tool_use", "id": newID("toolu_", 24), "name": name, "input": input}}, "tool_use"
	}
	switch st.Verb {
	case "write":
		path, content, _ := strings.Cut(st.Rest, " ")
		if content == "" {
			content = "written by the Write tool"
		}
		return tool("Write", map[string]any{"file_path": path, "content": content + "\n"})
	case "edit":
		path, old, repl := editArgs(st.Rest)
		return tool("Edit", map[string]any{"file_path": path, "old_string": old, "new_string": repl, "replace_all": false})
	case "bash":
		return tool("Bash", map[string]any{"command": st.Rest, "description": "run a command"})
	}
	return []map[string]any{{"type": "text", "text": orDone(st.Rest)}}, "end_turn"
}

func anthropicRespond(w http.ResponseWriter, body map[string]any) {
	st := anthropicPlan(body)
	if st.Verb == "fail" {
		sendJSON(w, failStatus(st.Rest), map[string]any{"type": "error", "error": map[string]any{
			"type": "invalid_request_error", "message": "mockllm: scripted failure"}})
		return
	}
	blocks, stop := anthropicBlocks(st)
	model := str(body["model"])
	if model == "" {
		model = "mock"
	}
	id := newID("msg_", 24)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if stream, _ := body["stream"].(bool); !stream {
		sendJSON(w, 200, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	start := map[string]any{}
	for k, v := range usage {
		start[k] = v
	}
	start["output_tokens"] = 1
	evs := []sseEvent{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start}}}}
	for i, b := range blocks {
		if b["type"] == "text" {
			evs = append(evs,
				sseEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i,
					"content_block": map[string]any{"type": "text", "text": ""}}},
				sseEvent{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": b["text"]}}})
		} else {
			in := mustJSON(b["input"])
			evs = append(evs,
				sseEvent{"content_block_start", map[string]any{"type": "content_block_start", "index": i,
					"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}}},
				sseEvent{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": in}}})
		}
		evs = append(evs, sseEvent{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
	}
	evs = append(evs,
		sseEvent{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}}},
		sseEvent{"message_stop", map[string]any{"type": "message_stop"}})
	sendSSE(w, evs, true, false)
}
