package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// TestToolResultTextIsStoredBesideTheJSON: a tool_result's text form (what
// the model reads) survives storage next to its JSON (what the page's cards
// read), and a block without one stores as before.
func TestToolResultTextIsStoredBesideTheJSON(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"with text", "3 results\n1. [Go](https://go.dev)", `{"type":"tool_result","tool_use_id":"t1","content":{"count":3},"text":"3 results\n1. [Go](https://go.dev)"}`},
		{"without", "", `{"type":"tool_result","tool_use_id":"t1","content":{"count":3}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := llm.ToolResult("t1", json.RawMessage(`{"count":3}`), false)
			b.Text = tc.text
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.want {
				t.Errorf("stored as %s, want %s", raw, tc.want)
			}
			var back llm.Block
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back.Text != tc.text || string(back.Content) != `{"count":3}` {
				t.Errorf("decoded text %q content %s", back.Text, back.Content)
			}
		})
	}
}
