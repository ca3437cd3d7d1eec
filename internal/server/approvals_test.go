package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/tool"
)

// A call of a tool acting for the user stops the turn; the decision,
// posted to another replica, resumes it there.
func TestApprovalOverHTTPAcrossReplicas(t *testing.T) {
	reg := testRegistry(t)
	var saves atomic.Int32
	if err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "saveToAccount", Title: "Save to your account",
		Description: "Saves to the user's account.", Pack: "test", Annotations: tool.Annotations{UserAccount: true}},
		func(ctx context.Context, in queryIn) (itemsOut, error) {
			saves.Add(1)
			return itemsOut{Items: []string{"saved " + in.Query}}, nil
		}))); err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewScripted(
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("c1", "saveToAccount", `{"query":"jazz"}`)}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Saved.")}},
	)
	one := newEnv(t, envOptions{reg: reg, agent: agent.Config{Provider: model}})
	two := newEnv(t, envOptions{reg: reg, agent: agent.Config{Provider: model}, db: one.db, model: one.model})
	conv := one.newConversation(t)

	s := one.chat(t, t.Context(), conv, "save my jazz list", nil)
	if ev := s.first("approval_required"); ev == nil || ev["toolUseId"] != "c1" || ev["tool"] != "saveToAccount" {
		t.Fatalf("events: %v", s.types())
	}
	if end := s.first("message_end"); end["stopReason"] != agent.StopApprovalRequired {
		t.Fatalf("message_end = %v", end)
	}
	if saves.Load() != 0 {
		t.Fatal("the tool ran before it was approved")
	}

	// A reload on the other replica shows the waiting call.
	code, body := two.do(t, "GET", "/api/conversations/"+conv+"/approvals", "")
	var pending struct {
		Approvals []map[string]any `json:"approvals"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &pending) != nil || len(pending.Approvals) != 1 ||
		pending.Approvals[0]["toolUseId"] != "c1" || pending.Approvals[0]["type"] != "approval_required" {
		t.Fatalf("GET approvals: %d %s", code, body)
	}

	tests := []struct {
		name, body string
		want       int
	}{
		{"no decisions", `{"decisions":[]}`, http.StatusBadRequest},
		{"another call", `{"decisions":[{"toolUseId":"zz","decision":"allow_once"}]}`, http.StatusBadRequest},
		{"unknown decision", `{"decisions":[{"toolUseId":"c1","decision":"perhaps"}]}`, http.StatusBadRequest},
		{"unknown field", `{"decisions":[],"x":1}`, http.StatusBadRequest},
	}
	for _, tc := range tests {
		if code, body := two.do(t, "POST", "/api/conversations/"+conv+"/approvals", tc.body); code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, code, body, tc.want)
		}
	}

	s = two.streamRequest(t, t.Context(), "POST", "/api/conversations/"+conv+"/approvals",
		`{"decisions":[{"toolUseId":"c1","decision":"allow_once"}]}`, nil)
	if got := strings.Join(s.types(), ","); got != "message_start,tool_call_start,tool_call_end,text_delta,message_end" {
		t.Fatalf("resumed turn: %d %s %s", s.status, got, s.raw)
	}
	if saves.Load() != 1 {
		t.Fatalf("the approved tool ran %d times", saves.Load())
	}
	if code, body := one.do(t, "POST", "/api/conversations/"+conv+"/approvals", `{"decisions":[{"toolUseId":"c1","decision":"deny"}]}`); code != http.StatusConflict {
		t.Fatalf("a second decision: %d %s; want 409", code, body)
	}
	if code, body := one.do(t, "GET", "/api/conversations/"+conv+"/approvals", ""); code != http.StatusOK || !strings.Contains(string(body), `"approvals":[]`) {
		t.Fatalf("GET approvals after the decision: %d %s", code, body)
	}
}
