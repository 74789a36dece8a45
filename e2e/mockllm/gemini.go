package mockllm

import (
	"net/http"
	"strings"
)

func geminiPlan(body map[string]any) Step {
	contents := arr(body["contents"])
	fns := 0
	for _, tv := range arr(body["tools"]) {
		t := obj(tv)
		fns += len(arr(t["functionDeclarations"])) + len(arr(t["function_declarations"]))
	}
	if fns == 0 {
		return Step{"say", "ok"}
	}
	for i := len(contents) - 1; i >= 0; i-- {
		c := obj(contents[i])
		if role := str(c["role"]); role != "" && role != "user" {
			continue
		}
		var texts []string
		for _, p := range arr(c["parts"]) {
			texts = append(texts, str(obj(p)["text"]))
		}
		steps := ParseScript(strings.Join(texts, "\n"))
		if steps == nil {
			continue
		}
		done := 0
		for _, cv := range contents[i+1:] {
			m := obj(cv)
			if str(m["role"]) != "model" {
				continue
			}
			for _, p := range arr(m["parts"]) {
				if _, ok := obj(p)["functionCall"]; ok {
					done++
				}
			}
		}
		return next(steps, done)
	}
	return Step{"say", "ok"}
}

// schemaValue is a value that satisfies a (Gemini-style) JSON schema, for
// side requests that want JSON (Gemini CLI's model router, its next-speaker
// check).
func schemaValue(s map[string]any) any {
	t := strings.ToLower(str(s["type"]))
	if t == "" {
		t = "object"
	}
	switch t {
	case "object":
		out := map[string]any{}
		for k, v := range obj(s["properties"]) {
			out[k] = schemaValue(obj(v))
		}
		return out
	case "array":
		return []any{}
	case "integer":
		return 10
	case "number":
		return 1
	case "boolean":
		return false
	}
	if e := arr(s["enum"]); len(e) > 0 {
		return e[0]
	}
	return "mock"
}

func geminiChunk(part map[string]any) map[string]any {
	return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
		"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "mock", "responseId": newID("", 16)}
}

func geminiRespond(w http.ResponseWriter, body map[string]any, stream bool) {
	send := func(chunk map[string]any) {
		if stream {
			sendSSE(w, []sseEvent{{"", chunk}}, false, false)
		} else {
			sendJSON(w, 200, chunk)
		}
	}
	gc := obj(body["generationConfig"])
	if str(gc["responseMimeType"]) == "application/json" {
		schema := obj(gc["responseJsonSchema"])
		if schema == nil {
			schema = obj(gc["responseSchema"])
		}
		send(geminiChunk(map[string]any{"text": mustJSON(schemaValue(schema))}))
		return
	}
	st := geminiPlan(body)
	var part map[string]any
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"functionCall": map[string]any{"name": name, "args": args}}
	}
	switch st.Verb {
	case "fail":
		code := failStatus(st.Rest)
		sendJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": "mockllm: scripted failure", "status": "INVALID_ARGUMENT"}})
		return
	case "write":
		path, content, _ := strings.Cut(st.Rest, " ")
		if content == "" {
			content = "written by write_file"
		}
		part = call("write_file", map[string]any{"file_path": path, "content": content + "\n"})
	case "edit":
		path, old, repl := editArgs(st.Rest)
		part = call("replace", map[string]any{"file_path": path, "old_string": old, "new_string": repl, "instruction": "replace a word"})
	case "bash":
		part = call("run_shell_command", map[string]any{"command": st.Rest, "description": "run"})
	default:
		part = map[string]any{"text": orDone(st.Rest)}
	}
	send(geminiChunk(part))
}
