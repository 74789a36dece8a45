package mockllm

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ---------------------------------------------------------------- Responses

func responsesItemText(item map[string]any) string {
	if s, ok := item["content"].(string); ok {
		return s
	}
	var out []string
	for _, p := range arr(item["content"]) {
		m := obj(p)
		switch str(m["type"]) {
		case "input_text", "output_text", "text":
			out = append(out, str(m["text"]))
		}
	}
	return strings.Join(out, "\n")
}

// responsesTools maps each offered tool's name (or type) to its object.
func responsesTools(body map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, tv := range arr(body["tools"]) {
		t := obj(tv)
		if t == nil {
			continue
		}
		name := str(t["name"])
		if name == "" {
			name = str(obj(t["function"])["name"])
		}
		if name == "" {
			name = str(t["type"])
		}
		out[name] = t
	}
	return out
}

func responsesInput(body map[string]any) []any {
	if s, ok := body["input"].(string); ok {
		return []any{map[string]any{"type": "message", "role": "user", "content": s}}
	}
	return arr(body["input"])
}

func responsesPlan(body map[string]any) Step {
	items := responsesInput(body)
	if len(arr(body["tools"])) == 0 {
		return Step{"say", "ok"}
	}
	idx := -1
	var steps []Step
	for i := len(items) - 1; i >= 0; i-- {
		it := obj(items[i])
		ty := str(it["type"])
		if ty == "" {
			ty = "message"
		}
		if str(it["role"]) == "user" && ty == "message" {
			if s := ParseScript(responsesItemText(it)); s != nil {
				idx, steps = i, s
				break
			}
		}
	}
	if steps == nil {
		return Step{"say", "ok"}
	}
	done := 0
	for _, iv := range items[idx+1:] {
		switch str(obj(iv)["type"]) {
		case "function_call", "custom_tool_call", "local_shell_call":
			done++
		}
	}
	return next(steps, done)
}

// applyPatch is the apply_patch text of a write or edit step.
func applyPatch(st Step, emptyContent string) string {
	if st.Verb == "write" {
		path, content, _ := strings.Cut(st.Rest, " ")
		if content == "" {
			content = emptyContent
		}
		return fmt.Sprintf("*** Begin Patch\n*** Add File: %s\n+%s\n*** End Patch\n", path, content)
	}
	path, old, repl := editArgs(st.Rest)
	return fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** End Patch\n", path, old, repl)
}

func responsesItem(st Step, tools map[string]map[string]any) map[string]any {
	cid := newID("call_", 24)
	fn := func(name string, args any) map[string]any {
		return map[string]any{"type": "function_call", "id": "fc_" + cid, "status": "completed", "call_id": cid,
			"name": name, "arguments": mustJSON(args)}
	}
	verb, rest := st.Verb, st.Rest
	if verb == "write" || verb == "edit" {
		patch := applyPatch(st, "written by apply_patch")
		if t, ok := tools["apply_patch"]; ok {
			if str(t["type"]) == "custom" {
				return map[string]any{"type": "custom_tool_call", "id": "ctc_" + cid, "status": "completed",
					"call_id": cid, "name": "apply_patch", "input": patch}
			}
			return fn("apply_patch", map[string]any{"input": patch})
		}
		// No apply_patch tool: the shell, with the apply_patch command.
		verb, rest = "bash", "apply_patch <<'EOF'\n"+patch+"EOF"
	}
	if verb == "bash" {
		switch {
		case tools["exec_command"] != nil:
			return fn("exec_command", map[string]any{"cmd": rest})
		case tools["shell_command"] != nil:
			return fn("shell_command", map[string]any{"command": rest})
		case tools["shell"] != nil:
			return fn("shell", map[string]any{"command": []string{"bash", "-lc", rest}})
		case tools["local_shell"] != nil:
			return map[string]any{"type": "local_shell_call", "id": "lsc_" + cid, "call_id": cid, "status": "completed",
				"action": map[string]any{"type": "exec", "command": []string{"bash", "-lc", rest}}}
		}
		var names []string
		for n := range tools {
			names = append(names, n)
		}
		rest = "no shell tool offered: " + strings.Join(names, ",")
	}
	return map[string]any{"type": "message", "role": "assistant", "id": "msg_" + cid, "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": orDone(rest), "annotations": []any{}}}}
}

func responsesRespond(w http.ResponseWriter, body map[string]any) {
	st := responsesPlan(body)
	if st.Verb == "fail" {
		sendJSON(w, failStatus(st.Rest), map[string]any{"error": map[string]any{"type": "invalid_request_error",
			"code": "mock_failure", "message": "mockllm: scripted failure"}})
		return
	}
	item := responsesItem(st, responsesTools(body))
	model := str(body["model"])
	if model == "" {
		model = "mock"
	}
	base := func(status string, output []any) map[string]any {
		return map[string]any{"id": "resp_" + str(item["call_id"]) + str(item["id"]), "object": "response",
			"created_at": time.Now().Unix(), "model": model, "status": status, "output": output}
	}
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
	done := base("completed", []any{item})
	done["usage"] = usage
	if stream, ok := body["stream"].(bool); ok && !stream {
		sendJSON(w, 200, done)
		return
	}
	evs := []sseEvent{
		{"response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": base("in_progress", []any{})}},
		{"response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": base("in_progress", []any{})}},
		{"response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": item}},
	}
	n := 3
	if item["type"] == "message" {
		text := str(obj(arr(item["content"])[0])["text"])
		evs = append(evs, sseEvent{"response.output_text.delta", map[string]any{"type": "response.output_text.delta",
			"sequence_number": n, "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text}})
		n++
	}
	evs = append(evs,
		sseEvent{"response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": n, "output_index": 0, "item": item}},
		sseEvent{"response.completed", map[string]any{"type": "response.completed", "sequence_number": n + 1, "response": done}})
	sendSSE(w, evs, true, false)
}

// ---------------------------------------------------------------- Chat Completions

func chatText(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	var out []string
	for _, p := range arr(content) {
		out = append(out, str(obj(p)["text"]))
	}
	return strings.Join(out, "\n")
}

func chatRespond(w http.ResponseWriter, body map[string]any) {
	msgs := arr(body["messages"])
	st := Step{"say", "ok"}
	if len(arr(body["tools"])) > 0 {
		for i := len(msgs) - 1; i >= 0; i-- {
			m := obj(msgs[i])
			if str(m["role"]) != "user" {
				continue
			}
			if steps := ParseScript(chatText(m["content"])); steps != nil {
				done := 0
				for _, mv := range msgs[i+1:] {
					if a := obj(mv); str(a["role"]) == "assistant" {
						done += len(arr(a["tool_calls"]))
					}
				}
				st = next(steps, done)
				break
			}
		}
	}
	delta, finish := map[string]any{"role": "assistant", "content": orDone(st.Rest)}, "stop"
	if st.Verb == "write" || st.Verb == "bash" {
		name, args := "shell", any(map[string]any{"command": []string{"bash", "-lc", st.Rest}})
		if st.Verb == "write" {
			name, args = "apply_patch", map[string]any{"input": applyPatch(st, "written")}
		}
		delta = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0,
			"id": newID("call_", 20), "type": "function", "function": map[string]any{"name": name, "arguments": mustJSON(args)}}}}
		finish = "tool_calls"
	}
	id := newID("chatcmpl-", 20)
	chunk := func(delta map[string]any, finish any) sseEvent {
		return sseEvent{"", map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "mock",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}}
	}
	sendSSE(w, []sseEvent{chunk(delta, nil), chunk(map[string]any{}, finish)}, false, true)
}
