package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
)

type storedConv struct {
	Model string `json:"model"`
	Usage *struct {
		InputTokens, OutputTokens int
	} `json:"usage"`
	Messages []struct {
		ID      string            `json:"id"`
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
		Usage   *struct {
			InputTokens, OutputTokens, ContextTokens int
		} `json:"usage"`
	} `json:"messages"`
}

func (e *env) conversation(t *testing.T, id string) storedConv {
	t.Helper()
	code, body := e.do(t, "GET", "/api/conversations/"+id, "")
	if code != http.StatusOK {
		t.Fatalf("GET conversation: %d %s", code, body)
	}
	var c storedConv
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// texts lists the stored messages as role:text.
func (c storedConv) texts() []string {
	var out []string
	for _, m := range c.Messages {
		s := m.Role + ":"
		for _, b := range m.Content {
			var blk struct{ Type, Text string }
			json.Unmarshal(b, &blk)
			if blk.Type == "text" {
				s += blk.Text
			}
		}
		out = append(out, s)
	}
	return out
}

func TestRegenerateAndEditStream(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Events: []servertest.Event{servertest.Text("A1")}, InputTokens: 10, OutputTokens: 2},
		{Events: []servertest.Event{servertest.Text("A2")}, InputTokens: 20, OutputTokens: 3},
		{Events: []servertest.Event{servertest.Text("A2 again")}, InputTokens: 21, OutputTokens: 4},
		{Events: []servertest.Event{servertest.Text("B")}, InputTokens: 12, OutputTokens: 5},
	}})
	ctx := context.Background()
	id := e.newConversation(t)
	for _, text := range []string{"one", "two"} {
		if s := e.chat(t, ctx, id, text, nil); s.status != http.StatusOK {
			t.Fatalf("chat: %d %s", s.status, s.raw)
		}
	}

	s := e.streamRequest(t, ctx, "POST", "/api/conversations/"+id+"/regenerate", "", nil)
	if s.status != http.StatusOK || !reflect.DeepEqual(s.types(), []string{"message_start", "text_delta", "message_end"}) {
		t.Fatalf("regenerate: %d %q %s", s.status, s.types(), s.raw)
	}
	c := e.conversation(t, id)
	if got := c.texts(); !reflect.DeepEqual(got, []string{"user:one", "assistant:A1", "user:two", "assistant:A2 again"}) {
		t.Errorf("after regenerate: %q", got)
	}
	if c.Usage == nil || c.Usage.InputTokens != 31 || c.Usage.OutputTokens != 6 {
		t.Errorf("conversation usage = %+v, want the sum of the kept answers (31 in, 6 out)", c.Usage)
	}
	if u := c.Messages[3].Usage; u == nil || u.ContextTokens != 25 {
		t.Errorf("answer usage = %+v, want context tokens 25", u)
	}

	s = e.streamRequest(t, ctx, "PUT", "/api/conversations/"+id+"/messages/"+c.Messages[0].ID, `{"content":"uno"}`, nil)
	if s.status != http.StatusOK || s.first("message_end") == nil {
		t.Fatalf("edit: %d %s", s.status, s.raw)
	}
	if got := e.conversation(t, id).texts(); !reflect.DeepEqual(got, []string{"user:uno", "assistant:B"}) {
		t.Errorf("after editing the first message: %q, want every later turn replaced", got)
	}
	if got := s.first("message_start")["userMessageId"]; got != e.conversation(t, id).Messages[0].ID {
		t.Errorf("message_start userMessageId = %v, want the new user message", got)
	}

	answer := e.conversation(t, id).Messages[1].ID
	empty := e.newConversation(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"regenerate an empty conversation", "POST", "/api/conversations/" + empty + "/regenerate", "", 409, "CONFLICT"},
		{"regenerate an unknown conversation", "POST", "/api/conversations/nope/regenerate", "", 404, "NOT_FOUND"},
		{"regenerate with a body that is not an object", "POST", "/api/conversations/" + id + "/regenerate", `[]`, 400, "BAD_REQUEST"},
		{"edit the answer", "PUT", "/api/conversations/" + id + "/messages/" + answer, `{"content":"x"}`, 400, "BAD_REQUEST"},
		{"edit an unknown message", "PUT", "/api/conversations/" + id + "/messages/nope", `{"content":"x"}`, 404, "NOT_FOUND"},
		{"edit to blank", "PUT", "/api/conversations/" + id + "/messages/" + answer, `{"content":"  "}`, 400, "BAD_REQUEST"},
		{"edit without content", "PUT", "/api/conversations/" + id + "/messages/" + answer, `{}`, 400, "BAD_REQUEST"},
	} {
		code, body := e.do(t, tc.method, tc.path, tc.body)
		var eb struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &eb)
		if code != tc.status || eb.Error.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, body, tc.status, tc.code)
		}
	}
	if got := e.conversation(t, id).texts(); !reflect.DeepEqual(got, []string{"user:uno", "assistant:B"}) {
		t.Errorf("refused requests changed the conversation: %q", got)
	}
}

func TestRegenerateRefusedWhileATurnRuns(t *testing.T) {
	e := newEnv(t, envOptions{turns: []servertest.Turn{
		{Match: "slow", Events: []servertest.Event{servertest.Text("a"), servertest.Pause(time.Minute)}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id := e.newConversation(t)
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.chat(t, ctx, id, "slow", func(ev map[string]any) bool {
			if ev["type"] == "text_delta" {
				close(started)
			}
			return true
		})
	}()
	<-started
	for _, req := range [][3]string{
		{"POST", "/api/conversations/" + id + "/regenerate", ""},
		{"PUT", "/api/conversations/" + id + "/messages/x", `{"content":"y"}`},
	} {
		if code, body := e.do(t, req[0], req[1], req[2]); code != http.StatusConflict {
			t.Errorf("%s %s during a turn: %d %s, want 409", req[0], req[1], code, body)
		}
	}
	cancel()
	<-done
}

func TestModelPicker(t *testing.T) {
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "hi", Events: []servertest.Event{servertest.Text("hello")}})
	other, err := llm.NewOpenAI("other-model", llm.Options{APIKey: servertest.APIKey, BaseURL: ms.OpenAIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	def := agentWithModel(t, ms)
	def.ModelName, def.ContextWindow = "anthropic:scripted-model", 200000
	def.Models = []agent.Model{{Name: "openai:other-model", Provider: other}}
	e := newEnv(t, envOptions{agent: def})

	code, body := e.do(t, "GET", "/api/info", "")
	var info struct {
		Model  string
		Models []map[string]any
	}
	json.Unmarshal(body, &info)
	want := []map[string]any{{"name": "anthropic:scripted-model", "contextWindow": 200000.0}, {"name": "openai:other-model"}}
	if code != 200 || info.Model != "anthropic:scripted-model" || !reflect.DeepEqual(info.Models, want) {
		t.Errorf("info = %d %s, want both models, the default first, windows when known", code, body)
	}

	id := e.newConversation(t)
	for _, tc := range []struct {
		body   string
		status int
		model  string
	}{
		{`{"model":"openai:other-model"}`, 200, "openai:other-model"},
		{`{"model":"openai:unknown"}`, 400, "openai:other-model"},
		{`{"model":7}`, 400, "openai:other-model"},
		{`{"title":"Renamed","model":"anthropic:scripted-model"}`, 200, "anthropic:scripted-model"},
		{`{"model":""}`, 200, ""},
		{`{"model":"openai:other-model"}`, 200, "openai:other-model"},
	} {
		code, body := e.do(t, "PATCH", "/api/conversations/"+id, tc.body)
		if code != tc.status {
			t.Errorf("PATCH %s: %d %s, want %d", tc.body, code, body, tc.status)
		}
		if got := e.conversation(t, id).Model; got != tc.model {
			t.Errorf("after PATCH %s the model is %q, want %q", tc.body, got, tc.model)
		}
	}
	if code, body := e.do(t, "PATCH", "/api/conversations/nope", `{"model":""}`); code != 404 {
		t.Errorf("PATCH model of an unknown conversation: %d %s", code, body)
	}
	s := e.chat(t, context.Background(), id, "hi", nil)
	reqs := ms.Requests()
	if s.first("message_start")["model"] != "openai:other-model" || reqs[len(reqs)-1].JSON()["model"] != "other-model" {
		t.Errorf("the turn ran on %v (request model %v), want the conversation's openai:other-model", s.first("message_start")["model"], reqs[len(reqs)-1].JSON()["model"])
	}
	if !strings.Contains(e.conversation(t, id).texts()[1], "hello") {
		t.Errorf("no answer stored")
	}
}
