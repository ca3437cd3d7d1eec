package agent_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// spanAttrs returns a span's attributes as strings.
func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// CheckTrace asserts the shape of one chat turn's trace: a chat-message root,
// a generation span per model call under it, and the tool spans under the
// generation that asked for them, every span in the conversation's session.
func checkTrace(t *testing.T, spans []sdktrace.ReadOnlySpan, convID string) {
	t.Helper()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
		a := spanAttrs(s)
		if a["session.id"] != convID || a["langfuse.session.id"] != convID {
			t.Errorf("span %s: session.id %q, langfuse.session.id %q; want %q", s.Name(), a["session.id"], a["langfuse.session.id"], convID)
		}
		for k, v := range a {
			if strings.Contains(v, servertest.APIKey) {
				t.Errorf("span %s attribute %s holds the API key", s.Name(), k)
			}
		}
	}
	roots := byName["chat-message"]
	if len(roots) != 1 {
		t.Fatalf("%d chat-message spans, want 1", len(roots))
	}
	root := roots[0]
	if root.Parent().IsValid() {
		t.Errorf("chat-message has a parent")
	}
	gens := byName["llm-generation"]
	if len(gens) != 2 {
		t.Fatalf("%d generation spans, want 2", len(gens))
	}
	for _, g := range gens {
		a := spanAttrs(g)
		if g.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("generation is not a child of chat-message")
		}
		if a["langfuse.observation.type"] != "generation" || a["gen_ai.request.model"] != servertest.ModelName || a["gen_ai.system"] != "anthropic" {
			t.Errorf("generation attributes = %v", a)
		}
	}
	if a := spanAttrs(gens[0]); a["gen_ai.usage.input_tokens"] != "11" || a["gen_ai.usage.output_tokens"] != "3" {
		t.Errorf("first generation usage = %s/%s, want 11/3", a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"])
	}
	tools := byName["tool-lookup"]
	if len(tools) != 1 {
		t.Fatalf("%d tool-lookup spans, want 1", len(tools))
	}
	ta := spanAttrs(tools[0])
	if tools[0].Parent().SpanID() != gens[0].SpanContext().SpanID() {
		t.Errorf("tool-lookup is not a child of the generation that called it")
	}
	if ta["langfuse.observation.type"] != "tool" || !strings.Contains(ta["input.value"], "jazz") || !strings.Contains(ta["output.value"], "jazz 1") {
		t.Errorf("tool span attributes = %v", ta)
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("span %s is in another trace", s.Name())
		}
	}
}

// tracedTurn runs a one-tool turn with tp.
func tracedTurn(t *testing.T, tp *sdktrace.TracerProvider) string {
	t.Helper()
	wrapped := agent.TracerProvider(tp)
	db := openStore(t, store.EngineSQLite)
	ts := newTools(t, tool.WithTracerProvider(wrapped))
	ms := servertest.NewModelServer(t,
		servertest.Turn{Events: []servertest.Event{servertest.Call("c", "lookup", `{"query":"jazz"}`)}, InputTokens: 11, OutputTokens: 3},
		servertest.Turn{Events: []servertest.Event{servertest.Text("Two.")}, InputTokens: 20, OutputTokens: 2},
	)
	a := newAgent(t, agent.Config{Store: db, Registry: ts.reg, Provider: provider(t, "anthropic", ms), TracerProvider: wrapped})
	conv := newConversation(t, db)
	r := &recorder{}
	if err := a.Turn(context.Background(), store.Fence{}, conv, "find jazz", r.emit); err != nil {
		t.Fatal(err)
	}
	return conv
}

func TestTracing(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	conv := tracedTurn(t, tp)
	checkTrace(t, sr.Ended(), conv)
}
