package telemetry_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
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
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
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
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(out)
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
	for _, s := range c.Secrets() {
		if s != "pk-lf-1" && s != "sk-lf-2" {
			t.Errorf("unexpected secret %q", s)
		}
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
