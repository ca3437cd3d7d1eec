package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Defaults of the retry policy.
const (
	DefaultRetryDelay    = time.Second     // wait before the one retry
	DefaultMaxRetryAfter = 5 * time.Second // longer Retry-After hints are not waited for
)

// maxSpanInput bounds the tool input recorded on a span.
const maxSpanInput = 4 << 10

// Registry maps names to tools and runs calls through the contract: validation,
// one retry of transient failures, tracing, and the result envelope. A Registry
// is safe for concurrent use once built.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	order []string

	tracer        trace.Tracer
	logger        *slog.Logger
	retryDelay    time.Duration
	maxRetryAfter time.Duration
	secrets       []string
	now           func() time.Time
}

// Option configures a Registry.
type Option func(*Registry)

// WithTracerProvider records a span per call with tp (default: no tracing).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(r *Registry) { r.tracer = tp.Tracer("github.com/toolport/toolport/tool") }
}

// WithLogger logs each call at debug level and failures at warn level.
func WithLogger(l *slog.Logger) Option { return func(r *Registry) { r.logger = l } }

// WithRetryDelay sets the wait before retrying a transient failure that came
// without a Retry-After hint. Zero retries at once.
func WithRetryDelay(d time.Duration) Option { return func(r *Registry) { r.retryDelay = d } }

// WithMaxRetryAfter sets the longest upstream Retry-After hint the registry
// waits for before its one retry; longer hints fail at once, still retryable.
func WithMaxRetryAfter(d time.Duration) Option { return func(r *Registry) { r.maxRetryAfter = d } }

// WithSecrets names values (API keys, tokens) that must never appear in what the
// registry emits. Any occurrence in an error message or span is replaced by
// "[REDACTED]": a last line of defence behind clients that already keep them out.
func WithSecrets(secrets ...string) Option {
	return func(r *Registry) {
		for _, s := range secrets {
			if len(s) >= 4 { // shorter values would redact ordinary words
				r.secrets = append(r.secrets, s)
			}
		}
	}
}

// NewRegistry returns an empty registry.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{
		tools:         map[string]*Tool{},
		tracer:        noop.NewTracerProvider().Tracer(""),
		logger:        slog.New(slog.DiscardHandler),
		retryDelay:    DefaultRetryDelay,
		maxRetryAfter: DefaultMaxRetryAfter,
		now:           time.Now,
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Register adds tools. A name registered twice is an error.
func (r *Registry) Register(tools ...*Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		if _, dup := r.tools[t.Name()]; dup {
			return fmt.Errorf("tool: %q registered twice", t.Name())
		}
		r.tools[t.Name()] = t
		r.order = append(r.order, t.Name())
	}
	return nil
}

// Lookup returns the named tool.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Tools returns the registered tools in registration order.
func (r *Registry) Tools() []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Tool, len(r.order))
	for i, name := range r.order {
		out[i] = r.tools[name]
	}
	return out
}

// Select returns a registry with the same options holding only the tools whose
// pack is in packs (when packs is non-empty) and whose name is in names (when
// names is non-empty). Unknown names are an error, so a typo does not silently
// expose nothing.
func (r *Registry) Select(packs, names []string) (*Registry, error) {
	known := map[string]bool{}
	knownPacks := map[string]bool{}
	for _, t := range r.Tools() {
		known[t.Name()] = true
		knownPacks[t.spec.Pack] = true
	}
	for _, n := range names {
		if !known[n] {
			return nil, fmt.Errorf("unknown tool %q", n)
		}
	}
	for _, p := range packs {
		if !knownPacks[p] {
			return nil, fmt.Errorf("unknown pack %q", p)
		}
	}
	sub := &Registry{
		tools: map[string]*Tool{}, tracer: r.tracer, logger: r.logger, retryDelay: r.retryDelay,
		maxRetryAfter: r.maxRetryAfter, secrets: r.secrets, now: r.now,
	}
	for _, t := range r.Tools() {
		if len(packs) > 0 && !slices.Contains(packs, t.spec.Pack) {
			continue
		}
		if len(names) > 0 && !slices.Contains(names, t.Name()) {
			continue
		}
		sub.tools[t.Name()] = t
		sub.order = append(sub.order, t.Name())
	}
	return sub, nil
}

// Result is the outcome of one call.
type Result struct {
	Tool     string
	Value    any    // the tool's output on success
	Err      *Error // the failure, or nil
	Summary  string
	Duration time.Duration
	Retried  bool
	// JSON is the envelope an agent sees: the output fields plus success,
	// summary and durationMs, or the failure object.
	JSON json.RawMessage
}

// OK reports whether the call succeeded.
func (r *Result) OK() bool { return r.Err == nil }

// MarshalJSON renders the envelope.
func (r *Result) MarshalJSON() ([]byte, error) { return r.JSON, nil }

// failure is the JSON shape of a failed call.
type failure struct {
	Success    bool   `json:"success"`
	Error      string `json:"error"`
	Code       Code   `json:"error_code"`
	Retryable  bool   `json:"retryable"`
	WasRetried bool   `json:"wasRetried"`
	DurationMs int64  `json:"durationMs"`
	// RetryAfterMs is the upstream's wait hint, so an agent can tell a brief
	// throttle from an exhausted quota.
	RetryAfterMs int64       `json:"retryAfterMs,omitempty"`
	Violations   []Violation `json:"violations,omitempty"`
}

// String returns the envelope JSON.
func (r *Result) String() string { return string(r.JSON) }

// Call runs the named tool with raw JSON arguments. It never returns nil, and a
// failure of any kind, including a panic in the tool, is a Result with Err set.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) *Result {
	start := r.now()
	ctx, span := r.tracer.Start(ctx, "tool-"+name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("tool.name", name)))
	defer span.End()
	input := r.scrub(truncate(string(args), maxSpanInput))
	span.SetAttributes(attribute.String("tool.input", input), attribute.String("input.value", input))

	res := &Result{Tool: name}
	value, err := r.run(ctx, name, args, res)
	res.Duration = r.now().Sub(start)
	if err != nil {
		r.fail(res, err)
	} else {
		r.succeed(res, value)
	}

	span.SetAttributes(
		attribute.Int("tool.result.size", len(res.JSON)),
		attribute.Int64("tool.duration_ms", res.Duration.Milliseconds()),
		attribute.Bool("tool.retried", res.Retried),
		attribute.String("output.value", r.scrub(truncate(string(res.JSON), maxSpanInput))),
	)
	if res.Err != nil {
		span.SetAttributes(attribute.String("tool.error_code", string(res.Err.Code)), attribute.Bool("tool.retryable", res.Err.Retryable))
		span.SetStatus(codes.Error, res.Err.Message)
		r.logger.WarnContext(ctx, "tool call failed", "tool", name, "code", res.Err.Code, "error", res.Err.Message, "retried", res.Retried, "duration", res.Duration)
	} else {
		span.SetAttributes(attribute.String("tool.summary", res.Summary))
		r.logger.DebugContext(ctx, "tool call", "tool", name, "summary", res.Summary, "duration", res.Duration)
	}
	return res
}

func (r *Registry) run(ctx context.Context, name string, raw []byte, res *Result) (any, error) {
	t, ok := r.Lookup(name)
	if !ok {
		return nil, &Error{Code: CodeUnknownTool, Message: fmt.Sprintf("no tool named %q", name)}
	}
	args, verr := t.input.decodeArgs(raw)
	if verr != nil {
		return nil, verr
	}
	value, err := r.attempt(ctx, t, args)
	if err == nil {
		return value, nil
	}
	te := Classify(err)
	if !te.Retryable || ctx.Err() != nil {
		return nil, err
	}
	delay := r.retryDelay
	if te.RetryAfter > 0 {
		if te.RetryAfter > r.maxRetryAfter {
			return nil, err // the upstream asks for longer than an agent should wait
		}
		delay = te.RetryAfter
	}
	select {
	case <-ctx.Done():
		return nil, err
	case <-time.After(delay):
	}
	res.Retried = true
	trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(attribute.String("tool.first_error_code", string(te.Code))))
	return r.attempt(ctx, t, args)
}

// attempt runs the tool once, turning a panic into an internal error so one bad
// tool cannot take down a server.
func (r *Registry) attempt(ctx context.Context, t *Tool, args []byte) (value any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.logger.ErrorContext(ctx, "tool panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
			value, err = nil, &Error{Code: CodeInternal, Message: "internal error: the tool failed unexpectedly"}
		}
	}()
	return t.invoke(ctx, args)
}

func (r *Registry) fail(res *Result, err error) {
	te := *Classify(err) // a copy: the message is scrubbed below
	te.Message = r.scrub(te.Message)
	res.Err = &te
	res.Summary = "failed: " + te.Message
	raw, merr := Marshal(failure{
		Error: te.Message, Code: te.Code, Retryable: te.Retryable, WasRetried: res.Retried,
		DurationMs: res.Duration.Milliseconds(), RetryAfterMs: te.RetryAfter.Milliseconds(), Violations: te.Violations,
	})
	if merr != nil { // cannot happen for these field types
		raw = []byte(`{"success":false,"error":"internal error","error_code":"INTERNAL"}`)
	}
	res.JSON = raw
}

func (r *Registry) succeed(res *Result, value any) {
	t, _ := r.Lookup(res.Tool)
	body, err := Marshal(value)
	if err != nil {
		r.fail(res, &Error{Code: CodeInternal, Message: "internal error: result not encodable", Err: err})
		return
	}
	var decoded any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		r.fail(res, &Error{Code: CodeInternal, Message: "internal error: result not decodable", Err: err})
		return
	}
	if vs := t.output.check(decoded); len(vs) > 0 {
		msgs := make([]string, len(vs))
		for i, v := range vs {
			msgs[i] = v.Message
		}
		r.fail(res, &Error{Code: CodeParse, Message: "the result does not fit the output schema: " + strings.Join(msgs, "; ")})
		return
	}
	res.Value = value
	res.Summary = value.(Summarizer).Summary()
	head, _ := Marshal(struct {
		Success    bool   `json:"success"`
		Summary    string `json:"summary"`
		DurationMs int64  `json:"durationMs"`
	}{true, res.Summary, res.Duration.Milliseconds()})
	// Splice the envelope fields in front of the output's own: {head..., body...}.
	var b bytes.Buffer
	b.Grow(len(head) + len(body))
	b.Write(head[:len(head)-1])
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	res.JSON = b.Bytes()
}

func (r *Registry) scrub(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "[REDACTED]")
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…(truncated)"
}

// Marshal encodes v as JSON the way results are encoded: without escaping <, >
// and &, which agents and people read more easily and which the result never
// needs since it is not embedded in HTML.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
