package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
)

func TestAPI(t *testing.T) {
	e := newEnv(t, envOptions{maxBody: 1024})
	conv := e.newConversation(t)
	cases := []struct {
		name, method, path, body string
		wantStatus               int
		wantCode                 string // error code, for error answers
		check                    func(t *testing.T, body map[string]any)
	}{
		{"info", "GET", "/api/info", "", 200, "", func(t *testing.T, b map[string]any) {
			if b["version"] != "test" || b["model"] != servertest.ModelName || b["modelConfigured"] != true || b["tools"] != 3.0 {
				t.Errorf("info = %v", b)
			}
			if _, ok := b["modelHelp"]; ok {
				t.Errorf("modelHelp present with a model configured")
			}
		}},
		{"create with title", "POST", "/api/conversations", `{"title":"Jazz"}`, 201, "", func(t *testing.T, b map[string]any) {
			if b["title"] != "Jazz" || b["id"] == "" || b["createdAt"] == nil {
				t.Errorf("created = %v", b)
			}
		}},
		{"create with malformed JSON", "POST", "/api/conversations", `{"title":`, 400, "BAD_REQUEST", nil},
		{"create with a title of the wrong type", "POST", "/api/conversations", `{"title":3}`, 400, "BAD_REQUEST", nil},
		{"oversized body", "POST", "/api/conversations", `{"title":"` + strings.Repeat("a", 2000) + `"}`, 413, "TOO_LARGE", nil},
		{"get", "GET", "/api/conversations/" + conv, "", 200, "", func(t *testing.T, b map[string]any) {
			if b["id"] != conv || b["messages"] == nil {
				t.Errorf("conversation = %v", b)
			}
		}},
		{"get unknown", "GET", "/api/conversations/nope", "", 404, "NOT_FOUND", nil},
		{"delete unknown", "DELETE", "/api/conversations/nope", "", 404, "NOT_FOUND", nil},
		{"message to unknown conversation", "POST", "/api/conversations/nope/messages", `{"content":"hi"}`, 404, "NOT_FOUND", nil},
		{"message malformed", "POST", "/api/conversations/" + conv + "/messages", `{"content":`, 400, "BAD_REQUEST", nil},
		{"message without content", "POST", "/api/conversations/" + conv + "/messages", `{}`, 400, "BAD_REQUEST", nil},
		{"message blank", "POST", "/api/conversations/" + conv + "/messages", `{"content":"  "}`, 400, "BAD_REQUEST", nil},
		{"message empty body", "POST", "/api/conversations/" + conv + "/messages", ``, 400, "BAD_REQUEST", nil},
		{"tools", "GET", "/api/tools", "", 200, "", func(t *testing.T, b map[string]any) {
			tools := b["tools"].([]any)
			first := tools[0].(map[string]any)
			if len(tools) != 3 || first["name"] != "lookup" || first["inputSchema"] == nil || first["outputSchema"] == nil || first["annotations"] == nil {
				t.Errorf("tools = %v", b)
			}
		}},
		{"call tool", "POST", "/api/tools/lookup", `{"query":"x"}`, 200, "", func(t *testing.T, b map[string]any) {
			if b["success"] != true || b["summary"] != "2 items" {
				t.Errorf("result = %v", b)
			}
		}},
		{"call failing tool", "POST", "/api/tools/flaky", `{"query":"x"}`, 200, "", func(t *testing.T, b map[string]any) {
			if b["success"] != false || b["error_code"] != "NETWORK_ERROR" || b["wasRetried"] != true {
				t.Errorf("result = %v", b)
			}
		}},
		{"call tool with invalid arguments", "POST", "/api/tools/lookup", `{"query":3}`, 200, "", func(t *testing.T, b map[string]any) {
			if b["success"] != false || b["error_code"] != "VALIDATION" {
				t.Errorf("result = %v", b)
			}
		}},
		{"call tool with malformed JSON", "POST", "/api/tools/lookup", `{"query"`, 400, "BAD_REQUEST", nil},
		{"call unknown tool", "POST", "/api/tools/nope", `{}`, 404, "NOT_FOUND", nil},
		{"unknown API", "GET", "/api/nope", "", 404, "NOT_FOUND", nil},
		{"wrong method", "PUT", "/api/conversations/" + conv, "", 404, "NOT_FOUND", nil},
		{"health", "GET", "/healthz", "", 200, "", func(t *testing.T, b map[string]any) {
			if b["status"] != "ok" {
				t.Errorf("healthz = %v", b)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.do(t, c.method, c.path, c.body)
			if status != c.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", status, c.wantStatus, body)
			}
			var b map[string]any
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatalf("body is not a JSON object: %s", body)
			}
			if c.wantCode != "" {
				errObj, _ := b["error"].(map[string]any)
				if errObj["code"] != c.wantCode || errObj["message"] == "" {
					t.Errorf("error = %v, want code %s and a message", b, c.wantCode)
				}
			}
			if c.check != nil {
				c.check(t, b)
			}
		})
	}
	t.Run("delete", func(t *testing.T) {
		if status, body := e.do(t, "DELETE", "/api/conversations/"+conv, ""); status != 204 || len(body) != 0 {
			t.Fatalf("delete = %d %s", status, body)
		}
		if status, _ := e.do(t, "GET", "/api/conversations/"+conv, ""); status != 404 {
			t.Errorf("deleted conversation: GET = %d", status)
		}
	})
	t.Run("page", func(t *testing.T) {
		if status, body := e.do(t, "GET", "/", ""); status != 200 || string(body) != "the page" {
			t.Errorf("GET / = %d %s", status, body)
		}
	})
}

func TestListConversationsPagesNewestFirst(t *testing.T) {
	e := newEnv(t, envOptions{})
	var made []string
	for range 5 {
		made = append(made, e.newConversation(t))
	}
	// Conversations made within one clock tick share a timestamp: the order
	// wanted is the store's own (newest first, then by id), from the
	// timestamps the listing reports.
	type listed struct {
		ID        string
		UpdatedAt time.Time
	}
	var got []listed
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		path := "/api/conversations?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		status, body := e.do(t, "GET", path, "")
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		var page struct {
			Conversations []listed
			NextCursor    *string
		}
		json.Unmarshal(body, &page)
		got = append(got, page.Conversations...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	want := slices.Clone(got)
	slices.SortStableFunc(want, func(a, b listed) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	slices.Sort(made)
	if !slices.Equal(ids, made) || !slices.Equal(got, want) {
		t.Errorf("listed %v\nwant each of %v once, newest first: %v", got, made, want)
	}
	for _, bad := range []string{"?limit=0", "?limit=x", "?limit=101", "?cursor=garbage!"} {
		if status, _ := e.do(t, "GET", "/api/conversations"+bad, ""); status != 400 {
			t.Errorf("GET /api/conversations%s = %d, want 400", bad, status)
		}
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t, envOptions{token: "s3cret-token"})
	cases := []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/api/info", "", 401},
		{"GET", "/api/info", "Bearer wrong", 401},
		{"GET", "/api/info", "Basic s3cret-token", 401},
		{"GET", "/api/info", "Bearer s3cret-token", 200},
		{"GET", "/api/info", "bearer s3cret-token", 200},
		{"GET", "/api/conversations", "", 401},
		{"POST", "/api/tools/lookup", "", 401},
		{"POST", "/mcp", "", 401},
		{"GET", "/healthz", "", 200},
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "Bearer s3cret-token", 200},
		{"GET", "/", "", 200},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, e.url+c.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s %s with %q = %d, want %d", c.method, c.path, c.auth, res.StatusCode, c.want)
		}
		if c.want == 401 {
			if errObj, _ := body["error"].(map[string]any); errObj["code"] != "UNAUTHORIZED" || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 body %v", c.method, c.path, body)
			}
		}
	}
}

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"[::1]:8080", "", true},
		{"localhost:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.168.1.5:8080", "", false},
		{"0.0.0.0:8080", "tok", true},
		{"nonsense", "", false},
	}
	for _, c := range cases {
		if err := server.CheckAddr(c.addr, c.token); (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, %q) = %v, want ok %v", c.addr, c.token, err, c.ok)
		}
	}
}

func TestChatStream(t *testing.T) {
	e := newEnv(t, envOptions{heartbeat: time.Millisecond, turns: []servertest.Turn{
		{Match: "jazz", Events: []servertest.Event{servertest.Text("Looking."), servertest.Call("c1", "lookup", `{"query":"jazz"}`)}, InputTokens: 5, OutputTokens: 2},
		// The pause lets heartbeats go out while the model is silent.
		{Match: "jazz", Step: 1, Events: []servertest.Event{servertest.Pause(50 * time.Millisecond), servertest.Text("Two items.")}, InputTokens: 9, OutputTokens: 3},
	}})
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "find jazz", nil)
	if s.status != 200 {
		t.Fatalf("status %d: %s", s.status, s.raw)
	}
	want := []string{"message_start", "text_delta", "tool_call_start", "tool_call_end", "text_delta", "message_end"}
	if !slices.Equal(s.types(), want) {
		t.Errorf("events = %v, want %v", s.types(), want)
	}
	if s.pings == 0 {
		t.Errorf("no heartbeat during a silent model: %q", s.raw)
	}
	end := s.first("message_end")
	if end["stopReason"] != "end_turn" || end["usage"].(map[string]any)["outputTokens"] != 5.0 {
		t.Errorf("message_end = %v", end)
	}
	status, body := e.do(t, "GET", "/api/conversations/"+conv, "")
	var c struct {
		Title    string
		Messages []struct {
			ID         string
			Role       string
			Content    []map[string]any
			Incomplete bool
			CreatedAt  string
		}
	}
	json.Unmarshal(body, &c)
	if status != 200 || c.Title != "find jazz" || len(c.Messages) != 2 {
		t.Fatalf("conversation = %s", body)
	}
	a := c.Messages[1]
	if a.ID != end["messageId"] || a.Role != "assistant" || a.Incomplete || len(a.Content) != 4 {
		t.Errorf("assistant message = %+v", a)
	}
	if a.Content[2]["type"] != "tool_result" || a.Content[2]["content"].(map[string]any)["summary"] != "2 items" {
		t.Errorf("tool_result = %v", a.Content[2])
	}
}

func TestChatWithoutModel(t *testing.T) {
	e := newEnv(t, envOptions{noModel: true})
	status, body := e.do(t, "GET", "/api/info", "")
	var info map[string]any
	json.Unmarshal(body, &info)
	if status != 200 || info["model"] != nil || info["modelConfigured"] != false || !strings.Contains(info["modelHelp"].(string), "TOOLPORT_MODEL") {
		t.Errorf("info = %s", body)
	}
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "hello", nil)
	if got := s.types(); !slices.Equal(got, []string{"message_start", "error", "message_end"}) || s.first("error")["code"] != "MODEL_NOT_CONFIGURED" {
		t.Errorf("stream = %s", s.raw)
	}
}

// A turn no longer belongs to the request that started it: the client
// hangs up at the first text, and the answer is still written and saved
// whole.
func TestTurnOutlivesItsClient(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Match: "story", Events: []servertest.Event{servertest.Text("Once upon"), servertest.Pause(100 * time.Millisecond), servertest.Text(" a time")}},
	}})
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "a story", func(ev map[string]any) bool {
		return ev["type"] != "text_delta" // hang up at the first text
	})
	if s.first("message_start") == nil {
		t.Fatalf("no message_start: %s", s.raw)
	}
	e.waitTurns(t) // the turn saves its answer before it ends
	c, err := e.db.GetConversation(context.Background(), conv)
	if err != nil || len(c.Messages) != 2 {
		t.Fatalf("messages = %+v, %v", c.Messages, err)
	}
	msgs := c.Messages
	if msgs[1].Incomplete || !strings.Contains(string(msgs[1].Content), "Once upon a time") {
		t.Errorf("saved answer = %+v %s", msgs[1], msgs[1].Content)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if !e.srv.WaitStreams(ctx) {
		t.Fatal("the stream's handler did not return after its client left")
	}
	if _, body := e.do(t, "GET", "/metrics", ""); !strings.Contains(string(body), "toolport_chat_streams_open 0") {
		t.Errorf("streams open after the handler returned: %s", body)
	}
}

func TestSecondTurnInSameConversationConflicts(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Match: "slow", Events: []servertest.Event{servertest.Text("Working"), servertest.Pause(time.Hour)}},
	}})
	conv := e.newConversation(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.chat(t, ctx, conv, "slow one", func(ev map[string]any) bool {
			if ev["type"] == "text_delta" {
				close(started)
			}
			return true
		})
	}()
	<-started
	status, body := e.do(t, "POST", "/api/conversations/"+conv+"/messages", `{"content":"again"}`)
	if status != http.StatusConflict || !strings.Contains(string(body), "CONFLICT") {
		t.Errorf("second turn = %d %s, want 409", status, body)
	}
	if status, _ := e.do(t, "DELETE", "/api/conversations/"+conv, ""); status != http.StatusConflict {
		t.Errorf("delete during a turn = %d, want 409", status)
	}
	cancel()
	<-done
}

func TestMetrics(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Match: "x", Events: []servertest.Event{servertest.Call("a", "lookup", `{"query":"q"}`), servertest.Call("b", "flaky", `{"query":"q"}`)}},
		{Match: "x", Step: 1, Events: []servertest.Event{servertest.Text("ok")}},
	}})
	conv := e.newConversation(t)
	e.chat(t, context.Background(), conv, "x", nil)
	e.do(t, "POST", "/api/tools/lookup", `{"query":"q"}`)
	e.do(t, "GET", "/api/conversations/nope", "")
	_, body := e.do(t, "GET", "/metrics", "")
	for _, want := range []string{
		`toolport_tool_calls_total{tool="lookup"} 2`,
		`toolport_tool_calls_total{tool="flaky"} 1`,
		`toolport_tool_errors_total{code="NETWORK_ERROR",tool="flaky"} 1`,
		`toolport_tool_duration_seconds_count{tool="lookup"} 2`,
		`toolport_http_requests_total{code="200",route="POST /api/conversations/{id}/messages"} 1`,
		`toolport_http_requests_total{code="404",route="GET /api/conversations/{id}"} 1`,
		`toolport_http_request_duration_seconds_count{route="POST /api/tools/{name}"} 1`,
		`toolport_chat_streams_open 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestGracefulShutdownSavesRunningTurns(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Match: "long", Events: []servertest.Event{servertest.Text("Part one."), servertest.Pause(time.Hour)}},
	}})
	conv := e.newConversation(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Store: e.db, Registry: testRegistry(t), ShutdownGrace: time.Millisecond}
	parts, err := server.Wire(cfg, server.Wiring{Agent: agentWithModel(t, e.model)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	got := make(chan *stream, 1)
	go func() {
		c := &env{url: base}
		got <- c.chat(t, context.Background(), conv, "long story", func(ev map[string]any) bool {
			if ev["type"] == "text_delta" {
				stop() // SIGTERM arrives mid-answer
			}
			return true
		})
	}()
	s := <-got
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if end := s.first("message_end"); end == nil || end["stopReason"] != "canceled" {
		t.Errorf("stream after shutdown: %s", s.raw)
	}
	c, _ := e.db.GetConversation(context.Background(), conv)
	if len(c.Messages) != 2 || !c.Messages[1].Incomplete || !strings.Contains(string(c.Messages[1].Content), "Part one.") {
		t.Errorf("messages after shutdown = %+v", c.Messages)
	}
}
