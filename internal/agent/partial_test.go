package agent_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
)

// Decode is Encode's inverse for every event type.
func TestDecodeRoundTrips(t *testing.T) {
	for _, ev := range []agent.Event{
		agent.MessageStart{MessageID: "m", ConversationID: "c", UserMessageID: "u", Model: "x"},
		agent.TextDelta{Content: "héllo <b>"},
		agent.ToolCallStart{ToolCallID: "t", ToolName: "lookup", Input: json.RawMessage(`{"q":"x"}`)},
		agent.ToolCallEnd{ToolCallID: "t", Summary: "s", ResultCount: 2, DurationMs: 3, Result: json.RawMessage(`{"success":true}`)},
		agent.ToolCallError{ToolCallID: "t", Error: "e", ErrorCode: "NETWORK", Retryable: true, WasRetried: true, DurationMs: 4},
		agent.ToolProgress{ToolCallID: "t", Message: "so far <b>", Done: 80, Total: 0},
		agent.MessageEnd{MessageID: "m", Usage: agent.Usage{InputTokens: 1, OutputTokens: 2, ContextTokens: 3}, StopReason: agent.StopError},
		agent.ErrorEvent{Code: "TURN_LOST", Message: "lost", Retryable: true},
	} {
		data, err := agent.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := agent.Decode(data)
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Errorf("Decode(%s) = %#v, %v; want %#v", data, got, err, ev)
		}
	}
	for _, bad := range []string{`{"type":"nope"}`, `{}`, `[`} {
		if ev, err := agent.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) = %#v, want an error", bad, ev)
		}
	}
}

// PartialAnswer lays the events out as the agent saves an answer: a
// response's text and calls, then their results in the calls' order; a
// call that never finished is left out.
func TestPartialAnswer(t *testing.T) {
	in := json.RawMessage(`{"q":"x"}`)
	ok := json.RawMessage(`{"success":true}`)
	got := agent.PartialAnswer([]agent.Event{
		agent.TextDelta{Content: "Let me "}, agent.TextDelta{Content: "look."},
		agent.ToolCallStart{ToolCallID: "a", ToolName: "lookup", Input: in},
		agent.ToolCallStart{ToolCallID: "b", ToolName: "flaky", Input: in},
		agent.ToolCallError{ToolCallID: "b", Error: "down", ErrorCode: "NETWORK", Retryable: true, WasRetried: true},
		agent.ToolCallEnd{ToolCallID: "a", Result: ok},
		agent.TextDelta{Content: "Found it."},
		agent.ToolCallStart{ToolCallID: "c", ToolName: "slow", Input: in},
		agent.ErrorEvent{Code: "X"},
	})
	want := []llm.Block{
		llm.Text("Let me look."),
		llm.ToolUse("a", "lookup", in), llm.ToolUse("b", "flaky", in),
		llm.ToolResult("a", ok, false),
		llm.ToolResult("b", json.RawMessage(`{"success":false,"error":"down","error_code":"NETWORK","retryable":true,"wasRetried":true,"durationMs":0}`), true),
		llm.Text("Found it."),
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := llm.MarshalBlocks(got)
		w, _ := llm.MarshalBlocks(want)
		t.Errorf("PartialAnswer =\n%s\nwant\n%s", g, w)
	}
	if got := agent.PartialAnswer(nil); got != nil {
		t.Errorf("PartialAnswer(nil) = %v, want nil", got)
	}
}
