package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
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
	// transport's connection timeouts and no overall timeout (see IdleTimeout).
	HTTPClient *http.Client
	// MaxRetries is how many times the SDK itself retries a request that
	// failed before its response started. The default 0 leaves retrying to
	// the caller; see the package documentation.
	MaxRetries int
	// IdleTimeout is the longest the provider waits for the next bytes of a
	// response (including the first), after which the call fails with
	// CodeTimeout. 0 means DefaultIdleTimeout; negative disables it.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is long enough for a local model to process a long prompt
// before its first token, and short enough that a stalled connection does not
// leave a chat hanging.
const DefaultIdleTimeout = 2 * time.Minute

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

func (o Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// watchdog cancels a request's context when no bytes arrive for d.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	d      time.Duration
	mu     sync.Mutex
	timer  *time.Timer
}

func newWatchdog(ctx context.Context, d time.Duration) *watchdog {
	w := &watchdog{d: d}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { w.cancel(errIdle) })
	}
	return w
}

// kick restarts the countdown.
func (w *watchdog) kick() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	w.timer.Reset(w.d)
	w.mu.Unlock()
}

// stop ends the watch and releases the context.
func (w *watchdog) stop() {
	if w.timer != nil {
		w.mu.Lock()
		w.timer.Stop()
		w.mu.Unlock()
	}
	w.cancel(context.Canceled)
}

// middleware wraps a response body so that every read kicks the watchdog;
// both SDKs accept it as a per-request middleware.
func (w *watchdog) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if res != nil && res.Body != nil {
		w.kick()
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
