package agent_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// TestToolProgressIsStreamedBounded: a running tool's progress reports
// reach the stream as tool_progress events between the call's start and
// end, each message cut to a KiB, at most 100 per call, none after the
// call's end, and a NaN (which JSON cannot carry) sent as 0.
func TestToolProgressIsStreamedBounded(t *testing.T) {
	db := openStore(t, backends[0])
	ts := newTools(t)
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "ask", Events: []servertest.Event{servertest.Call("call_1", "progress", `{"query":"jazz"}`)}},
		servertest.Turn{Match: "ask", Step: 1, Events: []servertest.Event{servertest.Text("Done.")}})
	a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: provider(t, "anthropic", ms)})
	conv := newConversation(t, db)
	r := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Turn(ctx, store.Fence{}, conv, "ask", r.emit); err != nil {
		t.Fatalf("Turn: %v", err)
	}
	ts.mu.Lock()
	late := ts.progressCtx
	ts.mu.Unlock()
	tool.ReportProgress(late, tool.Progress{Message: "after the end"})

	types := r.types()
	start, end := -1, -1
	for i, typ := range types {
		switch {
		case typ == "tool_call_start" && start < 0:
			start = i
		case typ == "tool_call_end":
			end = i
		case typ == "tool_progress" && (start < 0 || end >= 0):
			t.Errorf("tool_progress at %d, outside the call (start %d, end %d)", i, start, end)
		}
	}
	progress := r.all("tool_progress")
	if len(progress) != 100 {
		t.Fatalf("%d tool_progress events, want the bound, 100", len(progress))
	}
	if p := progress[0]; p["toolCallId"] != "call_1" || p["message"] != "first: jazz" || p["done"] != 1.0 || p["total"] != 3.0 {
		t.Errorf("first tool_progress = %v", p)
	}
	msg, _ := progress[1]["message"].(string)
	if len(msg) > 1024 || !utf8.ValidString(msg) || msg == "" || progress[1]["done"] != 0.0 {
		t.Errorf("second tool_progress: %d bytes (valid UTF-8 %v), done %v", len(msg), utf8.ValidString(msg), progress[1]["done"])
	}
}
