package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
)

func TestScriptedPlaysTurnsInOrder(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{
			llmtest.ScriptText("Searching."),
			llmtest.ScriptToolCall("toolu_a", "tidalSearch", `{"query":"jazz"}`),
			llmtest.ScriptToolCall("", "semanticSearch", ""),
		}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Found "), llmtest.ScriptText("3.")}},
	)
	req := llm.Request{Messages: []llm.Message{llm.UserText("jazz please")}}

	s, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := llmtest.Events(t, s)
	if err != nil {
		t.Fatal(err)
	}
	llmtest.CheckOrder(t, evs)
	var types []llm.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	wantTypes := []llm.EventType{llm.EventTextDelta, llm.EventToolCallStart, llm.EventToolCall, llm.EventToolCallStart, llm.EventToolCall, llm.EventUsage, llm.EventDone}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("events %v, want %v", types, wantTypes)
	}
	if c := evs[2].ToolCall; c.ID != "toolu_a" || string(c.Input) != `{"query":"jazz"}` || c.Index != 0 {
		t.Errorf("first call %+v", c)
	}
	if c := evs[4].ToolCall; c.ID == "" || c.Name != "semanticSearch" || string(c.Input) != `{}` || c.Index != 1 {
		t.Errorf("second call %+v", c)
	}
	if evs[5].Usage.InputTokens != 10 || evs[6].StopReason != llm.StopToolUse {
		t.Errorf("usage %+v stop %q", evs[5].Usage, evs[6].StopReason)
	}

	s, _ = p.Stream(t.Context(), req)
	r, err := llm.Collect(s)
	if err != nil || r.Message.Text() != "Found 3." || r.StopReason != llm.StopEndTurn {
		t.Fatalf("second turn: %+v, %v", r, err)
	}
	var e *llm.Error
	if _, err := p.Stream(t.Context(), req); !errors.As(err, &e) || e.Code != llm.CodeInvalidRequest {
		t.Fatalf("third call: err = %v, want no turn left", err)
	}
	if n := len(p.Requests()); n != 3 {
		t.Errorf("recorded %d requests", n)
	}
}

func TestScriptedMatchesByUserTextAndStep(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.ScriptedTurn{Match: "jazz", Step: 0, Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("t1", "tidalSearch", `{"query":"jazz"}`)}},
		llmtest.ScriptedTurn{Match: "jazz", Step: 1, Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Here is jazz.")}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("fallback")}},
	)
	step0 := []llm.Message{llm.UserText("Some JAZZ, please")}
	step1 := append(step0,
		llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t1", "tidalSearch", json.RawMessage(`{"query":"jazz"}`))}},
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t1", json.RawMessage(`{}`), false)}},
	)
	for range 2 { // matched turns replay any number of times
		r := collect(t, p, step0)
		if len(r.ToolCalls) != 1 || r.StopReason != llm.StopToolUse {
			t.Errorf("step 0: %+v", r)
		}
		if r := collect(t, p, step1); r.Message.Text() != "Here is jazz." {
			t.Errorf("step 1: %q", r.Message.Text())
		}
	}
	if r := collect(t, p, []llm.Message{llm.UserText("rock")}); r.Message.Text() != "fallback" {
		t.Errorf("unmatched: %q", r.Message.Text())
	}
}

func collect(t *testing.T, p llm.Provider, msgs []llm.Message) *llm.Response {
	t.Helper()
	s, err := p.Stream(t.Context(), llm.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	r, err := llm.Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestScriptedErrorsAndCancellation(t *testing.T) {
	rateLimited := &llm.Error{Code: llm.CodeRateLimit, Retryable: true, Message: "rate limit exceeded"}
	p := llmtest.NewScripted(
		llmtest.ScriptedTurn{Err: rateLimited},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("partial"), llmtest.ScriptError(&llm.Error{Code: llm.CodeNetwork, Retryable: true, Message: "dropped"})}},
		llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("a"), {Delay: time.Hour, Text: "never"}}},
	)
	req := llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	if _, err := p.Stream(t.Context(), req); !errors.Is(err, rateLimited) {
		t.Fatalf("err = %v, want the scripted failure", err)
	}
	s, _ := p.Stream(t.Context(), req)
	r, err := llm.Collect(s)
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeNetwork || r.Message.Text() != "partial" {
		t.Fatalf("mid-stream failure: %+v, %v", r, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	s, _ = p.Stream(ctx, req)
	if !s.Next() || s.Event().Text != "a" {
		t.Fatal("first event missing")
	}
	cancel() // the hour-long delay must not be waited out
	if s.Next() {
		t.Fatalf("event after cancel: %+v", s.Event())
	}
	if !errors.As(s.Err(), &e) || e.Code != llm.CodeCanceled {
		t.Fatalf("err = %v, want canceled", s.Err())
	}
}

func TestScriptedRejectsBadToolInput(t *testing.T) {
	p := llmtest.NewScripted(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptToolCall("t", "f", `[1]`)}})
	if _, err := p.Stream(t.Context(), llm.Request{}); err == nil {
		t.Fatal("a scripted tool call with a non-object input was accepted")
	}
}
