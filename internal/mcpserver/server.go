// Package mcpserver serves a [tool.Registry] over the Model Context Protocol
// with the official Go SDK, so that a tool behaves in an MCP client exactly as
// it does in the CLI and the chat server.
//
// Every call goes through [tool.Registry.Call]: the registry validates the
// arguments (the SDK's own input validation is not used, so invalid arguments
// get the registry's field-and-rule messages), retries transient failures once,
// traces the call and builds the result envelope. This package only translates:
//
//   - a success becomes a result whose structuredContent is the envelope
//     ({"success":true,"summary":…,"durationMs":…,<fields>}), with a text
//     content holding the summary line and the same JSON for clients that read
//     only text;
//   - a failure becomes an isError result whose text content holds the message
//     and the failure envelope JSON ({"success":false,"error":…,"error_code":…,
//     "retryable":…,…}). It carries no structuredContent: the published
//     outputSchema describes a success, and clients built on the TypeScript SDK
//     (the MCP Inspector among them) validate structuredContent against it even
//     on errors, turning the tool's error into an opaque protocol error;
//   - tool.ReportProgress becomes notifications/progress when the client sent
//     a progress token, and the client's cancellation cancels the call's context.
//
// Besides tools, it offers what hosts show people: a prompt per exposed pack
// with completions for its arguments (prompts.go), resources read from the
// backends the surface passes in [Options] with list_changed notifications
// (resources.go), icons (icons.go), and a confirmation asked of the person
// before a tool that writes to their account runs (elicit.go).
//
// [RunStdio] runs a server on stdin/stdout; [NewHTTPHandler] serves streamable
// HTTP; [RequireBearer] is an optional bearer-token guard for it.
//
// # What MCP hosts show besides tools
//
// `internal/mcpserver` stays a translation layer: prompts (`prompts.go`), resources
// (`resources.go`), icons (`icons.go`, SVGs embedded per pack) and confirmation (`elicit.go`) take
// their content from backends the surface passes in `Options` (a `PlaylistStore`, a
// `ConversationExporter`, a `CKANCatalog`, the index's mood words), wired by `internal/cli`
// (`mcpBackends`) and `internal/server` (conversations, playlists). A prompt says what its pack is
// for in the chat agent's own words (`internal/agent/about`) and appears only when its pack is
// exposed. Store-backed resources are the SDK's registered resources, synced with the stores (the
// newest 50 of each) on `resources/list`, after any call of a tool that is not read-only, and on
// `Changes.Changed` (the chat server calls it after its turns' writing tool calls), so the SDK sends
// `list_changed` for what was added or removed; templates read older ones. A tool annotated
// `UserAccount` (and not read-only: savePlaylistToTidal, an attached MCP server's write tools) is
// confirmed with the person first, or as `Options.Approval` says per tool, as a multi-round-trip
// input request: clients on 2026-07-28 answer it themselves, older ones get `elicitation/create`
// from the SDK.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/tool"
)

// DefaultMaxTextBytes bounds the JSON rendering of a result in its text
// content when [Options.MaxTextBytes] is zero. Results are already bounded by
// their tools; this is a second limit, generous enough not to cut a fetched page.
const DefaultMaxTextBytes = 1 << 20

// Options configures a server built by [New].
type Options struct {
	// Packs and Tools select the tools to expose, as [tool.Registry.Select]:
	// empty means all. Clients and models do worse with too many tools.
	Packs []string
	Tools []string

	// Name and Version identify the server to clients ("toolport", "dev" when empty).
	Name    string
	Version string

	// Instructions, when set, is sent to clients as the server's instructions.
	Instructions string

	// Logger receives the SDK's diagnostics. Nil discards them. In stdio mode
	// it must not write to stdout, which belongs to the protocol.
	Logger *slog.Logger

	// MaxTextBytes bounds the JSON copy of a result in its text content;
	// longer renderings are cut and marked. Zero means [DefaultMaxTextBytes].
	// structuredContent is never cut.
	MaxTextBytes int

	// The backends of prompts' completions and of resources; each nil one
	// leaves its features out.
	//
	// Playlists serves the playlists suggestPlaylist stored as resources
	// (JSON and M3U8). Conversations serves the chat server's conversations
	// as Markdown. CKAN completes portal publishers and groups and serves
	// ckan://{portal}/dataset/{name}. Moods are the mood words the music
	// index knows, offered to complete discover_music's mood.
	Playlists     PlaylistStore
	Conversations ConversationExporter
	CKAN          CKANCatalog
	Moods         []string
	// Changes, when set, tells the server that the stores behind its
	// resources changed outside its own tool calls (a chat turn).
	Changes *Changes
	// ToolChanges, when set, says the registry's tools may change after
	// New (attached MCP servers come, go and list_changed): on each
	// Changed the server selects its tools again and adds or removes
	// them, which the SDK tells sessions with tools/list_changed.
	ToolChanges *Changes

	// Approval overrides, per tool name, whether a call is confirmed with
	// the person first (through elicitation, when the client offers it):
	// true always, false never. Tools not named are confirmed when they
	// act on the user's behalf outside Toolport (UserAccount and not
	// ReadOnly: savePlaylistToTidal, an attached MCP server's write
	// tools). It is the chat agent's policy too (agent.Config.Approval).
	Approval map[string]bool
}

// service holds what the server's handlers share.
type service struct {
	opts   Options
	srv    *mcp.Server
	logger *slog.Logger

	storeBacked bool                     // some resources are listed from stores
	syncMu      sync.Mutex               // one sync at a time
	listed      map[string]*mcp.Resource // by URI, guarded by syncMu

	pendingMu sync.Mutex
	pending   bool // a background sync is waiting to run
}

// New returns an MCP server exposing the tools of reg selected by opts. It fails
// when the selection names an unknown pack or tool, or a tool name is not a
// valid MCP tool name.
func New(reg *tool.Registry, opts Options) (*mcp.Server, error) {
	sub, err := reg.Select(opts.Packs, opts.Tools)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "toolport"
	}
	if version == "" {
		version = "dev"
	}
	maxText := opts.MaxTextBytes
	if maxText <= 0 {
		maxText = DefaultMaxTextBytes
	}
	s := &service{opts: opts, logger: opts.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	var complete func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	if opts.CKAN != nil || len(opts.Moods) > 0 {
		complete = s.complete // announced only when there is something to complete
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Title: "Toolport", Version: version, Icons: icon(serverIcon)}, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       opts.Logger,
		// No logging capability: Toolport logs to stderr or its own files,
		// never through the protocol. Tools, prompts and resources are
		// inferred when added, completions from the handler.
		Capabilities:      &mcp.ServerCapabilities{},
		CompletionHandler: complete,
	})
	s.srv = srv
	h := &handler{all: reg, maxText: maxText, svc: s, served: map[string]*tool.Tool{}}
	h.reg.Store(sub)
	for _, t := range sub.Tools() {
		if err := checkToolName(t.Name()); err != nil {
			return nil, fmt.Errorf("mcpserver: tool %q: %w", t.Name(), err)
		}
		srv.AddTool(mcpTool(t), h.call)
		h.served[t.Name()] = t
	}
	if opts.ToolChanges != nil {
		opts.ToolChanges.subscribe(h.syncTools)
	}
	s.addPrompts(srv, sub)
	s.addResources(srv)
	return srv, nil
}

// mcpTool describes t as an MCP tool, with the registry's schemas. The
// annotations are set explicitly, since MCP's defaults for an absent
// destructiveHint and openWorldHint are true.
func mcpTool(t *tool.Tool) *mcp.Tool {
	spec := t.Spec()
	a := spec.Annotations
	destructive := a.Destructive && !a.ReadOnly
	openWorld := a.OpenWorld
	return &mcp.Tool{
		Name:         spec.Name,
		Title:        spec.Title,
		Description:  spec.Description,
		Icons:        icon(spec.Pack),
		InputSchema:  t.InputSchema(),
		OutputSchema: t.OutputSchema(),
		Annotations: &mcp.ToolAnnotations{
			Title:           spec.Title,
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// checkToolName applies MCP's tool name rule: 1 to 128 characters from
// [A-Za-z0-9_.-]. The SDK only logs a bad name; a host would then reject it.
func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return errors.New("an MCP tool name has 1 to 128 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("an MCP tool name may not contain %q", r)
		}
	}
	return nil
}

// handler runs tools/call requests through the registry.
type handler struct {
	all     *tool.Registry                // the registry New was given
	reg     atomic.Pointer[tool.Registry] // the selected tools, as of the last sync
	maxText int
	svc     *service

	toolsMu sync.Mutex
	served  map[string]*tool.Tool // the tools added to the SDK server, guarded by toolsMu
}

// syncTools selects the tools again and adds to, or removes from, the SDK
// server those that changed since the last sync.
func (h *handler) syncTools() {
	sub, err := h.all.Select(h.svc.opts.Packs, h.svc.opts.Tools)
	if err != nil {
		h.svc.logger.Warn("mcpserver: tools not selected again", "error", err)
		return
	}
	h.toolsMu.Lock()
	defer h.toolsMu.Unlock()
	now := make(map[string]*tool.Tool, len(h.served))
	for _, t := range sub.Tools() {
		if err := checkToolName(t.Name()); err != nil {
			h.svc.logger.Warn("mcpserver: tool not served", "tool", t.Name(), "error", err)
			continue
		}
		now[t.Name()] = t
		if h.served[t.Name()] != t { // new, or declared again (list_changed)
			h.svc.srv.AddTool(mcpTool(t), h.call)
		}
	}
	var gone []string
	for name := range h.served {
		if now[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		h.svc.srv.RemoveTools(gone...)
	}
	h.served = now
	h.reg.Store(sub)
}

// call is the raw SDK tool handler. It never returns a protocol error: every
// outcome of a call, invalid arguments included, is a tool result the model
// can read and act on.
func (h *handler) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil { // the SDK always decodes params; be safe anyway
		req.Params = &mcp.CallToolParamsRaw{}
	}
	if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
		p := &progress{ctx: ctx, session: req.Session, token: token}
		defer p.stop()
		ctx = tool.WithProgress(ctx, p.report)
	}
	reg := h.reg.Load()
	t, ok := reg.Lookup(req.Params.Name)
	if ok && needsConfirmation(t.Spec(), h.svc.opts.Approval) {
		if res := h.confirm(req, t.Spec()); res != nil {
			return res, nil
		}
	}
	res := h.render(reg.Call(ctx, req.Params.Name, req.Params.Arguments))
	if ok && !t.Spec().Annotations.ReadOnly && h.svc.storeBacked {
		// A tool that writes may have stored a playlist: list the stores
		// again, which notifies the clients of what changed.
		h.svc.sync(ctx)
	}
	return res, nil
}

// render turns a registry result into an MCP tool result.
func (h *handler) render(res *tool.Result) *mcp.CallToolResult {
	if res.Err != nil {
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{
				&mcp.TextContent{Text: res.Err.Error()},
				&mcp.TextContent{Text: h.bound(res.JSON)},
			},
		}
	}
	// MCP says a tool returning structured content SHOULD return it as
	// text too; a rendering for a model (the output's own text form) is
	// that text when the output has one, so that a client forwarding both
	// does not pay for the JSON twice.
	if res.HasText() {
		return &mcp.CallToolResult{
			StructuredContent: res.JSON,
			Content:           []mcp.Content{&mcp.TextContent{Text: res.BoundedText(h.maxText)}},
		}
	}
	content := make([]mcp.Content, 0, 2)
	if res.Summary != "" {
		content = append(content, &mcp.TextContent{Text: res.Summary})
	}
	content = append(content, &mcp.TextContent{Text: h.bound(res.JSON)})
	return &mcp.CallToolResult{
		StructuredContent: res.JSON, // json.RawMessage: sent as is, no second encoding
		Content:           content,
	}
}

// bound returns the JSON as text, cut at the byte limit (on a UTF-8 boundary)
// with a note saying where the whole of it is.
func (h *handler) bound(b []byte) string {
	if len(b) <= h.maxText {
		return string(b)
	}
	cut := h.maxText
	for cut > 0 && b[cut]&0xC0 == 0x80 { // do not split a multi-byte character
		cut--
	}
	return fmt.Sprintf("%s…(truncated: %d of %d bytes shown; the whole result is in structuredContent)", b[:cut], cut, len(b))
}

// progress forwards a call's tool.ReportProgress to the client as
// notifications/progress. MCP requires the progress value to increase, so a
// report that does not advance (a retried attempt starting over, say) is
// dropped; reports after the call has ended are dropped too.
type progress struct {
	ctx     context.Context // the request's context: it routes the notification to the request's stream
	session *mcp.ServerSession
	token   any

	mu      sync.Mutex
	last    float64
	sent    bool
	stopped bool
}

func (p *progress) report(r tool.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || (p.sent && r.Done <= p.last) {
		return
	}
	p.last, p.sent = r.Done, true
	// A failed notification (the client went away) must not fail the call;
	// the call's context tells the tool to stop.
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token,
		Progress:      r.Done,
		Total:         r.Total,
		Message:       r.Message,
	})
}

func (p *progress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}
