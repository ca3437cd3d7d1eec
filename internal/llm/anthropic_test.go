package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
)

const testKey = "sk-ant-test-0123456789secret"

func newAnthropic(t *testing.T, url string) *llm.Anthropic {
	t.Helper()
	p, err := llm.NewAnthropic("claude-sonnet-4-5", llm.Options{APIKey: testKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// history is a conversation with a completed tool round trip, then a new
// question: it exercises every block type in both directions.
var history = []llm.Message{
	llm.UserText("Calculate a 15% tip on a $50 bill"),
	{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text("Let me calculate."),
		llm.ToolUse("toolu_1", "calculateTip", json.RawMessage(`{"billAmount":50,"tipPercentage":15}`)),
	}},
	{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult("toolu_1", json.RawMessage(`{"success":true,"summary":"7.50","tip":7.5}`), false),
	}},
	{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("The tip is $7.50.")}},
	llm.UserText("And who is the waiter?"),
}

var tipTools = []llm.ToolDef{
	{Name: "calculateTip", Description: "Calculate tip amount based on bill total and percentage",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"billAmount":{"type":"number","description":"The total bill amount"},"tipPercentage":{"type":"number","description":"The tip percentage"}},"required":["billAmount","tipPercentage"],"additionalProperties":false}`)},
	{Name: "getWaiterName", Description: "Get the name of the waiter",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
}

func TestAnthropicReplaysRecordedStream(t *testing.T) {
	srv, got := replayServer(t, http.StatusOK, sseHeader, readFixture(t, "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse"))
	p := newAnthropic(t, srv.URL)

	s, err := p.Stream(t.Context(), llm.Request{System: "You are a waiter's assistant.", Messages: history, Tools: tipTools, MaxTokens: 2048})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := llmtest.Events(t, s)
	if err != nil {
		t.Fatal(err)
	}
	llmtest.CheckOrder(t, evs)

	var text string
	var starts []llm.ToolCall
	var done []llm.ToolCall
	var usage llm.Usage
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventTextDelta:
			text += ev.Text
		case llm.EventToolCallStart:
			starts = append(starts, ev.ToolCall)
		case llm.EventToolCall:
			done = append(done, ev.ToolCall)
		case llm.EventUsage:
			usage = ev.Usage
		}
	}
	if want := "I'll calculate the tip and get the waiter's name for you."; text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
	wantCalls := []llm.ToolCall{
		{Index: 0, ID: "toolu_01VsaoaKxpzdz8vgY4hTGjE3", Name: "calculateTip", Input: json.RawMessage(`{"billAmount": 50, "tipPercentage": 15}`)},
		{Index: 1, ID: "toolu_01Uksi8drJHeC8rCj8yVUtCJ", Name: "getWaiterName", Input: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(done, wantCalls) {
		t.Errorf("tool calls =\n%+v\nwant\n%+v", done, wantCalls)
	}
	for i, s := range starts {
		if s.ID != wantCalls[i].ID || s.Name != wantCalls[i].Name || s.Index != i || s.Input != nil {
			t.Errorf("start %d = %+v", i, s)
		}
	}
	if usage != (llm.Usage{InputTokens: 679, OutputTokens: 111}) {
		t.Errorf("usage = %+v", usage)
	}
	if last := evs[len(evs)-1]; last.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q", last.StopReason)
	}

	// The request, as the API receives it.
	if got.method != "POST" || got.path != "/v1/messages" {
		t.Errorf("request %s %s, want POST /v1/messages", got.method, got.path)
	}
	if k := got.header.Get("X-Api-Key"); k != testKey {
		t.Errorf("x-api-key = %q", k)
	}
	body := got.json(t)
	want := map[string]any{
		"model":      "claude-sonnet-4-5",
		"max_tokens": 2048.0,
		"stream":     true,
		"system":     []any{map[string]any{"type": "text", "text": "You are a waiter's assistant."}},
		"tools": []any{
			map[string]any{"name": "calculateTip", "description": "Calculate tip amount based on bill total and percentage",
				"input_schema": map[string]any{"type": "object", "additionalProperties": false, "required": []any{"billAmount", "tipPercentage"},
					"properties": map[string]any{"billAmount": map[string]any{"type": "number", "description": "The total bill amount"},
						"tipPercentage": map[string]any{"type": "number", "description": "The tip percentage"}}}},
			map[string]any{"name": "getWaiterName", "description": "Get the name of the waiter",
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
		},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Calculate a 15% tip on a $50 bill"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Let me calculate."},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": "calculateTip", "input": map[string]any{"billAmount": 50.0, "tipPercentage": 15.0}},
			}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": false,
				"content": []any{map[string]any{"type": "text", "text": `{"success":true,"summary":"7.50","tip":7.5}`}}}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "The tip is $7.50."}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "And who is the waiter?"}}},
		},
	}
	if !reflect.DeepEqual(body, want) {
		gb, _ := json.MarshalIndent(body, "", " ")
		t.Errorf("request body:\n%s", gb)
	}
}

func TestAnthropicRequestOptions(t *testing.T) {
	tests := []struct {
		name  string
		req   llm.Request
		check func(t *testing.T, body map[string]any)
	}{
		{"tool choice none keeps the definitions",
			llm.Request{Messages: history, Tools: tipTools, ToolChoice: llm.ToolChoiceNone},
			func(t *testing.T, body map[string]any) {
				if !reflect.DeepEqual(body["tool_choice"], map[string]any{"type": "none"}) {
					t.Errorf("tool_choice = %v", body["tool_choice"])
				}
				if tools, _ := body["tools"].([]any); len(tools) != 2 {
					t.Errorf("tools = %v", body["tools"])
				}
			}},
		{"defaults: max tokens, no system, no tool choice",
			llm.Request{Messages: []llm.Message{llm.UserText("hi")}},
			func(t *testing.T, body map[string]any) {
				if body["max_tokens"] != float64(llm.DefaultMaxTokens) {
					t.Errorf("max_tokens = %v", body["max_tokens"])
				}
				for _, k := range []string{"system", "tool_choice", "tools"} {
					if _, ok := body[k]; ok {
						t.Errorf("%s sent: %v", k, body[k])
					}
				}
			}},
		{"unanswered tool calls and empty text are left out",
			llm.Request{Messages: []llm.Message{
				llm.UserText("hi"),
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(""), llm.ToolUse("toolu_lost", "getWaiterName", nil)}},
				llm.UserText("hello?"),
			}},
			func(t *testing.T, body map[string]any) {
				msgs := body["messages"].([]any)
				if len(msgs) != 2 {
					t.Errorf("messages = %v, want the two user texts", msgs)
				}
			}},
		{"an error result is marked and a string result sent as text",
			llm.Request{Messages: []llm.Message{
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t1", "getWaiterName", nil)}},
				{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", json.RawMessage(`"no waiter on duty"`), true)}},
			}},
			func(t *testing.T, body map[string]any) {
				msgs := body["messages"].([]any)
				res := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
				want := map[string]any{"type": "tool_result", "tool_use_id": "t1", "is_error": true,
					"content": []any{map[string]any{"type": "text", "text": "no waiter on duty"}}}
				if !reflect.DeepEqual(res, want) {
					t.Errorf("tool_result = %v", res)
				}
				use := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)
				if !reflect.DeepEqual(use["input"], map[string]any{}) {
					t.Errorf("nil input sent as %v, want {}", use["input"])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := replayServer(t, http.StatusOK, sseHeader, readFixture(t, "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse"))
			s, err := newAnthropic(t, srv.URL).Stream(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := llmtest.Events(t, s); err != nil {
				t.Fatal(err)
			}
			tt.check(t, got.json(t))
		})
	}
}

func TestAnthropicStreamEdgeCases(t *testing.T) {
	start := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}

`
	stop := `event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`
	tests := []struct {
		name      string
		body      string
		wantText  string
		wantCode  llm.Code
		retryable bool
		wantStop  llm.StopReason
	}{
		{"max tokens", start + stop, "Hel", "", false, llm.StopMaxTokens},
		{"error event mid-stream", start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			"Hel", llm.CodeOverloaded, true, ""},
		{"malformed event mid-stream", start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"ty\n\n",
			"Hel", llm.CodeBadResponse, false, ""},
		{"stream ends without message_stop", start, "Hel", llm.CodeNetwork, true, ""},
		{"tool input that is not an object", start + `event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"f","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

`, "Hel", llm.CodeBadResponse, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := replayServer(t, http.StatusOK, sseHeader, []byte(tt.body))
			s, err := newAnthropic(t, srv.URL).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := llm.Collect(s)
			if got := r.Message.Text(); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.StopReason != tt.wantStop || r.Usage != (llm.Usage{InputTokens: 10, OutputTokens: 3}) {
					t.Errorf("stop %q usage %+v", r.StopReason, r.Usage)
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if e.Code != tt.wantCode || e.Retryable != tt.retryable {
				t.Errorf("err = %+v, want code %s retryable %v", e, tt.wantCode, tt.retryable)
			}
		})
	}
}

func TestNewAnthropicNeedsKey(t *testing.T) {
	_, err := llm.NewAnthropic("claude-sonnet-4-5", llm.Options{})
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeNotConfigured {
		t.Fatalf("err = %v, want not_configured", err)
	}
}

func TestAnthropicCanceledBeforeStart(t *testing.T) {
	srv, _ := replayServer(t, http.StatusOK, sseHeader, readFixture(t, "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := newAnthropic(t, srv.URL).Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeCanceled || e.Retryable {
		t.Fatalf("err = %v, want canceled", err)
	}
}
