package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/agent"
)

// TestEncodeSameAsMarshal: Encode gives json.Marshal's bytes for every
// event, and a tool result is written as json.Marshal writes a
// json.RawMessage (compacted, HTML characters escaped) or as {} when it is
// not JSON.
func TestEncodeSameAsMarshal(t *testing.T) {
	results := map[string]string{
		"compact":         `{"tracks":[{"title":"a"}],"count":1}`,
		"spaced":          "{ \"tracks\" : [ 1, 2 ] ,\n \"q\": \"x y\" }",
		"html characters": `{"text":"<b>rock & roll</b>"}`,
		"line separators": "{\"text\":\"a\u2028b\u2029c\"}",
		"escapes kept":    `{"text":"\u00e9\n\"q\""}`,
		"empty":           ``,
		"not json":        `{"tracks":[`,
		"not an object":   `[1,2]`,
	}
	for name, result := range results {
		t.Run(name, func(t *testing.T) {
			ev := agent.ToolCallEnd{ToolCallID: "call_1", Summary: "2 <tracks>", ResultCount: 2, DurationMs: 7, Result: json.RawMessage(result)}
			checkEncode(t, ev)
			// The wire form as a struct with a json.RawMessage encodes it.
			raw := json.RawMessage(result)
			if len(raw) == 0 || !json.Valid(raw) {
				raw = json.RawMessage(`{}`)
			}
			want, err := json.Marshal(struct {
				Type        string          `json:"type"`
				ToolCallID  string          `json:"toolCallId"`
				Summary     string          `json:"summary"`
				ResultCount int             `json:"resultCount"`
				DurationMs  int64           `json:"durationMs"`
				Result      json.RawMessage `json:"result"`
			}{"tool_call_end", ev.ToolCallID, ev.Summary, ev.ResultCount, ev.DurationMs, raw})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := agent.Encode(ev); string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	for _, ev := range []agent.Event{
		agent.MessageStart{MessageID: "m", ConversationID: "c", UserMessageID: "u", Model: "x"},
		agent.TextDelta{Content: "a <b> & c"},
		agent.ToolCallStart{ToolCallID: "c1", ToolName: "t", Input: json.RawMessage(`{"q": 1}`)},
		agent.ToolCallError{ToolCallID: "c1", Error: "e", ErrorCode: "X", Retryable: true},
		agent.MessageEnd{MessageID: "m", StopReason: agent.StopEndTurn},
		agent.ErrorEvent{Code: "E", Message: "m"},
	} {
		checkEncode(t, ev)
	}
}

func checkEncode(t *testing.T, ev agent.Event) {
	t.Helper()
	want, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := agent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%T:\n got %s\nwant %s", ev, got, want)
	}
}
