package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
)

const openaiKey = "sk-proj-test-0123456789secret"

func newOpenAI(t *testing.T, url, key string) *llm.OpenAI {
	t.Helper()
	p, err := llm.NewOpenAI("gpt-4.1", llm.Options{APIKey: key, BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Ollama sends each tool call whole, in one chunk, and no usage chunk unless
// asked; the lines follow the shape of Ollama's /v1/chat/completions stream.
var ollamaStream = sseLines(
	`data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_a1","index":0,"type":"function","function":{"name":"run_command","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_b2","index":1,"type":"function","function":{"name":"run_command","arguments":"{\"command\":\"ls -l\"}"}}]},"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}`,
	`data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":150,"completion_tokens":40,"total_tokens":190}}`,
	`data: [DONE]`,
)

// vLLM's first tool delta names the function but has no "arguments" key.
var vllmStream = sseLines(
	`data: {"id":"chatcmpl-v1","object":"chat.completion.chunk","created":1744446075,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-v1","object":"chat.completion.chunk","created":1744446075,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-9f","type":"function","index":0,"function":{"name":"run_command"}}]},"logprobs":null,"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-v1","object":"chat.completion.chunk","created":1744446075,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\": \""}}]},"logprobs":null,"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-v1","object":"chat.completion.chunk","created":1744446075,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"pwd\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
	`data: {"id":"chatcmpl-v1","object":"chat.completion.chunk","created":1744446075,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`,
	`data: [DONE]`,
)

// Servers that number every call 0, send arguments as an object, send no id
// and finish with "stop" after tool calls.
var quirkyStream = sseLines(
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Checking. "},"finish_reason":null}]}`,
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"a","arguments":{"x":1}}}]},"finish_reason":null}]}`,
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_2","index":0,"type":"function","function":{"name":"b","arguments":""}}]},"finish_reason":null}]}`,
	`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"c","arguments":"{}"}}]},"finish_reason":"stop"}]}`,
	`data: [DONE]`,
)

func TestOpenAIReplaysStreams(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		wantText  string
		wantCalls []call
		wantIDs   []string
		wantUsage llm.Usage
		wantStop  llm.StopReason
	}{
		{"openai single (recorded)", readFixture(t, "openai/gpt-4.1.single-tool-call.sse"), "",
			[]call{{"getCurrentWeather", `{"location":"Boston, MA"}`}},
			[]string{"call_T01mmFw4HNv2Rve5UrLlT8Sa"}, llm.Usage{InputTokens: 82, OutputTokens: 17}, llm.StopToolUse},
		{"openai parallel (recorded)", readFixture(t, "openai/gpt-4.1.parallel-tool-calls.sse"), "",
			[]call{{"getCurrentWeather", `{"location": "Boston, MA"}`}, {"getCurrentTime", `{"location": "Boston, MA"}`}},
			[]string{"call_oStfjbrEyya6I2px3EzDuGVB", "call_YZ4lwwqnfF0SkJgYRUhpJnn4"}, llm.Usage{InputTokens: 121, OutputTokens: 50}, llm.StopToolUse},
		{"ollama whole calls", ollamaStream, "",
			[]call{{"run_command", `{"command":"ls"}`}, {"run_command", `{"command":"ls -l"}`}},
			[]string{"call_a1", "call_b2"}, llm.Usage{InputTokens: 150, OutputTokens: 40}, llm.StopToolUse},
		{"vllm first delta without arguments", vllmStream, "",
			[]call{{"run_command", `{"command": "pwd"}`}},
			[]string{"chatcmpl-tool-9f"}, llm.Usage{}, llm.StopToolUse},
		{"index reuse, object arguments, missing id, stop", quirkyStream, "Checking. ",
			[]call{{"a", `{"x":1}`}, {"b", `{}`}, {"c", `{}`}},
			[]string{"call_1", "call_2", ""}, llm.Usage{}, llm.StopToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := replayServer(t, http.StatusOK, sseHeader, tt.body)
			s, err := newOpenAI(t, srv.URL, openaiKey).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			var evs []llm.Event
			for s.Next() {
				evs = append(evs, s.Event())
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			llmtest.CheckOrder(t, evs)
			s2 := llm.NewStream(func() func() (llm.Event, error) {
				i := 0
				return func() (llm.Event, error) {
					if i == len(evs) {
						return llm.Event{}, errEOF
					}
					i++
					return evs[i-1], nil
				}
			}(), nil)
			r, err := llm.Collect(s2)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Message.Text(); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if !reflect.DeepEqual(calls(r), tt.wantCalls) {
				t.Errorf("calls = %v, want %v", calls(r), tt.wantCalls)
			}
			for i, c := range r.ToolCalls {
				if c.Index != i {
					t.Errorf("call %d has index %d", i, c.Index)
				}
				if want := tt.wantIDs[i]; want != "" && c.ID != want || want == "" && !strings.HasPrefix(c.ID, "call_") {
					t.Errorf("call %d id = %q, want %q", i, c.ID, want)
				}
			}
			if r.Usage != tt.wantUsage || r.StopReason != tt.wantStop {
				t.Errorf("usage %+v stop %q, want %+v %q", r.Usage, r.StopReason, tt.wantUsage, tt.wantStop)
			}
		})
	}
}

func TestOpenAIRequest(t *testing.T) {
	srv, got := replayServer(t, http.StatusOK, sseHeader, readFixture(t, "openai/gpt-4.1.single-tool-call.sse"))
	p := newOpenAI(t, srv.URL, openaiKey)
	s, err := p.Stream(t.Context(), llm.Request{System: "Be brief.", Messages: history, Tools: tipTools, MaxTokens: 512})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llmtest.Events(t, s); err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %s", got.path)
	}
	if a := got.header.Get("Authorization"); a != "Bearer "+openaiKey {
		t.Errorf("Authorization = %q", a)
	}
	body := got.json(t)
	want := map[string]any{
		"model":          "gpt-4.1",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     512.0, // not api.openai.com: the widely understood name
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "calculateTip", "description": "Calculate tip amount based on bill total and percentage",
				"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []any{"billAmount", "tipPercentage"},
					"properties": map[string]any{"billAmount": map[string]any{"type": "number", "description": "The total bill amount"},
						"tipPercentage": map[string]any{"type": "number", "description": "The tip percentage"}}}}},
			map[string]any{"type": "function", "function": map[string]any{"name": "getWaiterName", "description": "Get the name of the waiter",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
		},
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": "Calculate a 15% tip on a $50 bill"},
			map[string]any{"role": "assistant", "content": "Let me calculate.", "tool_calls": []any{
				map[string]any{"id": "toolu_1", "type": "function", "function": map[string]any{"name": "calculateTip", "arguments": `{"billAmount":50,"tipPercentage":15}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "toolu_1", "content": `{"success":true,"summary":"7.50","tip":7.5}`},
			map[string]any{"role": "assistant", "content": "The tip is $7.50."},
			map[string]any{"role": "user", "content": "And who is the waiter?"},
		},
	}
	if !reflect.DeepEqual(body, want) {
		gb, _ := json.MarshalIndent(body, "", " ")
		t.Errorf("request body:\n%s", gb)
	}
}

func TestOpenAIMessagesConversion(t *testing.T) {
	tests := []struct {
		name string
		in   []llm.Message
		want string
	}{
		{"tool results come before the user's text in the same message",
			[]llm.Message{
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("c1", "f", nil), llm.ToolUse("c2", "g", json.RawMessage(`{"q":"x"}`))}},
				{Role: llm.RoleUser, Content: []llm.Block{llm.Text("thanks"), llm.ToolResult("c2", json.RawMessage(`"two"`), false), llm.ToolResult("c1", json.RawMessage(`{"n":1}`), true)}},
			},
			`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{\"q\":\"x\"}"}}]},
			  {"role":"tool","tool_call_id":"c2","content":"two"},{"role":"tool","tool_call_id":"c1","content":"{\"n\":1}"},{"role":"user","content":"thanks"}]`},
		{"unanswered calls and orphan results are dropped",
			[]llm.Message{
				llm.UserText("a"),
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("calling"), llm.ToolUse("lost", "f", nil)}},
				{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("nobody", json.RawMessage(`1`), false), llm.Text("b")}},
			},
			`[{"role":"user","content":"a"},{"role":"assistant","content":"calling"},{"role":"user","content":"b"}]`},
		{"several text blocks are joined",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("one"), llm.Text("two")}}},
			`[{"role":"user","content":"one\n\ntwo"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(llm.OpenAIMessages(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, string(got), tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestOpenAIOfficialAPIUsesMaxCompletionTokens(t *testing.T) {
	// The official base URL is the default; the request is redirected to the
	// test server by the HTTP client, so nothing leaves the machine.
	srv, got := replayServer(t, http.StatusOK, sseHeader, readFixture(t, "openai/gpt-4.1.single-tool-call.sse"))
	p, err := llm.NewOpenAI("gpt-4.1", llm.Options{APIKey: openaiKey, HTTPClient: redirectTo(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llmtest.Events(t, s); err != nil {
		t.Fatal(err)
	}
	body := got.json(t)
	if body["max_completion_tokens"] != 100.0 || body["max_tokens"] != nil {
		t.Errorf("max_completion_tokens = %v, max_tokens = %v", body["max_completion_tokens"], body["max_tokens"])
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %s", got.path)
	}
}

func TestOpenAILocalServerWithoutKey(t *testing.T) {
	srv, got := replayServer(t, http.StatusOK, sseHeader, ollamaStream)
	p := newOpenAI(t, srv.URL, "")
	s, err := p.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llmtest.Events(t, s); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q, want none", a)
	}
}

func TestNewOpenAINeedsKeyOrBaseURL(t *testing.T) {
	_, err := llm.NewOpenAI("gpt-4.1", llm.Options{})
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeNotConfigured {
		t.Fatalf("err = %v, want not_configured", err)
	}
}
