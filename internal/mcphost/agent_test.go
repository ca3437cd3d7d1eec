package mcphost_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/tool"
)

// The chat agent calls an attached server's tools like its own, and asks
// before one that is not read-only runs.
func TestAgentUsesAttachedToolsAndAsksBeforeWrites(t *testing.T) {
	ts := toolportServer(t, "agent-token-1234")
	reg := tool.NewRegistry()
	attach(t, reg, []mcphost.Server{{Name: "tp", URL: ts.URL, Token: "agent-token-1234"}}, mcphost.Options{})
	db, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "toolport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conv, err := db.CreateConversation(t.Context(), store.Conversation{})
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewScripted(
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{
			llmtest.ScriptToolCall("read", "tp__echo", `{"text":"hi"}`),
			llmtest.ScriptToolCall("write", "tp__post", `{"text":"to the world"}`),
		}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Posted.")}},
	)
	a, err := agent.New(agent.Config{Store: db, Registry: reg, Provider: model})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	var approval agent.ApprovalRequired
	emit := func(ev agent.Event) {
		events = append(events, string(ev.EventType()))
		if ar, ok := ev.(agent.ApprovalRequired); ok {
			approval = ar
		}
	}
	if err := a.Turn(t.Context(), store.Fence{}, conv.ID, "post hi", emit); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, ","); got != "message_start,tool_call_start,tool_call_end,approval_required,message_end" {
		t.Fatalf("events = %s", got)
	}
	if approval.Tool != "tp__post" || !strings.Contains(approval.What, "on your behalf") {
		t.Fatalf("approval = %+v", approval)
	}
	events = nil
	if err := a.Approve(t.Context(), store.Fence{}, conv.ID, []agent.ToolDecision{{ToolUseID: "write", Decision: agent.AllowOnce}}, emit); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, ","); got != "message_start,tool_call_start,tool_call_end,text_delta,message_end" {
		t.Fatalf("events after approval = %s", got)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Messages
	var result map[string]any
	if err := json.Unmarshal(last[len(last)-1].Content[1].Content, &result); err != nil || result["server"] != "tp" ||
		result["structuredContent"].(map[string]any)["echo"] != "to the world" {
		t.Fatalf("the model got %s (%v)", last[len(last)-1].Content[1].Content, err)
	}
}
