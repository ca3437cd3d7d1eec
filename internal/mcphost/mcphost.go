// Package mcphost attaches other MCP servers to Toolport as tool sources: the
// chat server's agent (and any other surface given the registry) then calls
// their tools exactly as it calls Toolport's own.
//
// Each configured server ([Server]) is reached with the official MCP Go SDK's
// client, over stdio (a command with arguments and environment, started as a
// child process) or streamable HTTP (a URL, with an optional bearer token,
// or OAuth per the MCP authorization specification: see [OAuth]). Its
// tools are declared with [tool.NewRaw] from their published input schemas
// and registered in a [tool.Registry] under the server's prefix,
// "<server>__<tool>", cut and given a hash suffix where needed so that every
// name satisfies every model's rule, ^[a-zA-Z0-9_-]{1,64}$. So they get the
// registry's argument and result bounds, secret scrubbing, tracing and
// envelope, and this package bounds each call's time ([Server.Timeout]).
//
// A server's annotations are kept: readOnlyHint, destructiveHint (absent:
// true, as MCP says), idempotentHint, openWorldHint (absent: true). A tool
// that is not read-only acts with whatever rights the server holds for the
// user, so it is marked [tool.Annotations.UserAccount]: the chat agent asks
// for approval before it runs, and Toolport's MCP server asks through
// elicitation.
//
// A server that is down, slow or dies fails only the calls made to it, each
// with a structured tool error (NETWORK_ERROR, TIMEOUT, API_ERROR) naming the
// server, never a panic or a failed turn. A connection that is lost is made
// again on the next call, no sooner than a backoff that doubles from
// [Options.MinBackoff] to [Options.MaxBackoff] with each failed attempt. A
// call whose connection broke while it ran is not retried: the server may
// have acted on it. The server's notifications/tools/list_changed makes the
// host list its tools again and update the registry (tools removed are
// unregistered, new ones registered).
//
// Stdio servers are started with the user's rights, from the credentials
// file only, with a small environment (PATH, HOME, USER, LANG, TMPDIR and
// what the server's "env" names): Toolport's own keys are not passed on.
package mcphost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/agent/about"
	"github.com/toolport/toolport/tool"
)

// Defaults of [Options] and [Server].
const (
	DefaultCallTimeout    = 60 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultMinBackoff     = time.Second
	DefaultMaxBackoff     = time.Minute
)

// Bounds of what a server can make Toolport hold.
const (
	// MaxTools bounds the tools taken from one server.
	MaxTools = 256
	// MaxDescriptionBytes bounds a tool's description, which the model
	// reads: it comes from another program.
	MaxDescriptionBytes = 4 << 10
	// maxTextBytes bounds one text content of a result; the registry and
	// the agent bound the whole result further.
	maxTextBytes = 1 << 20
	// maxErrorText bounds the server's text quoted in an error.
	maxErrorText = 2 << 10
)

// Pack is the pack of every attached tool.
const Pack = about.AttachedPack

// NamePattern is the rule every server name follows: it is the prefix of its
// tools' names.
var NamePattern = regexp.MustCompile(`^[a-zA-Z0-9-]{1,32}$`)

// Server is one MCP server to attach: Command (stdio) or URL (streamable
// HTTP), not both.
type Server struct {
	// Name prefixes its tools' names; it follows NamePattern.
	Name string
	// Command, Args and Env start a stdio server. Env is added to the
	// small environment every server gets.
	Command string
	Args    []string
	Env     map[string]string
	// URL is a streamable HTTP endpoint; Token, when set, is sent as a
	// bearer token. It is a secret: register it with the registry's
	// tool.WithSecrets.
	URL   string
	Token string
	// Timeout bounds each call; 0 means DefaultCallTimeout.
	Timeout time.Duration
}

// Validate checks the server's configuration.
func (s Server) Validate() error {
	if !NamePattern.MatchString(s.Name) {
		return fmt.Errorf("mcp server %q: the name must match %s", s.Name, NamePattern)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("mcp server %q: needs a command or a url", s.Name)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("mcp server %q: has both a command and a url; give one", s.Name)
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp server %q: url must be an http or https URL", s.Name)
		}
		if u.User != nil {
			return fmt.Errorf("mcp server %q: url must not hold credentials; use token", s.Name)
		}
	}
	if s.Token != "" && s.URL == "" {
		return fmt.Errorf("mcp server %q: token is for url servers", s.Name)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("mcp server %q: timeout must not be negative", s.Name)
	}
	return nil
}

// Options configures a [Host].
type Options struct {
	// Logger receives what happens to connections; nil discards it.
	Logger *slog.Logger
	// Version is Toolport's, sent to servers as the client's version.
	Version string
	// HTTPClient is the base client of HTTP servers; nil means a new one.
	HTTPClient *http.Client
	// ConnectTimeout bounds connecting and listing the tools.
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a server that
	// failed is tried again.
	MinBackoff, MaxBackoff time.Duration
	// Now is the clock of the backoff; nil means time.Now.
	Now func() time.Time
	// OnChange, when set, is called after a server's tools were put in
	// the registry (connected, or listed again after list_changed), with
	// the server's name: offers of tools built from the registry (a
	// model's tool list) are then out of date.
	OnChange func(server string)
	// Getenv is Toolport's environment, from which a stdio server inherits
	// PATH, HOME, USER, LANG and TMPDIR (the command line hands it in: no
	// package but cli reads the environment); nil passes none of them.
	Getenv func(string) string
	// OAuth, when set, authorizes the URL servers without a Token that
	// answer 401 (see [OAuth]); nil leaves them unauthorized.
	OAuth *OAuth
}

// Host holds the connections to the attached servers.
type Host struct {
	reg  *tool.Registry
	opts Options

	connsMu sync.Mutex // guards conns against Detach
	conns   []*conn

	ctx    context.Context // ends with Close: background listings stop
	cancel context.CancelFunc

	bgMu   sync.Mutex // guards closed and wg.Go against Close's wg.Wait
	closed bool
	wg     sync.WaitGroup
}

// background runs fn on a goroutine Close waits for; after Close it does
// not run, and background reports false.
func (h *Host) background(fn func()) bool {
	h.bgMu.Lock()
	defer h.bgMu.Unlock()
	if !h.closed {
		h.wg.Go(fn)
	}
	return !h.closed
}

// Attach connects to servers and registers their tools in reg. A server
// that cannot be reached is not an error (its state says why, and
// [Host.Refresh] tries again); an invalid configuration, or two servers of
// one name, is. Close the host to stop the servers.
func Attach(ctx context.Context, reg *tool.Registry, servers []Server, opts Options) (*Host, error) {
	seen := map[string]bool{}
	for _, s := range servers {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("mcp server %q: declared twice", s.Name)
		}
		seen[s.Name] = true
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &Host{reg: reg, opts: opts, ctx: hctx, cancel: cancel}
	for _, s := range servers {
		if s.Timeout == 0 {
			s.Timeout = DefaultCallTimeout
		}
		c := &conn{h: h, cfg: s, names: map[string]string{}}
		if opts.OAuth != nil && s.URL != "" && s.Token == "" {
			c.auth = newConnAuth(opts.OAuth, c)
		}
		h.conns = append(h.conns, c)
	}
	h.Refresh(ctx)
	return h, nil
}

// Refresh connects every server that has no connection and whose backoff
// has passed, registering its tools.
func (h *Host) Refresh(ctx context.Context) {
	var wg sync.WaitGroup
	for _, c := range h.attached() {
		wg.Go(func() { _, _ = c.session(ctx) })
	}
	wg.Wait()
}

// KeepConnecting calls [Host.Refresh] at each tick until ctx ends, so that
// a server that was down at start-up (whose tools are not known, so no call
// can reach it) joins once it answers, each server no sooner than its
// backoff allows; [Options.OnChange] then tells the surfaces.
func (h *Host) KeepConnecting(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			return
		case <-ticks:
			h.Refresh(ctx)
		}
	}
}

// Close ends every connection (stopping stdio servers) and unregisters
// the servers' tools.
func (h *Host) Close() error {
	h.cancel()
	h.bgMu.Lock()
	h.closed = true
	h.bgMu.Unlock()
	var errs []error
	for _, c := range h.attached() {
		errs = append(errs, c.close())
	}
	h.wg.Wait()
	return errors.Join(errs...)
}

// attached returns the servers' connections now.
func (h *Host) attached() []*conn {
	h.connsMu.Lock()
	defer h.connsMu.Unlock()
	return h.conns
}

// ErrNotAttached is [Host.Detach]'s error for a name it does not hold.
var ErrNotAttached = errors.New("no such MCP server attached")

// Detach ends one server's connection (stopping a stdio server), removes
// its tools from the registry and forgets it, while the host's other
// servers stay: a server attached at start can leave without a restart. A
// connection or listing of it still under way registers nothing.
func (h *Host) Detach(name string) error {
	h.connsMu.Lock()
	i := slices.IndexFunc(h.conns, func(c *conn) bool { return c.cfg.Name == name })
	if i < 0 {
		h.connsMu.Unlock()
		return fmt.Errorf("mcp server %q: %w", name, ErrNotAttached)
	}
	c := h.conns[i]
	// A new slice: Refresh and Status may be ranging over the old one.
	h.conns = slices.Delete(slices.Clone(h.conns), i, i+1)
	h.connsMu.Unlock()
	c.detached.Store(true)
	return c.close()
}

// gone reports whether c's tools must not be registered: its host closed,
// or it was detached.
func (c *conn) gone() bool { return c.h.ctx.Err() != nil || c.detached.Load() }

// Status is what is known of one server, for listings.
type Status struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"` // "stdio" or "http"
	Connected bool     `json:"connected"`
	Tools     []string `json:"tools"` // registry names
	// Error is why the last attempt to reach it failed; "" when it did not.
	Error string `json:"error,omitempty"`
	// Authorization is AuthNeeded while the user's authorization (OAuth)
	// is awaited at AuthorizationURL, AuthAuthorized once tokens are held,
	// "" for a server that asked for none.
	Authorization    string `json:"authorization,omitempty"`
	AuthorizationURL string `json:"authorizationUrl,omitempty"`
}

// Status lists the servers in configuration order.
func (h *Host) Status() []Status {
	conns := h.attached()
	out := make([]Status, 0, len(conns))
	for _, c := range conns {
		c.mu.Lock()
		st := Status{Name: c.cfg.Name, Transport: "stdio", Connected: c.live != nil, Error: c.lastErr}
		if c.cfg.URL != "" {
			st.Transport = "http"
		}
		for name := range c.names {
			st.Tools = append(st.Tools, name)
		}
		c.mu.Unlock()
		if c.auth != nil {
			c.auth.status(&st)
		}
		slices.Sort(st.Tools)
		out = append(out, st)
	}
	return out
}

// conn is one server's connection, made on demand.
type conn struct {
	h    *Host
	cfg  Server
	auth *connAuth // nil unless OAuth may authorize it

	connectMu sync.Mutex // one connection attempt at a time
	listMu    sync.Mutex // one listing at a time

	calls    atomic.Int64
	progress sync.Map    // progress token → the context of the call it belongs to
	detached atomic.Bool // by Host.Detach: nothing of it is registered again

	mu       sync.Mutex
	live     *mcp.ClientSession
	failures int
	nextTry  time.Time
	lastErr  string
	names    map[string]string // registry name → the server's tool name
}

// session returns the live session, connecting first if there is none and
// the backoff allows.
func (c *conn) session(ctx context.Context) (*mcp.ClientSession, error) {
	c.connectMu.Lock()
	defer c.connectMu.Unlock()
	c.mu.Lock()
	s, next, last := c.live, c.nextTry, c.lastErr
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if c.auth != nil && c.auth.needsUser() {
		// Connecting again would meet the same 401: the user must act.
		return nil, c.needsAuth(nil)
	}
	if wait := next.Sub(c.h.opts.Now()); wait > 0 {
		if c.auth != nil && c.auth.needsUserElsewhere() {
			return nil, c.needsAuth(nil)
		}
		return nil, &tool.Error{Code: tool.CodeNetwork, Retryable: true, RetryAfter: wait,
			Message: fmt.Sprintf("MCP server %q is unavailable (%s); it is tried again in %s", c.cfg.Name, last, wait.Round(time.Second))}
	}
	s, err := c.connect(ctx)
	if s, err = c.settle(ctx, s, err); err != nil {
		return nil, err
	}
	// Told only now, with the connection live: a surface that reads
	// Status on the news sees it connected.
	c.changed()
	return s, nil
}

// settle records how connecting ended.
func (c *conn) settle(ctx context.Context, s *mcp.ClientSession, err error) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && c.auth != nil && c.auth.needsUser() {
		c.lastErr = (&NeedsAuthorizationError{Server: c.cfg.Name}).Error()
		return nil, c.needsAuth(err)
	}
	if err != nil && c.auth != nil && c.auth.needsUserElsewhere() {
		// Tried again after the backoff: the tokens may have been saved
		// by the process where the user authorizes.
		c.failures++
		c.nextTry = c.h.opts.Now().Add(c.backoff())
		c.lastErr = c.needsAuth(nil).Error()
		return nil, c.needsAuth(err)
	}
	if err != nil {
		c.failures++
		c.nextTry = c.h.opts.Now().Add(c.backoff())
		c.lastErr = err.Error()
		c.h.opts.Logger.WarnContext(ctx, "connecting to an MCP server failed", "server", c.cfg.Name, "error", c.lastErr, "attempts", c.failures)
		return nil, &tool.Error{Code: tool.CodeNetwork, Retryable: false, Err: err,
			Message: fmt.Sprintf("MCP server %q could not be reached: %s", c.cfg.Name, c.lastErr)}
	}
	if c.gone() { // closed or detached while connecting: undo the listing too
		for name := range c.names {
			c.h.reg.Unregister(name)
		}
		c.names = map[string]string{}
		go func() { _ = s.Close() }() // Close no longer waits for background work
		return nil, &tool.Error{Code: tool.CodeCanceled, Message: fmt.Sprintf("MCP server %q: detached, or the host is closing", c.cfg.Name)}
	}
	c.failures, c.lastErr, c.live = 0, "", s
	return s, nil
}

// needsAuth is the error of a call to a server awaiting the user's
// authorization. It does not quote the authorization URL: the model could
// repeat it, and its state is the callback's only proof.
func (c *conn) needsAuth(err error) error {
	na := &NeedsAuthorizationError{Server: c.cfg.Name}
	if c.auth != nil {
		na.Elsewhere = c.auth.o.elsewhere
	}
	return &tool.Error{Code: tool.CodeAuthMissing, Err: err, Message: na.Error()}
}

// backoff is the wait after c.failures failed attempts in a row.
func (c *conn) backoff() time.Duration {
	d := c.h.opts.MinBackoff
	for i := 1; i < c.failures && d < c.h.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.h.opts.MaxBackoff)
}

// connect starts the connection and lists the server's tools.
func (c *conn) connect(ctx context.Context) (*mcp.ClientSession, error) {
	if c.gone() {
		return nil, errors.New("the host is closed or the server detached")
	}
	ctx, cancel := context.WithTimeout(ctx, c.h.opts.ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport", Version: c.h.opts.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			// Listing from inside the notification's handler would wait on
			// the connection that is delivering it.
			c.h.background(func() { c.relist(req.Session) })
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if ctx, ok := c.progress.Load(req.Params.ProgressToken); ok {
				tool.ReportProgress(ctx.(context.Context), tool.Progress{
					Done: req.Params.Progress, Total: req.Params.Total, Message: clip(req.Params.Message, 200)})
			}
		},
	})
	s, err := client.Connect(ctx, c.transport(), nil)
	if err != nil {
		return nil, fmt.Errorf("connecting: %s", describe(err))
	}
	if err := c.list(ctx, s); err != nil {
		_ = s.Close()
		return nil, err
	}
	if c.auth != nil {
		c.auth.accepted()
	}
	c.h.background(func() {
		err := s.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.live == s {
			c.live = nil
			c.lastErr = "the connection ended"
			if err != nil {
				c.lastErr += ": " + describe(err)
			}
			c.h.opts.Logger.Warn("an MCP server's connection ended", "server", c.cfg.Name, "error", c.lastErr)
		}
	})
	return s, nil
}

// transport is how c is reached.
func (c *conn) transport() mcp.Transport {
	if c.cfg.URL != "" {
		hc := *c.h.opts.HTTPClient
		if c.cfg.Token != "" {
			base := hc.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			hc.Transport = bearer{token: c.cfg.Token, base: base}
		}
		// The SDK's own reconnection is off: a lost connection fails its
		// call, and the next call connects again, with backoff.
		t := &mcp.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: &hc, MaxRetries: -1}
		if c.auth != nil {
			t.OAuthHandler = c.auth
		}
		return t
	}
	cmd := exec.Command(c.cfg.Command, c.cfg.Args...)
	cmd.Env = serverEnv(c.h.opts.Getenv, c.cfg.Env)
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}

// serverEnv is the environment of a stdio server: enough to run a program,
// none of Toolport's keys.
func serverEnv(getenv func(string) string, extra map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "TMPDIR"} {
		if getenv == nil {
			break
		}
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// bearer adds the server's token to each request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// relist lists the tools again after list_changed.
func (c *conn) relist(s *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(c.h.ctx, c.h.opts.ConnectTimeout)
	defer cancel()
	if err := c.list(ctx, s); err != nil {
		c.h.opts.Logger.Warn("listing an MCP server's tools again failed", "server", c.cfg.Name, "error", err)
		return
	}
	c.changed()
}

// changed tells the surfaces that c's tools in the registry changed.
func (c *conn) changed() {
	if c.h.opts.OnChange != nil {
		c.h.opts.OnChange(c.cfg.Name)
	}
}

// list reads the server's tools and puts them in the registry in place of
// those it had.
func (c *conn) list(ctx context.Context, s *mcp.ClientSession) error {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	var listed []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		res, err := s.ListTools(ctx, params)
		if err != nil {
			return fmt.Errorf("listing tools: %s", describe(err))
		}
		listed = append(listed, res.Tools...)
		if res.NextCursor == "" || len(listed) >= MaxTools {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	if len(listed) > MaxTools {
		c.h.opts.Logger.Warn("an MCP server offers more tools than are taken", "server", c.cfg.Name, "offered", len(listed), "taken", MaxTools)
		listed = listed[:MaxTools]
	}
	names := map[string]string{}
	var tools []*tool.Tool
	for _, mt := range listed {
		t, err := c.declare(mt)
		if err != nil {
			c.h.opts.Logger.Warn("an MCP server's tool is left out", "server", c.cfg.Name, "tool", clip(mt.Name, 128), "error", err)
			continue
		}
		if _, dup := names[t.Name()]; dup {
			continue
		}
		names[t.Name()] = mt.Name
		tools = append(tools, t)
	}
	c.replace(tools, names)
	return nil
}

// replace puts tools in the registry in place of the server's others.
func (c *conn) replace(tools []*tool.Tool, names map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := make([]string, 0, len(c.names))
	for name := range c.names {
		old = append(old, name)
	}
	c.h.reg.Unregister(old...)
	c.names = map[string]string{}
	if c.detached.Load() { // a listing that ended after Detach
		return
	}
	for _, t := range tools {
		if err := c.h.reg.Register(t); err != nil {
			c.h.opts.Logger.Warn("an MCP server's tool is left out", "server", c.cfg.Name, "tool", t.Name(), "error", err)
			continue
		}
		c.names[t.Name()] = names[t.Name()]
	}
}

// declare makes the Toolport tool that calls mt.
func (c *conn) declare(mt *mcp.Tool) (*tool.Tool, error) {
	if mt.Name == "" {
		return nil, errors.New("a tool without a name")
	}
	schema, err := json.Marshal(mt.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	a := annotations(mt.Annotations)
	title := mt.Title
	if title == "" && mt.Annotations != nil {
		title = mt.Annotations.Title
	}
	if title == "" {
		title = mt.Name
	}
	desc := strings.TrimSpace(mt.Description)
	if desc == "" {
		desc = title
	}
	remote := mt.Name
	spec := tool.Spec{
		Name:        ToolName(c.cfg.Name, mt.Name),
		Title:       clip(c.cfg.Name+": "+title, 200),
		Description: clip(desc, MaxDescriptionBytes),
		Pack:        Pack,
		Annotations: a,
	}
	return tool.NewRaw(spec, schema, func(ctx context.Context, args json.RawMessage) (*Output, error) {
		return c.call(ctx, remote, args)
	})
}

// annotations maps MCP's hints to Toolport's, with MCP's defaults for the
// absent ones.
func annotations(ma *mcp.ToolAnnotations) tool.Annotations {
	if ma == nil {
		return tool.Annotations{Destructive: true, OpenWorld: true, UserAccount: true}
	}
	a := tool.Annotations{
		ReadOnly:    ma.ReadOnlyHint,
		Idempotent:  ma.IdempotentHint,
		Destructive: ma.DestructiveHint == nil || *ma.DestructiveHint,
		OpenWorld:   ma.OpenWorldHint == nil || *ma.OpenWorldHint,
	}
	if a.ReadOnly {
		a.Destructive = false
	}
	// It acts with the server's rights, on the user's behalf.
	a.UserAccount = !a.ReadOnly
	return a
}

// ToolName is the registry name of server's tool: "<server>__<tool>" when
// that follows ^[a-zA-Z0-9_-]{1,64}$; otherwise the characters it may not
// hold become "_" and it is cut to leave room for "_" and 8 hex digits of a
// hash of the original, so that distinct tools keep distinct names.
func ToolName(server, name string) string {
	full := server + "__" + name
	clean := []byte(full)
	changed := false
	for i, ch := range clean {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			clean[i], changed = '_', true
		}
	}
	if !changed && len(full) <= 64 {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return string(clean[:min(len(clean), 55)]) + "_" + hex.EncodeToString(sum[:4])
}

// call runs one of the server's tools.
func (c *conn) call(ctx context.Context, name string, args json.RawMessage) (*Output, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	// The server's progress notifications become the call's
	// tool.ReportProgress (MCP progress, the CLI's progress line).
	token := fmt.Sprintf("toolport-%d", c.calls.Add(1))
	params.SetProgressToken(token)
	c.progress.Store(token, ctx)
	defer c.progress.Delete(token)
	res, err := s.CallTool(cctx, params)
	if err != nil {
		return nil, c.callError(ctx, cctx, s, name, err)
	}
	if c.auth != nil {
		// The server took the token (a refreshed one, or one another
		// process saved): a later refusal of it is a revocation.
		c.auth.accepted()
	}
	if res.IsError {
		return nil, &tool.Error{Code: tool.CodeAPI,
			Message: fmt.Sprintf("MCP server %q: tool %q failed: %s", c.cfg.Name, name, clip(resultText(res), maxErrorText))}
	}
	return newOutput(c.cfg.Name, res), nil
}

// callError classifies a failed call: the caller gone, the call out of
// time, the server's refusal, or the connection lost.
func (c *conn) callError(ctx, cctx context.Context, s *mcp.ClientSession, name string, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case cctx.Err() != nil:
		return &tool.Error{Code: tool.CodeTimeout, Err: err,
			Message: fmt.Sprintf("MCP server %q did not answer %q within %s", c.cfg.Name, name, c.cfg.Timeout)}
	}
	if c.auth != nil && (c.auth.needsUser() || c.auth.needsUserElsewhere()) {
		return c.needsAuth(err)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && !localCode(wire.Code) {
		return &tool.Error{Code: tool.CodeAPI, Err: err,
			Message: fmt.Sprintf("MCP server %q refused %q: %s", c.cfg.Name, name, clip(wire.Message, maxErrorText))}
	}
	// The connection broke: drop it, so that the next call makes a new one.
	c.mu.Lock()
	if c.live == s {
		c.live = nil
		c.lastErr = "the connection was lost: " + describe(err)
	}
	c.mu.Unlock()
	// Closing may wait on the server (an HTTP DELETE, a process's exit):
	// not this call's business.
	c.h.background(func() { _ = s.Close() })
	return &tool.Error{Code: tool.CodeNetwork, Err: err,
		Message: fmt.Sprintf("MCP server %q: the connection was lost during the call of %q (%s); "+
			"it may have run; the server is connected again on the next call", c.cfg.Name, name, describe(err))}
}

// localCode reports whether a JSON-RPC error code is one the SDK makes on
// this side (unknown error, client or server closing, rejected by the
// transport) rather than the server's answer: the connection is in doubt.
func localCode(code int64) bool {
	switch code {
	case -32001, -32003, -32004, -32005:
		return true
	}
	return false
}

func (c *conn) close() error {
	c.mu.Lock()
	s := c.live
	c.live = nil
	old := make([]string, 0, len(c.names))
	for name := range c.names {
		old = append(old, name)
	}
	c.names = map[string]string{}
	c.mu.Unlock()
	c.h.reg.Unregister(old...)
	if s == nil {
		return nil
	}
	err := s.Close()
	// A stdio server that does not exit when its input closes is
	// terminated (CommandTransport's TerminateDuration): that exit status
	// is the stop asked for, not a failure to report.
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && c.cfg.Command != "" {
		return nil
	}
	return err
}

// describe is an error's text, bounded; transports' errors can quote URLs,
// which never hold credentials here (Validate refuses them; the token is
// a header).
func describe(err error) string { return clip(err.Error(), 500) }

// clip cuts s to n bytes on a UTF-8 boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
