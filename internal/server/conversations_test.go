package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store"
)

func TestRenameConversation(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.newConversation(t)
	long := strings.Repeat("א", store.MaxTitleBytes/2) + "x" // one byte too many
	for _, c := range []struct {
		name, path, body string
		want             int
		title            string // the title afterwards
	}{
		{"trimmed Hebrew", id, `{"title":"  שירים עצובים  "}`, 200, "שירים עצובים"},
		{"exactly the longest", id, `{"title":"` + strings.Repeat("a", store.MaxTitleBytes) + `"}`, 200, strings.Repeat("a", store.MaxTitleBytes)},
		{"English", id, `{"title":"Trip to Lisbon"}`, 200, "Trip to Lisbon"},
		{"too long", id, `{"title":"` + long + `"}`, 400, "Trip to Lisbon"},
		{"blank", id, `{"title":" \t "}`, 400, "Trip to Lisbon"},
		{"missing title", id, `{"name":"x"}`, 400, "Trip to Lisbon"},
		{"not a string", id, `{"title":7}`, 400, "Trip to Lisbon"},
		{"not JSON", id, `{"title":`, 400, "Trip to Lisbon"},
		{"empty body", id, ``, 400, "Trip to Lisbon"},
		{"invalid UTF-8", id, "{\"title\":\"a\xffb\"}", 400, "Trip to Lisbon"},
		{"control character", id, `{"title":"a\u0007b"}`, 400, "Trip to Lisbon"},
		{"inner newline", id, `{"title":"two\nlines"}`, 400, "Trip to Lisbon"},
		{"unknown id", "no-such-id", `{"title":"x"}`, 404, "Trip to Lisbon"},
	} {
		status, body := e.do(t, "PATCH", "/api/conversations/"+c.path, c.body)
		if status != c.want {
			t.Errorf("%s: status %d %s, want %d", c.name, status, body, c.want)
		}
		if status == 200 {
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got["id"] != id || got["title"] != c.title || got["createdAt"] == nil || got["updatedAt"] == nil || got["messages"] != nil {
				t.Errorf("%s: answer %s", c.name, body)
			}
		} else if !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s: error answer without an error object: %s", c.name, body)
		}
		conv, err := e.db.GetConversation(context.Background(), id)
		if err != nil || conv.Title != c.title {
			t.Errorf("%s: stored title %q (%v), want %q", c.name, conv.Title, err, c.title)
		}
	}
}

func TestRenameGoesThroughTheGuard(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.newConversation(t)
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    int
		code    string
	}{
		{"cross-site", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"foreign Origin", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"no type", nil, 415, "UNSUPPORTED_MEDIA_TYPE"},
	} {
		status, code, body := e.send(t, "PATCH", "/api/conversations/"+id, `{"title":"csrf"}`, c.headers)
		if status != c.want || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, body, c.want, c.code)
		}
	}
	if conv, _ := e.db.GetConversation(context.Background(), id); conv.Title == "csrf" {
		t.Error("a refused PATCH renamed the conversation")
	}
	// The same request from the page itself goes through.
	status, _, body := e.send(t, "PATCH", "/api/conversations/"+id, `{"title":"mine"}`,
		map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", "Origin": e.url})
	if status != 200 {
		t.Errorf("same-origin PATCH: %d %s", status, body)
	}
}

func TestRenameBodyIsBounded(t *testing.T) {
	e := newEnv(t, envOptions{maxBody: 64})
	id := e.newConversation(t)
	status, body := e.do(t, "PATCH", "/api/conversations/"+id, `{"title":"`+strings.Repeat("a", 100)+`"}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d %s", status, body)
	}
}

func TestSearchConversations(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	mk := func(title, text string) string {
		t.Helper()
		c, err := e.db.CreateConversation(ctx, store.Conversation{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		content, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
		if _, err := e.db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: content}); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	hebrew := mk("מוזיקה", "אני מחפש שירים עצובים")
	var lisbon []string
	for i := range 3 {
		lisbon = append(lisbon, mk("Trip "+string(rune('A'+i)), "hotels in Lisbon"))
	}
	list := func(query string) (int, []string, *string, []byte) {
		t.Helper()
		status, body := e.do(t, "GET", "/api/conversations?"+query, "")
		var out struct {
			Conversations []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"conversations"`
			NextCursor *string `json:"nextCursor"`
		}
		json.Unmarshal(body, &out)
		var ids []string
		for _, c := range out.Conversations {
			ids = append(ids, c.ID)
		}
		return status, ids, out.NextCursor, body
	}
	if status, ids, next, body := list("q=" + url.QueryEscape("שירים")); status != 200 || len(ids) != 1 || ids[0] != hebrew || next != nil {
		t.Errorf("Hebrew search: %d %s", status, body)
	}
	// Paged newest first, like the listing.
	status, ids, next, body := list("q=lisb&limit=2")
	if status != 200 || len(ids) != 2 || ids[0] != lisbon[2] || ids[1] != lisbon[1] || next == nil {
		t.Fatalf("first page: %d %s", status, body)
	}
	status, ids, next, body = list("q=lisb&limit=2&cursor=" + *next)
	if status != 200 || len(ids) != 1 || ids[0] != lisbon[0] || next != nil {
		t.Errorf("second page: %d %s", status, body)
	}
	if status, ids, _, body := list("q=nothing-here"); status != 200 || len(ids) != 0 || !strings.Contains(string(body), `"conversations":[]`) {
		t.Errorf("no match: %d %s", status, body)
	}
	if status, ids, _, body := list("q=%20%20"); status != 200 || len(ids) != 4 {
		t.Errorf("blank q lists everything: %d %s", status, body)
	}
	for _, q := range []string{"q=" + url.QueryEscape(`"*()`), "q=" + strings.Repeat("a", store.MaxSearchQueryBytes+1), "q=a+b+c+d+e+f+g+h+i"} {
		if status, _, _, body := list(q); status != 400 || !strings.Contains(string(body), "BAD_REQUEST") {
			t.Errorf("%.40s: %d %s, want 400", q, status, body)
		}
	}
}

// exportFixture stores a conversation with text, a tool call, its (long)
// result, an incomplete message and a failed turn, at fixed times.
func exportFixture(t *testing.T, e *env) string {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	c, err := e.db.CreateConversation(ctx, store.Conversation{ID: "0c7e1a2b-3d4f-4a5b-8c6d-7e8f9a0b1c2d", Title: "Sad songs / שירים: `best` of 2024", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(map[string]any{"ok": true, "text": strings.Repeat("é", 3000) + " ``` fence"})
	msgs := []store.Message{
		{Role: store.RoleUser, Content: json.RawMessage(`[{"type":"text","text":"Find sad songs"}]`)},
		{Role: store.RoleAssistant, Content: json.RawMessage(`[{"type":"text","text":"Searching."},` +
			`{"type":"tool_use","id":"tu_1","name":"web_search","input":{"query":"sad ` + "```" + ` songs"}},` +
			`{"type":"tool_result","tool_use_id":"tu_1","content":` + string(result) + `},` +
			`{"type":"tool_result","tool_use_id":"tu_2","content":{"ok":false},"is_error":true},` +
			`{"type":"text","text":"Here they are."}]`),
			Usage: &store.Usage{InputTokens: 10, OutputTokens: 5}},
		{Role: store.RoleUser, Content: json.RawMessage(`[{"type":"text","text":"More"}]`)},
		{Role: store.RoleAssistant, Content: json.RawMessage(`[{"type":"text","text":"Partial"}]`), Incomplete: true,
			Error: &store.MessageError{Code: "MODEL_ERROR", Message: "The model failed."}},
	}
	for i, m := range msgs {
		m.ConversationID, m.CreatedAt = c.ID, t0.Add(time.Duration(i+1)*time.Minute)
		if _, err := e.db.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID
}

func TestExportMarkdown(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := exportFixture(t, e)
	for _, q := range []string{"?format=markdown", ""} {
		res, err := http.Get(e.url + "/api/conversations/" + id + "/export" + q)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, res)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/markdown; charset=utf-8" {
			t.Fatalf("%q: %d %s %s", q, res.StatusCode, res.Header.Get("Content-Type"), got)
		}
		if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="sad-songs-best-of-2024-0c7e1a2b.md"; filename*=UTF-8''sad-songs-%D7%A9%D7%99%D7%A8%D7%99%D7%9D-best-of-2024-0c7e1a2b.md` {
			t.Errorf("Content-Disposition = %q", cd)
		}
		clipped := strings.Repeat("é", (server.MaxExportResultBytes-len("{\n  \"ok\": true,\n  \"text\": \""))/2)
		want := "# Sad songs / שירים: 'best' of 2024\n\n" +
			"Conversation `0c7e1a2b-3d4f-4a5b-8c6d-7e8f9a0b1c2d`, started 2025-03-01T12:00:00Z.\n" +
			"\n## 1. User · 2025-03-01T12:01:00Z\n\nFind sad songs\n" +
			"\n## 2. Assistant · 2025-03-01T12:02:00Z\n\nSearching.\n" +
			"\n**Tool call** `web_search` (id `tu_1`):\n\n````json\n{\n  \"query\": \"sad ``` songs\"\n}\n````\n" +
			"\n**Tool result** for `tu_1`:\n\n```json\n{\n  \"ok\": true,\n  \"text\": \"" + clipped + "\n```\n" +
			"\n*Clipped: the first 4095 of 6040 bytes are shown; the JSON export has the whole result.*\n" +
			"\n**Tool error** for `tu_2`:\n\n```json\n{\n  \"ok\": false\n}\n```\n" +
			"\nHere they are.\n" +
			"\n## 3. User · 2025-03-01T12:03:00Z\n\nMore\n" +
			"\n## 4. Assistant · 2025-03-01T12:04:00Z\n\nPartial\n" +
			"\n*This message is incomplete: it was cut short.*\n" +
			"\n> **Error** `MODEL_ERROR`: The model failed.\n"
		if got != want {
			t.Errorf("%q: markdown export:\n%s\n--- want ---\n%s", q, got, want)
		}
	}
}

func TestExportJSON(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := exportFixture(t, e)
	res, err := http.Get(e.url + "/api/conversations/" + id + "/export?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(readAll(t, res))
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
		res.Header.Get("Content-Disposition") != `attachment; filename="sad-songs-best-of-2024-0c7e1a2b.json"; filename*=UTF-8''sad-songs-%D7%A9%D7%99%D7%A8%D7%99%D7%9D-best-of-2024-0c7e1a2b.json` {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	// The export is the stored conversation, as GET /api/conversations/{id} has it.
	_, plain := e.do(t, "GET", "/api/conversations/"+id, "")
	if b.String() != string(plain) {
		t.Errorf("JSON export differs from the conversation:\n%s\n%s", b.String(), plain)
	}
	var out struct {
		Messages []struct {
			Content json.RawMessage     `json:"content"`
			Error   *store.MessageError `json:"error"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(b.String()), &out); err != nil || len(out.Messages) != 4 ||
		out.Messages[3].Error == nil || out.Messages[3].Error.Code != "MODEL_ERROR" || !strings.Contains(string(out.Messages[1].Content), "fence") {
		t.Errorf("export content: %v %s", err, b.String())
	}
}

func TestExportRefuses(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.newConversation(t)
	for _, c := range []struct {
		path string
		want int
	}{
		{"/api/conversations/" + id + "/export?format=pdf", 400},
		{"/api/conversations/" + id + "/export?format=JSON", 400},
		{"/api/conversations/nope/export?format=json", 404},
		{"/api/conversations/nope/export", 404},
		{"/api/conversations/" + id + "/export?format=json", 200},
	} {
		if status, body := e.do(t, "GET", c.path, ""); status != c.want {
			t.Errorf("%s: %d %s, want %d", c.path, status, body, c.want)
		}
	}
	// An empty conversation without a title still gets a safe name.
	res, err := http.Get(e.url + "/api/conversations/" + id + "/export")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="conversation-`) || !strings.Contains(cd, `.md"; filename*=UTF-8''conversation-`) {
		t.Errorf("Content-Disposition = %q", cd)
	}
}

// readAll reads and closes a response body.
func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A search the store cuts off at its time bound is a 503 that says how to
// narrow it, not a database failure. A bound of 1 ns is past before the
// query starts, so the store's own deadline stops it every time.
func TestSearchTooSlowIs503(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.newConversation(t)
	e.db.SetSearchTimeout(time.Nanosecond)
	status, body := e.do(t, "GET", "/api/conversations?q=a+b+c+d+e+f+1+2", "")
	var out struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(body, &out)
	if status != http.StatusServiceUnavailable || out.Error.Code != "SEARCH_TIMEOUT" ||
		out.Error.Message != "the search took too long; use fewer or longer words" {
		t.Errorf("%d %s, want 503 SEARCH_TIMEOUT", status, body)
	}
	e.db.SetSearchTimeout(0)
	if status, body := e.do(t, "GET", "/api/conversations?q=a+b", ""); status != 200 {
		t.Errorf("under the default bound: %d %s", status, body)
	}
}
