package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// Approval of tool calls
//
// A tool call that needs the person's approval (Config.Approval, or by
// default a tool that acts on the user's behalf outside Toolport:
// tool.Annotations.UserAccount and not ReadOnly, such as
// savePlaylistToTidal and the write tools of attached MCP servers) is not
// run by the loop. The step's other calls run; the assistant message is
// saved with the waiting calls' tool_use blocks and no tool_result for
// them, one [ApprovalRequired] event per waiting call goes out, and the
// turn ends with stop reason "approval_required". Nothing waits in memory:
// the pending calls are the conversation's last message, so a reload, or
// another replica, finds them ([Agent.Pending]) and any replica can resume.
//
// [Agent.Approve] takes the person's decisions and resumes the same
// assistant message: allowed calls run and the loop goes on; a denied call
// gets a tool result saying the user denied it (error_code USER_DENIED),
// which the model reads. "Allow always" is recorded in that call's stored
// tool result ("_approval": "always"), so that later turns of the
// conversation find it in the history and run the tool without asking. A
// new message instead of a decision abandons the pending calls (the model
// APIs drop tool calls without results).

// Decision is the person's answer to an [ApprovalRequired].
type Decision string

// The decisions.
const (
	AllowOnce   Decision = "allow_once"   // run this call
	AllowAlways Decision = "allow_always" // run it, and the tool's later calls in this conversation
	Deny        Decision = "deny"         // do not run it; the model is told
)

// CodeUserDenied is the error_code of the tool result of a denied call.
const CodeUserDenied = "USER_DENIED"

// approvalKey is the field of a stored tool result recording its decision.
const approvalKey = "_approval"

// ErrNoPendingApproval is returned by [Agent.Approve] for a conversation
// whose last message has no call waiting for approval.
var ErrNoPendingApproval = errors.New("agent: no tool call is waiting for approval")

// ErrBadDecision is returned by [Agent.Approve] for decisions that do not
// answer exactly the waiting calls with known decisions.
var ErrBadDecision = errors.New("agent: the decisions do not match the calls waiting for approval")

// ToolDecision is the decision on one waiting call.
type ToolDecision struct {
	ToolUseID string   `json:"toolUseId"`
	Decision  Decision `json:"decision"`
}

// ApprovalRequired says a tool call waits for the person's decision: what
// will happen, with the call's arguments.
type ApprovalRequired struct {
	ToolUseID string
	Tool      string
	Title     string
	Arguments json.RawMessage
	What      string
}

// EventType returns the event's type.
func (ApprovalRequired) EventType() EventType { return TypeApprovalRequired }

// MarshalJSON encodes the event in its wire form.
func (e ApprovalRequired) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type      EventType       `json:"type"`
		ToolUseID string          `json:"toolUseId"`
		Tool      string          `json:"tool"`
		Title     string          `json:"title"`
		Arguments json.RawMessage `json:"arguments"`
		What      string          `json:"what"`
	}{e.EventType(), e.ToolUseID, e.Tool, e.Title, objectOrEmpty(e.Arguments), e.What})
}

// needsApproval reports whether a call of the named tool waits for the
// person, given the tools allowed for the conversation.
func (a *Agent) needsApproval(name string, allowed map[string]bool) bool {
	if allowed[name] {
		return false
	}
	if ask, ok := a.cfg.Approval[name]; ok {
		return ask
	}
	t, ok := a.cfg.Registry.Lookup(name)
	if !ok {
		return false // the registry answers UNKNOWN_TOOL
	}
	an := t.Spec().Annotations
	return an.UserAccount && !an.ReadOnly
}

// splitApproval separates the calls that run now from those that wait.
func (t *turn) splitApproval(calls []llm.ToolCall) (now, waiting []llm.ToolCall) {
	for _, c := range calls {
		if t.a.needsApproval(c.Name, t.allowed) {
			waiting = append(waiting, c)
		} else {
			now = append(now, c)
		}
	}
	return now, waiting
}

// pause ends the turn with calls waiting for approval: the message is saved
// (complete: it is where the conversation stands), then each call is
// announced.
func (t *turn) pause(ctx context.Context, waiting []llm.ToolCall) {
	t.span.SetAttributes(attribute.Int("chat.approvals_required", len(waiting)))
	if err := t.save(ctx, false); err != nil {
		t.failWith(ctx, ErrorEvent{Code: CodeInternal, Message: "the answer could not be saved", Retryable: true})
		t.end(StopError)
		return
	}
	for _, c := range waiting {
		t.emit(t.a.approvalEvent(c.ID, c.Name, tool.BoundJSON(c.Input, t.a.cfg.MaxToolResultBytes)))
	}
	t.end(StopApprovalRequired)
}

// approvalEvent describes a waiting call.
func (a *Agent) approvalEvent(id, name string, args json.RawMessage) ApprovalRequired {
	ev := ApprovalRequired{ToolUseID: id, Tool: name, Title: name, Arguments: args}
	t, ok := a.cfg.Registry.Lookup(name)
	if !ok {
		ev.What = fmt.Sprintf("The model asks to run %s, which is not available now: allowing it will report that it is unknown.", name)
		return ev
	}
	spec := t.Spec()
	if spec.Title != "" {
		ev.Title = spec.Title
	}
	var what strings.Builder
	fmt.Fprintf(&what, "The model asks to run %q (%s) with the arguments shown.", ev.Title, name)
	an := spec.Annotations
	if an.UserAccount {
		what.WriteString(" It acts on your behalf outside Toolport.")
	}
	if an.Destructive && !an.ReadOnly {
		what.WriteString(" It may delete or overwrite data.")
	}
	if d := firstSentence(spec.Description); d != "" {
		what.WriteString(" What it does: " + d)
	}
	ev.What = textclip.Mark(what.String(), 1<<10, truncatedMark)
	return ev
}

// firstSentence is a description's first sentence, at most 300 bytes.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return textclip.Mark(s, 300, truncatedMark)
}

// Pending lists the calls of the conversation's last message that wait for
// approval, as the events that announced them: for a page reloaded, or
// served by another replica, to show them again. None when nothing waits.
func (a *Agent) Pending(conv store.Conversation) []ApprovalRequired {
	_, blocks, waiting := pendingCalls(conv.Messages)
	out := make([]ApprovalRequired, 0, len(waiting))
	for _, i := range waiting {
		b := blocks[i]
		out = append(out, a.approvalEvent(b.ID, b.Name, b.Input))
	}
	return out
}

// pendingCalls finds the waiting calls: the tool_use blocks without a
// tool_result of the last message, when it is a complete assistant message
// without error. It returns that message, its blocks and the indexes of
// the waiting blocks.
func pendingCalls(msgs []store.Message) (store.Message, []llm.Block, []int) {
	if len(msgs) == 0 {
		return store.Message{}, nil, nil
	}
	last := msgs[len(msgs)-1]
	if last.Role != store.RoleAssistant || last.Incomplete || last.Error != nil {
		return store.Message{}, nil, nil
	}
	blocks, err := llm.DecodeBlocks(last.Content)
	if err != nil {
		return store.Message{}, nil, nil
	}
	answered := map[string]bool{}
	for _, b := range blocks {
		if b.Type == llm.BlockToolResult {
			answered[b.ToolUseID] = true
		}
	}
	var waiting []int
	for i, b := range blocks {
		if b.Type == llm.BlockToolUse && !answered[b.ID] {
			waiting = append(waiting, i)
		}
	}
	return last, blocks, waiting
}

// allowedAlways reads the tools allowed for the rest of a conversation
// from its stored tool results.
func allowedAlways(msgs []store.Message) map[string]bool {
	allowed := map[string]bool{}
	for _, m := range msgs {
		if m.Role != store.RoleAssistant || !bytes.Contains(m.Content, []byte(approvalKey)) {
			continue
		}
		blocks, err := llm.DecodeBlocks(m.Content)
		if err != nil {
			continue
		}
		names := map[string]string{}
		for _, b := range blocks {
			switch b.Type {
			case llm.BlockToolUse:
				names[b.ID] = b.Name
			case llm.BlockToolResult:
				var rec struct {
					Approval Decision `json:"_approval"`
				}
				if json.Unmarshal(b.Content, &rec) == nil && rec.Approval == AllowAlways && names[b.ToolUseID] != "" {
					allowed[names[b.ToolUseID]] = true
				}
			}
		}
	}
	return allowed
}

// Approve resumes a turn that stopped for approval with the person's
// decisions, one for each waiting call: allowed calls run, denied ones get
// a result saying so, and the loop goes on in the same assistant message,
// streaming events as [Agent.Turn] does (MessageStart names that message).
// It returns [ErrNoPendingApproval] when nothing waits and
// [ErrBadDecision] (wrapped, saying why) when the decisions do not answer
// exactly the waiting calls; then nothing was emitted. Like turns, two
// resumptions of one conversation must not overlap. Its writes are made
// under fence f, as [Agent.Turn]'s are.
func (a *Agent) Approve(ctx context.Context, f store.Fence, convID string, decisions []ToolDecision, emit func(Event)) error {
	ctx, cancel, conv, err := a.loadTurn(ctx, convID)
	if err != nil {
		return err
	}
	defer cancel()
	last, blocks, waiting := pendingCalls(conv.Messages)
	if len(waiting) == 0 {
		return ErrNoPendingApproval
	}
	decided := map[string]Decision{}
	for _, d := range decisions {
		if !slices.Contains([]Decision{AllowOnce, AllowAlways, Deny}, d.Decision) {
			return fmt.Errorf("%w: unknown decision %q (want allow_once, allow_always or deny)", ErrBadDecision, textclip.Mark(string(d.Decision), 40, truncatedMark))
		}
		if _, dup := decided[d.ToolUseID]; dup {
			return fmt.Errorf("%w: two decisions for %q", ErrBadDecision, textclip.Mark(d.ToolUseID, 80, truncatedMark))
		}
		decided[d.ToolUseID] = d.Decision
	}
	var calls []llm.ToolCall
	for _, i := range waiting {
		b := blocks[i]
		if _, ok := decided[b.ID]; !ok {
			return fmt.Errorf("%w: no decision for %q", ErrBadDecision, textclip.Mark(b.ID, 80, truncatedMark))
		}
		calls = append(calls, llm.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
	}
	if len(decided) != len(calls) {
		return fmt.Errorf("%w: a decision names a call that is not waiting", ErrBadDecision)
	}

	model := a.modelFor(conv)
	ctx, span := a.turnSpan(ctx, convID,
		attribute.String("message.id", last.ID),
		attribute.Bool("chat.approval", true))
	defer span.End()
	t := &turn{a: a, w: a.writes(f), convID: convID, msgID: last.ID, model: model, emitFn: emit, span: span,
		toolBytes: a.cfg.MaxTurnToolBytes, allowed: allowedAlways(conv.Messages), blocks: blocks, saved: true}
	if last.Usage != nil {
		t.usage = Usage{InputTokens: int64(last.Usage.InputTokens), OutputTokens: int64(last.Usage.OutputTokens),
			ContextTokens: int64(last.Usage.ContextTokens)}
	}
	userID := ""
	if i := lastUser(conv.Messages); i >= 0 {
		userID = conv.Messages[i].ID
	}
	t.emit(MessageStart{MessageID: t.msgID, ConversationID: convID, UserMessageID: userID, Model: model.Name})
	defer t.recoverPanic(ctx)

	var run []llm.ToolCall
	for _, c := range calls {
		if decided[c.ID] != Deny {
			run = append(run, c)
			if decided[c.ID] == AllowAlways {
				t.allowed[c.Name] = true
			}
		}
	}
	limit := t.toolLimit(len(calls))
	ran := t.runTools(ctx, run, limit)
	results := make([]llm.Block, 0, len(calls))
	for _, c := range calls {
		switch decided[c.ID] {
		case Deny:
			msg := fmt.Sprintf("The user denied the call of %s: it did not run and nothing was changed. "+
				"This is the user's decision, not a failure: do not call it again unless the user asks.", c.Name)
			t.emit(ToolCallStart{ToolCallID: c.ID, ToolName: c.Name, Input: tool.BoundJSON(c.Input, limit)})
			t.emit(ToolCallError{ToolCallID: c.ID, Error: msg, ErrorCode: CodeUserDenied})
			env, _ := json.Marshal(map[string]any{"success": false, "error": msg, "error_code": CodeUserDenied,
				"retryable": false, "wasRetried": false, "durationMs": 0, approvalKey: Deny})
			results = append(results, llm.ToolResult(c.ID, env, true))
		default:
			i := slices.IndexFunc(run, func(r llm.ToolCall) bool { return r.ID == c.ID })
			res := ran[i]
			res.Content = withApproval(res.Content, decided[c.ID])
			results = append(results, res)
		}
	}
	t.blocks = append(t.blocks, results...)
	if ctx.Err() != nil {
		t.fail(ctx, ctx.Err())
		return nil
	}
	t.save(ctx, true)
	if model.Provider == nil {
		t.failWith(ctx, ErrorEvent{Code: CodeModelNotConfigured, Message: errorMessage(a.cfg.NoModel)})
		t.end(StopError)
		return nil
	}
	content, err := llm.MarshalBlocks(t.blocks)
	if err != nil {
		t.failWith(ctx, ErrorEvent{Code: CodeInternal, Message: "the answer could not be encoded"})
		t.end(StopError)
		return nil
	}
	msgs := slices.Clone(conv.Messages)
	msgs[len(msgs)-1].Content = content
	history, _ := History(msgs)
	t.run(ctx, history, toolRounds(t.blocks))
	return nil
}

// withApproval records the decision in a tool result object.
func withApproval(content json.RawMessage, d Decision) json.RawMessage {
	c := bytes.TrimSpace(content)
	if len(c) < 2 || c[0] != '{' {
		return content
	}
	head := []byte(`{"` + approvalKey + `":"` + string(d) + `"`)
	if rest := bytes.TrimSpace(c[1:]); len(rest) > 0 && rest[0] != '}' {
		head = append(head, ',')
	}
	return append(head, c[1:]...)
}

// toolRounds counts the steps that ran tools in an assistant message's
// blocks: its runs of tool_result blocks.
func toolRounds(blocks []llm.Block) int {
	n := 0
	for i, b := range blocks {
		if b.Type == llm.BlockToolResult && (i == 0 || blocks[i-1].Type != llm.BlockToolResult) {
			n++
		}
	}
	return n
}
