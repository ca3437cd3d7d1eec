package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolport/toolport/tool"
)

// Provider streams model responses. Implementations are safe for concurrent
// use: each Stream call is an independent request.
type Provider interface {
	// Stream sends req and returns the response as it arrives. Failures that
	// happen before the response starts (authentication, rate limits, an
	// unreachable server) are returned here as an [*Error]; later ones come
	// from [Stream.Err]. Canceling ctx aborts the request and the stream.
	Stream(ctx context.Context, req Request) (*Stream, error)
	// Model names the model the provider talks to, for logs and traces.
	Model() string
}

// ToolChoice says whether the model may call tools.
type ToolChoice string

const (
	// ToolChoiceAuto lets the model decide (the zero value).
	ToolChoiceAuto ToolChoice = ""
	// ToolChoiceNone forbids tool calls while still sending the tool
	// definitions, which the APIs need to read a history that holds tool
	// calls; the agent uses it to ask for a final answer.
	ToolChoiceNone ToolChoice = "none"
)

// DefaultMaxTokens is used when [Request.MaxTokens] is zero.
const DefaultMaxTokens = 4096

// Request is one call to a model.
type Request struct {
	System     string
	Messages   []Message
	Tools      []ToolDef
	MaxTokens  int // 0 means DefaultMaxTokens
	ToolChoice ToolChoice
}

func (r Request) maxTokens() int64 {
	if r.MaxTokens <= 0 {
		return DefaultMaxTokens
	}
	return int64(r.MaxTokens)
}

// ToolDef describes a tool to the model. InputSchema is a JSON Schema object.
type ToolDef struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// ToolDefs returns the definitions of every tool in reg, in reg's order.
func ToolDefs(reg *tool.Registry) ([]ToolDef, error) {
	tools := reg.Tools()
	defs := make([]ToolDef, 0, len(tools))
	for _, t := range tools {
		schema, err := json.Marshal(t.InputSchema())
		if err != nil {
			return nil, fmt.Errorf("llm: schema of tool %s: %w", t.Name(), err)
		}
		defs = append(defs, ToolDef{Name: t.Name(), Description: t.Spec().Description, InputSchema: schema})
	}
	return defs, nil
}

// EventType is the kind of an [Event].
type EventType string

// The events of a response stream, in the order they can occur: any number of
// TextDelta, ToolCallStart and ToolCall (each call's start precedes its
// completion), at most one Usage, then exactly one Done, last.
const (
	EventTextDelta     EventType = "text_delta"
	EventToolCallStart EventType = "tool_call_start"
	EventToolCall      EventType = "tool_call"
	EventUsage         EventType = "usage"
	EventDone          EventType = "done"
)

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEndTurn   StopReason = "end_turn"   // the answer is complete
	StopToolUse   StopReason = "tool_use"   // the model wants its tool calls run
	StopMaxTokens StopReason = "max_tokens" // cut off by Request.MaxTokens
)

// Event is one step of a streamed response. Which fields are set depends on Type.
type Event struct {
	Type EventType

	// Text is the new text of a TextDelta.
	Text string

	// ToolCall is the call of a ToolCallStart (Input still nil) or of a
	// ToolCall (Input complete, a JSON object).
	ToolCall ToolCall

	// Usage is set on a Usage event.
	Usage Usage

	// StopReason is set on Done.
	StopReason StopReason
}

// ToolCall is one tool call requested by the model.
type ToolCall struct {
	// Index is the call's position among this response's tool calls (0, 1, …).
	Index int
	ID    string
	Name  string
	Input json.RawMessage
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Stream is a model response being received. Use it like [bufio.Scanner]:
//
//	defer s.Close()
//	for s.Next() {
//		ev := s.Event()
//		…
//	}
//	if err := s.Err(); err != nil { … }
//
// A stream that ends without error has delivered a Done event last. A Stream
// is not safe for concurrent use.
type Stream struct {
	next  func() (Event, error)
	close func() error
	cur   Event
	err   error
	done  bool
}

// NewStream returns a stream whose events come from next, which returns
// [io.EOF] after the last one, and which calls closeFn (which may be nil)
// once, when the stream ends or is closed. It lets other packages implement
// [Provider].
func NewStream(next func() (Event, error), closeFn func() error) *Stream {
	return &Stream{next: next, close: closeFn}
}

// Next advances to the next event, reporting whether there is one.
func (s *Stream) Next() bool {
	if s.done {
		return false
	}
	ev, err := s.next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		s.finish()
		return false
	}
	s.cur = ev
	return true
}

// Event returns the current event.
func (s *Stream) Event() Event { return s.cur }

// Err returns the error that ended the stream, or nil if it completed.
func (s *Stream) Err() error { return s.err }

// Close releases the stream's connection. It is safe to call more than once
// and after the stream has ended.
func (s *Stream) Close() error {
	if s.done {
		return nil
	}
	return s.finish()
}

func (s *Stream) finish() error {
	s.done = true
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// Response is a whole model response, as assembled by [Collect].
type Response struct {
	// Message is the assistant message: text and tool_use blocks in the order
	// the model produced them (consecutive text deltas merged into one block).
	Message    Message
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason StopReason
}

// maxCollectedText bounds the text [Collect] accumulates.
const maxCollectedText = 8 << 20

// Collect reads s to the end and assembles the response. It closes s. On
// failure it returns what arrived before the error together with the error,
// so that a caller can keep a partial answer.
func Collect(s *Stream) (*Response, error) {
	defer s.Close()
	r := &Response{Message: Message{Role: RoleAssistant}}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			r.Message.Content = append(r.Message.Content, Text(text.String()))
			text.Reset()
		}
	}
	for s.Next() {
		ev := s.Event()
		switch ev.Type {
		case EventTextDelta:
			if text.Len()+len(ev.Text) > maxCollectedText {
				return nil, &Error{Code: CodeBadResponse, Message: "response text is too large"}
			}
			text.WriteString(ev.Text)
		case EventToolCall:
			flush()
			r.ToolCalls = append(r.ToolCalls, ev.ToolCall)
			r.Message.Content = append(r.Message.Content, ToolUse(ev.ToolCall.ID, ev.ToolCall.Name, ev.ToolCall.Input))
		case EventUsage:
			r.Usage = ev.Usage
		case EventDone:
			r.StopReason = ev.StopReason
		}
	}
	flush()
	if err := s.Err(); err != nil {
		return r, err
	}
	return r, nil
}
