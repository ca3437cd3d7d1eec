package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/tool"
)

// otlpSpan is a span as an OTLP/HTTP receiver got it.
type otlpSpan struct {
	name       string
	id, parent []byte
	trace      []byte
	attrs      map[string]string
	intAttrs   map[string]int64
}

// otlpReceiver is a minimal OTLP/HTTP trace receiver.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []otlpSpan
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := otlpSpan{name: s.Name, id: s.SpanId, parent: s.ParentSpanId, trace: s.TraceId,
					attrs: map[string]string{}, intAttrs: map[string]int64{}}
				for _, kv := range s.Attributes {
					sp.attrs[kv.Key] = kv.Value.GetStringValue()
					sp.intAttrs[kv.Key] = kv.Value.GetIntValue()
				}
				rc.spans = append(rc.spans, sp)
			}
		}
	}
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// TestTracesExportedOverOTLP runs a chat turn through the server with the
// telemetry package's OTLP exporter and checks what a collector (or
// Langfuse) receives: the chat-message trace, a generation per model call
// with model and usage, and the tool span under its generation, all in the
// conversation's session.
func TestTracesExportedOverOTLP(t *testing.T) {
	rc := &otlpReceiver{}
	col := httptest.NewServer(rc)
	defer col.Close()
	tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: col.URL, Target: "otlp", ServiceName: "toolport-test"})
	if err != nil {
		t.Fatal(err)
	}
	traced := agent.TracerProvider(tp)
	acfg := agent.Config{TracerProvider: traced}
	e := newEnv(t, envOptions{agent: acfg, reg: testRegistry(t, tool.WithTracerProvider(traced)), turns: []servertest.Turn{
		{Events: []servertest.Event{servertest.Call("c1", "lookup", `{"query":"jazz"}`)}, InputTokens: 12, OutputTokens: 4},
		{Events: []servertest.Event{servertest.Text("Two.")}, InputTokens: 30, OutputTokens: 2},
	}})
	conv := e.newConversation(t)
	e.chat(t, context.Background(), conv, "find jazz", nil)
	// The stream can deliver message_end before the turn's root span ends
	// (it ends when the agent returns, just before the turn is marked
	// ended): wait for that, or shutdown may flush without it.
	e.waitTurns(t)
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	byName := map[string][]otlpSpan{}
	for _, s := range rc.spans {
		byName[s.name] = append(byName[s.name], s)
		if s.attrs["session.id"] != conv || s.attrs["langfuse.session.id"] != conv {
			t.Errorf("span %s: session %q/%q, want %s", s.name, s.attrs["session.id"], s.attrs["langfuse.session.id"], conv)
		}
		if bytes.Contains([]byte(s.attrs["input.value"]+s.attrs["output.value"]), []byte(servertest.APIKey)) {
			t.Errorf("span %s carries the API key", s.name)
		}
	}
	if len(byName["chat-message"]) != 1 || len(byName["llm-generation"]) != 2 || len(byName["tool-lookup"]) != 1 {
		t.Fatalf("spans received: %v", keys(byName))
	}
	root, tl := byName["chat-message"][0], byName["tool-lookup"][0]
	if len(root.parent) != 0 {
		t.Errorf("chat-message has a parent")
	}
	var first otlpSpan
	for _, g := range byName["llm-generation"] {
		if !bytes.Equal(g.parent, root.id) || !bytes.Equal(g.trace, root.trace) {
			t.Errorf("generation is not a child of chat-message")
		}
		if g.attrs["langfuse.observation.type"] != "generation" || g.attrs["gen_ai.request.model"] != servertest.ModelName {
			t.Errorf("generation attributes %v", g.attrs)
		}
		if g.intAttrs["gen_ai.usage.input_tokens"] == 12 {
			first = g
		}
	}
	if first.id == nil || first.intAttrs["gen_ai.usage.output_tokens"] != 4 {
		t.Fatalf("no generation with the first call's usage (12/4)")
	}
	if !bytes.Equal(tl.parent, first.id) {
		t.Errorf("tool-lookup is not a child of the generation that asked for it")
	}
	if tl.attrs["langfuse.observation.type"] != "tool" || tl.attrs["tool.name"] != "lookup" {
		t.Errorf("tool span attributes %v", tl.attrs)
	}
	if root.attrs["langfuse.trace.name"] != "chat-message" || root.attrs["input.value"] != "find jazz" || root.attrs["output.value"] != "Two." {
		t.Errorf("chat-message attributes %v", root.attrs)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
