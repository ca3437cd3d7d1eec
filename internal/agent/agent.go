// Package agent runs Toolport's chat turns: the loop between a language model
// and the tool registry, streamed as events and saved as content blocks.
//
// One turn goes like this. The user's message is saved first, so that it is
// durable before anything else can fail; then [MessageStart] is emitted. The
// model streams text ([TextDelta]) and tool calls; the calls of one step are
// announced ([ToolCallStart]) and then run concurrently through the registry,
// each ending in [ToolCallEnd] or [ToolCallError]; their results go back to the
// model, for up to MaxSteps rounds, after which the model is asked for a final
// answer without tools. The assistant message is saved as the blocks it was
// made of, in order (text, tool_use, tool_result, text, …), with each
// tool_result's content the tool's result envelope. [MessageEnd] closes the
// turn.
//
// A tool result, like a tool call's input, is as large as its upstream's
// answer or the model's whim; the model, the events and the store get each
// cut to Config.MaxToolResultBytes (64 KiB by default), with a "_truncated"
// note, and all of a turn's to Config.MaxTurnToolBytes, so that a large
// result or error cannot make the answer too large to save.
//
// Failures are events, never lost work: a tool failure is a tool result the
// model reads (and a ToolCallError); a model failure is an [ErrorEvent]; a
// canceled context (the client went away, the server is stopping) cancels the
// model call and the tools. In every case what was produced so far is saved,
// marked incomplete. A turn that fails (the model failed or is not
// configured, the turn panicked) saves its error's code and message with the
// assistant message before the ErrorEvent goes out, even when nothing else
// was produced, so that a reload shows the error as it was shown live.
//
// Tracing follows Langfuse's model of a chat: a "chat-message" trace per turn,
// a generation span per model call (model, token usage), and the registry's
// "tool-<name>" spans under the generation that asked for them, all tagged
// with the conversation as the session (see [TracerProvider]).
//
// # Turns that replace others
//
// A conversation is one line of messages. Regenerating an answer or editing an earlier user message
// (`agent.Regenerate`, `agent.Edit`) first deletes the messages it replaces
// (`TruncateConversation`, one transaction from the replaced message's sequence number on) and then
// runs a normal turn on what is left; no branch is kept, so history, search and export see only the
// current line. Both go through the server's one claim-and-stream path (`streamTurn`), so a
// regenerate cannot overlap another turn of the conversation. Each conversation may name a model of
// `TOOLPORT_MODELS` (column `conversations.model`); the agent picks its provider per turn and falls
// back to the default when the name is no longer configured.
//
// # Approval of tool calls
//
// A call of a tool that acts on the user's behalf outside Toolport
// (tool.Annotations.UserAccount and not ReadOnly: savePlaylistToTidal, an
// attached MCP server's write tools; Config.Approval overrides per tool) is
// not run by the loop: the turn ends with [ApprovalRequired] events and stop
// reason "approval_required", the pending calls stored as tool_use blocks
// without results in the assistant message. The decision is data, not a
// waiting goroutine: [Agent.Pending] finds the calls from the stored
// conversation, and [Agent.Approve] (on any replica) runs or denies them and
// continues the same message (approval.go).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// Defaults of [Config].
const (
	DefaultMaxSteps           = 5
	DefaultModelRetryDelay    = time.Second
	DefaultMaxModelRetryAfter = 5 * time.Second
	DefaultSaveTimeout        = 10 * time.Second
	// DefaultMaxToolResultBytes bounds each tool result of a turn, as the
	// model, the event stream and the store get it.
	DefaultMaxToolResultBytes = tool.DefaultMaxResultBytes
	// DefaultMaxTurnToolBytes bounds all the tool results (and tool call
	// inputs) of one turn together: half the store's 16 MiB limit of a
	// message, so that no number of large results can make the answer
	// unsavable.
	DefaultMaxTurnToolBytes = 8 << 20
	DefaultTurnTimeout      = 10 * time.Minute
)

// MaxTitleRunes bounds the title a conversation gets from its first message.
const MaxTitleRunes = 80

// maxTurnText bounds the text the agent accumulates from one model call.
const maxTurnText = 8 << 20

// ErrEmptyMessage is returned by [Agent.Turn] for a message with no text.
var ErrEmptyMessage = errors.New("agent: the message is empty")

// ErrNothingToRegenerate is returned by [Agent.Regenerate] for a
// conversation without a user message.
var ErrNothingToRegenerate = errors.New("agent: the conversation has no message to answer again")

// ErrNotUserMessage is returned by [Agent.Edit] for a message that is not
// the user's.
var ErrNotUserMessage = errors.New("agent: only the user's messages can be edited")

// Store is the part of the store the agent uses; *sqlstore.DB implements
// it.
type Store interface {
	GetConversation(ctx context.Context, id string) (store.Conversation, error)
	messageWrites
	// Fenced returns the writes made under a turn's fence (see
	// [store.Turns.Fenced]).
	Fenced(f store.Fence) store.TurnWrites
}

// messageWrites are the writes of a conversation's messages a turn makes:
// the store's own, or fenced ones.
type messageWrites interface {
	AppendMessage(ctx context.Context, m store.Message) (store.Message, error)
	UpdateMessage(ctx context.Context, m store.Message) error
	UpdateTitle(ctx context.Context, id, title string) error
	ReplaceTitle(ctx context.Context, id, from, to string) (bool, error)
	TruncateConversation(ctx context.Context, convID, fromID string) (int, error)
}

// writes returns where the writes of a turn under fence f go: f's fenced
// writes, or the store itself for the zero Fence (a turn that holds no
// claim, as in a single-process use of the agent).
func (a *Agent) writes(f store.Fence) messageWrites {
	if f.TurnID == "" {
		return a.cfg.Store
	}
	return a.cfg.Store.Fenced(f)
}

// Model is a model a conversation can answer with.
type Model struct {
	// Name is how clients choose it: "provider:model", never a base URL.
	Name     string
	Provider llm.Provider
	// ContextWindow is the model's context limit in tokens; 0 when unknown.
	ContextWindow int
}

// Config configures an [Agent]. Store and Registry are required.
type Config struct {
	Store    Store
	Registry *tool.Registry

	// Provider is the model. Nil means none is configured: turns still save
	// the user's message, then answer with an ErrorEvent of code
	// MODEL_NOT_CONFIGURED whose message is NoModel's (default
	// llm.ErrNoModel's, which says how to configure one).
	Provider llm.Provider
	NoModel  error
	// ModelName names the model in traces (e.g. "anthropic:claude-sonnet-4-5");
	// default Provider.Model().
	ModelName string
	// ContextWindow is Provider's context limit in tokens; 0 when unknown.
	ContextWindow int
	// Models are more models a conversation may choose (TOOLPORT_MODELS),
	// by name; Provider is the default of every conversation that chose
	// none. A name listed twice, or Provider's own, is used once.
	Models []Model

	// MaxSteps is the number of tool rounds per turn before the model is
	// asked for an answer without tools. 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxTokens bounds each model response; 0 means llm.DefaultMaxTokens.
	MaxTokens int
	// System is the system prompt; "" means [SystemPrompt] of Registry.
	System string

	// ModelRetryDelay is the wait before the one retry of a model call that
	// failed transiently before any output (429, 5xx, a dropped connection),
	// when the server gave no Retry-After. 0 means DefaultModelRetryDelay;
	// negative retries at once. MaxModelRetryAfter is the longest
	// Retry-After waited for (0: DefaultMaxModelRetryAfter); longer waits
	// fail the turn with a retryable error instead.
	ModelRetryDelay    time.Duration
	MaxModelRetryAfter time.Duration

	// MaxToolResultBytes bounds each tool result the model, the event
	// stream (tool_call_end, tool_call_error) and the store get, and each
	// tool call's input echoed in tool_call_start and kept in the history:
	// larger ones are cut, keeping their structure, with a note (see
	// tool.BoundJSON). 0 means DefaultMaxToolResultBytes; values below
	// tool.MinResultBytes mean that.
	//
	// MaxTurnToolBytes bounds them all together over a turn; when a step's
	// calls would pass it, each of them gets an equal share of what is left
	// (never less than tool.MinResultBytes). 0 means DefaultMaxTurnToolBytes.
	MaxToolResultBytes int
	MaxTurnToolBytes   int

	// SaveTimeout bounds the saving of a turn's answer, which goes on after
	// the turn's context is canceled. 0 means DefaultSaveTimeout.
	SaveTimeout time.Duration

	// TurnTimeout bounds a whole turn, model calls, retries and tools
	// included; a turn that runs out ends with a MODEL_TIMEOUT error event
	// (what it produced so far is kept). 0 means DefaultTurnTimeout;
	// negative means no bound.
	TurnTimeout time.Duration

	// TracerProvider traces turns; nil disables tracing. Wrap it with
	// [TracerProvider] (and give the same to the registry) for session ids.
	TracerProvider trace.TracerProvider
	// Logger receives warnings (a message that could not be saved); nil
	// discards them.
	Logger *slog.Logger
	// OnToolCall, if set, is called after each tool call of a turn (for
	// metrics). It may be called concurrently.
	OnToolCall func(name string, res *tool.Result)

	// Titles asks the model, after a conversation's first answer, for a
	// short title (one call of at most TitleMaxTokens tokens, bounded by
	// TitleTimeout, before the answer's MessageEnd) in place of the first
	// message's words; a title a person set meanwhile is kept. Without a
	// model nothing is asked.
	Titles bool
	// TitleTimeout bounds the titling call; 0 means DefaultTitleTimeout.
	TitleTimeout time.Duration

	// Approval overrides, per tool name, whether a call must be approved
	// by the person before it runs: true always asks, false never does.
	// Tools not named ask when they act on the user's behalf outside
	// Toolport (tool.Annotations.UserAccount and not ReadOnly): see
	// [Agent.Approve].
	Approval map[string]bool
}

// Agent runs chat turns. It is safe for concurrent use; turns of one
// conversation must not overlap (the server refuses a second one).
type Agent struct {
	cfg Config
	// models are what conversations can choose, the default first;
	// [Agent.SetModels] replaces them while turns run.
	modelsMu   sync.RWMutex
	models     []Model
	hasDefault bool // models[0] is the default provider (Config.Provider)
	// defs are the model's tool definitions of the registry's tools
	// defsFor, and system the prompt; a registry whose tools change (an
	// attached MCP server's list_changed) gets new ones at the next model
	// call (a Config.System prompt stays as given).
	defsMu  sync.Mutex
	defs    []llm.ToolDef
	defsFor []*tool.Tool
	system  string
	tracer  trace.Tracer
	logger  *slog.Logger
}

// New returns an agent for cfg.
func New(cfg Config) (*Agent, error) {
	if cfg.Store == nil || cfg.Registry == nil {
		return nil, errors.New("agent: Config.Store and Config.Registry are required")
	}
	if cfg.MaxSteps < 0 {
		return nil, fmt.Errorf("agent: MaxSteps %d: must be >= 0", cfg.MaxSteps)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.ModelRetryDelay == 0 {
		cfg.ModelRetryDelay = DefaultModelRetryDelay
	}
	if cfg.MaxModelRetryAfter == 0 {
		cfg.MaxModelRetryAfter = DefaultMaxModelRetryAfter
	}
	if cfg.MaxToolResultBytes < 0 || cfg.MaxTurnToolBytes < 0 {
		return nil, fmt.Errorf("agent: MaxToolResultBytes %d, MaxTurnToolBytes %d: must be >= 0", cfg.MaxToolResultBytes, cfg.MaxTurnToolBytes)
	}
	if cfg.MaxToolResultBytes == 0 {
		cfg.MaxToolResultBytes = DefaultMaxToolResultBytes
	}
	if cfg.MaxTurnToolBytes == 0 {
		cfg.MaxTurnToolBytes = DefaultMaxTurnToolBytes
	}
	if cfg.SaveTimeout <= 0 {
		cfg.SaveTimeout = DefaultSaveTimeout
	}
	if cfg.TurnTimeout == 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	if cfg.NoModel == nil {
		cfg.NoModel = llm.ErrNoModel
	}
	if cfg.Provider != nil && cfg.ModelName == "" {
		cfg.ModelName = cfg.Provider.Model()
	}
	defs, err := llm.ToolDefs(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	tools := cfg.Registry.Tools()
	a := &Agent{cfg: cfg, defs: defs, defsFor: tools, system: cfg.System, logger: cfg.Logger}
	var def *Model
	if cfg.Provider != nil {
		def = &Model{Name: cfg.ModelName, Provider: cfg.Provider, ContextWindow: cfg.ContextWindow}
	}
	if err := a.SetModels(def, cfg.Models); err != nil {
		return nil, err
	}
	if a.system == "" {
		a.system = systemPrompt(tools)
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	a.tracer = tp.Tracer("github.com/toolport/toolport/internal/agent")
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// SetModels replaces the models conversations can choose: def is the
// default (nil: none, Config.Provider's role), more the others
// (Config.Models' role). Turns already running keep the model they
// started with; the next ones use these. The page's Settings changes the
// model through it, without a restart.
func (a *Agent) SetModels(def *Model, more []Model) error {
	var models []Model
	if def != nil {
		if def.Provider == nil {
			return errors.New("agent: the default model needs a provider")
		}
		if def.Name == "" {
			def.Name = def.Provider.Model()
		}
		models = append(models, *def)
	}
	for _, m := range more {
		if m.Provider == nil || m.Name == "" {
			return fmt.Errorf("agent: Models: %q needs a name and a provider", m.Name)
		}
		if !slices.ContainsFunc(models, func(x Model) bool { return x.Name == m.Name }) {
			models = append(models, m)
		}
	}
	a.modelsMu.Lock()
	defer a.modelsMu.Unlock()
	a.models, a.hasDefault = models, def != nil
	return nil
}

// ModelConfigured reports whether the agent has a model.
func (a *Agent) ModelConfigured() bool {
	a.modelsMu.RLock()
	defer a.modelsMu.RUnlock()
	return a.hasDefault
}

// ModelName names the agent's model, or "" when none is configured.
func (a *Agent) ModelName() string {
	a.modelsMu.RLock()
	defer a.modelsMu.RUnlock()
	if !a.hasDefault {
		return ""
	}
	return a.models[0].Name
}

// ModelHelp says how to configure a model (the NoModel error's message).
func (a *Agent) ModelHelp() string { return errorMessage(a.cfg.NoModel) }

// Models lists the models a conversation can choose, the default first;
// none when no model is configured.
func (a *Agent) Models() []Model {
	a.modelsMu.RLock()
	defer a.modelsMu.RUnlock()
	return slices.Clone(a.models)
}

// HasModel reports whether name is one of [Agent.Models].
func (a *Agent) HasModel(name string) bool {
	a.modelsMu.RLock()
	defer a.modelsMu.RUnlock()
	return slices.ContainsFunc(a.models, func(m Model) bool { return m.Name == name })
}

// modelFor returns the model conversation c answers with: the one it chose,
// or the default when it chose none or one no longer configured. The zero
// Model means none is configured.
func (a *Agent) modelFor(c store.Conversation) Model {
	a.modelsMu.RLock()
	defer a.modelsMu.RUnlock()
	for _, m := range a.models {
		if m.Name == c.Model && c.Model != "" {
			return m
		}
	}
	if len(a.models) > 0 {
		return a.models[0]
	}
	return Model{}
}

// Turn runs one chat turn: the user's text in conversation convID, answered
// by the model with tools. Events go to emit, which is never called
// concurrently; emit should not block for long (it holds up the turn).
// Every write of the turn (the user's message, the answer, the title) is
// made under fence f, the turn's claim (package turn); the zero Fence for
// none.
//
// Turn returns an error only when the turn could not start: an empty text
// ([ErrEmptyMessage]), an unknown conversation (wrapping store.ErrNotFound),
// or the user's message could not be saved. Then nothing was emitted. Once
// [MessageStart] is emitted, every outcome is reported as events, ending with
// [MessageEnd], and Turn returns nil.
func (a *Agent) Turn(ctx context.Context, f store.Fence, convID, text string, emit func(Event)) error {
	return a.begin(ctx, f, convID, turnStart{text: text}, emit)
}

// Regenerate answers the conversation's last user message again: the
// messages after it (the previous answer) are deleted, not kept, and the new
// answer streams like a [Agent.Turn]'s. A conversation without a user message
// is [ErrNothingToRegenerate].
func (a *Agent) Regenerate(ctx context.Context, f store.Fence, convID string, emit func(Event)) error {
	return a.begin(ctx, f, convID, turnStart{regenerate: true}, emit)
}

// Edit replaces user message messageID with text and answers it: that
// message and every later one are deleted (not kept), then the turn runs as
// [Agent.Turn] does. An unknown message is store.ErrNotFound, one that is not
// the user's [ErrNotUserMessage].
func (a *Agent) Edit(ctx context.Context, f store.Fence, convID, messageID, text string, emit func(Event)) error {
	if messageID == "" {
		return fmt.Errorf("agent: message %q: %w", messageID, store.ErrNotFound)
	}
	return a.begin(ctx, f, convID, turnStart{text: text, edit: messageID}, emit)
}

// loadTurn bounds ctx by the turn timeout and loads conversation convID:
// the preamble of every turn, new or resumed. cancel releases the bound.
func (a *Agent) loadTurn(ctx context.Context, convID string) (_ context.Context, cancel context.CancelFunc, _ store.Conversation, _ error) {
	cancel = func() {}
	if d := a.cfg.TurnTimeout; d > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, d, &turnTimeout{d})
	}
	conv, err := a.cfg.Store.GetConversation(ctx, convID)
	if err != nil {
		cancel()
		return ctx, nil, store.Conversation{}, fmt.Errorf("agent: %w", err)
	}
	return ctx, cancel, conv, nil
}

// turnSpan starts the span of a turn in conversation convID, with attrs
// beyond those every turn has.
func (a *Agent) turnSpan(ctx context.Context, convID string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx = WithSession(ctx, convID)
	return a.tracer.Start(ctx, "chat-message", trace.WithAttributes(append([]attribute.KeyValue{
		attribute.String(attrTraceName, "chat-message"),
		attribute.String("conversation.id", convID),
	}, attrs...)...))
}

// turnStart is how a turn begins: a new message, an edit of an earlier one,
// or the last one answered again.
type turnStart struct {
	text       string
	edit       string // the id of the user message text replaces
	regenerate bool
}

func (a *Agent) begin(ctx context.Context, f store.Fence, convID string, st turnStart, emit func(Event)) error {
	w := a.writes(f)
	if !st.regenerate && strings.TrimSpace(st.text) == "" {
		return ErrEmptyMessage
	}
	ctx, cancel, conv, err := a.loadTurn(ctx, convID)
	if err != nil {
		return err
	}
	defer cancel()
	// base is the history the turn builds on; cut, the first message the
	// turn replaces.
	base, cut, userID := conv.Messages, "", ""
	switch {
	case st.regenerate:
		i := lastUser(conv.Messages)
		if i < 0 {
			return ErrNothingToRegenerate
		}
		base, userID = conv.Messages[:i+1], conv.Messages[i].ID
		if i+1 < len(conv.Messages) {
			cut = conv.Messages[i+1].ID
		}
		if st.text = messageText(conv.Messages[i]); strings.TrimSpace(st.text) == "" {
			return ErrNothingToRegenerate
		}
	case st.edit != "":
		i := slices.IndexFunc(conv.Messages, func(m store.Message) bool { return m.ID == st.edit })
		if i < 0 {
			return fmt.Errorf("agent: message %q: %w", st.edit, store.ErrNotFound)
		}
		if conv.Messages[i].Role != store.RoleUser {
			return ErrNotUserMessage
		}
		base, cut = conv.Messages[:i], st.edit
	}
	model := a.modelFor(conv)
	ctx, span := a.turnSpan(ctx, convID,
		attribute.String(attrInput, textclip.Mark(st.text, maxSpanText, truncatedMark)),
		attribute.Bool("chat.regenerate", st.regenerate),
		attribute.Bool("chat.edit", st.edit != ""))
	defer span.End()

	if cut != "" {
		if _, err := w.TruncateConversation(ctx, convID, cut); err != nil {
			span.SetStatus(codes.Error, "replacing the later messages failed")
			return fmt.Errorf("agent: replacing the later messages: %w", err)
		}
	}
	if !st.regenerate {
		user, _ := json.Marshal([]llm.Block{llm.Text(st.text)})
		m, err := w.AppendMessage(ctx, store.Message{
			ConversationID: convID, Role: store.RoleUser, Content: user,
		})
		if err != nil {
			span.SetStatus(codes.Error, "saving the user message failed")
			return fmt.Errorf("agent: saving the user message: %w", err)
		}
		userID = m.ID
	}
	t := &turn{a: a, w: w, convID: convID, msgID: uuid.NewString(), model: model, emitFn: emit, span: span, toolBytes: a.cfg.MaxTurnToolBytes,
		allowed: allowedAlways(base)}
	span.SetAttributes(attribute.String("message.id", t.msgID))
	t.emit(MessageStart{MessageID: t.msgID, ConversationID: convID, UserMessageID: userID, Model: model.Name})
	defer t.recoverPanic(ctx)
	// The title is not needed for the first event, so its write comes after.
	// The first message's words title the conversation until the model's
	// title (Config.Titles) replaces them after the answer.
	if conv.Title == "" && len(conv.Messages) == 0 {
		provisional := Title(st.text)
		if err := w.UpdateTitle(ctx, convID, provisional); err != nil {
			a.logger.WarnContext(ctx, "setting the conversation title failed", "conversation", convID, "error", err)
		} else if a.cfg.Titles && provisional != "" {
			t.titleFrom, t.question = provisional, st.text
		}
	}

	if model.Provider == nil {
		t.failWith(ctx, ErrorEvent{Code: CodeModelNotConfigured, Message: errorMessage(a.cfg.NoModel)})
		t.end(StopError)
		span.SetStatus(codes.Error, "no model configured")
		return nil
	}
	history, skipped := History(base)
	if skipped > 0 {
		a.logger.WarnContext(ctx, "stored messages could not be decoded and were left out", "conversation", convID, "count", skipped)
	}
	if !st.regenerate {
		history = appendUser(history, llm.UserText(st.text))
	}
	t.run(ctx, history, 0)
	return nil
}

// lastUser returns the index of the last user message, or -1.
func lastUser(msgs []store.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == store.RoleUser {
			return i
		}
	}
	return -1
}

// messageText is the text of a stored message's text blocks.
func messageText(m store.Message) string {
	var blocks []llm.Block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return ""
	}
	return assistantText(blocks)
}

// appendUser adds m to msgs, merged into the last message if that is a user
// message too (the previous turn failed before any answer was saved).
func appendUser(msgs []llm.Message, m llm.Message) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		msgs[n-1].Content = append(msgs[n-1].Content, m.Content...)
		return msgs
	}
	return append(msgs, m)
}

// Title makes a conversation title from its first message: the first line,
// trimmed, at most MaxTitleRunes runes.
func Title(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, ""))
	if utf8.RuneCountInString(text) > MaxTitleRunes {
		r := []rune(text)
		text = strings.TrimSpace(string(r[:MaxTitleRunes-1])) + "…"
	}
	return text
}

// turn is the state of one running turn.
type turn struct {
	// titleFrom is the provisional title the model's replaces after this
	// answer (Config.Titles), question the message it answers; "" for a
	// turn that names nothing.
	titleFrom, question string

	a      *Agent
	w      messageWrites // under the turn's fence
	convID string
	msgID  string
	model  Model
	span   trace.Span

	emitMu sync.Mutex
	emitFn func(Event)

	blocks []llm.Block // the assistant message so far, in order
	usage  Usage
	saved  bool // the assistant message has been appended (later saves update it)

	toolBytes int                 // what is left of MaxTurnToolBytes
	failure   *store.MessageError // the error the turn failed with, saved with the message
	// allowed are the tools the person allowed for the rest of the
	// conversation ("always"), read from its stored tool results.
	allowed map[string]bool
}

func (t *turn) emit(ev Event) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.emitFn(ev)
}

// end emits MessageEnd.
func (t *turn) end(stop string) {
	t.span.SetAttributes(attribute.String("chat.stop_reason", stop),
		attribute.Int64("gen_ai.usage.input_tokens", t.usage.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", t.usage.OutputTokens))
	t.emit(MessageEnd{MessageID: t.msgID, Usage: t.usage, StopReason: stop})
}

// run is the loop: model, tools, model… then the answer. It starts at step
// first: a turn resumed after an approval has used some of its steps.
func (t *turn) run(ctx context.Context, msgs []llm.Message, first int) {
	stop := StopEndTurn
	for step := first; ; step++ {
		final := step >= t.a.cfg.MaxSteps
		system, defs := t.a.offer()
		req := llm.Request{System: system, Messages: msgs, Tools: defs, MaxTokens: t.a.cfg.MaxTokens}
		if final {
			req.ToolChoice = llm.ToolChoiceNone
			stop = StopMaxSteps
		}
		gctx, resp, err := t.generate(ctx, req, step)
		out := resp.Message.Content
		if final {
			out = withoutToolUse(out) // a model that calls tools anyway is not obeyed
			resp.ToolCalls = nil
		}
		limit := t.toolLimit(len(resp.ToolCalls))
		// The calls run with their inputs whole; what is kept and sent back
		// of them is bounded like their results.
		t.boundInputs(out, limit)
		t.blocks = append(t.blocks, out...)
		if err != nil {
			t.fail(ctx, err)
			return
		}
		if len(resp.ToolCalls) == 0 {
			break
		}
		now, waiting := t.splitApproval(resp.ToolCalls)
		results := t.runTools(gctx, now, limit)
		t.blocks = append(t.blocks, results...)
		if len(waiting) > 0 && ctx.Err() == nil {
			t.pause(ctx, waiting)
			return
		}
		if ctx.Err() != nil {
			t.fail(ctx, ctx.Err())
			return
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: out},
			llm.Message{Role: llm.RoleUser, Content: results})
		// Keep what the turn has produced so far, should the process die.
		t.save(ctx, true)
	}
	t.span.SetAttributes(attribute.String(attrOutput, textclip.Mark(assistantText(t.blocks), maxSpanText, truncatedMark)))
	if err := t.save(ctx, false); err != nil {
		t.failWith(ctx, ErrorEvent{Code: CodeInternal, Message: "the answer could not be saved", Retryable: true})
		t.end(StopError)
		return
	}
	// Before MessageEnd, so that a client that lists the conversations when
	// the answer ends sees the title.
	t.nameConversation(ctx, assistantText(t.blocks))
	t.end(stop)
}

func withoutToolUse(blocks []llm.Block) []llm.Block {
	out := blocks[:0:0]
	for _, b := range blocks {
		if b.Type != llm.BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

func assistantText(blocks []llm.Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == llm.BlockText {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// turnTimeout is the cause of a turn's context canceled by
// [Config.TurnTimeout].
type turnTimeout struct{ after time.Duration }

func (e *turnTimeout) Error() string {
	return fmt.Sprintf("the turn took longer than %s (TOOLPORT_TURN_TIMEOUT) and was stopped", e.after)
}

// fail ends a turn that cannot go on: canceled, out of time, or the model failed.
func (t *turn) fail(ctx context.Context, err error) {
	var tt *turnTimeout
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &tt) {
		t.span.SetStatus(codes.Error, "turn timeout")
		t.save(ctx, true)
		t.emit(ErrorEvent{Code: CodeModelTimeout, Message: tt.Error(), Retryable: true})
		t.end(StopError)
		return
	}
	if ctx.Err() != nil {
		t.span.SetStatus(codes.Error, "canceled")
		t.save(ctx, true)
		t.end(StopCanceled)
		return
	}
	ev := modelErrorEvent(err)
	// The operator sees what the person sees (for a server that cannot be
	// reached, its URL), not the transport's text, which may carry keys.
	var le *llm.Error
	url := ""
	if errors.As(err, &le) {
		url = le.URL
	}
	t.a.logger.WarnContext(ctx, "the model call failed", "conversation", t.convID, "message", t.msgID, "url", url, "code", ev.Code, "error", ev.Message)
	t.span.SetStatus(codes.Error, ev.Message)
	t.failWith(ctx, ev)
	t.end(StopError)
}

// maxErrorMessage bounds an error event's message so that it fits the store
// whole: what is saved is exactly what was shown.
const maxErrorMessage = store.MaxErrorMessageBytes - len(truncatedMark)

// failWith saves the answer so far, marked incomplete, with ev as its error
// (a message of its own when nothing else was produced), then emits ev. The
// save comes first so that a reload right after the event shows the error.
// ev's message is already safe to show (llm.Error messages carry no keys; a
// network error names the server's URL without credentials or query), so it
// is stored as sent.
func (t *turn) failWith(ctx context.Context, ev ErrorEvent) {
	ev.Message = textclip.Mark(ev.Message, maxErrorMessage, truncatedMark)
	t.failure = &store.MessageError{Code: ev.Code, Message: ev.Message}
	t.save(ctx, true)
	t.emit(ev)
}

// recoverPanic ends a turn that panicked (a bug in the agent or a provider;
// tool panics are the registry's tool errors) like any other failure, so the
// client gets an error and the message end, and a reload shows them. It must
// be deferred directly.
func (t *turn) recoverPanic(ctx context.Context) {
	p := recover()
	if p == nil {
		return
	}
	// The panic value is logged only when it is the runtime's own (it cannot
	// hold data); another value might carry anything.
	what := fmt.Sprintf("%T", p)
	if re, ok := p.(runtime.Error); ok {
		what = re.Error()
	}
	t.a.logger.ErrorContext(ctx, "the turn panicked", "conversation", t.convID, "message", t.msgID,
		"panic", what, "stack", string(debug.Stack()))
	t.span.SetStatus(codes.Error, "panic")
	t.failWith(ctx, ErrorEvent{Code: CodeInternal, Message: "the turn failed because of an internal error"})
	t.end(StopError)
}

// modelErrorEvent turns a model failure into the error event the client sees.
func modelErrorEvent(err error) ErrorEvent {
	var le *llm.Error
	if !errors.As(err, &le) {
		return ErrorEvent{Code: CodeModelError, Message: "the model call failed"}
	}
	ev := ErrorEvent{Code: CodeModelError, Message: le.Message, Retryable: le.Retryable}
	if le.URL != "" && !strings.Contains(ev.Message, le.URL) {
		// Which server refused: a wrong base URL is the commonest first-run
		// failure, and the status alone does not show it.
		ev.Message += " (model server " + le.URL + ")"
	}
	switch le.Code {
	case llm.CodeRateLimit:
		ev.Code = CodeRateLimit
	case llm.CodeAuth:
		ev.Code = CodeModelAuth
	case llm.CodeTimeout:
		ev.Code = CodeModelTimeout
	case llm.CodeNotConfigured:
		ev.Code = CodeModelNotConfigured
	}
	return ev
}

func errorMessage(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Message
	}
	return err.Error()
}

// save stores the assistant message as it is now, with the turn's failure if
// any. It goes on when ctx is canceled (that is when a partial answer most
// needs saving). A turn that produced nothing and did not fail is not saved.
func (t *turn) save(ctx context.Context, incomplete bool) error {
	if len(t.blocks) == 0 && t.failure == nil {
		return nil
	}
	blocks := t.blocks
	if blocks == nil {
		blocks = []llm.Block{} // content is an array, even when empty
	}
	content, err := llm.MarshalBlocks(blocks)
	if err != nil {
		t.a.logger.ErrorContext(ctx, "encoding the answer failed", "conversation", t.convID, "error", err)
		return fmt.Errorf("agent: encoding the answer: %w", err)
	}
	m := store.Message{
		ID: t.msgID, ConversationID: t.convID, Role: store.RoleAssistant, Content: content,
		Incomplete: incomplete,
		Error:      t.failure,
		Usage: &store.Usage{InputTokens: int(t.usage.InputTokens), OutputTokens: int(t.usage.OutputTokens),
			ContextTokens: int(t.usage.ContextTokens)},
	}
	for attempt := 1; ; attempt++ {
		err = t.write(ctx, m, attempt > 1)
		if err == nil {
			return nil
		}
		if attempt == saveAttempts || !retrySave(err) {
			t.a.logger.ErrorContext(ctx, "saving the answer failed", "conversation", t.convID, "message", t.msgID,
				"attempts", attempt, "error", err)
			return fmt.Errorf("agent: saving the answer: %w", err)
		}
		t.a.logger.WarnContext(ctx, "saving the answer failed; trying again", "conversation", t.convID, "message", t.msgID,
			"attempt", attempt, "error", err)
	}
}

// saveAttempts bounds the tries of one save of an answer, each bounded by
// Config.SaveTimeout. Under a burst of turns a save can wait in the store's
// queue past its timeout although the store works (the writes ahead of it
// commit); the answer is in memory only, so the save is tried again rather
// than the answer given up.
const saveAttempts = 3

// retrySave reports whether a failed save may succeed when tried again: not
// when the store refused it for what it is (the turn was taken over, the
// conversation is gone, the message is invalid).
func retrySave(err error) bool {
	return !errors.Is(err, store.ErrFenced) && !errors.Is(err, store.ErrNotFound) &&
		!errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrConflict)
}

// write makes one try of a save, bounded by Config.SaveTimeout. After a
// failed try (again) an append may have landed although its caller was not
// told (a deadline that passed at its commit): the id then exists, and the
// message is updated instead.
func (t *turn) write(ctx context.Context, m store.Message, again bool) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.a.cfg.SaveTimeout)
	defer cancel()
	if t.saved {
		return t.w.UpdateMessage(sctx, m)
	}
	_, err := t.w.AppendMessage(sctx, m)
	if again && errors.Is(err, store.ErrConflict) {
		err = t.w.UpdateMessage(sctx, m)
	}
	t.saved = err == nil
	return err
}

// generate makes one model call, streaming its text out, inside a generation
// span. It returns the span's context (the tools the call asked for run
// under it) and the response, which holds what arrived even on error.
func (t *turn) generate(ctx context.Context, req llm.Request, step int) (context.Context, *llm.Response, error) {
	a := t.a
	ctx, span := a.tracer.Start(ctx, "llm-generation", trace.WithAttributes(
		attribute.String(attrObservationType, "generation"),
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.system", providerName(t.model.Provider)),
		attribute.String("gen_ai.request.model", t.model.Provider.Model()),
		attribute.String("langfuse.observation.model.name", t.model.Provider.Model()),
		attribute.Int("chat.step", step),
		attribute.Bool("chat.tools_allowed", req.ToolChoice != llm.ToolChoiceNone),
		attribute.String(attrInput, textclip.Mark(lastUserText(req.Messages), maxSpanText, truncatedMark)),
	))
	defer span.End()

	var resp *llm.Response
	var err error
	for attempt := 0; ; attempt++ {
		var produced bool
		resp, produced, err = t.stream(ctx, req)
		if err == nil || produced || attempt > 0 {
			break
		}
		wait, ok := a.retryWait(ctx, err)
		if !ok || ctx.Err() != nil {
			break
		}
		span.AddEvent("retry", trace.WithAttributes(attribute.String("error", errorMessage(err))))
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	t.usage.InputTokens += resp.Usage.InputTokens
	t.usage.OutputTokens += resp.Usage.OutputTokens
	if c := resp.Usage.InputTokens + resp.Usage.OutputTokens; c > 0 {
		t.usage.ContextTokens = c
	}
	span.SetAttributes(
		attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens),
		attribute.String("gen_ai.response.finish_reasons", string(resp.StopReason)),
		attribute.Int("chat.tool_calls", len(resp.ToolCalls)),
		attribute.String(attrOutput, textclip.Mark(resp.Message.Text(), maxSpanText, truncatedMark)),
	)
	if err != nil {
		span.SetStatus(codes.Error, errorMessage(err))
	}
	return ctx, resp, err
}

// retryWait says whether a failed model call is retried, and after how long.
// A timeout is not retried: the attempt has already waited as long as the
// provider allows, and a second one would double the user's wait for an
// error; the error is retryable, so the user may try again. Nor is a call
// retried when the wait would reach the turn's deadline.
func (a *Agent) retryWait(ctx context.Context, err error) (time.Duration, bool) {
	var le *llm.Error
	if !errors.As(err, &le) || !le.Retryable || le.Code == llm.CodeTimeout {
		return 0, false
	}
	wait := max(a.cfg.ModelRetryDelay, 0)
	if le.RetryAfter > 0 {
		if le.RetryAfter > a.cfg.MaxModelRetryAfter {
			return 0, false
		}
		wait = le.RetryAfter
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
		return 0, false
	}
	return wait, true
}

// stream reads one model response, emitting its text as it arrives. produced
// reports whether any of it reached the client (then the call cannot be
// retried without the client seeing the text twice).
func (t *turn) stream(ctx context.Context, req llm.Request) (resp *llm.Response, produced bool, err error) {
	resp = &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	s, err := t.model.Provider.Stream(ctx, req)
	if err != nil {
		return resp, false, err
	}
	defer s.Close()
	var text strings.Builder
	total := 0
	flush := func() {
		if text.Len() > 0 {
			resp.Message.Content = append(resp.Message.Content, llm.Text(text.String()))
			text.Reset()
		}
	}
	// A panic (a provider's bug) must not lose the text the client saw: it
	// joins the answer, which the turn's recovery saves with the failure.
	defer func() {
		if p := recover(); p != nil {
			flush()
			t.blocks = append(t.blocks, withoutToolUse(resp.Message.Content)...)
			panic(p)
		}
	}()
	for s.Next() {
		ev := s.Event()
		switch ev.Type {
		case llm.EventTextDelta:
			if total += len(ev.Text); total > maxTurnText {
				flush()
				return resp, produced, &llm.Error{Code: llm.CodeBadResponse, Message: "the model's answer is too large"}
			}
			text.WriteString(ev.Text)
			produced = true
			t.emit(TextDelta{Content: ev.Text})
		case llm.EventToolCall:
			flush()
			resp.ToolCalls = append(resp.ToolCalls, ev.ToolCall)
			resp.Message.Content = append(resp.Message.Content, llm.ToolUse(ev.ToolCall.ID, ev.ToolCall.Name, ev.ToolCall.Input))
		case llm.EventUsage:
			resp.Usage = ev.Usage
		case llm.EventDone:
			resp.StopReason = ev.StopReason
		}
	}
	flush()
	if err := s.Err(); err != nil {
		// Tool calls of a response that broke off are not run: their
		// inputs may be whole, but the model had not finished asking.
		resp.Message.Content = withoutToolUse(resp.Message.Content)
		resp.ToolCalls = nil
		return resp, produced, err
	}
	return resp, produced, nil
}

func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			if s := msgs[i].Text(); s != "" {
				return s
			}
		}
	}
	return ""
}

func providerName(p llm.Provider) string {
	switch p.(type) {
	case *llm.Anthropic:
		return "anthropic"
	case *llm.OpenAI:
		return "openai"
	}
	return "unknown"
}

// toolLimit returns the bound of each of the n tool results (and inputs) of
// a step: MaxToolResultBytes, or an equal share of what is left of the
// turn's MaxTurnToolBytes, if smaller.
func (t *turn) toolLimit(n int) int {
	n = max(n, 1)
	limit := min(t.a.cfg.MaxToolResultBytes, t.toolBytes/(2*n)) // a result and an input per call
	return max(limit, tool.MinResultBytes)
}

// spend counts b against the turn's budget of tool bytes.
func (t *turn) spend(b int) {
	t.toolBytes = max(t.toolBytes-b, 0)
}

// boundInputs bounds the inputs of the tool_use blocks of a model response.
func (t *turn) boundInputs(blocks []llm.Block, limit int) {
	for i, b := range blocks {
		if b.Type == llm.BlockToolUse {
			blocks[i].Input = tool.BoundJSON(b.Input, limit)
			t.spend(len(blocks[i].Input))
		}
	}
}

// runTools announces the calls, runs them concurrently and returns their
// tool_result blocks in the calls' order. What the events and the blocks
// carry of each call is bounded to limit bytes.
func (t *turn) runTools(ctx context.Context, calls []llm.ToolCall, limit int) []llm.Block {
	for _, c := range calls {
		t.emit(ToolCallStart{ToolCallID: c.ID, ToolName: c.Name, Input: tool.BoundJSON(c.Input, limit)})
	}
	results := make([]llm.Block, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			// Tools that store what they make (suggestPlaylist) tie it to this turn.
			origin := store.Origin{ConversationID: t.convID, MessageID: t.msgID, ToolCallID: c.ID}
			progress, stop := t.progress(c.ID)
			res := t.a.cfg.Registry.Call(tool.WithProgress(store.WithOrigin(ctx, origin), progress), c.Name, c.Input)
			stop()
			if t.a.cfg.OnToolCall != nil {
				t.a.cfg.OnToolCall(c.Name, res)
			}
			result := res.Bounded(limit)
			if res.Err != nil {
				t.emit(ToolCallError{
					ToolCallID: c.ID, Error: textclip.Mark(res.Err.Message, limit, truncatedMark), ErrorCode: string(res.Err.Code),
					Retryable: res.Err.Retryable, WasRetried: res.Retried, DurationMs: res.Duration.Milliseconds(),
				})
			} else {
				t.emit(ToolCallEnd{
					ToolCallID: c.ID, Summary: textclip.Mark(res.Summary, limit, truncatedMark), ResultCount: ResultCount(res.JSON),
					DurationMs: res.Duration.Milliseconds(), Result: result,
				})
			}
			results[i] = llm.ToolResult(c.ID, result, res.Err != nil)
			if res.HasText() {
				results[i].Text = res.BoundedText(limit)
			}
		})
	}
	wg.Wait()
	for _, r := range results {
		n := len(r.Content)
		if r.Text != "" { // what the model reads: the text form
			n = len(r.Text)
		}
		t.spend(n)
	}
	return results
}

// The bounds of one call's ToolProgress events: each is logged with the
// turn and sent to every client following it.
const (
	maxProgressEvents = 100
	maxProgressBytes  = 1024
)

// progress returns the progress reporter of call id, which emits its
// reports as ToolProgress events, at most maxProgressEvents of at most
// maxProgressBytes of message each, and stop, after which (the call has
// ended) it emits nothing: a tool's stray goroutine cannot report after
// the call's end.
func (t *turn) progress(id string) (report func(tool.Progress), stop func()) {
	var mu sync.Mutex
	n, stopped := 0, false
	report = func(p tool.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if stopped || n == maxProgressEvents {
			return
		}
		n++
		t.emit(ToolProgress{ToolCallID: id, Message: textclip.Bytes(p.Message, maxProgressBytes-len(textclip.Ellipsis)), Done: finite(p.Done), Total: finite(p.Total)})
	}
	stop = func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
	}
	return report, stop
}

// finite is f, or 0 when JSON cannot carry it (NaN, ±Inf).
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// ResultCount counts the results in a tool's result envelope: the items of
// its top-level arrays (tracks and albums, datasets, results…), or its
// "count" when it has no arrays; a result with neither counts as one.
func ResultCount(envelope json.RawMessage) int {
	var fields map[string]json.RawMessage
	if json.Unmarshal(envelope, &fields) != nil {
		return 0
	}
	n, arrays := 0, false
	for k, v := range fields {
		if k == "violations" || len(v) == 0 || v[0] != '[' {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(v, &items) == nil {
			n += len(items)
			arrays = true
		}
	}
	if arrays {
		return n
	}
	var count int
	if c, ok := fields["count"]; ok && json.Unmarshal(c, &count) == nil && count >= 0 {
		return count
	}
	return 1
}

// offer returns the system prompt and the definitions of the registry's
// tools as they are now, made again only when the tools changed.
func (a *Agent) offer() (system string, defs []llm.ToolDef) {
	tools := a.cfg.Registry.Tools()
	a.defsMu.Lock()
	defer a.defsMu.Unlock()
	if !slices.Equal(tools, a.defsFor) {
		a.defs, a.defsFor = a.toolDefs(tools), tools
		if a.cfg.System == "" {
			a.system = systemPrompt(tools)
		}
	}
	return a.system, a.defs
}

// toolDefs are the model's definitions of tools.
func (a *Agent) toolDefs(tools []*tool.Tool) []llm.ToolDef {
	defs := make([]llm.ToolDef, 0, len(tools))
	for _, t := range tools {
		schema, err := json.Marshal(t.InputSchema())
		if err != nil {
			a.logger.Error("a tool's schema cannot be encoded; it is not offered", "tool", t.Name(), "error", err)
			continue
		}
		defs = append(defs, llm.ToolDef{Name: t.Name(), Description: t.Spec().Description, InputSchema: schema})
	}
	return defs
}
