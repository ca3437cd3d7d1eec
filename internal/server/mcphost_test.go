package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

// notesServer is another MCP server (Toolport's own MCP handler over a small
// registry) with one read-only tool and one that writes.
type notesServer struct {
	ts        *httptest.Server
	published atomic.Int32
	reg       *tool.Registry     // its tools; register more, then tell changes
	changes   *mcpserver.Changes // makes it send tools/list_changed
}

type noteIn struct {
	Text string `json:"text" jsonschema:"The note"`
}
type noteOut struct {
	Note string `json:"note"`
}

func (o noteOut) Summary() string { return "note " + o.Note }

func newNotesServer(t *testing.T) *notesServer {
	t.Helper()
	n := &notesServer{}
	reg := tool.NewRegistry()
	if err := reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "find", Description: "Finds a note.", Pack: "notes",
			Annotations: tool.Annotations{ReadOnly: true}},
			func(_ context.Context, in noteIn) (noteOut, error) { return noteOut{Note: "found " + in.Text}, nil })),
		tool.Must(tool.New(tool.Spec{Name: "publish", Description: "Publishes a note.", Pack: "notes"},
			func(_ context.Context, in noteIn) (noteOut, error) {
				n.published.Add(1)
				return noteOut{Note: "published " + in.Text}, nil
			})),
	); err != nil {
		t.Fatal(err)
	}
	n.reg, n.changes = reg, &mcpserver.Changes{}
	srv, err := mcpserver.New(reg, mcpserver.Options{ToolChanges: n.changes})
	if err != nil {
		t.Fatal(err)
	}
	n.ts = httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{}))
	t.Cleanup(n.ts.Close)
	return n
}

// kill takes the server away: open connections cut, new ones refused.
func (n *notesServer) kill() {
	n.ts.CloseClientConnections()
	n.ts.Close()
}

// An attached MCP server's tools are listed, offered to the model, called
// in a chat turn (a write tool only once approved), and a server that dies
// fails only its own call: the turn goes on and ends as usual.
func TestAttachedMCPServerInAChat(t *testing.T) {
	notes := newNotesServer(t)
	model := llmtest.NewScripted(
		llmtest.ScriptedTurn{Match: "find", Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("c1", "notes__find", `{"text":"jazz"}`)}},
		llmtest.ScriptedTurn{Match: "find", Step: 1, Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Found it.")}},
		llmtest.ScriptedTurn{Match: "publish", Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("c2", "notes__publish", `{"text":"jazz"}`)}},
		llmtest.ScriptedTurn{Match: "publish", Step: 1, Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Published.")}},
		llmtest.ScriptedTurn{Match: "again", Events: []llmtest.ScriptedEvent{
			llmtest.ScriptToolCall("c3", "notes__find", `{"text":"blues"}`),
			llmtest.ScriptToolCall("c4", "lookup", `{"query":"blues"}`),
		}},
		llmtest.ScriptedTurn{Match: "again", Step: 1, Events: []llmtest.ScriptedEvent{llmtest.ScriptText("The notes server is down.")}},
	)
	e := newEnv(t, envOptions{agent: agent.Config{Provider: model},
		mcpServers: []mcphost.Server{{Name: "notes", URL: notes.ts.URL}}})

	// The bench lists the attached tools with their server.
	tools := apiTools(t, e)
	for _, name := range []string{"notes__find", "notes__publish"} {
		d, ok := tools[name]
		if !ok {
			t.Fatalf("/api/tools lacks %s: %v", name, keys(tools))
		}
		if d["server"] != "notes" || d["offered"] != true || d["unavailable"] != nil {
			t.Errorf("/api/tools %s = %v", name, d)
		}
	}
	code, body := e.do(t, "GET", "/api/info", "")
	var info struct {
		OfferedTools []string         `json:"offeredTools"`
		MCPServers   []mcphost.Status `json:"mcpServers"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &info) != nil || len(info.MCPServers) != 1 ||
		!info.MCPServers[0].Connected || !slices.Contains(info.OfferedTools, "notes__find") {
		t.Fatalf("/api/info: %d %s", code, body)
	}

	// /mcp serves them too, though they came after its tools were listed.
	mcpTools := mcpToolNames(t, e)
	if !slices.Contains(mcpTools, "notes__find") || !slices.Contains(mcpTools, "notes__publish") {
		t.Errorf("/mcp tools/list = %v", mcpTools)
	}

	// A read-only tool runs at once, with its card's events.
	conv := e.newConversation(t)
	s := e.chat(t, t.Context(), conv, "find my jazz note", nil)
	if got := strings.Join(s.types(), ","); got != "message_start,tool_call_start,tool_call_end,text_delta,message_end" {
		t.Fatalf("find turn: %s\n%s", got, s.raw)
	}
	if end := s.first("tool_call_end"); end["toolCallId"] != "c1" || !strings.Contains(jsonOf(end), "found jazz") {
		t.Errorf("tool_call_end = %v", end)
	}
	if reqs := model.Requests(); len(reqs) == 0 || !hasToolDef(reqs[0], "notes__publish") {
		t.Errorf("the model was not offered the attached tools")
	}

	// A tool that writes waits for approval, then runs.
	s = e.chat(t, t.Context(), conv, "publish it", nil)
	if ev := s.first("approval_required"); ev == nil || ev["tool"] != "notes__publish" {
		t.Fatalf("publish turn: %v\n%s", s.types(), s.raw)
	}
	if notes.published.Load() != 0 {
		t.Fatal("the write tool ran before it was approved")
	}
	s = e.streamRequest(t, t.Context(), "POST", "/api/conversations/"+conv+"/approvals",
		`{"decisions":[{"toolUseId":"c2","decision":"allow_once"}]}`, nil)
	if end := s.first("tool_call_end"); end == nil || !strings.Contains(jsonOf(end), "published jazz") {
		t.Fatalf("approved turn: %v\n%s", s.types(), s.raw)
	}
	if notes.published.Load() != 1 {
		t.Fatalf("the approved tool ran %d times", notes.published.Load())
	}

	// The server dies: its call fails with a clear error, the other call
	// and the turn go on.
	notes.kill()
	s = e.chat(t, t.Context(), conv, "again, for blues", nil)
	end := s.first("message_end")
	if end == nil || end["stopReason"] != "end_turn" {
		t.Fatalf("turn after the server died: %v\n%s", s.types(), s.raw)
	}
	var failed, ran bool
	for _, ev := range s.events {
		switch {
		case ev["type"] == "tool_call_error" && ev["toolCallId"] == "c3":
			failed = ev["errorCode"] == "NETWORK_ERROR" && strings.Contains(asString(ev["error"]), `MCP server "notes"`)
		case ev["type"] == "tool_call_end" && ev["toolCallId"] == "c4":
			ran = strings.Contains(jsonOf(ev), "blues 1")
		}
	}
	if !failed || !ran {
		t.Errorf("after the server died: the notes call failed clearly %v, the other ran %v\n%s", failed, ran, s.raw)
	}
	if d := apiTools(t, e)["notes__find"]; d == nil || !strings.Contains(asString(d["unavailable"]), `MCP server "notes"`) {
		t.Errorf("/api/tools notes__find after the server died = %v", d)
	}
}

// A tool an attached server adds later (tools/list_changed) reaches the
// model's next call, the bench, and /mcp's sessions as tools/list_changed.
func TestAttachedServerListChangedReachesModelAndMCPSessions(t *testing.T) {
	notes := newNotesServer(t)
	offerChanged := make(chan struct{}, 8)
	e := newEnv(t, envOptions{mcpServers: []mcphost.Server{{Name: "notes", URL: notes.ts.URL}},
		toolsChanged: func(string) {
			select {
			case offerChanged <- struct{}{}:
			default: // one pending is enough to look again
			}
		}})

	listChanged := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} }})
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	if err := notes.reg.Register(tool.Must(tool.New(tool.Spec{Name: "archive", Description: "Archives a note.", Pack: "notes",
		Annotations: tool.Annotations{ReadOnly: true}},
		func(_ context.Context, in noteIn) (noteOut, error) { return noteOut{Note: "archived " + in.Text}, nil }))); err != nil {
		t.Fatal(err)
	}
	notes.changes.Changed()

	select {
	case <-listChanged:
	case <-t.Context().Done():
		t.Fatal("no tools/list_changed on /mcp")
	}
	// The host's OnChange follows each re-listing of the server's tools,
	// after the model's offer followed them.
	bound := time.After(20 * time.Second) // a deadlock guard, not a timing assertion
	for offered := false; !offered; {
		select {
		case <-offerChanged:
		case <-bound:
			t.Fatal("notes__archive never offered to the model")
		}
		code, body := e.do(t, "GET", "/api/info", "")
		var info struct {
			OfferedTools []string `json:"offeredTools"`
		}
		offered = code == http.StatusOK && json.Unmarshal(body, &info) == nil && slices.Contains(info.OfferedTools, "notes__archive")
	}
	res, err := session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "notes__archive" }) {
		t.Errorf("/mcp tools/list after list_changed lacks notes__archive")
	}
	if d := apiTools(t, e)["notes__archive"]; d == nil || d["server"] != "notes" {
		t.Errorf("/api/tools notes__archive = %v", d)
	}
}

func apiTools(t *testing.T, e *env) map[string]map[string]any {
	t.Helper()
	code, body := e.do(t, "GET", "/api/tools", "")
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Fatalf("/api/tools: %d %s", code, body)
	}
	out := map[string]map[string]any{}
	for _, d := range list.Tools {
		out[asString(d["name"])] = d
	}
	return out
}

// mcpToolNames lists /mcp's tools with the SDK's client.
func mcpToolNames(t *testing.T, e *env) []string {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	session, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func hasToolDef(req llm.Request, name string) bool {
	return slices.ContainsFunc(req.Tools, func(d llm.ToolDef) bool { return d.Name == name })
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
