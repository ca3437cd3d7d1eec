package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EventType names an [Event]; it is the "type" field of its JSON form.
type EventType string

// The events of a chat turn, as the chat API streams them (docs/api.md).
const (
	TypeMessageStart  EventType = "message_start"
	TypeTextDelta     EventType = "text_delta"
	TypeToolCallStart EventType = "tool_call_start"
	TypeToolCallEnd   EventType = "tool_call_end"
	TypeToolCallError EventType = "tool_call_error"
	TypeToolProgress  EventType = "tool_progress"
	TypeMessageEnd    EventType = "message_end"
	TypeError         EventType = "error"
	// TypeApprovalRequired: a tool call waits for the person's decision
	// (see [Agent.Approve]); the turn ends after it.
	TypeApprovalRequired EventType = "approval_required"
)

// Stop reasons of a [MessageEnd].
const (
	StopEndTurn  = "end_turn"  // the model finished its answer
	StopMaxSteps = "max_steps" // the tool rounds ran out; the answer was asked for without tools
	StopCanceled = "canceled"  // the client went away or the server is shutting down
	StopError    = "error"     // the model failed; an Error event came before
	// StopApprovalRequired: tool calls wait for the person's decision;
	// ApprovalRequired events came before.
	StopApprovalRequired = "approval_required"
)

// Error codes of an [ErrorEvent].
const (
	CodeModelNotConfigured = "MODEL_NOT_CONFIGURED"
	CodeModelError         = "MODEL_ERROR"
	CodeRateLimit          = "RATE_LIMIT"
	CodeModelAuth          = "MODEL_AUTH"
	CodeModelTimeout       = "MODEL_TIMEOUT"
	CodeInternal           = "INTERNAL"
)

// Event is one event of a chat turn. Its JSON encoding is exactly the event
// of the SSE stream: an object with a "type" and the event's fields.
type Event interface {
	// EventType returns the event's type.
	EventType() EventType
}

// MessageStart opens a turn, once the user's message is durably stored.
// MessageID names the assistant message being produced, UserMessageID the
// stored user message it answers (what an edit names), Model the model
// answering ("" when none is configured).
type MessageStart struct {
	MessageID      string
	ConversationID string
	UserMessageID  string
	Model          string
}

// TextDelta is more text of the assistant's answer.
type TextDelta struct {
	Content string
}

// ToolCallStart announces a tool call; it is sent before the tool runs.
type ToolCallStart struct {
	ToolCallID string
	ToolName   string
	Input      json.RawMessage
}

// ToolCallEnd reports a successful tool call. Result is the tool's whole
// result envelope (a Toolport extension of the spec's event).
type ToolCallEnd struct {
	ToolCallID  string
	Summary     string
	ResultCount int
	DurationMs  int64
	Result      json.RawMessage
}

// ToolCallError reports a failed tool call, after the registry's one retry of
// transient failures (WasRetried).
type ToolCallError struct {
	ToolCallID string
	Error      string
	ErrorCode  string
	Retryable  bool
	WasRetried bool
	DurationMs int64
}

// ToolProgress is a running tool's report of how far it has come (an
// answer streaming in): Message, when set, is what it has to show so far,
// Done out of Total (Total 0 when unknown). It comes between the call's
// ToolCallStart and its end, bounded in size and number per call.
type ToolProgress struct {
	ToolCallID string
	Message    string
	Done       float64
	Total      float64
}

// MessageEnd closes a turn.
type MessageEnd struct {
	MessageID  string
	Usage      Usage
	StopReason string
}

// Usage counts the model's tokens over a whole turn (all its model calls).
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// ContextTokens is how full the model's context window was at the end:
	// the input and output tokens of the last model call; absent when the
	// model reported none.
	ContextTokens int64 `json:"contextTokens,omitempty"`
}

// ErrorEvent reports a failure of the turn (the model failed, or none is
// configured). Message is safe to show to users.
type ErrorEvent struct {
	Code      string
	Message   string
	Retryable bool
}

func (MessageStart) EventType() EventType  { return TypeMessageStart }
func (TextDelta) EventType() EventType     { return TypeTextDelta }
func (ToolCallStart) EventType() EventType { return TypeToolCallStart }
func (ToolCallEnd) EventType() EventType   { return TypeToolCallEnd }
func (ToolCallError) EventType() EventType { return TypeToolCallError }
func (ToolProgress) EventType() EventType  { return TypeToolProgress }
func (MessageEnd) EventType() EventType    { return TypeMessageEnd }
func (ErrorEvent) EventType() EventType    { return TypeError }

// MarshalJSON encodes the event in its wire form.
func (e MessageStart) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type           EventType `json:"type"`
		MessageID      string    `json:"messageId"`
		ConversationID string    `json:"conversationId"`
		UserMessageID  string    `json:"userMessageId,omitempty"`
		Model          string    `json:"model,omitempty"`
	}{e.EventType(), e.MessageID, e.ConversationID, e.UserMessageID, e.Model})
}

// MarshalJSON encodes the event in its wire form.
func (e TextDelta) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type    EventType `json:"type"`
		Content string    `json:"content"`
	}{e.EventType(), e.Content})
}

// MarshalJSON encodes the event in its wire form.
func (e ToolCallStart) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type       EventType       `json:"type"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Input      json.RawMessage `json:"input"`
	}{e.EventType(), e.ToolCallID, e.ToolName, objectOrEmpty(e.Input)})
}

// MarshalJSON encodes the event in its wire form. The result, often the
// largest part of a turn's log, is validated and compacted in one pass,
// where a struct with a json.RawMessage would scan it three times.
func (e ToolCallEnd) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		Type        EventType `json:"type"`
		ToolCallID  string    `json:"toolCallId"`
		Summary     string    `json:"summary"`
		ResultCount int       `json:"resultCount"`
		DurationMs  int64     `json:"durationMs"`
	}{e.EventType(), e.ToolCallID, e.Summary, e.ResultCount, e.DurationMs})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(head) + len(e.Result) + 16)
	b.Write(head[:len(head)-1])
	b.WriteString(`,"result":`)
	appendRawJSON(&b, e.Result)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// appendRawJSON appends raw as json.Marshal writes a json.RawMessage
// (compact, with <, > and & escaped), or {} when raw is empty or not valid
// JSON (so that one bad value cannot break the encoding of the whole event).
func appendRawJSON(b *bytes.Buffer, raw json.RawMessage) {
	start := b.Len()
	if len(raw) == 0 || json.Compact(b, raw) != nil {
		b.Truncate(start)
		b.WriteString(`{}`)
		return
	}
	if c := b.Bytes()[start:]; bytes.ContainsAny(c, "<>&\u2028\u2029") {
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, c)
		b.Truncate(start)
		b.Write(escaped.Bytes())
	}
}

// MarshalJSON encodes the event in its wire form.
func (e ToolCallError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type       EventType `json:"type"`
		ToolCallID string    `json:"toolCallId"`
		Error      string    `json:"error"`
		ErrorCode  string    `json:"errorCode"`
		Retryable  bool      `json:"retryable"`
		WasRetried bool      `json:"wasRetried"`
		DurationMs int64     `json:"durationMs"`
	}{e.EventType(), e.ToolCallID, e.Error, e.ErrorCode, e.Retryable, e.WasRetried, e.DurationMs})
}

// MarshalJSON encodes the event in its wire form.
func (e ToolProgress) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type       EventType `json:"type"`
		ToolCallID string    `json:"toolCallId"`
		Message    string    `json:"message,omitempty"`
		Done       float64   `json:"done"`
		Total      float64   `json:"total,omitempty"`
	}{e.EventType(), e.ToolCallID, e.Message, e.Done, e.Total})
}

// MarshalJSON encodes the event in its wire form.
func (e MessageEnd) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type       EventType `json:"type"`
		MessageID  string    `json:"messageId"`
		Usage      Usage     `json:"usage"`
		StopReason string    `json:"stopReason"`
	}{e.EventType(), e.MessageID, e.Usage, e.StopReason})
}

// MarshalJSON encodes the event in its wire form.
func (e ErrorEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type      EventType `json:"type"`
		Code      string    `json:"code"`
		Message   string    `json:"message"`
		Retryable bool      `json:"retryable"`
	}{e.EventType(), e.Code, e.Message, e.Retryable})
}

// Encode is ev's JSON, as json.Marshal(ev) gives it, without json.Marshal's
// second pass over what the event's MarshalJSON wrote (every event writes
// compact JSON).
func Encode(ev Event) ([]byte, error) {
	if m, ok := ev.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(ev)
}

// objectOrEmpty returns raw, or {} when raw is empty or not valid JSON (so
// that one bad value cannot break the encoding of the whole event).
func objectOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage(`{}`)
	}
	return raw
}

// Decode returns the event whose wire form data is ([Encode]'s inverse): the server reads
// its turns' logs back with it, so that one decoder knows the wire form.
func Decode(data []byte) (Event, error) {
	var w struct {
		Type           EventType       `json:"type"`
		MessageID      string          `json:"messageId"`
		ConversationID string          `json:"conversationId"`
		UserMessageID  string          `json:"userMessageId"`
		Model          string          `json:"model"`
		Content        string          `json:"content"`
		ToolCallID     string          `json:"toolCallId"`
		ToolName       string          `json:"toolName"`
		Input          json.RawMessage `json:"input"`
		Summary        string          `json:"summary"`
		ResultCount    int             `json:"resultCount"`
		DurationMs     int64           `json:"durationMs"`
		Result         json.RawMessage `json:"result"`
		Error          string          `json:"error"`
		ErrorCode      string          `json:"errorCode"`
		Retryable      bool            `json:"retryable"`
		WasRetried     bool            `json:"wasRetried"`
		Usage          Usage           `json:"usage"`
		StopReason     string          `json:"stopReason"`
		Code           string          `json:"code"`
		Message        string          `json:"message"`
		ToolUseID      string          `json:"toolUseId"`
		Tool           string          `json:"tool"`
		Title          string          `json:"title"`
		Arguments      json.RawMessage `json:"arguments"`
		What           string          `json:"what"`
		Done           float64         `json:"done"`
		Total          float64         `json:"total"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("agent: decoding an event: %w", err)
	}
	switch w.Type {
	case TypeMessageStart:
		return MessageStart{MessageID: w.MessageID, ConversationID: w.ConversationID, UserMessageID: w.UserMessageID, Model: w.Model}, nil
	case TypeTextDelta:
		return TextDelta{Content: w.Content}, nil
	case TypeToolCallStart:
		return ToolCallStart{ToolCallID: w.ToolCallID, ToolName: w.ToolName, Input: w.Input}, nil
	case TypeToolCallEnd:
		return ToolCallEnd{ToolCallID: w.ToolCallID, Summary: w.Summary, ResultCount: w.ResultCount, DurationMs: w.DurationMs, Result: w.Result}, nil
	case TypeToolCallError:
		return ToolCallError{ToolCallID: w.ToolCallID, Error: w.Error, ErrorCode: w.ErrorCode, Retryable: w.Retryable,
			WasRetried: w.WasRetried, DurationMs: w.DurationMs}, nil
	case TypeToolProgress:
		return ToolProgress{ToolCallID: w.ToolCallID, Message: w.Message, Done: w.Done, Total: w.Total}, nil
	case TypeMessageEnd:
		return MessageEnd{MessageID: w.MessageID, Usage: w.Usage, StopReason: w.StopReason}, nil
	case TypeError:
		return ErrorEvent{Code: w.Code, Message: w.Message, Retryable: w.Retryable}, nil
	case TypeApprovalRequired:
		return ApprovalRequired{ToolUseID: w.ToolUseID, Tool: w.Tool, Title: w.Title, Arguments: w.Arguments, What: w.What}, nil
	}
	return nil, fmt.Errorf("agent: decoding an event: unknown type %q", w.Type)
}
