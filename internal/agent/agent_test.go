package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// scenario is one chat turn against the scripted model, run through both
// real SDK providers on every store engine.
type scenario struct {
	name     string
	prompt   string
	turns    []servertest.Turn
	maxSteps int
	setup    func(ts *tools)
	check    func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request)
}

func TestTurnEndToEnd(t *testing.T) {
	scenarios := []scenario{
		{
			name:   "one tool call",
			prompt: "find jazz",
			turns: []servertest.Turn{
				{Match: "find jazz", Events: []servertest.Event{servertest.Text("Looking."), servertest.Call("call_1", "lookup", `{"query":"jazz"}`)}, InputTokens: 10, OutputTokens: 5},
				{Match: "find jazz", Step: 1, Events: []servertest.Event{servertest.Text("Found "), servertest.Text("two.")}, InputTokens: 20, OutputTokens: 7},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				wantTypes(t, r, "message_start", "text_delta", "tool_call_start", "tool_call_end", "text_delta", "text_delta", "message_end")
				start := r.first("tool_call_start")
				if start["toolCallId"] != "call_1" || start["toolName"] != "lookup" || start["input"].(map[string]any)["query"] != "jazz" {
					t.Errorf("tool_call_start = %v", start)
				}
				end := r.first("tool_call_end")
				if end["summary"] != "2 items" || end["resultCount"] != 2.0 || end["result"].(map[string]any)["success"] != true {
					t.Errorf("tool_call_end = %v", end)
				}
				me := r.first("message_end")
				if me["stopReason"] != "end_turn" {
					t.Errorf("stopReason = %v", me["stopReason"])
				}
				if u := me["usage"].(map[string]any); u["inputTokens"] != 30.0 || u["outputTokens"] != 12.0 {
					t.Errorf("usage = %v, want the sum of both calls (30, 12)", u)
				}
				if len(msgs) != 2 || msgs[0].Role != store.RoleUser || msgs[1].Role != store.RoleAssistant {
					t.Fatalf("stored %d messages, want user and assistant", len(msgs))
				}
				if msgs[1].ID != me["messageId"] || msgs[1].Incomplete {
					t.Errorf("assistant message id %s incomplete %v; message_end says %v", msgs[1].ID, msgs[1].Incomplete, me["messageId"])
				}
				if got, want := blockTypes(blocks[1]), []string{"text", "tool_use", "tool_result", "text"}; !slices.Equal(got, want) {
					t.Errorf("assistant blocks = %v, want %v", got, want)
				}
				if blocks[1][3].Text != "Found two." {
					t.Errorf("final text = %q", blocks[1][3].Text)
				}
				var env map[string]any
				json.Unmarshal(blocks[1][2].Content, &env)
				if env["success"] != true || blocks[1][2].IsError || blocks[1][2].ToolUseID != "call_1" {
					t.Errorf("tool_result = %+v", blocks[1][2])
				}
				if len(reqs) != 2 {
					t.Errorf("model got %d requests, want 2", len(reqs))
				}
			},
		},
		{
			name:   "two parallel calls",
			prompt: "compare",
			setup: func(ts *tools) {
				var wg sync.WaitGroup
				wg.Add(2) // both lookups must be running at the same time to get past it
				ts.barrier = &wg
			},
			turns: []servertest.Turn{
				{Match: "compare", Events: []servertest.Event{servertest.Call("a", "lookup", `{"query":"x"}`), servertest.Call("b", "lookup", `{"query":"y"}`)}},
				{Match: "compare", Step: 1, Events: []servertest.Event{servertest.Text("Both done.")}},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				types := r.types()
				firstEnd := slices.Index(types, "tool_call_end")
				if n := len(r.all("tool_call_start")); n != 2 || slices.Index(types[firstEnd:], "tool_call_start") >= 0 {
					t.Errorf("events %v: want both starts before any end", types)
				}
				if got, want := blockTypes(blocks[1]), []string{"tool_use", "tool_use", "tool_result", "tool_result", "text"}; !slices.Equal(got, want) {
					t.Errorf("assistant blocks = %v, want %v", got, want)
				}
				if blocks[1][2].ToolUseID != "a" || blocks[1][3].ToolUseID != "b" {
					t.Errorf("results not in call order: %s, %s", blocks[1][2].ToolUseID, blocks[1][3].ToolUseID)
				}
			},
		},
		{
			name:   "failing tool is retried once and reaches the model",
			prompt: "flaky please",
			turns: []servertest.Turn{
				{Match: "flaky", Events: []servertest.Event{servertest.Call("f1", "flaky", `{"query":"q"}`)}},
				{Match: "flaky", Step: 1, Events: []servertest.Event{servertest.Text("The service is down.")}},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				wantTypes(t, r, "message_start", "tool_call_start", "tool_call_error", "text_delta", "message_end")
				e := r.first("tool_call_error")
				if e["errorCode"] != "NETWORK_ERROR" || e["retryable"] != true || e["wasRetried"] != true || e["error"] == "" {
					t.Errorf("tool_call_error = %v", e)
				}
				res := blocks[1][1]
				if !res.IsError {
					t.Errorf("stored tool_result is not is_error: %+v", res)
				}
				var env map[string]any
				json.Unmarshal(res.Content, &env)
				if env["success"] != false || env["error_code"] != "NETWORK_ERROR" || env["wasRetried"] != true {
					t.Errorf("tool_result content = %v", env)
				}
				if !strings.Contains(string(reqs[1].Body), "NETWORK_ERROR") {
					t.Errorf("the model's second request does not carry the structured error:\n%s", reqs[1].Body)
				}
			},
		},
		{
			name:     "max steps reached asks for an answer without tools",
			prompt:   "loop forever",
			maxSteps: 2,
			turns: []servertest.Turn{
				{Match: "loop", Step: 0, Events: []servertest.Event{servertest.Call("s0", "lookup", `{"query":"0"}`)}},
				{Match: "loop", Step: 1, Events: []servertest.Event{servertest.Call("s1", "lookup", `{"query":"1"}`)}},
				{Match: "loop", Step: 2, Events: []servertest.Event{servertest.Text("Enough: here is what I have."), servertest.Call("s2", "lookup", `{"query":"2"}`)}},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				if me := r.first("message_end"); me["stopReason"] != "max_steps" {
					t.Errorf("stopReason = %v, want max_steps", me["stopReason"])
				}
				if n := len(r.all("tool_call_start")); n != 2 {
					t.Errorf("%d tool calls ran, want 2 (the final answer's call is not run)", n)
				}
				if len(reqs) != 3 {
					t.Fatalf("model got %d requests, want 3", len(reqs))
				}
				for i, req := range reqs {
					none := toolChoiceNone(req)
					if none != (i == 2) {
						t.Errorf("request %d: tool choice none = %v", i, none)
					}
				}
				if got, want := blockTypes(blocks[1]), []string{"tool_use", "tool_result", "tool_use", "tool_result", "text"}; !slices.Equal(got, want) {
					t.Errorf("assistant blocks = %v, want %v", got, want)
				}
			},
		},
		{
			name:   "5xx twice is an error event, the user message stays",
			prompt: "fail hard",
			turns: []servertest.Turn{
				{Match: "fail hard", Status: 500},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				wantTypes(t, r, "message_start", "error", "message_end")
				e := r.first("error")
				if e["code"] != "MODEL_ERROR" || e["retryable"] != true || !strings.Contains(e["message"].(string), "500") {
					t.Errorf("error = %v", e)
				}
				if r.first("message_end")["stopReason"] != "error" {
					t.Errorf("stopReason = %v", r.first("message_end")["stopReason"])
				}
				if len(reqs) != 2 {
					t.Errorf("model got %d requests, want 2 (one retry)", len(reqs))
				}
				// The failure is stored as an answer of its own (no content).
				if len(msgs) != 2 || msgs[1].Error == nil || msgs[1].Error.Code != "MODEL_ERROR" || len(blocks[1]) != 0 {
					t.Errorf("stored %+v, want the user's message and the failure", msgs)
				}
			},
		},
		{
			name:   "429 then success",
			prompt: "busy",
			turns: []servertest.Turn{
				{Status: 429, RetryAfter: "0"},
				{Events: []servertest.Event{servertest.Text("Fine now.")}},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				wantTypes(t, r, "message_start", "text_delta", "message_end")
				if len(reqs) != 2 {
					t.Errorf("model got %d requests, want 2", len(reqs))
				}
				if len(msgs) != 2 || msgs[1].Incomplete || blocks[1][0].Text != "Fine now." {
					t.Errorf("stored %+v", msgs)
				}
			},
		},
		{
			name:   "429 twice is a RATE_LIMIT error",
			prompt: "busy",
			turns:  []servertest.Turn{{Status: 429}, {Status: 429}},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				if e := r.first("error"); e["code"] != "RATE_LIMIT" || e["retryable"] != true {
					t.Errorf("error = %v", e)
				}
			},
		},
		{
			name:   "broken connection mid-stream saves the partial answer",
			prompt: "break",
			turns: []servertest.Turn{
				{Match: "break", Events: []servertest.Event{servertest.Text("Half an ans"), servertest.Break()}},
			},
			check: func(t *testing.T, r *recorder, msgs []store.Message, blocks [][]llm.Block, reqs []servertest.Request) {
				wantTypes(t, r, "message_start", "text_delta", "error", "message_end")
				if e := r.first("error"); e["code"] != "MODEL_ERROR" || e["retryable"] != true {
					t.Errorf("error = %v", e)
				}
				if len(reqs) != 1 {
					t.Errorf("model got %d requests: a stream that produced output must not be retried", len(reqs))
				}
				if len(msgs) != 2 || !msgs[1].Incomplete || blocks[1][0].Text != "Half an ans" {
					t.Fatalf("stored %+v", msgs)
				}
			},
		},
	}
	for _, kind := range []string{"anthropic", "openai"} {
		for _, engine := range backends {
			for _, sc := range scenarios {
				t.Run(kind+"/"+engine+"/"+sc.name, func(t *testing.T) {
					t.Parallel()
					db := openStore(t, engine)
					ts := newTools(t)
					if sc.setup != nil {
						sc.setup(ts)
					}
					ms := servertest.NewModelServer(t, sc.turns...)
					a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: provider(t, kind, ms), MaxSteps: sc.maxSteps})
					conv := newConversation(t, db)
					r := &recorder{}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					if err := a.Turn(ctx, store.Fence{}, conv, sc.prompt, r.emit); err != nil {
						t.Fatalf("Turn: %v", err)
					}
					msgs, blocks := storedBlocks(t, db, conv)
					if len(msgs) == 0 || blocks[0][0].Text != sc.prompt {
						t.Fatalf("the user message was not stored")
					}
					if ms := r.first("message_start"); ms["conversationId"] != conv || ms["messageId"] == "" {
						t.Errorf("message_start = %v", ms)
					}
					sc.check(t, r, msgs, blocks, ms.Requests())
				})
			}
		}
	}
}

func wantTypes(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	if got := r.types(); !slices.Equal(got, want) {
		t.Errorf("events = %v\nwant     %v", got, want)
	}
}

// toolChoiceNone reports whether a request forbids tool calls, in either API.
func toolChoiceNone(req servertest.Request) bool {
	switch tc := req.JSON()["tool_choice"].(type) {
	case string:
		return tc == "none"
	case map[string]any:
		return tc["type"] == "none"
	}
	return false
}

func TestHistoryIsSentBackInNativeFormat(t *testing.T) {
	for _, kind := range []string{"anthropic", "openai"} {
		for _, engine := range backends {
			t.Run(kind+"/"+engine, func(t *testing.T) {
				t.Parallel()
				db := openStore(t, engine)
				ts := newTools(t)
				ms := servertest.NewModelServer(t,
					servertest.Turn{Match: "first", Events: []servertest.Event{servertest.Text("Checking."), servertest.Call("c1", "lookup", `{"query":"q"}`)}},
					servertest.Turn{Match: "first", Step: 1, Events: []servertest.Event{servertest.Text("Two items.")}},
					servertest.Turn{Match: "second", Events: []servertest.Event{servertest.Text("As I said.")}},
				)
				conv := newConversation(t, db)
				ctx := context.Background()
				// Two agents: the second turn reads the history from the store,
				// as after a restart.
				for i, prompt := range []string{"first question", "second question"} {
					a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: provider(t, kind, ms)})
					r := &recorder{}
					if err := a.Turn(ctx, store.Fence{}, conv, prompt, r.emit); err != nil {
						t.Fatal(err)
					}
					if e := r.first("error"); e != nil {
						t.Fatalf("turn %d: %v", i, e)
					}
				}
				reqs := ms.Requests()
				if len(reqs) != 3 {
					t.Fatalf("model got %d requests, want 3", len(reqs))
				}
				got := roles(t, kind, reqs[2])
				want := map[string][]string{
					"anthropic": {"user:text", "assistant:text,tool_use", "user:tool_result", "assistant:text", "user:text"},
					"openai":    {"system", "user", "assistant+tool_calls", "tool", "assistant", "user"},
				}[kind]
				if !slices.Equal(got, want) {
					t.Errorf("second turn's messages = %v\nwant %v\n%s", got, want, reqs[2].Body)
				}
				body := string(reqs[2].Body)
				for _, s := range []string{`"c1"`, `2 items`, `Two items.`, `second question`} {
					if !strings.Contains(body, s) {
						t.Errorf("second turn's request lacks %s", s)
					}
				}
				c, _ := db.GetConversation(ctx, conv)
				if c.Title != "first question" {
					t.Errorf("title = %q, want the first message", c.Title)
				}
			})
		}
	}
}

// roles summarises a request's messages: "role:blocktypes" for Anthropic,
// "role" (+tool_calls) for OpenAI.
func roles(t *testing.T, kind string, req servertest.Request) []string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []any           `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		if kind == "openai" {
			s := m.Role
			if len(m.ToolCalls) > 0 {
				s += "+tool_calls"
			}
			out = append(out, s)
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		json.Unmarshal(m.Content, &blocks)
		var types []string
		for _, b := range blocks {
			types = append(types, b.Type)
		}
		out = append(out, m.Role+":"+strings.Join(types, ","))
	}
	return out
}

func TestClientDisconnect(t *testing.T) {
	cases := []struct {
		name       string
		turn       servertest.Turn
		cancelOn   string // the event type whose arrival cancels the turn
		wantBlocks []string
	}{
		{
			name:       "while the model streams",
			turn:       servertest.Turn{Match: "story", Events: []servertest.Event{servertest.Text("Once upon"), servertest.Pause(time.Hour), servertest.Text(" a time")}},
			cancelOn:   "text_delta",
			wantBlocks: []string{"text"},
		},
		{
			name:       "while a tool runs",
			turn:       servertest.Turn{Match: "story", Events: []servertest.Event{servertest.Text("Let me wait."), servertest.Call("w", "slow", `{"query":"q"}`)}},
			cancelOn:   "tool_call_start",
			wantBlocks: []string{"text", "tool_use", "tool_result"},
		},
	}
	for _, kind := range []string{"anthropic", "openai"} {
		for _, engine := range backends {
			for _, tc := range cases {
				t.Run(kind+"/"+engine+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					db := openStore(t, engine)
					ts := newTools(t)
					ms := servertest.NewModelServer(t, tc.turn)
					a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: provider(t, kind, ms)})
					conv := newConversation(t, db)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					r := &recorder{on: func(w wire) {
						if w.typ() == tc.cancelOn {
							cancel() // the client goes away
						}
					}}
					if err := a.Turn(ctx, store.Fence{}, conv, "tell me a story", r.emit); err != nil {
						t.Fatal(err)
					}
					if me := r.first("message_end"); me["stopReason"] != "canceled" {
						t.Errorf("message_end = %v, want stopReason canceled", me)
					}
					if r.first("error") != nil {
						t.Errorf("a canceled turn reported an error: %v", r.first("error"))
					}
					msgs, blocks := storedBlocks(t, db, conv)
					if len(msgs) != 2 || !msgs[1].Incomplete {
						t.Fatalf("stored %+v, want the user message and an incomplete answer", msgs)
					}
					if got := blockTypes(blocks[1]); !slices.Equal(got, tc.wantBlocks) {
						t.Errorf("saved blocks = %v, want %v", got, tc.wantBlocks)
					}
					if tc.cancelOn == "tool_call_start" {
						var env map[string]any
						json.Unmarshal(blocks[1][2].Content, &env)
						if !blocks[1][2].IsError || env["error_code"] != "CANCELED" {
							t.Errorf("tool_result of the canceled call = %s", blocks[1][2].Content)
						}
					}
				})
			}
		}
	}
}

func TestNoModelConfigured(t *testing.T) {
	for _, engine := range backends {
		t.Run(engine, func(t *testing.T) {
			db := openStore(t, engine)
			a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg})
			if a.ModelConfigured() || !strings.Contains(a.ModelHelp(), "TOOLPORT_MODEL") {
				t.Errorf("ModelConfigured %v, ModelHelp %q", a.ModelConfigured(), a.ModelHelp())
			}
			conv := newConversation(t, db)
			r := &recorder{}
			if err := a.Turn(context.Background(), store.Fence{}, conv, "hello?", r.emit); err != nil {
				t.Fatal(err)
			}
			wantTypes(t, r, "message_start", "error", "message_end")
			e := r.first("error")
			if e["code"] != "MODEL_NOT_CONFIGURED" || e["retryable"] != false || !strings.Contains(e["message"].(string), "TOOLPORT_MODEL") {
				t.Errorf("error = %v", e)
			}
			msgs, _ := storedBlocks(t, db, conv)
			if len(msgs) != 2 || msgs[0].Role != store.RoleUser || msgs[1].Error == nil || msgs[1].Error.Code != "MODEL_NOT_CONFIGURED" {
				t.Errorf("stored %+v, want the user message and the failure", msgs)
			}
		})
	}
}

func TestTurnRefusals(t *testing.T) {
	db := openStore(t, store.EngineSQLite)
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg})
	conv := newConversation(t, db)
	emit := func(ev agent.Event) { t.Errorf("emitted %v for a refused turn", ev) }
	if err := a.Turn(context.Background(), store.Fence{}, conv, "  \n", emit); !errors.Is(err, agent.ErrEmptyMessage) {
		t.Errorf("empty message: %v", err)
	}
	if err := a.Turn(context.Background(), store.Fence{}, "no-such-conversation", "hi", emit); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown conversation: %v", err)
	}
}

// TestRecordedStreams replays the recorded upstream streams of
// ../llm/testdata through the real SDKs and runs their tool calls.
func TestRecordedStreams(t *testing.T) {
	cases := []struct {
		kind, fixture string
		wantCalls     []string
		wantText      string
	}{
		{"anthropic", "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse", []string{"calculateTip", "getWaiterName"}, "I'll calculate the tip and get the waiter's name for you."},
		{"openai", "openai/gpt-4.1.single-tool-call.sse", []string{"getCurrentWeather"}, ""},
		{"openai", "openai/gpt-4.1.parallel-tool-calls.sse", []string{"getCurrentWeather", "getCurrentTime"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			raw, err := os.ReadFile("../llm/testdata/" + tc.fixture)
			if err != nil {
				t.Fatal(err)
			}
			db := openStore(t, store.EngineSQLite)
			ms := servertest.NewModelServer(t,
				servertest.Turn{Raw: raw},
				servertest.Turn{Events: []servertest.Event{servertest.Text("Done.")}})
			a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, tc.kind, ms)})
			conv := newConversation(t, db)
			r := &recorder{}
			if err := a.Turn(context.Background(), store.Fence{}, conv, "go", r.emit); err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, s := range r.all("tool_call_start") {
				calls = append(calls, s["toolName"].(string))
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("tool calls = %v, want %v", calls, tc.wantCalls)
			}
			if n := len(r.all("tool_call_end")); n != len(tc.wantCalls) {
				t.Errorf("%d tool_call_end, want %d; events %v", n, len(tc.wantCalls), r.types())
			}
			if got := r.text(); got != tc.wantText+"Done." {
				t.Errorf("text = %q", got)
			}
			if tc.kind == "anthropic" {
				var tip any
				for _, end := range r.all("tool_call_end") { // the calls run concurrently: any order
					if end["toolCallId"] == "toolu_01VsaoaKxpzdz8vgY4hTGjE3" {
						tip = end["result"].(map[string]any)["tip"]
					}
				}
				if tip != 7.5 {
					t.Errorf("calculateTip tip = %v, want 7.5 (input reassembled from split fragments?)", tip)
				}
			}
		})
	}
}

func TestResultCount(t *testing.T) {
	cases := []struct {
		envelope string
		want     int
	}{
		{`{"success":true,"tracks":[1,2,3],"albums":[4]}`, 4},
		{`{"success":true,"results":[],"count":0}`, 0},
		{`{"success":true,"count":7}`, 7},
		{`{"success":true,"url":"u","content":"text"}`, 1},
		{`not json`, 0},
	}
	for _, c := range cases {
		if got := agent.ResultCount(json.RawMessage(c.envelope)); got != c.want {
			t.Errorf("ResultCount(%s) = %d, want %d", c.envelope, got, c.want)
		}
	}
}

func TestTitle(t *testing.T) {
	cases := []struct{ in, want string }{
		{"  Find melancholic songs \n and more", "Find melancholic songs"},
		{strings.Repeat("é", 100), strings.Repeat("é", agent.MaxTitleRunes-1) + "…"},
		{"tab\there", "tab here"},
	}
	for _, c := range cases {
		if got := agent.Title(c.in); got != c.want {
			t.Errorf("Title(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSystemPromptNamesPacksAndTools(t *testing.T) {
	p := agent.SystemPrompt(newTools(t).reg)
	for _, s := range []string{"test:", "lookup", "fixture:", "calculateTip", "not instructions"} {
		if !strings.Contains(p, s) {
			t.Errorf("system prompt lacks %q:\n%s", s, p)
		}
	}
	_ = tool.CodeNetwork
}
