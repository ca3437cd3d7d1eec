package telemetry_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/telemetry"
)

// receiver is a minimal OTLP/HTTP trace receiver.
type receiver struct {
	mu    sync.Mutex
	spans map[string]map[string]string // span name -> attributes
	auth  []string
	paths []string
	ctype []string
	last  *tracepb.TracesData
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	// TracesData has the wire form of ExportTraceServiceRequest; the
	// collector package that declares the latter pulls in gRPC.
	var req tracepb.TracesData
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.auth = append(rc.auth, r.Header.Get("Authorization"))
	rc.paths = append(rc.paths, r.URL.Path)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[kv.Key] = kv.Value.GetStringValue()
				}
				rc.spans[s.Name] = attrs
			}
		}
	}
	rc.ctype = append(rc.ctype, r.Header.Get("Content-Type"))
	rc.last = &req
	w.Header().Set("Content-Type", "application/x-protobuf")
	// An empty ExportTraceServiceResponse encodes as no bytes.
}

func TestExportsToLangfuseOTLPEndpoint(t *testing.T) {
	rc := &receiver{spans: map[string]map[string]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	env := map[string]string{"LANGFUSE_PUBLIC_KEY": "pk-lf-1", "LANGFUSE_SECRET_KEY": "sk-lf-2", "LANGFUSE_HOST": srv.URL}
	c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := telemetry.FromConfig(c)
	tp, shutdown, err := telemetry.Setup(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "tool-web_fetch")
	span.SetAttributes(attribute.String("langfuse.observation.type", "tool"))
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if got := rc.spans["tool-web_fetch"]["langfuse.observation.type"]; got != "tool" {
		t.Errorf("span not received with its attributes: %v", rc.spans)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("pk-lf-1:sk-lf-2"))
	if len(rc.auth) == 0 || rc.auth[0] != want {
		t.Errorf("authorization = %v", rc.auth)
	}
	if rc.paths[0] != "/api/public/otel/v1/traces" {
		t.Errorf("path = %s", rc.paths[0])
	}
	// Both keys are secrets, and so is their pair's base64, which is no
	// form of either key alone.
	if got, want := c.Secrets(), []string{"pk-lf-1", "sk-lf-2", base64.StdEncoding.EncodeToString([]byte("pk-lf-1:sk-lf-2"))}; !slices.Equal(got, want) {
		t.Errorf("secrets = %q, want %q", got, want)
	}
}

func TestConfigPrecedenceAndOff(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		endpoint string
		target   string
	}{
		{"nothing set: tracing off", nil, "", ""},
		{"OTLP endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"}, "http://127.0.0.1:4318", "otlp"},
		{"OTLP wins over Langfuse", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "LANGFUSE_PUBLIC_KEY": "a", "LANGFUSE_SECRET_KEY": "b"}, "http://127.0.0.1:4318", "otlp"},
		{"Langfuse default host", map[string]string{"LANGFUSE_PUBLIC_KEY": "a", "LANGFUSE_SECRET_KEY": "b"}, telemetry.DefaultLangfuseHost + "/api/public/otel", "langfuse"},
		{"Langfuse needs both keys", map[string]string{"LANGFUSE_PUBLIC_KEY": "a"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := config.New(func(k string) string { return tt.env[k] }, t.TempDir())
			cfg := telemetry.FromConfig(c)
			if cfg.Endpoint != tt.endpoint || cfg.Target != tt.target {
				t.Errorf("got %q %q, want %q %q", cfg.Endpoint, cfg.Target, tt.endpoint, tt.target)
			}
		})
	}
	if _, _, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: "ftp://x", Target: "otlp"}); err == nil {
		t.Error("non-http endpoint accepted")
	}
}

// TestExportedSpanFields checks the OTLP encoding of what the agent's spans
// carry: kind, parent, status (numbered differently in otel-go and OTLP),
// typed and array attributes, events, the resource and the scope.
func TestExportedSpanFields(t *testing.T) {
	rc := &receiver{spans: map[string]map[string]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: srv.URL, Target: "otlp", ServiceName: "toolport-test", Headers: map[string]string{"X-Key": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("toolport/agent").Start(context.Background(), "chat", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tp.Tracer("toolport/agent").Start(ctx, "tool-web_fetch", trace.WithSpanKind(trace.SpanKindClient))
	child.SetAttributes(attribute.Int("n", 7), attribute.Bool("ok", true), attribute.Float64("f", 0.5), attribute.StringSlice("tags", []string{"a", "b"}))
	child.AddEvent("retry", trace.WithAttributes(attribute.String("why", "503")))
	child.SetStatus(codes.Error, "upstream said no")
	child.End()
	parent.SetStatus(codes.Ok, "")
	parent.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.ctype) == 0 || rc.ctype[0] != "application/x-protobuf" || rc.paths[0] != "/v1/traces" {
		t.Fatalf("requests: content types %v, paths %v", rc.ctype, rc.paths)
	}
	rs := rc.last.ResourceSpans
	if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 || rs[0].ScopeSpans[0].Scope.Name != "toolport/agent" {
		t.Fatalf("grouping: %v", rc.last)
	}
	var service string
	for _, kv := range rs[0].Resource.Attributes {
		if kv.Key == "service.name" {
			service = kv.Value.GetStringValue()
		}
	}
	if service != "toolport-test" {
		t.Errorf("service.name = %q", service)
	}
	byName := map[string]*tracepb.Span{}
	for _, s := range rs[0].ScopeSpans[0].Spans {
		byName[s.Name] = s
	}
	chat, tool := byName["chat"], byName["tool-web_fetch"]
	if chat == nil || tool == nil {
		t.Fatalf("spans: %v", byName)
	}
	if chat.Kind != tracepb.Span_SPAN_KIND_SERVER || tool.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds %v %v", chat.Kind, tool.Kind)
	}
	if string(tool.ParentSpanId) != string(chat.SpanId) || string(tool.TraceId) != string(chat.TraceId) || len(chat.ParentSpanId) != 0 {
		t.Errorf("parentage: chat %x/%x, tool %x parent %x", chat.TraceId, chat.SpanId, tool.SpanId, tool.ParentSpanId)
	}
	if tool.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || tool.Status.GetMessage() != "upstream said no" || chat.Status.GetCode() != tracepb.Status_STATUS_CODE_OK {
		t.Errorf("status: tool %v, chat %v", tool.Status, chat.Status)
	}
	if tool.StartTimeUnixNano == 0 || tool.EndTimeUnixNano < tool.StartTimeUnixNano {
		t.Errorf("times %d %d", tool.StartTimeUnixNano, tool.EndTimeUnixNano)
	}
	attrs := map[string]string{}
	for _, kv := range tool.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	for k, want := range map[string]string{"n": "int_value:7", "ok": "bool_value:true", "f": "double_value:0.5", "tags": `array_value:{values:{string_value:"a"} values:{string_value:"b"}}`} {
		if got := strings.Join(strings.Fields(attrs[k]), " "); got != want {
			t.Errorf("attribute %s = %s, want %s", k, got, want)
		}
	}
	if len(tool.Events) != 1 || tool.Events[0].Name != "retry" || tool.Events[0].Attributes[0].Value.GetStringValue() != "503" {
		t.Errorf("events %v", tool.Events)
	}
}

// TestRefusedExportIsAnError checks that a collector's refusal reaches the
// batcher (which drops the batch) rather than passing silently, and that the
// error does not carry the credentials headers.
func TestRefusedExportIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad auth", http.StatusUnauthorized)
	}))
	defer srv.Close()
	var got []error
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { got = append(got, err) }))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: srv.URL, Target: "otlp", Headers: map[string]string{"Authorization": "Basic c2VjcmV0"}})
	if err != nil {
		t.Fatal(err)
	}
	_, s := tp.Tracer("t").Start(context.Background(), "x")
	s.End()
	err = shutdown(context.Background())
	if err == nil && len(got) == 0 {
		t.Fatal("a refused export went unreported")
	}
	msg := fmt.Sprint(err, got)
	if !strings.Contains(msg, "401") || strings.Contains(msg, "c2VjcmV0") {
		t.Errorf("error = %s", msg)
	}
}
