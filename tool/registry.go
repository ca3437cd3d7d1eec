package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/sync/singleflight"

	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/internal/textclip"
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
	secrets       *secretSet // shared with the registries filter makes, so a key added later reaches them too
	now           func() time.Time
	maxOutput     int // bytes of a tool's output as JSON
	resultCaching
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
// "[REDACTED]" (record.Redacted, by the scrubber recordings use): in every result (the output's strings, the summary, the error
// and its violations and event), span and log line. It is a last line of
// defence behind clients that already keep them out: an upstream that echoes
// a key in its answer cannot pass it on.
func WithSecrets(secrets ...string) Option {
	return func(r *Registry) { r.secrets.add(secrets...) }
}

// AddSecrets adds secrets to those of [WithSecrets] while the registry
// runs: a key set from the page is scrubbed from the next call's result on,
// in this registry and every one derived from it ([Registry.Available],
// [Registry.Select]).
func (r *Registry) AddSecrets(secrets ...string) { r.secrets.add(secrets...) }

// secretSet is a registry's secrets, which may grow while calls run.
type secretSet struct {
	mu       sync.RWMutex
	values   []string
	escaped  [][]byte         // each secret as JSON escapes it, without quotes
	longest  int              // bytes of the longest secret
	scrubber *record.Scrubber // the one scrubber: every form of every secret, one marker
}

func (ss *secretSet) add(secrets ...string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range secrets {
		// Shorter values would redact ordinary words; one known already adds nothing.
		if len(s) < record.MinSecretLen || slices.Contains(ss.values, s) {
			continue
		}
		ss.scrubber.Add(s)
		ss.values = append(ss.values, s)
		var b bytes.Buffer
		writeString(&b, s)
		ss.escaped = append(ss.escaped, b.Bytes()[1:b.Len()-1])
		ss.longest = max(ss.longest, len(s))
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
		secrets:       &secretSet{scrubber: record.NewScrubber()},
		maxOutput:     DefaultMaxOutputBytes,
		resultCaching: resultCaching{flights: &singleflight.Group{}, lastWarn: &atomic.Int64{},
			fillLock: DefaultFillLock, fillWait: DefaultFillWait},
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
		if _, ok := r.policies[t.Name()]; ok && r.cache != nil {
			ct, err := cacheable(t)
			if err != nil {
				return err
			}
			t = ct
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
	return r.filter(func(t *Tool) bool { return Selected(t, packs, names) }), nil
}

// Selected reports whether [Registry.Select] with packs and names keeps t:
// its pack is in packs (when packs is non-empty) and its name in names (when
// names is non-empty). A tool declared later is judged by the same rule.
func Selected(t *Tool, packs, names []string) bool {
	return (len(packs) == 0 || slices.Contains(packs, t.spec.Pack)) &&
		(len(names) == 0 || slices.Contains(names, t.Name()))
}

// Available returns a registry with the same options holding only the tools
// that can work with their configuration (see [Spec.Available]), and the
// names of those left out.
func (r *Registry) Available() (*Registry, []string) {
	var left []string
	sub := r.filter(func(t *Tool) bool {
		if t.Unavailable() != "" {
			left = append(left, t.Name())
			return false
		}
		return true
	})
	return sub, left
}

// filter returns a registry with the same options holding the tools keep
// accepts, in registration order.
func (r *Registry) filter(keep func(*Tool) bool) *Registry {
	sub := &Registry{
		tools: map[string]*Tool{}, tracer: r.tracer, logger: r.logger, retryDelay: r.retryDelay,
		maxRetryAfter: r.maxRetryAfter, secrets: r.secrets, now: r.now,
		maxOutput: r.maxOutput, resultCaching: r.resultCaching,
	}
	for _, t := range r.Tools() {
		if keep(t) {
			sub.tools[t.Name()] = t
			sub.order = append(sub.order, t.Name())
		}
	}
	return sub
}

// Result is the outcome of one call.
type Result struct {
	Tool     string
	Value    any    // the tool's output on success
	Err      *Error // the failure, or nil
	Summary  string
	Duration time.Duration
	Retried  bool
	// Cached says the value came from the result cache, made CachedAge ago.
	Cached    bool
	CachedAge time.Duration
	// cachedBody and cachedSummary are a cached result's output JSON (checked
	// against the output schema when it was stored) and summary: the
	// summary is kept because it may use what the JSON does not carry.
	cachedBody    []byte
	cachedSummary string
	// JSON is the envelope an agent sees: the output fields plus success,
	// summary and durationMs, or the failure object.
	JSON json.RawMessage
	// text is the output's own text form ([Texter]), scrubbed; "" when it
	// has none.
	text string
}

// HasText reports whether the call succeeded with an output that has its own
// text form ([Texter]).
func (r *Result) HasText() bool { return r.Err == nil && r.text != "" }

// ModelText is the result as a model should read it: the output's own text
// form when it has one ([Texter]), else the envelope JSON.
func (r *Result) ModelText() string {
	if r.Err == nil && r.text != "" {
		return r.text
	}
	return string(r.JSON)
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
	// MoreViolations counts the violations beyond the MaxViolations listed.
	MoreViolations int `json:"moreViolations,omitempty"`
}

// String returns the envelope JSON.
func (r *Result) String() string { return string(r.JSON) }

// Call runs the named tool with raw JSON arguments. It never returns nil, and a
// failure of any kind, including a panic in the tool, is a Result with Err set.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) *Result {
	start := r.now()
	// The name is the caller's: bounded before it names a span or a log line.
	shown := textclip.Bytes(name, maxNameBytes)
	ctx, span := r.tracer.Start(ctx, "tool-"+shown, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("tool.name", shown)))
	defer span.End()
	input := r.clipScrub(string(args), maxSpanInput)
	span.SetAttributes(attribute.String("tool.input", input), attribute.String("input.value", input))

	res := &Result{Tool: name}
	// A tool's progress message reaches the caller as its result does, so it
	// is scrubbed of the registered secrets the same way.
	if fn, ok := ctx.Value(progressKey{}).(func(Progress)); ok && fn != nil {
		ctx = WithProgress(ctx, func(p Progress) {
			p.Message = r.scrub(p.Message)
			fn(p)
		})
	}
	value, err := r.run(ctx, name, args, res)
	res.Duration = r.now().Sub(start)
	switch {
	case err != nil:
		r.fail(res, err)
	case res.cachedBody != nil:
		r.envelope(res, value, res.cachedBody)
		res.cachedBody, res.cachedSummary = nil, ""
	default:
		r.succeed(res, value)
	}

	span.SetAttributes(
		attribute.Int("tool.result.size", len(res.JSON)),
		attribute.Int64("tool.duration_ms", res.Duration.Milliseconds()),
		attribute.Bool("tool.retried", res.Retried),
		attribute.Bool("tool.cached", res.Cached),
		attribute.String("output.value", r.clipScrub(string(res.JSON), maxSpanInput)),
	)
	if res.Err != nil {
		span.SetAttributes(attribute.String("tool.error_code", string(res.Err.Code)), attribute.Bool("tool.retryable", res.Err.Retryable))
		span.SetStatus(codes.Error, res.Err.Message)
		r.logger.WarnContext(ctx, "tool call failed", "tool", shown, "code", res.Err.Code,
			"error", textclip.Bytes(res.Err.Message, maxLogBytes), "retried", res.Retried, "duration", res.Duration)
	} else {
		span.SetAttributes(attribute.String("tool.summary", res.Summary))
		r.logger.DebugContext(ctx, "tool call", "tool", shown, "summary", textclip.Bytes(res.Summary, maxLogBytes), "duration", res.Duration)
	}
	return res
}

func (r *Registry) run(ctx context.Context, name string, raw []byte, res *Result) (any, error) {
	t, ok := r.Lookup(name)
	if !ok {
		return nil, &Error{Code: CodeUnknownTool, Message: fmt.Sprintf("no tool named %q", textclip.Bytes(name, maxNameBytes))}
	}
	args, verr := t.input.decodeArgs(raw)
	if verr != nil {
		return nil, verr
	}
	if pol, ok := r.policies[name]; ok && r.cache != nil {
		return r.runCached(ctx, t, pol, args, res)
	}
	return r.retrying(ctx, t, args, res)
}

// retrying runs the tool, and once more after a transient failure.
func (r *Registry) retrying(ctx context.Context, t *Tool, args []byte, res *Result) (any, error) {
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
// tool cannot take down a server. An output too large to encode fails here,
// before anything (the result cache, the envelope) encodes it.
func (r *Registry) attempt(ctx context.Context, t *Tool, args []byte) (value any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.logger.ErrorContext(ctx, "tool panicked", "tool", t.Name(), "panic", r.clipScrub(fmt.Sprint(p), maxLogBytes))
			value, err = nil, &Error{Code: CodeInternal, Message: "internal error: the tool failed unexpectedly"}
		}
	}()
	value, err = t.invoke(ctx, args)
	if err != nil {
		return nil, err
	}
	if err := checkOutputSize(value, r.maxOutput); err != nil {
		return nil, err
	}
	return value, nil
}

// fail makes the failure envelope. What the error says is bounded and
// scrubbed here, whoever made it: a tool may quote its upstream or its input.
func (r *Registry) fail(res *Result, err error) {
	te := *Classify(err) // a copy: the message is scrubbed below
	te.Message = r.clipScrub(te.Message, MaxErrorBytes)
	if len(te.Violations) > 0 {
		vs := make([]Violation, 0, min(len(te.Violations), MaxViolations))
		for _, v := range te.Violations[:min(len(te.Violations), MaxViolations)] {
			vs = append(vs, Violation{
				Path: r.clipScrub(v.Path, maxViolationBytes), Rule: textclip.Bytes(v.Rule, maxPathToken),
				Message: r.clipScrub(v.Message, maxViolationBytes),
			})
		}
		te.MoreViolations += len(te.Violations) - len(vs)
		te.Violations = vs
	}
	if te.Event != nil {
		ev := *te.Event
		ev.Content = r.clipScrub(ev.Content, MaxErrorBytes)
		if data, changed := r.scrubJSON([]byte(ev.DataJSON)); changed {
			ev.DataJSON = string(data)
		}
		te.Event = &ev
	}
	res.Err = &te
	res.Summary = textclip.Bytes("failed: "+te.Message, MaxSummaryBytes)
	raw, merr := Marshal(failure{
		Error: te.Message, Code: te.Code, Retryable: te.Retryable, WasRetried: res.Retried,
		DurationMs: res.Duration.Milliseconds(), RetryAfterMs: te.RetryAfter.Milliseconds(),
		Violations: te.Violations, MoreViolations: te.MoreViolations,
	})
	if merr != nil { // cannot happen for these field types
		raw = []byte(`{"success":false,"error":"internal error","error_code":"INTERNAL"}`)
	}
	res.JSON = raw
}

// succeed makes the success envelope, with every registered secret scrubbed
// from the output and the summary.
func (r *Registry) succeed(res *Result, value any) {
	t, _ := r.Lookup(res.Tool)
	body, err := Marshal(value)
	if err != nil {
		r.fail(res, &Error{Code: CodeInternal, Message: "internal error: result not encodable", Err: err})
		return
	}
	if len(body) > r.maxOutput {
		// The estimate is a lower bound: escapes can make the JSON larger.
		r.fail(res, tooLarge(len(body), r.maxOutput))
		return
	}
	var decoded any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		r.fail(res, &Error{Code: CodeInternal, Message: "internal error: result not decodable", Err: err})
		return
	}
	if vs, more := t.output.check(decoded); len(vs) > 0 {
		r.fail(res, &Error{Code: CodeParse, Message: "the result does not fit the output schema: " + violationText(vs, more)})
		return
	}
	r.envelope(res, value, body)
}

// envelope makes the success envelope from an output and its JSON, with every
// registered secret scrubbed from both and from the summary.
func (r *Registry) envelope(res *Result, value any, body []byte) {
	res.Value = value
	if scrubbed, changed := r.scrubJSON(body); changed {
		body = scrubbed
		res.Value = redecode(value, body)
	}
	summary := res.cachedSummary
	if res.cachedBody == nil {
		summary = value.(Summarizer).Summary()
	}
	res.Summary = r.clipScrub(summary, MaxSummaryBytes)
	if t, ok := res.Value.(Texter); ok {
		// The summary heads the text: it is kept for cached results, whose
		// value lost what the JSON does not carry (a search's query).
		res.text = res.Summary
		if body := r.scrub(t.Text()); body != "" {
			res.text += "\n" + body
		}
	}
	var age *int64
	if res.Cached {
		age = ptr(int64(res.CachedAge / time.Second))
	}
	head, _ := Marshal(struct {
		Success    bool   `json:"success"`
		Summary    string `json:"summary"`
		DurationMs int64  `json:"durationMs"`
		Cached     bool   `json:"cached,omitempty"`
		CachedAge  *int64 `json:"cachedAgeSeconds,omitempty"`
	}{true, res.Summary, res.Duration.Milliseconds(), res.Cached, age})
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

// redecode returns a value of value's type decoded from the scrubbed JSON of
// it, so that Result.Value does not keep what the envelope left out. Should
// the type not decode from its own JSON, the value is dropped: better no
// value than one holding a secret.
func redecode(value any, body []byte) any {
	typ := reflect.TypeOf(value)
	p := reflect.New(typ)
	if err := json.Unmarshal(body, p.Interface()); err != nil {
		return nil
	}
	return p.Elem().Interface()
}

// clipScrub scrubs s and cuts it to n bytes. It scrubs before it cuts, so
// that a cut cannot leave part of a secret, and looks only at the part of s
// that can be kept, so that the work is bounded too.
func (r *Registry) clipScrub(s string, n int) string {
	r.secrets.mu.RLock()
	longest := r.secrets.longest
	r.secrets.mu.RUnlock()
	// Over n: the second cut, after scrubbing, cuts and marks it again.
	s = textclip.Bytes(s, n+longest)
	return textclip.Bytes(r.scrub(s), n)
}

func (r *Registry) scrub(s string) string {
	r.secrets.mu.RLock()
	none := len(r.secrets.values) == 0
	r.secrets.mu.RUnlock()
	if none {
		return s
	}
	return r.secrets.scrubber.String(s)
}

// scrubJSON replaces every secret in the strings (keys included) of a JSON
// value. It works on the decoded strings, not the bytes, so that a secret
// JSON escapes differently, or one that looks like a number, is found without
// breaking the encoding; a value without any secret is returned as is.
func (r *Registry) scrubJSON(raw []byte) ([]byte, bool) {
	if !r.mayHoldSecret(raw) {
		return raw, false
	}
	out, err := rewriteJSON(raw, r.scrub, -1)
	if err != nil { // not JSON: scrub the text as it is
		return []byte(r.scrub(string(raw))), true
	}
	return out, !bytes.Equal(out, raw)
}

// mayHoldSecret reports whether raw holds a secret as is or as JSON encodes it.
func (r *Registry) mayHoldSecret(raw []byte) bool {
	r.secrets.mu.RLock()
	defer r.secrets.mu.RUnlock()
	for i, secret := range r.secrets.values {
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, r.secrets.escaped[i]) {
			return true
		}
	}
	return false
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
