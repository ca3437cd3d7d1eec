package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
)

// FuzzHistory feeds stored message contents (untrusted: written by earlier
// versions, edited by hand, or cut short) to History: it must not panic, and
// what it returns must alternate roles with no empty message.
func FuzzHistory(f *testing.F) {
	f.Add([]byte(`[{"type":"text","text":"hi"}]`), []byte(`[{"type":"text","text":"a"},{"type":"tool_use","id":"1","name":"t","input":{}},{"type":"tool_result","tool_use_id":"1","content":{"success":true}},{"type":"text","text":"b"}]`))
	f.Add([]byte(`[]`), []byte(`[{"type":"tool_result","tool_use_id":"x","content":null,"is_error":true}]`))
	f.Add([]byte(`"plain"`), []byte(`[{"type":"image"}]`))
	f.Fuzz(func(t *testing.T, user, assistant []byte) {
		msgs := []store.Message{
			{Role: store.RoleUser, Content: json.RawMessage(user)},
			{Role: store.RoleAssistant, Content: json.RawMessage(assistant)},
			{Role: store.RoleUser, Content: json.RawMessage(user)},
		}
		out, _ := agent.History(msgs)
		for i, m := range out {
			if len(m.Content) == 0 {
				t.Fatalf("message %d is empty", i)
			}
			if i > 0 && out[i-1].Role == m.Role {
				t.Fatalf("messages %d and %d have the same role %s", i-1, i, m.Role)
			}
			if m.Role == llm.RoleAssistant {
				for _, b := range m.Content {
					if b.Type == llm.BlockToolResult {
						t.Fatalf("a tool_result in an assistant message")
					}
				}
			}
		}
	})
}
