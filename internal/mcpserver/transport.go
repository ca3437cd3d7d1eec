package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunStdio serves one client on stdin and stdout (newline-delimited JSON-RPC)
// until the client closes stdin or ctx is canceled; both end it cleanly with a
// nil error. stdout carries nothing but protocol messages: the server's
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
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
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
	return &httpHandler{
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
		retryField: []byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n"),
	}
}

// httpHandler routes a request to the handler for its protocol revision.
type httpHandler struct {
	stateless, stateful http.Handler
	retryField          []byte // "retry: <ms>\n"
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Revisions are dates (YYYY-MM-DD), so they order as strings. A client of
	// an older revision sends no header on initialize, and its session ID after.
	if r.Header.Get(sessionIDHeader) == "" && r.Header.Get(protocolVersionHeader) >= statelessRevision {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(&primeWriter{ResponseWriter: w, retryField: h.retryField}, r)
}

// primeEvent is how the SDK begins its priming event (v1.8.0); it writes each
// event with one Write.
var primeEvent = []byte("event: prime\n")

// primeWriter adds the retry field to a response stream's priming event.
type primeWriter struct {
	http.ResponseWriter
	retryField []byte
	wrote      bool
}

func (w *primeWriter) Write(p []byte) (int, error) {
	if w.wrote {
		return w.ResponseWriter.Write(p)
	}
	w.wrote = true
	rest, ok := bytes.CutPrefix(p, primeEvent)
	if !ok || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		return w.ResponseWriter.Write(p)
	}
	buf := make([]byte, 0, len(p)+len(w.retryField))
	buf = append(append(append(buf, primeEvent...), w.retryField...), rest...)
	if _, err := w.ResponseWriter.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController (the SDK's flushes) reach the
// connection's writer.
func (w *primeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
