package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Options configure an SDK-backed provider.
type Options struct {
	// APIKey authenticates requests. The OpenAI provider accepts an empty
	// key when BaseURL is set (local servers such as Ollama need none).
	APIKey string
	// BaseURL overrides the API's address. For Anthropic it is scheme and
	// host ("http://127.0.0.1:8080"; the SDK appends /v1/messages). For
	// OpenAI-compatible servers it includes the version path, as their
	// documentation gives it ("http://127.0.0.1:11434/v1"; /chat/completions
	// is appended).
	BaseURL string
	// HTTPClient sends the requests; nil means a client with the standard
	// transport's connection timeouts, [httpclient.NewTransport]'s pool sizes
	// and no overall timeout (see IdleTimeout).
	HTTPClient *http.Client
	// MaxRetries is how many times the SDK itself retries a request that
	// failed before its response started. The default 0 leaves retrying to
	// the caller; see the package documentation.
	MaxRetries int
	// FirstByteTimeout is the longest the provider waits, from sending a
	// request, for the response headers (connecting included), after which
	// the call fails with CodeTimeout. A server that accepts the connection
	// but never answers is caught by it, not by IdleTimeout. 0 means
	// DefaultFirstByteTimeout; negative leaves the wait to IdleTimeout.
	FirstByteTimeout time.Duration
	// IdleTimeout is the longest the provider waits for the next bytes of a
	// response once its headers have arrived, after which the call fails with
	// CodeTimeout. 0 means DefaultIdleTimeout; negative disables it.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is long enough for a local model to process a long prompt
// before its first token, and short enough that a stalled connection does not
// leave a chat hanging.
const DefaultIdleTimeout = 2 * time.Minute

// DefaultFirstByteTimeout bounds the wait for response headers. Streaming APIs
// send their headers as soon as they accept the request, before the model has
// read the prompt; a local server that answers only with its first token may
// need more (TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT).
const DefaultFirstByteTimeout = 30 * time.Second

// Bounds on what a provider accepts from a server.
const (
	maxToolInput = 1 << 20 // bytes of one tool call's input
	maxToolCalls = 128     // tool calls in one response
)

func (o Options) idleTimeout() time.Duration {
	if o.IdleTimeout == 0 {
		return DefaultIdleTimeout
	}
	return o.IdleTimeout
}

// firstByteTimeout is the bound on the wait for headers: FirstByteTimeout,
// or IdleTimeout when that is negative; 0 means none.
func (o Options) firstByteTimeout() time.Duration {
	switch {
	case o.FirstByteTimeout == 0:
		return DefaultFirstByteTimeout
	case o.FirstByteTimeout > 0:
		return o.FirstByteTimeout
	}
	return max(o.idleTimeout(), 0)
}

func (o Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	// A chat server runs many turns at once against one model host: the
	// pool keeps their connections (Go's default keeps 2 per host).
	return httpclient.NewClient(0)
}

// watchdog cancels a request's context when its response headers do not
// arrive within firstByte, or when, after them, no bytes arrive for idle.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration

	mu    sync.Mutex
	timer *time.Timer   // the running countdown, nil when none
	req   *http.Request // the last request sent, to name the server a failure came from
}

// request is the last request the call sent, or nil.
func (w *watchdog) request() *http.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.req
}

func newWatchdog(ctx context.Context, firstByte, idle time.Duration) *watchdog {
	w := &watchdog{idle: idle}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	if firstByte > 0 {
		cause := &timeoutCause{firstByte: true, after: firstByte}
		w.timer = time.AfterFunc(firstByte, func() { w.cancel(cause) })
	}
	return w
}

// headers ends the first-byte countdown and starts the idle one.
func (w *watchdog) headers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.idle > 0 && w.ctx.Err() == nil {
		cause := &timeoutCause{after: w.idle}
		w.timer = time.AfterFunc(w.idle, func() { w.cancel(cause) })
	}
}

// kick restarts the idle countdown.
func (w *watchdog) kick() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
	w.mu.Unlock()
}

// stop ends the watch and releases the context.
func (w *watchdog) stop() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// middleware wraps a response body so that every read kicks the watchdog;
// both SDKs accept it as a per-request middleware.
func (w *watchdog) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	w.mu.Lock()
	w.req = req
	w.mu.Unlock()
	res, err := next(req)
	if res != nil && res.Body != nil {
		w.headers()
		res.Body = &kickBody{ReadCloser: res.Body, kick: w.kick}
	}
	return res, err
}

type kickBody struct {
	io.ReadCloser
	kick func()
}

func (b *kickBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.kick()
	}
	return n, err
}

// validInput checks an assembled tool input: empty means {}, anything else
// must be a JSON object.
func validInput(provider, name, raw string) (json.RawMessage, *Error) {
	in := inputOrEmpty(json.RawMessage(raw))
	var obj map[string]json.RawMessage
	if json.Unmarshal(in, &obj) != nil || obj == nil {
		return nil, &Error{Provider: provider, Code: CodeBadResponse,
			Message: "the model's input for tool " + name + " is not a JSON object (the response may have been cut off by max_tokens)"}
	}
	return in, nil
}

// toolPairs returns the IDs of tool calls that have a result in msgs, and the
// IDs of tool calls that exist. A history saved after an interrupted turn can
// hold a tool_use with no tool_result (or the reverse); both APIs reject such
// a history, so the converters leave those blocks out.
func toolPairs(msgs []Message) (calls, results map[string]bool) {
	calls, results = map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case BlockToolUse:
				calls[b.ID] = true
			case BlockToolResult:
				results[b.ToolUseID] = true
			}
		}
	}
	return calls, results
}

// pending is a FIFO of events produced by one upstream event.
type pending []Event

func (p *pending) push(evs ...Event) { *p = append(*p, evs...) }

func (p *pending) pop() (Event, bool) {
	if len(*p) == 0 {
		return Event{}, false
	}
	ev := (*p)[0]
	*p = (*p)[1:]
	return ev, true
}
