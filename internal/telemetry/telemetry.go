// Package telemetry sets up OpenTelemetry tracing for Toolport's processes.
//
// Spans are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, or
// to Langfuse when LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are (Langfuse's
// OTLP endpoint is LANGFUSE_HOST + /api/public/otel with HTTP Basic auth).
// With neither, tracing is off and costs nothing.
package telemetry

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolport/toolport/internal/config"
)

// DefaultLangfuseHost is Langfuse Cloud's EU region.
const DefaultLangfuseHost = "https://cloud.langfuse.com"

// Config says where spans go.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL; spans are posted to Endpoint + "/v1/traces".
	// Empty disables export.
	Endpoint string
	// Headers are sent with every export (authorization for Langfuse). They are
	// secrets: never logged.
	Headers     map[string]string
	ServiceName string
	// Target names the destination for messages ("langfuse", "otlp"), without secrets.
	Target string
}

// FromConfig reads the OTLP and Langfuse variables. OTEL_EXPORTER_OTLP_ENDPOINT
// wins over the Langfuse settings when both are present.
func FromConfig(c *config.Config) Config {
	cfg := Config{ServiceName: c.Default("OTEL_SERVICE_NAME", "toolport")}
	if ep := c.Env("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		cfg.Endpoint, cfg.Target = strings.TrimRight(ep, "/"), "otlp"
		cfg.Headers = parseHeaders(c.Env("OTEL_EXPORTER_OTLP_HEADERS"))
		// Header values are credentials (an API key, a Basic pair): listed
		// with the other secrets, so nothing Toolport emits shows them.
		for _, v := range cfg.Headers {
			c.AddSecret(v)
			if _, cred, ok := strings.Cut(v, " "); ok { // "Bearer xyz", "Basic …"
				c.AddSecret(strings.TrimSpace(cred))
			}
		}
		return cfg
	}
	pk := c.Secret("LANGFUSE_PUBLIC_KEY", "langfuse.public_key")
	sk := c.Secret("LANGFUSE_SECRET_KEY", "langfuse.secret_key")
	if pk != "" && sk != "" {
		host := strings.TrimRight(c.Default("LANGFUSE_HOST", DefaultLangfuseHost), "/")
		auth := base64.StdEncoding.EncodeToString([]byte(pk + ":" + sk))
		cfg.Endpoint, cfg.Target = host+"/api/public/otel", "langfuse"
		cfg.Headers = map[string]string{"Authorization": "Basic " + auth}
		c.AddSecret(auth) // the pair's base64 is no form of either key alone
	}
	return cfg
}

// parseHeaders reads the OTEL_EXPORTER_OTLP_HEADERS format: k=v,k2=v2 (values URL-encoded).
func parseHeaders(s string) map[string]string {
	h := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		h[strings.TrimSpace(k)] = v
	}
	return h
}

// Setup returns a tracer provider for cfg and a shutdown function that flushes
// pending spans. With no endpoint it returns a no-op provider.
func Setup(ctx context.Context, cfg Config) (trace.TracerProvider, func(context.Context) error, error) {
	if cfg.Endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("telemetry: %s endpoint must be an http(s) URL", cfg.Target)
	}
	exp := newExporter(cfg.Endpoint+"/v1/traces", cfg.Headers, 10*time.Second)
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
