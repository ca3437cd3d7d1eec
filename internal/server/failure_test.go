package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/server/servertest"
)

// A turn that failed shows, after a reload, the error its stream showed:
// GET /api/conversations/{id} returns the event's code and message with the
// failed message, and nothing of the model's address or key.
func TestGetConversationReturnsTheTurnsError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      envOptions
		wantText string
	}{
		{"model 500 before any output", envOptions{turns: []servertest.Turn{{Match: "fail", Status: 500}}}, ""},
		{"stream broken after output", envOptions{turns: []servertest.Turn{
			{Match: "fail", Events: []servertest.Event{servertest.Text("Half an ans"), servertest.Break()}}}}, "Half an ans"},
		{"no model", envOptions{noModel: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.env)
			conv := e.newConversation(t)
			s := e.chat(t, context.Background(), conv, "fail now", nil)
			ev := s.first("error")
			if ev == nil {
				t.Fatalf("no error event: %s", s.raw)
			}
			status, body := e.do(t, "GET", "/api/conversations/"+conv, "")
			var c struct {
				Messages []struct {
					ID         string
					Role       string
					Content    []map[string]any
					Incomplete bool
					Error      *struct{ Code, Message string }
				}
			}
			if err := json.Unmarshal(body, &c); err != nil || status != 200 || len(c.Messages) != 2 {
				t.Fatalf("GET = %d %s (%v), want the user message and the failed answer", status, body, err)
			}
			if u := c.Messages[0]; u.Error != nil || strings.Contains(string(body[:strings.Index(string(body), `"role":"assistant"`)]), `"error"`) {
				t.Errorf("the user message carries an error: %s", body)
			}
			a := c.Messages[1]
			if a.Role != "assistant" || a.ID != s.first("message_start")["messageId"] || !a.Incomplete {
				t.Errorf("failed answer = %+v, want the turn's message, incomplete", a)
			}
			if a.Error == nil || a.Error.Code != ev["code"] || a.Error.Message != ev["message"] {
				t.Errorf("stored error = %+v, want the event's %v", a.Error, ev)
			}
			var text string
			for _, b := range a.Content {
				if b["type"] == "text" {
					text += b["text"].(string)
				}
			}
			if text != tc.wantText {
				t.Errorf("content text %q, want %q", text, tc.wantText)
			}
			// The key never; the model server's address (without user info
			// or query) only as the failure's subject, so that the person
			// can tell which server failed (issue 27).
			if strings.Contains(string(body), servertest.APIKey) {
				t.Errorf("the conversation leaks the API key: %s", body)
			}
			if tc.env.turns != nil && !strings.Contains(a.Error.Message, "(model server "+e.model.URL+"/v1/messages)") {
				t.Errorf("stored error %q does not name the model server %s", a.Error.Message, e.model.URL)
			}
		})
	}
}
