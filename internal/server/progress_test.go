package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/tool"
)

// TestChatStreamCarriesToolProgress: what a running tool reports (an
// answer streaming in) reaches the chat stream as tool_progress events
// between the call's start and end, and is not stored with the answer.
func TestChatStreamCarriesToolProgress(t *testing.T) {
	reg := testRegistry(t)
	err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "answer", Description: "Answers, streaming.", Pack: "test"},
		func(ctx context.Context, in queryIn) (itemsOut, error) {
			tool.ReportProgress(ctx, tool.Progress{Done: 10, Message: "so far: Jazz is"})
			tool.ReportProgress(ctx, tool.Progress{Done: 20, Message: "so far: Jazz is a music genre"})
			return itemsOut{Items: []string{"Jazz is a music genre."}}, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{reg: reg, turns: []servertest.Turn{
		{Match: "jazz", Events: []servertest.Event{servertest.Call("c1", "answer", `{"query":"jazz"}`)}},
		{Match: "jazz", Step: 1, Events: []servertest.Event{servertest.Text("Done.")}},
	}})
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "what is jazz", nil)
	want := []string{"message_start", "tool_call_start", "tool_progress", "tool_progress", "tool_call_end", "text_delta", "message_end"}
	if s.status != 200 || !slices.Equal(s.types(), want) {
		t.Fatalf("status %d, events = %v, want %v", s.status, s.types(), want)
	}
	if p := s.first("tool_progress"); p["toolCallId"] != "c1" || p["message"] != "so far: Jazz is" || p["done"] != 10.0 {
		t.Errorf("tool_progress = %v", p)
	}
	if status, body := e.do(t, "GET", "/api/conversations/"+conv, ""); status != 200 || strings.Contains(string(body), "so far:") {
		t.Errorf("a progress report was stored: %s", body)
	}
}
