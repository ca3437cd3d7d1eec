// Package llmtest provides a deterministic model provider for tests.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/llm"
)

// Scripted is a deterministic [llm.Provider] for tests and demos: it plays
// scripted turns instead of calling a model, with the same event order,
// cancellation and error behaviour as the real providers.
//
// Each call to Stream plays one [ScriptedTurn], chosen as follows. A turn with
// a Match plays when the last user text of the request contains Match (case
// insensitive) and Step equals the number of assistant messages after that
// user text, that is, the number of model calls this chat turn has already
// made; such turns can be played any number of times, concurrently. Otherwise
// the next turn without a Match plays, each once, in order. With no turn to
// play, Stream fails with llm.CodeInvalidRequest.
type Scripted struct {
	mu       sync.Mutex
	matched  []ScriptedTurn
	ordered  []ScriptedTurn
	next     int
	requests []llm.Request
	ids      atomic.Int64 // numbers tool calls that have no scripted ID
}

// ScriptedTurn is one model response.
type ScriptedTurn struct {
	Match string
	Step  int

	// Err, if set, is returned by Stream before any event (a failed request).
	Err error
	// Events are played in order.
	Events []ScriptedEvent
	// Usage is reported before Done.
	Usage llm.Usage
	// StopReason overrides the default: tool_use when the turn calls a
	// tool, end_turn otherwise.
	StopReason llm.StopReason
}

// ScriptedEvent is one step of a scripted turn: after Delay, it delivers Text
// (a text delta), a tool call (Name, ID and Input; a start event then the
// complete call) or fails the stream with Err.
type ScriptedEvent struct {
	Delay time.Duration
	Text  string
	ID    string
	Name  string
	Input json.RawMessage
	Err   error
}

// ScriptText returns a scripted text delta.
func ScriptText(s string) ScriptedEvent { return ScriptedEvent{Text: s} }

// ScriptToolCall returns a scripted tool call; input is its JSON arguments
// ("" means {}).
func ScriptToolCall(id, name, input string) ScriptedEvent {
	return ScriptedEvent{ID: id, Name: name, Input: json.RawMessage(input)}
}

// ScriptError returns a scripted failure in the middle of the stream.
func ScriptError(err error) ScriptedEvent { return ScriptedEvent{Err: err} }

// NewScripted returns a provider that plays turns; see [Scripted].
func NewScripted(turns ...ScriptedTurn) *Scripted {
	s := &Scripted{}
	for _, t := range turns {
		if t.Match != "" {
			s.matched = append(s.matched, t)
		} else {
			s.ordered = append(s.ordered, t)
		}
	}
	return s
}

// Model returns "scripted".
func (s *Scripted) Model() string { return "scripted" }

// Requests returns the requests received so far, for assertions.
func (s *Scripted) Requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.requests...)
}

// Stream implements [llm.Provider].
func (s *Scripted) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, canceled(ctx)
	}
	turn, err := s.pick(req)
	if err != nil {
		return nil, err
	}
	if turn.Err != nil {
		return nil, turn.Err
	}
	for _, ev := range turn.Events {
		if ev.Name != "" {
			if !jsonObject(ev.Input) {
				return nil, fmt.Errorf("llm: scripted tool call %s: input is not a JSON object", ev.Name)
			}
		}
	}
	p := &scriptedStream{ctx: ctx, turn: turn, ids: &s.ids}
	return llm.NewStream(p.next, nil), nil
}

func (s *Scripted) pick(req llm.Request) (ScriptedTurn, error) {
	text, step := lastUserText(req.Messages)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	lower := strings.ToLower(text)
	for _, t := range s.matched {
		if t.Step == step && strings.Contains(lower, strings.ToLower(t.Match)) {
			return t, nil
		}
	}
	if s.next < len(s.ordered) {
		s.next++
		return s.ordered[s.next-1], nil
	}
	return ScriptedTurn{}, &llm.Error{Provider: "scripted", Code: llm.CodeInvalidRequest,
		Message: fmt.Sprintf("no scripted turn for %q (step %d)", text, step)}
}

// lastUserText returns the text of the last user message that has text, and
// how many assistant messages follow it.
func lastUserText(msgs []llm.Message) (string, int) {
	step := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == llm.RoleAssistant {
			step++
			continue
		}
		if t := m.Text(); t != "" {
			return t, step
		}
	}
	return "", step
}

type scriptedStream struct {
	ctx   context.Context
	ids   *atomic.Int64
	turn  ScriptedTurn
	i     int
	calls int
	queue []llm.Event
	ended bool
}

func (p *scriptedStream) next() (llm.Event, error) {
	for {
		if len(p.queue) > 0 {
			ev := p.queue[0]
			p.queue = p.queue[1:]
			return ev, nil
		}
		if p.ended {
			return llm.Event{}, io.EOF
		}
		if err := p.ctx.Err(); err != nil {
			return llm.Event{}, canceled(p.ctx)
		}
		if p.i == len(p.turn.Events) {
			p.ended = true
			stop := p.turn.StopReason
			if stop == "" {
				stop = llm.StopEndTurn
				if p.calls > 0 {
					stop = llm.StopToolUse
				}
			}
			p.queue = append(p.queue, llm.Event{Type: llm.EventUsage, Usage: p.turn.Usage}, llm.Event{Type: llm.EventDone, StopReason: stop})
			continue
		}
		ev := p.turn.Events[p.i]
		p.i++
		if ev.Delay > 0 {
			t := time.NewTimer(ev.Delay)
			select {
			case <-p.ctx.Done():
				t.Stop()
				return llm.Event{}, canceled(p.ctx)
			case <-t.C:
			}
		}
		switch {
		case ev.Err != nil:
			p.ended = true
			return llm.Event{}, ev.Err
		case ev.Name != "":
			call := llm.ToolCall{Index: p.calls, ID: ev.ID, Name: ev.Name}
			if call.ID == "" {
				call.ID = fmt.Sprintf("toolu_scripted_%d", p.ids.Add(1))
			}
			p.calls++
			p.queue = append(p.queue, llm.Event{Type: llm.EventToolCallStart, ToolCall: call})
			call.Input = inputOrEmpty(ev.Input)
			p.queue = append(p.queue, llm.Event{Type: llm.EventToolCall, ToolCall: call})
		case ev.Text != "":
			p.queue = append(p.queue, llm.Event{Type: llm.EventTextDelta, Text: ev.Text})
		}
	}
}

// canceled is the error a real provider gives for a call whose context
// ended: a timeout when its deadline passed, a cancellation otherwise.
func canceled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &llm.Error{Provider: "scripted", Code: llm.CodeTimeout, Retryable: true, Message: "the model call ran out of time", Err: ctx.Err()}
	}
	return &llm.Error{Provider: "scripted", Code: llm.CodeCanceled, Message: "the model call was canceled", Err: ctx.Err()}
}

// inputOrEmpty is a tool call's input, {} when the script gives none.
func inputOrEmpty(in json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(in); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return in
}

// jsonObject reports whether a scripted input is a JSON object (or empty).
func jsonObject(in json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(inputOrEmpty(in), &obj) == nil && obj != nil
}
