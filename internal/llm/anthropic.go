package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// Anthropic is a [Provider] for the Anthropic Messages API.
type Anthropic struct {
	client  anthropic.Client
	model   string
	opts    Options
	secrets []string
	tools   toolCache[json.RawMessage]
}

// NewAnthropic returns a provider for model (e.g. "claude-sonnet-4-5"). The
// SDK reads nothing from the environment: everything comes from o.
func NewAnthropic(model string, o Options) (*Anthropic, error) {
	if model == "" {
		return nil, errors.New("llm: anthropic: empty model name")
	}
	if o.APIKey == "" {
		return nil, &Error{Provider: "anthropic", Code: CodeNotConfigured,
			Message: "no API key: set ANTHROPIC_API_KEY or llm.anthropic.api_key in the credentials file"}
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(o.httpClient()),
		option.WithMaxRetries(o.MaxRetries),
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	return &Anthropic{client: anthropic.NewClient(opts...), model: model, opts: o, secrets: []string{o.APIKey}}, nil
}

// Model returns the model name.
func (p *Anthropic) Model() string { return p.model }

// Stream implements [Provider].
func (p *Anthropic) Stream(ctx context.Context, req Request) (*Stream, error) {
	params, tools, err := p.params(req)
	if err != nil {
		return nil, err
	}
	body, err := requestBody(params, tools)
	if err != nil {
		return nil, err
	}
	w := newWatchdog(ctx, p.opts.firstByteTimeout(), p.opts.idleTimeout())
	// The SDK encodes the params it is given, then the body option
	// replaces them: only the model and the token limit are passed.
	s := p.client.Messages.NewStreaming(w.ctx, anthropic.MessageNewParams{Model: params.Model, MaxTokens: params.MaxTokens},
		option.WithRequestBody("application/json", body), option.WithMiddleware(w.middleware))
	if err := s.Err(); err != nil {
		s.Close()
		e := p.classify(w, err)
		w.stop()
		return nil, e
	}
	st := &anthropicStream{p: p, w: w, s: s, tools: map[int64]*toolState{}}
	return NewStream(st.next, func() error { err := s.Close(); w.stop(); return err }), nil
}

// params converts req to the SDK's request, but for the tools, which are
// returned already encoded (requestBody adds them).
func (p *Anthropic) params(req Request) (anthropic.MessageNewParams, []json.RawMessage, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: req.maxTokens(),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	tools, err := p.tools.get(req.Tools, anthropicTools)
	if err != nil {
		return params, nil, err
	}
	if req.ToolChoice == ToolChoiceNone && len(req.Tools) > 0 {
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	calls, results := toolPairs(req.Messages)
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				if b.Text != "" { // the API rejects empty text blocks
					blocks = append(blocks, anthropic.NewTextBlock(b.Text))
				}
			case BlockToolUse:
				if results[b.ID] {
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
						ID: b.ID, Name: b.Name, Input: inputOrEmpty(b.Input)}})
				}
			case BlockToolResult:
				if calls[b.ToolUseID] {
					blocks = append(blocks, anthropic.NewToolResultBlock(b.ToolUseID, resultText(b), b.IsError))
				}
			}
		}
		if len(blocks) == 0 {
			continue
		}
		role := anthropic.MessageParamRoleUser
		if m.Role == RoleAssistant {
			role = anthropic.MessageParamRoleAssistant
		}
		params.Messages = append(params.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	return params, tools, nil
}

// anthropicTools converts tool definitions to the SDK's tools and encodes each.
func anthropicTools(defs []ToolDef) ([]json.RawMessage, error) {
	tools := make([]anthropic.ToolUnionParam, 0, len(defs))
	for _, t := range defs {
		schema, err := anthropicSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("llm: tool %s: %w", t.Name, err)
		}
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		tools = append(tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	return encodeTools(defs, tools)
}

// resultText renders a tool result for the model: its own text form when it
// has one, else a JSON string as its text and anything else as its JSON.
func resultText(b Block) string {
	if b.Text != "" {
		return b.Text
	}
	content := b.Content
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	if len(content) == 0 {
		return "null"
	}
	return string(content)
}

// anthropicSchema splits a JSON Schema object into the SDK's input schema.
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return s, fmt.Errorf("input schema: %w", err)
		}
	}
	if p, ok := m["properties"]; ok {
		s.Properties = p
	} else {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "properties", "required", "type":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// classify maps err, which the call watched by w returned, to an *Error
// naming the model server it came from.
func (p *Anthropic) classify(w *watchdog, err error) *Error {
	return p.classifyErr(w.ctx, err).at(w.request())
}

func (p *Anthropic) classifyErr(ctx context.Context, err error) *Error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		body := parseErrorBody([]byte(apiErr.RawJSON()))
		errType := string(apiErr.Type())
		if errType == "" {
			errType = body.Type
		}
		status := apiErr.StatusCode
		if status < 400 { // an error event inside a 200 stream
			status = 0
		}
		e := classifyStatus("anthropic", status, nil, errType, body.Message, p.secrets, err)
		if apiErr.Response != nil && status != 0 {
			e.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		return e.at(apiErr.Request)
	}
	return classifyTransport(ctx, "anthropic", err)
}

type toolState struct {
	call ToolCall
	buf  strings.Builder
}

type anthropicStream struct {
	p       *Anthropic
	w       *watchdog
	s       *ssestream.Stream[anthropic.MessageStreamEventUnion]
	tools   map[int64]*toolState // by content block index
	ncalls  int
	usage   Usage
	stop    StopReason
	queue   pending
	stopped bool // message_stop seen
	ended   bool
}

func (a *anthropicStream) next() (Event, error) {
	for {
		if ev, ok := a.queue.pop(); ok {
			return ev, nil
		}
		if a.ended {
			return Event{}, io.EOF
		}
		if !a.s.Next() {
			if err := a.s.Err(); err != nil {
				return Event{}, a.p.classify(a.w, err)
			}
			if !a.stopped {
				return Event{}, &Error{Provider: "anthropic", Code: CodeNetwork, Retryable: true,
					Message: "the response stream ended before the message was complete"}
			}
			return Event{}, io.EOF
		}
		if err := a.handle(a.s.Current()); err != nil {
			return Event{}, err
		}
	}
}

func (a *anthropicStream) handle(ev anthropic.MessageStreamEventUnion) *Error {
	switch ev.Type {
	case "message_start":
		a.usage.InputTokens = ev.Message.Usage.InputTokens
		a.usage.OutputTokens = ev.Message.Usage.OutputTokens
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				a.queue.push(Event{Type: EventTextDelta, Text: cb.Text})
			}
		case "tool_use":
			if a.ncalls >= maxToolCalls {
				return &Error{Provider: "anthropic", Code: CodeBadResponse, Message: "too many tool calls in one response"}
			}
			if cb.Name == "" {
				return &Error{Provider: "anthropic", Code: CodeBadResponse, Message: "a tool call has no name"}
			}
			t := &toolState{call: ToolCall{Index: a.ncalls, ID: cb.ID, Name: cb.Name}}
			if t.call.ID == "" {
				t.call.ID = newCallID()
			}
			a.ncalls++
			a.tools[ev.Index] = t
			a.queue.push(Event{Type: EventToolCallStart, ToolCall: t.call})
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				a.queue.push(Event{Type: EventTextDelta, Text: ev.Delta.Text})
			}
		case "input_json_delta":
			t := a.tools[ev.Index]
			if t == nil {
				return &Error{Provider: "anthropic", Code: CodeBadResponse, Message: "tool input for a content block that is not a tool call"}
			}
			if t.buf.Len()+len(ev.Delta.PartialJSON) > maxToolInput {
				return &Error{Provider: "anthropic", Code: CodeBadResponse, Message: "tool input for " + t.call.Name + " is too large"}
			}
			t.buf.WriteString(ev.Delta.PartialJSON)
		}
	case "content_block_stop":
		if t := a.tools[ev.Index]; t != nil {
			delete(a.tools, ev.Index)
			in, err := validInput("anthropic", t.call.Name, t.buf.String())
			if err != nil {
				return err
			}
			t.call.Input = in
			a.queue.push(Event{Type: EventToolCall, ToolCall: t.call})
		}
	case "message_delta":
		a.stop = anthropicStop(ev.Delta.StopReason)
		if ev.Usage.InputTokens > 0 {
			a.usage.InputTokens = ev.Usage.InputTokens
		}
		if ev.Usage.OutputTokens > 0 {
			a.usage.OutputTokens = ev.Usage.OutputTokens
		}
	case "message_stop":
		a.stopped, a.ended = true, true
		if a.stop == "" {
			a.stop = StopEndTurn
		}
		a.queue.push(Event{Type: EventUsage, Usage: a.usage}, Event{Type: EventDone, StopReason: a.stop})
	}
	return nil
}

func anthropicStop(r anthropic.StopReason) StopReason {
	switch r {
	case anthropic.StopReasonToolUse:
		return StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return StopMaxTokens
	case "":
		return ""
	}
	return StopEndTurn
}
