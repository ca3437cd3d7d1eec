package agent

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span attribute keys. Langfuse reads the langfuse.* keys and the OpenTelemetry
// GenAI conventions (gen_ai.*) from OTLP spans; session.id is the generic
// OpenTelemetry name of the same thing.
const (
	attrSessionID         = "session.id"
	attrLangfuseSessionID = "langfuse.session.id"
	attrObservationType   = "langfuse.observation.type"
	attrTraceName         = "langfuse.trace.name"
	attrInput             = "input.value"
	attrOutput            = "output.value"
)

// maxSpanText bounds the text (prompts, answers) recorded on a span.
const maxSpanText = 8 << 10

type sessionKey struct{}

// WithSession returns a context whose spans (started through a
// [TracerProvider]-wrapped provider) belong to the chat session id: Langfuse
// groups the traces of one conversation by it.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom returns the session set by [WithSession], or "".
func SessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// TracerProvider wraps tp so that every span it starts carries the session of
// its context ([WithSession]) as session.id and langfuse.session.id, and that
// the tool registry's "tool-<name>" spans are typed for Langfuse
// (langfuse.observation.type=tool). Give the wrapped provider to the agent and
// to the tool registry (tool.WithTracerProvider) so that a chat turn's whole
// trace is tagged.
func TracerProvider(tp trace.TracerProvider) trace.TracerProvider {
	return sessionProvider{tp}
}

type sessionProvider struct{ trace.TracerProvider }

func (p sessionProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return sessionTracer{p.TracerProvider.Tracer(name, opts...)}
}

type sessionTracer struct{ trace.Tracer }

func (t sessionTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	var attrs []attribute.KeyValue
	if id := SessionFrom(ctx); id != "" {
		attrs = append(attrs, attribute.String(attrSessionID, id), attribute.String(attrLangfuseSessionID, id))
	}
	if strings.HasPrefix(name, "tool-") {
		attrs = append(attrs, attribute.String(attrObservationType, "tool"))
	}
	if len(attrs) > 0 {
		opts = append(opts, trace.WithAttributes(attrs...))
	}
	return t.Tracer.Start(ctx, name, opts...)
}

// truncatedMark ends a span attribute or event text that was cut, saying so
// in words: a trace viewer shows no other sign of it.
const truncatedMark = "…(truncated)"
