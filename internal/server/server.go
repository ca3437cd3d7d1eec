// Package server is Toolport's chat server: the HTTP API of docs/api.md
// (conversations, the chat stream over Server-Sent Events, direct tool
// calls), MCP over streamable HTTP at /mcp, the web page at /, health and
// Prometheus metrics.
//
// It binds to loopback by default. A bearer token (TOOLPORT_API_TOKEN), when
// set, guards every /api, /mcp and /metrics request; it is required on any
// other address ([CheckAddr]). Every route answers only to allowed Host names,
// refuses cross-origin state-changing requests and bodies that are not JSON
// (see guard). Request bodies are bounded in size and in the time they take to
// arrive, and every error is a JSON object {"error":{"code","message"}} with
// the matching status.
//
// The server only speaks HTTP: [New] is handed the chat agent and the MCP
// server ([Parts]), which [Wire] builds from the same [Config] (the agent
// over the tools it may offer, its tool calls counted in the server's
// metrics and announced to /mcp's sessions).
//
// Chat turns (claims, leases, fences, the event log, lost-turn repair and
// the start gate) are package [github.com/toolport/toolport/internal/turn];
// this package speaks HTTP and Server-Sent Events over it.
//
// `/healthz` and `/readyz` run the store check and `server.Config.Checks` (named, required or not).
// `serve` adds `weaviate`, required when `TOOLPORT_VECTOR_URL` is set (the track index is only
// there), and `redis`, reported but not required (without it results go uncached and limits are
// kept per process: slower and dearer in quota, not broken). `e2e/cluster` runs the whole scaled
// deployment as processes on real engines and kills a replica and a Weaviate node under load.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/metric"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/turn"
	"github.com/toolport/toolport/tool"
)

// Defaults of [Config].
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultHeartbeatInterval = 15 * time.Second
	DefaultMaxBodyBytes      = 1 << 20
	DefaultShutdownGrace     = 10 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// Store is the part of the store the server uses: [store.Conversations],
// [store.Turns] (turns across replicas) and a health check; *sqlstore.DB
// implements it.
type Store interface {
	agent.Store
	store.Turns
	CreateConversation(ctx context.Context, c store.Conversation) (store.Conversation, error)
	ListConversations(ctx context.Context, opt store.ListOptions) (store.ConversationPage, error)
	DeleteConversation(ctx context.Context, id string) error
	RenameConversation(ctx context.Context, id, title string) (store.Conversation, error)
	SearchConversations(ctx context.Context, query string, opt store.ListOptions) (store.ConversationPage, error)
	// StreamConversation reads a conversation for an export, one message
	// at a time (see sqlstore.DB.StreamConversation).
	StreamConversation(ctx context.Context, id string, head func(store.Conversation, *store.Usage) error, each func(store.Message) error) error
	SetConversationModel(ctx context.Context, id, model string) error
	Ping(ctx context.Context) error
}

// Config configures a [Server]. Store and Registry are required.
type Config struct {
	Store    Store
	Registry *tool.Registry

	// Token, when set, is the bearer token every /api, /mcp and /metrics
	// request must carry (/metrics on MetricsListener excepted).
	Token string
	// AllowedHosts are the Host names the server answers to besides the
	// loopback ones (localhost and loopback IPs); a port is ignored. Other
	// Hosts get 403. `toolport serve` adds its --addr host.
	AllowedHosts []string
	// AllowedOrigins are origins (scheme://host[:port]) trusted to send
	// state-changing requests cross-origin; a browser's own origin (same as
	// the Host) needs no entry.
	AllowedOrigins []string
	// MetricsListener, when set, serves /metrics there, unauthenticated and
	// under the same Host rules, instead of on the main handler.
	MetricsListener net.Listener
	// Playlists, when set, serves the stored playlists at /api/playlists
	// (listing, one, and its export), and to /mcp as resources;
	// *sqlstore.DB implements it.
	Playlists store.Playlists
	// Version is reported by /api/info and to MCP clients.
	Version string
	// Web serves the page at / (webui.Handler()); nil answers 404 there.
	Web http.Handler
	// Metrics, when set, receives the server's collectors; nil makes a
	// registry of its own ([Wire] makes it, and New uses the same).
	Metrics *metric.Registry
	// GOGC is the GOGC the process started with ("" for the default), for
	// go_gc_gogc_percent: the caller reads the environment, not the server.
	GOGC string

	// HeartbeatInterval is the period of ": ping" comments on chat streams;
	// 0 means DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// WriteTimeout bounds each write to a client (a stream write to a
	// client that stopped reading); 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers; 0 means
	// DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request's body, counted from the end
	// of its headers; 0 means DefaultBodyReadTimeout. It bounds no response:
	// a chat stream stays open as long as its turn runs.
	BodyReadTimeout time.Duration
	// ShutdownGrace is how long [Server.Serve] lets running chat turns finish
	// after ctx ends before canceling them (they then save what they have,
	// marked incomplete); 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Logger receives errors; nil discards them.
	Logger *slog.Logger
	// IndexBuild runs the POST /api/index/build job; nil answers 503 there.
	IndexBuild IndexBuilder
	// DemoIndex serves /api/index/demo (the index's size, and loading the
	// built-in demo tracks into it); nil answers 503 there.
	DemoIndex DemoIndex
	// Doctor serves /api/doctor (`toolport doctor`'s report: GET the free
	// checks, POST {"quota":true} all of them); nil answers 404.
	Doctor DoctorFunc
	// Settings serves /api/settings (the page's Settings view, which changes
	// the model, keys and attached MCP servers live); nil answers 404.
	Settings Settings

	// ReplicaID names this server among the replicas sharing the store (it
	// owns the turns it runs); "" means a random one.
	ReplicaID string
	// TurnLease is how long a turn's claim on its conversation holds
	// without renewal (renewed every TurnLease/3): a replica that dies
	// releases its conversations after at most this. 0 means
	// DefaultTurnLease.
	TurnLease time.Duration
	// TurnClock is the lease clock, which also paces lease renewal and the
	// sweeper of lost and expired turns; nil means the system clock. Tests
	// pass one they move by hand (turntest.Clock).
	TurnClock turn.Clock
	// TurnEventsRetention is how long a turn's event log is kept after it
	// ends, for clients resuming late; 0 means DefaultTurnEventsRetention.
	TurnEventsRetention time.Duration
	// StartPrecedence is the most a running turn waits, after its first
	// event (before its model call) and before each later event, while
	// other turns are starting, so that a burst of
	// messages gets its first events before the running answers go on; 0
	// means DefaultStartPrecedence, a negative value turns it off.
	StartPrecedence time.Duration
	// Checks are engines /healthz reports and /readyz requires, besides
	// the store.
	Checks []Check
	// OAuth, when set, completes attached MCP servers' authorizations at
	// GET /oauth/callback, the redirect URI its flows name.
	OAuth *mcphost.OAuth
}

// Server is the chat server. Create it with [New].
type Server struct {
	cfg            Config
	agent          *agent.Agent
	handler        http.Handler
	metricsHandler http.Handler // on MetricsListener; nil without one
	metrics        *metrics
	logger         *slog.Logger
	hosts          hostSet
	origins        *http.CrossOriginProtection
	// offered are the tools the agent offers its model.
	offered *tool.Registry

	turns *turn.Manager

	// changes tells /mcp's sessions that the resources they list may have
	// changed: a conversation made, renamed, deleted or answered, a
	// playlist stored.
	changes *mcpserver.Changes

	streams sync.WaitGroup

	builds *indexBuilds // the /api/index/build job
	demo   *demoLoads   // the /api/index/demo load

	host      *mcphost.Host // the attached MCP servers; nil without any
	closeHost sync.Once
}

// New returns a server for cfg over parts, the agent and the MCP server
// [Wire] builds: New only speaks HTTP over them.
func New(cfg Config, parts Parts) (*Server, error) {
	if cfg.Store == nil || cfg.Registry == nil {
		return nil, errors.New("server: Config.Store and Registry are required")
	}
	if parts.Agent == nil || parts.MCP == nil {
		return nil, errors.New("server: Parts.Agent and MCP are required (build them with Wire)")
	}
	cfg = withDefaults(cfg)
	for _, c := range cfg.Checks {
		if c.Name == "" || c.Check == nil {
			return nil, errors.New("server: every Config.Checks entry needs a Name and a Check")
		}
	}
	if parts.Metrics != nil {
		cfg.Metrics = parts.Metrics
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, agent: parts.Agent, offered: parts.Offered, changes: parts.Changes, metrics: parts.metrics,
		host: parts.Host}
	if s.offered == nil {
		s.offered = cfg.Registry
	}
	if s.changes == nil {
		s.changes = &mcpserver.Changes{}
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	var err error
	if s.hosts, err = newHostSet(cfg.AllowedHosts); err != nil {
		return nil, err
	}
	s.origins = http.NewCrossOriginProtection()
	for _, o := range cfg.AllowedOrigins {
		if err := s.origins.AddTrustedOrigin(strings.TrimSpace(o)); err != nil {
			return nil, fmt.Errorf("server: allowed origins: %w", err)
		}
	}
	if s.metrics == nil {
		// Parts built without Wire: the agent's tool calls are not counted,
		// direct calls and requests are.
		if s.metrics, err = newMetrics(cfg.Metrics, cfg.GOGC); err != nil {
			return nil, err
		}
	}
	m := s.metrics
	// The SDK's own DNS-rebinding check admits only loopback Hosts on a
	// loopback listener; guard enforces the configured list on every route,
	// so the SDK's check stays on unless that list names other hosts (a
	// reverse proxy on this machine forwarding its public name).
	mcpHandler := mcpserver.NewHTTPHandler(parts.MCP, mcpserver.HTTPOptions{Logger: cfg.Logger,
		DisableLocalhostProtection: s.hosts.nonLoopback()})

	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.auth(s.withBody(h))) }
	api("GET /api/info", s.info)
	api("POST /api/conversations", s.createConversation)
	api("GET /api/conversations", s.listConversations)
	api("GET /api/conversations/{id}", s.getConversation)
	api("PATCH /api/conversations/{id}", s.renameConversation)
	api("DELETE /api/conversations/{id}", s.deleteConversation)
	api("GET /api/conversations/{id}/export", s.exportConversation)
	api("POST /api/conversations/{id}/messages", s.postMessage)
	api("GET /api/playlists", s.listPlaylists)
	api("GET /api/playlists/{id}", s.getPlaylist)
	api("GET /api/playlists/{id}/export", s.exportPlaylist)
	api("POST /api/conversations/{id}/stop", s.stopTurn)
	api("GET /api/conversations/{id}/stream", s.conversationStream)
	api("GET /api/conversations/{id}/turns/{turnId}/events", s.turnEvents)
	api("PUT /api/conversations/{id}/messages/{messageId}", s.editMessage)
	api("POST /api/conversations/{id}/regenerate", s.regenerate)
	api("GET /api/tools", s.listTools)
	api("POST /api/tools/{name}", s.callTool)
	s.indexBuildRoutes(api)
	s.demoRoutes(api)
	s.approvalRoutes(api)
	api("GET /api/doctor", s.doctor)
	api("POST /api/doctor", s.doctor)
	s.settingsRoutes(api)
	api("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such API endpoint: "+r.Method+" "+r.URL.Path)
	})
	mux.Handle("/mcp", s.auth(s.withBody(mcpHandler)))
	if cfg.OAuth != nil {
		mux.HandleFunc("GET /oauth/callback", s.oauthCallback)
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if cfg.MetricsListener != nil {
		mm := http.NewServeMux()
		mm.Handle("GET /metrics", cfg.Metrics.Handler())
		s.metricsHandler = s.guard(mm)
	} else {
		mux.Handle("GET /metrics", s.auth(cfg.Metrics.Handler()))
	}
	if cfg.Web != nil {
		mux.Handle("/", cfg.Web)
	}
	s.handler = m.instrument(s.guard(mux))
	s.turns, err = turn.New(turn.Config{Store: cfg.Store, Answers: s.agent, Replica: cfg.ReplicaID,
		Lease: cfg.TurnLease, Clock: cfg.TurnClock, EventsRetention: cfg.TurnEventsRetention, StartPrecedence: cfg.StartPrecedence,
		Logger: s.logger,
		// A turn changes its conversation's title and export.
		Ended: func(string) { s.changes.Changed() }})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// MetricsHandler returns the handler [Server.Serve] runs on MetricsListener,
// or nil when none is configured (/metrics is then on [Server.Handler]).
func (s *Server) MetricsHandler() http.Handler { return s.metricsHandler }

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets chat turns in progress run for up to ShutdownGrace, then
// cancels them (each saves its partial answer) and waits for them to end.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	// No ReadTimeout or WriteTimeout: they would cut chat streams. Headers
	// have ReadHeaderTimeout, bodies BodyReadTimeout (guard), and each stream
	// write WriteTimeout (sse).
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if s.host != nil {
		refreshed := make(chan struct{})
		go func() { defer close(refreshed); refreshHost(base, s.host, hostRefreshInterval) }()
		defer func() { cancelBase(); <-refreshed }()
	}
	if s.metricsHandler != nil {
		ms := &http.Server{
			Handler:           s.metricsHandler,
			ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
			IdleTimeout:       DefaultIdleTimeout,
			ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		}
		merrc := make(chan error, 1)
		go func() { merrc <- ms.Serve(s.cfg.MetricsListener) }()
		defer func() {
			ms.Close()
			<-merrc
		}()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(grace)
	// Turns run apart from their streams: those whose clients left are
	// still running. Let them use what is left of the grace.
	if err != nil || !s.turns.Wait(grace) {
		// Cancel them (each saves what it has and sends message_end to its
		// streams), let their streams deliver that, then cut the streams
		// that follow other replicas' turns (their clients resume elsewhere).
		s.turns.Cancel(turn.ErrShuttingDown)
		turn.WaitUntil(&s.streams, time.After(time.Second))
		cancelBase()
		turn.WaitUntil(&s.streams, time.After(time.Second))
		hs.Close()
	}
	<-errc
	s.Close()
	return nil
}

// Close stops the server's background work and cancels its running turns
// (each saves what it has, marked incomplete), waiting for them up to the
// agent's save timeout. [Server.Serve] calls it; a server used only through
// [Server.Handler] should be closed by its owner.
func (s *Server) Close() {
	s.turns.Close()
	if s.host != nil {
		s.closeHost.Do(func() {
			if err := s.host.Close(); err != nil {
				s.logger.Warn("closing the attached MCP servers", "error", err)
			}
		})
	}
}

// hostRefreshInterval is how often attached MCP servers that are down are
// tried again; each server's own backoff (mcphost) spaces the attempts.
const hostRefreshInterval = 5 * time.Second

// refreshHost connects, every interval until ctx ends, the attached
// servers that are down, so that a server that was down at start-up (whose
// tools are not known) joins once it answers.
func refreshHost(ctx context.Context, h *mcphost.Host, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			h.Refresh(ctx)
		}
	}
}

// CheckAddr refuses to serve on a non-loopback address without a token:
// the API runs tools (and spends model credit) for whoever can reach it.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: address %q: %w", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("server: refusing to serve on %s without TOOLPORT_API_TOKEN: "+
		"anyone who can reach it could run tools; set a token or bind to 127.0.0.1", addr)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auth requires the bearer token, when one is configured.
func (s *Server) auth(h http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return h
	}
	want := []byte(s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") ||
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolport"`)
			// refuse: an unauthenticated body is never read.
			refuse(w, r, http.StatusUnauthorized, "UNAUTHORIZED", "a valid bearer token is required (Authorization: Bearer <TOOLPORT_API_TOKEN>)")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeJSON sends v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := tool.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL","message":"the response could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{apiError{code, msg}})
}

// decodeBody reads a JSON object body into v. An empty body is allowed when
// optional. It answers the error itself and returns false on failure.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) bool {
	body, ok := s.readBody(w, r)
	if !ok {
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		if optional {
			return true
		}
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body is empty: a JSON object is required")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body is not valid JSON for this endpoint: "+jsonError(err))
		return false
	}
	return true
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "TOO_LARGE", fmt.Sprintf("the request body is larger than %d bytes", s.cfg.MaxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the request body could not be read")
		}
		return nil, false
	}
	return body, true
}

// jsonError describes a decoding error without echoing the input.
func jsonError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q must be %s, got %s", typ.Field, typ.Type, typ.Value)
		}
		return fmt.Sprintf("want %s, got %s", typ.Type, typ.Value)
	}
	return "malformed JSON"
}

// storeError answers a store failure: 404 for a missing conversation, 400
// for an argument the store refuses, 500 otherwise.
func (s *Server) storeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrTooSlow):
		// The query is valid but matches too much to answer in time;
		// asking again as it is will not help, a narrower query will.
		s.logger.WarnContext(r.Context(), "store query cut off", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, "SEARCH_TIMEOUT", "the search took too long; use fewer or longer words")
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such conversation")
	case errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", strings.TrimPrefix(err.Error(), "store: "))
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads the answer.
	default:
		s.logger.ErrorContext(r.Context(), "store failure", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "the database failed")
	}
}
