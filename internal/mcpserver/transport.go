package mcpserver

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunStdio serves one client on stdin and stdout (newline-delimited JSON-RPC)
// until the client closes stdin (or its end of stdout) or ctx is canceled;
// each ends it cleanly with a nil error. stdout carries nothing but protocol messages: the server's
// diagnostics go to [Options.Logger], which must write elsewhere (stderr). A
// malformed line is answered with a JSON-RPC error and the session goes on
// (see [StdioTransport]). The calls read before stdin closed are answered
// before it returns, within [DefaultDrainTimeout].
//
// If stdin is an io.Closer (os.Stdin is), it is closed on return so that a
// pending read ends.
func RunStdio(ctx context.Context, server *mcp.Server, stdin io.Reader, stdout io.Writer) error {
	return ServeStdio(ctx, server, &StdioTransport{Reader: stdin, Writer: stdout})
}

// abandonWait bounds how long ServeStdio waits, once the drain timeout has
// passed and the calls still running were answered with errors, for their
// canceled handlers to return: a tool that ignores cancellation must not keep
// the process alive, and nothing is left to say to the client.
const abandonWait = 5 * time.Second

// ServeStdio is [RunStdio] on a transport configured by the caller, which
// serves this one session.
func ServeStdio(ctx context.Context, server *mcp.Server, t *StdioTransport) error {
	abandoned := make(chan struct{})
	t.abandoned = abandoned
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, t) }()
	var err error
	select {
	case err = <-done:
	case <-abandoned:
		timer := time.NewTimer(abandonWait)
		defer timer.Stop()
		select {
		case err = <-done:
		case <-timer.C:
			// Every call is answered; the handlers left running end with the process.
			return nil
		}
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || clientGone(err) {
		return nil
	}
	return err
}

// clientGone reports whether err says the client closed its end of stdout:
// it went away, as when it closes stdin, and nothing is left to tell it
// (seen when a client closed the pipe while a canceled call's answer was
// being written).
func clientGone(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE)
}

// HTTPOptions configures [NewHTTPHandler].
type HTTPOptions struct {
	// Logger receives the transport's diagnostics. Nil discards them.
	Logger *slog.Logger

	// SessionTimeout closes a client session of a pre-2026 protocol revision
	// after this long without a request; the client then opens a new one.
	// Zero means [DefaultSessionTimeout].
	SessionTimeout time.Duration

	// EventStoreBytes bounds the events kept, over all sessions, for clients
	// that resume a broken response stream (Last-Event-ID); the oldest are
	// dropped first. Zero means [DefaultEventStoreBytes].
	EventStoreBytes int

	// SSERetry is the reconnection delay sent in the priming event of a
	// response stream. Zero means [DefaultSSERetry].
	SSERetry time.Duration

	// MaxSessions bounds the sessions kept for pre-2026 clients. A new
	// session past it replaces the least recently used idle one (no request
	// in flight); when none is idle it is refused with 503. Zero means
	// [DefaultMaxSessions].
	MaxSessions int

	// MaxBatchMessages and MaxBatchAnswerBytes bound one JSON-RPC batch (a
	// pre-2025-06-18 session), as on stdio: a longer batch is refused whole
	// with 400, and answers past the byte budget become errors. Zero means
	// [DefaultMaxBatchMessages] and [DefaultMaxBatchAnswerBytes].
	MaxBatchMessages    int
	MaxBatchAnswerBytes int

	// DisableLocalhostProtection turns off the SDK's DNS-rebinding guard, which
	// refuses a request that arrives on a loopback address with a non-loopback
	// Host header. Set it only behind a reverse proxy on the same machine that
	// forwards a public Host.
	DisableLocalhostProtection bool
}

// Defaults of [HTTPOptions].
const (
	DefaultSessionTimeout  = 30 * time.Minute
	DefaultEventStoreBytes = 10 << 20
	DefaultSSERetry        = time.Second
	// DefaultMaxSessions: a session costs about 13 KB, so 1000 are ~13 MB.
	DefaultMaxSessions = 1000
)

// Header names of the streamable HTTP transport, and the first protocol
// revision without sessions (SEP-2575).
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	statelessRevision     = "2026-07-28"
)

// NewHTTPHandler serves server over MCP's streamable HTTP transport, to be
// mounted at /mcp. Authentication is the caller's (see [RequireBearer]).
//
// It speaks every protocol revision the SDK supports and negotiates the newest
// with clients that offer it. The SDK serves the sessionless 2026-07-28
// revision only from a stateless handler, where a call is canceled when its
// HTTP request ends; but on a stateless handler a client of an older revision
// (every client released before it) cannot cancel a call, since its
// notifications/cancelled arrives on a request of its own that reaches a fresh
// session. So requests are routed: those of the newest revision (no session ID,
// a protocol header of 2026-07-28 or later) to a stateless handler, the rest to
// a stateful one that keeps each older client's session in memory until it is
// deleted or idle for [HTTPOptions.SessionTimeout]. Sessions live in this
// process: several replicas behind a load balancer need sticky sessions for
// older clients.
//
// Progress notifications travel on the call's own response stream in both.
//
// A session's response stream (revisions 2025-11-25 to before 2026-07-28)
// opens with a priming event: an event ID and empty data, so that a client
// whose connection breaks during a call can resume the stream from the
// in-memory event store with Last-Event-ID (SEP-1699), and a retry field, the
// delay it should wait first. The SDK writes the priming event but no retry
// field (v1.8.0); the handler adds it.
func NewHTTPHandler(server *mcp.Server, opts HTTPOptions) http.Handler {
	timeout := opts.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	events := mcp.NewMemoryEventStore(nil)
	if opts.EventStoreBytes > 0 {
		events.SetMaxBytes(opts.EventStoreBytes)
	} else {
		events.SetMaxBytes(DefaultEventStoreBytes)
	}
	retry := opts.SSERetry
	if retry <= 0 {
		retry = DefaultSSERetry
	}
	get := func(*http.Request) *mcp.Server { return server }
	h := &httpHandler{
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			PropagateRequestCancellation: true,
			Logger:                       opts.Logger,
			DisableLocalhostProtection:   opts.DisableLocalhostProtection,
		}),
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout:             timeout,
			EventStore:                 events,
			Logger:                     opts.Logger,
			DisableLocalhostProtection: opts.DisableLocalhostProtection,
		}),
		retryField:  []byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n"),
		maxBatch:    orDefault(opts.MaxBatchMessages, DefaultMaxBatchMessages),
		batchBudget: orDefault(opts.MaxBatchAnswerBytes, DefaultMaxBatchAnswerBytes),
	}
	h.sessions = &sessionTable{
		max:   orDefault(opts.MaxSessions, DefaultMaxSessions),
		live:  server.Sessions,
		evict: h.deleteSession,
		byID:  map[string]*list.Element{},
		lru:   list.New(),
	}
	return h
}

// httpHandler routes a request to the handler for its protocol revision.
type httpHandler struct {
	stateless, stateful http.Handler
	retryField          []byte // "retry: <ms>\n"
	maxBatch            int
	batchBudget         int
	sessions            *sessionTable
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Revisions are dates (YYYY-MM-DD), so they order as strings. A client of
	// an older revision sends no header on initialize, and its session ID after.
	id := r.Header.Get(sessionIDHeader)
	if id == "" && r.Header.Get(protocolVersionHeader) >= statelessRevision {
		h.stateless.ServeHTTP(w, r)
		return
	}
	tw := &trackWriter{ResponseWriter: w, retryField: h.retryField}
	var opens bool // whether the request may open a session
	if r.Method == http.MethodPost {
		body, ok := h.checkBatch(w, r)
		if !ok {
			return
		}
		if body.batch {
			tw.budget = h.batchBudget
		}
		opens = id == "" && body.initialize
	}
	switch {
	case id != "":
		h.sessions.begin(id)
		h.stateful.ServeHTTP(tw, r)
		h.sessions.end(id, r.Method, tw.status)
	case opens:
		// Only an initialize may take a session's place: the SDK closes
		// the session of any other request without one when it ends.
		if !h.sessions.admit() {
			w.Header().Set("Retry-After", "5")
			writeJSONError(w, http.StatusServiceUnavailable, codeServerClosing,
				fmt.Sprintf("server busy: %d sessions, none idle; retry later", h.sessions.max))
			return
		}
		// The session is listed when its ID is sent, before its client can use it.
		var opened atomic.Bool
		tw.onHeader = func(hdr http.Header) { opened.Store(h.sessions.add(hdr.Get(sessionIDHeader))) }
		h.stateful.ServeHTTP(tw, r)
		h.sessions.admitted(opened.Load())
	default:
		h.stateful.ServeHTTP(tw, r) // refused by the SDK: no session
	}
}

// postBody is what checkBatch learnt of a POST's body.
type postBody struct {
	batch      bool // a JSON array
	initialize bool // an initialize request, or a batch that may hold one
}

// checkBatch reads the body of a POST and refuses a batch of more than
// maxBatch messages, before any of it runs; ok is false when it has answered
// the request itself.
func (h *httpHandler) checkBatch(w http.ResponseWriter, r *http.Request) (pb postBody, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading the request body failed", http.StatusBadRequest)
		}
		return pb, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		var head struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(trimmed, &head) // a malformed body is the SDK's to refuse
		pb.initialize = head.Method == "initialize"
		return pb, true
	}
	pb.batch, pb.initialize = true, bytes.Contains(trimmed, []byte(`"initialize"`))
	if n, err := countMembers(trimmed, h.maxBatch); err == nil && n > h.maxBatch {
		writeJSONError(w, http.StatusBadRequest, codeInvalidRequest,
			fmt.Sprintf("invalid request: a batch of more than %d messages", h.maxBatch))
		return pb, false
	}
	return pb, true // a malformed batch is the SDK's to refuse
}

// writeJSONError answers a request with one JSON-RPC error of id null.
func writeJSONError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponse(nil, code, message))
}

// deleteSession closes a session as a client's DELETE does. The SDK waits for
// the session's calls still running, if a client left one behind.
func (h *httpHandler) deleteSession(id string) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/", nil)
	if err != nil {
		return
	}
	req.Header.Set(sessionIDHeader, id)
	h.stateful.ServeHTTP(&discardWriter{header: http.Header{}}, req)
}

// discardWriter is the ResponseWriter of the handler's own requests.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// sessionTable tracks the stateful handler's sessions, most recently used
// first, to bound them. It learns a session from the response that opened
// it; a session the SDK closed on its own (idle timeout, failed initialize)
// stays listed until the table is full, when it is pruned against live.
type sessionTable struct {
	max   int
	live  func() iter.Seq[*mcp.ServerSession]
	evict func(id string)

	mu       sync.Mutex
	byID     map[string]*list.Element // of *sessionEntry
	lru      *list.List               // front: most recently used
	reserved int                      // requests that may open a session
}

type sessionEntry struct {
	id     string
	active int // requests in flight
}

// admit reserves room for a new session, replacing the least recently used
// idle one when the table is full. It reports false when all are busy.
func (t *sessionTable) admit() bool {
	t.mu.Lock()
	if len(t.byID)+t.reserved >= t.max {
		t.pruneLocked()
	}
	var victim string
	if len(t.byID)+t.reserved >= t.max {
		for e := t.lru.Back(); e != nil; e = e.Prev() {
			if s := e.Value.(*sessionEntry); s.active == 0 {
				victim = s.id
				t.removeLocked(e)
				break
			}
		}
		if victim == "" {
			t.mu.Unlock()
			return false
		}
	}
	t.reserved++
	t.mu.Unlock()
	if victim != "" {
		t.evict(victim)
	}
	return true
}

// add lists session id, opened by a request that holds a reservation, and
// reports whether the reservation became the session's place.
func (t *sessionTable) add(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, known := t.byID[id]; id == "" || known {
		return false
	}
	t.byID[id] = t.lru.PushFront(&sessionEntry{id: id})
	t.reserved--
	return true
}

// admitted ends the reservation of a request that did not open a session.
func (t *sessionTable) admitted(opened bool) {
	if opened {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reserved--
}

func (t *sessionTable) begin(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byID[id]; ok {
		e.Value.(*sessionEntry).active++
		t.lru.MoveToFront(e)
	}
}

// end records the end of a request of session id and forgets the session
// when the request ended it or found it gone.
func (t *sessionTable) end(id, method string, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		return
	}
	e.Value.(*sessionEntry).active--
	if status == http.StatusNotFound || method == http.MethodDelete && status == http.StatusNoContent {
		t.removeLocked(e)
	}
}

// pruneLocked forgets the sessions the SDK no longer has.
func (t *sessionTable) pruneLocked() {
	live := make(map[string]bool, len(t.byID))
	for ss := range t.live() {
		live[ss.ID()] = true
	}
	for id, e := range t.byID {
		if !live[id] {
			t.removeLocked(e)
		}
	}
}

func (t *sessionTable) removeLocked(e *list.Element) {
	delete(t.byID, e.Value.(*sessionEntry).id)
	t.lru.Remove(e)
}

// primeEvent and messageEvent are how the SDK begins its priming events and
// its messages on a response stream (v1.8.0); it writes each event with one
// Write.
var (
	primeEvent   = []byte("event: prime\n")
	messageEvent = []byte("event: message\n")
	dataField    = []byte("\ndata: ")
)

// trackWriter is the stateful handler's ResponseWriter: it records the
// status, adds the retry field to a response stream's priming event and, on
// a batch's stream, holds the answers to their byte budget.
type trackWriter struct {
	http.ResponseWriter
	retryField []byte
	budget     int // of a batch's answers; 0 when the request is not a batch

	// onHeader, if set, sees the headers as they are sent.
	onHeader func(http.Header)

	status int
	wrote  bool
	sent   int // bytes of answers sent on a batch's stream
}

func (w *trackWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		if w.onHeader != nil {
			w.onHeader(w.Header())
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *trackWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n := len(p)
	first := !w.wrote
	w.wrote = true
	sse := strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	switch {
	case !sse:
	case first && bytes.HasPrefix(p, primeEvent):
		buf := make([]byte, 0, len(p)+len(w.retryField))
		p = append(append(append(buf, primeEvent...), w.retryField...), p[len(primeEvent):]...)
	case w.budget > 0 && bytes.HasPrefix(p, messageEvent):
		var keep bool
		if p, keep = w.bound(p); !keep {
			return n, nil
		}
	}
	if _, err := w.ResponseWriter.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// bound returns a batch's message event as it may be sent: an answer past
// the budget is replaced by an error with its id, and a notification past
// it (progress) is dropped (keep false). The first answer always passes.
func (w *trackWriter) bound(event []byte) (out []byte, keep bool) {
	i := bytes.Index(event, dataField)
	if i < 0 {
		return event, true
	}
	head, data := event[:i+len(dataField)], bytes.TrimSuffix(event[i+len(dataField):], []byte("\n\n"))
	if w.sent == 0 || w.sent+len(data) <= w.budget {
		w.sent += len(data)
		return event, true
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Method != "" {
		return nil, false
	}
	repl := errorResponse(recoverID(msg.ID), codeAnswerDropped, fmt.Sprintf(
		"answer dropped: the batch's answers would exceed %d bytes; the call was made; send it alone for its answer", w.budget))
	w.sent += len(repl)
	out = make([]byte, 0, len(head)+len(repl)+2)
	return append(append(append(out, head...), repl...), "\n\n"...), true
}

// Unwrap lets http.ResponseController (the SDK's flushes) reach the
// connection's writer.
func (w *trackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// RequireBearer admits only requests carrying "Authorization: Bearer <token>"
// and answers others with 401. The comparison takes the same time whatever the
// guess. An empty token admits nobody: a missing secret must not open the door.
func RequireBearer(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		// Hashing first makes the comparison independent of the lengths.
		sum := sha256.Sum256([]byte(got))
		if !ok || token == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolport"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer extracts the credentials of a Bearer Authorization header. The scheme
// is case-insensitive (RFC 9110 §11.1).
func bearer(header string) (string, bool) {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	return cred, cred != ""
}
