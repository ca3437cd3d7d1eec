package llm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIBaseURL is the official API's base URL.
const OpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI is a [Provider] for the Chat Completions API of OpenAI and of
// OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio).
//
// It tolerates the ways those servers stream tool calls: in argument
// fragments with a final usage chunk whose choices are empty (OpenAI), each
// call whole in one chunk (Ollama), a first delta with no arguments key
// (vLLM), calls that repeat index 0 with a new id, and arguments sent as a
// JSON object instead of a string.
type OpenAI struct {
	client  openai.ChatCompletionService
	model   string
	opts    Options
	secrets []string
	tools   toolCache[json.RawMessage]
}

// NewOpenAI returns a provider for model (e.g. "gpt-4.1", "qwen2.5"). The key
// may be empty when o.BaseURL points at a server that needs none. The SDK
// reads nothing from the environment: everything comes from o.
func NewOpenAI(model string, o Options) (*OpenAI, error) {
	if model == "" {
		return nil, errors.New("llm: openai: empty model name")
	}
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, &Error{Provider: "openai", Code: CodeNotConfigured,
			Message: "no API key: set OPENAI_API_KEY or llm.openai.api_key in the credentials file " +
				"(a local server needs none: give its URL, e.g. TOOLPORT_MODEL=openai:qwen2.5@http://127.0.0.1:11434/v1)"}
	}
	base := o.BaseURL
	if base == "" {
		base = OpenAIBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(base, "/") + "/"),
		option.WithHTTPClient(o.httpClient()),
		option.WithMaxRetries(o.MaxRetries),
	}
	var secrets []string
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
		secrets = append(secrets, o.APIKey)
	}
	// NewChatCompletionService, unlike NewClient, does not read OPENAI_* variables.
	return &OpenAI{client: openai.NewChatCompletionService(opts...), model: model, opts: o, secrets: secrets}, nil
}

// Model returns the model name.
func (p *OpenAI) Model() string { return p.model }

// Stream implements [Provider].
func (p *OpenAI) Stream(ctx context.Context, req Request) (*Stream, error) {
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
	// replaces them: only the model is passed, so that encoding is small.
	// The SDK sends the request (retries, errors by status); its events
	// are decoded here into the few fields a turn reads (see oaChunk).
	var res *http.Response
	sdk := p.client.NewStreaming(w.ctx, openai.ChatCompletionNewParams{Model: params.Model},
		option.WithRequestBody("application/json", body), option.WithMiddleware(w.middleware),
		option.WithResponseInto(&res))
	if err := sdk.Err(); err != nil || res == nil {
		sdk.Close()
		if err == nil {
			err = errors.New("no response")
		}
		e := p.classify(w, err)
		w.stop()
		return nil, e
	}
	// The SDK's stream is never read: this one reads the same body, and
	// closing it closes the body.
	s := ssestream.NewStream[oaChunk](ssestream.NewDecoder(res), nil)
	st := &openaiStream{p: p, w: w, s: s, byIndex: map[int64]*oaCall{}}
	return NewStream(st.next, func() error { err := s.Close(); w.stop(); return err }), nil
}

// params converts req to the SDK's request, but for the tools, which are
// returned already encoded (requestBody adds them).
//
// max_tokens: the official API wants max_completion_tokens (newer models
// reject max_tokens), while compatible servers know max_tokens best; so the
// former is sent to OpenAI and the latter to any other base URL.
func (p *OpenAI) params(req Request) (openai.ChatCompletionNewParams, []json.RawMessage, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if p.opts.BaseURL == "" {
		params.MaxCompletionTokens = openai.Int(req.maxTokens())
	} else {
		params.MaxTokens = openai.Int(req.maxTokens())
	}
	tools, err := p.tools.get(req.Tools, openaiTools)
	if err != nil {
		return params, nil, err
	}
	if req.ToolChoice == ToolChoiceNone && len(req.Tools) > 0 {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	params.Messages = append(params.Messages, OpenAIMessages(req.Messages)...)
	return params, tools, nil
}

// openaiTools converts tool definitions to the SDK's tools and encodes each.
func openaiTools(defs []ToolDef) ([]json.RawMessage, error) {
	tools := make([]openai.ChatCompletionToolUnionParam, 0, len(defs))
	for _, t := range defs {
		var schema map[string]any
		if len(t.InputSchema) > 0 {
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
				return nil, fmt.Errorf("llm: tool %s: input schema: %w", t.Name, err)
			}
		}
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		tools = append(tools, openai.ChatCompletionFunctionTool(fn))
	}
	return encodeTools(defs, tools)
}

// OpenAIMessages converts content-block history to Chat Completions messages:
// an assistant's text becomes its content and its tool_use blocks its
// tool_calls; a user message's tool_result blocks become role "tool" messages
// (placed first, since they must directly follow the assistant's tool calls)
// and its text a user message. Tool calls without a result, and results
// without a call, are left out: the API rejects a history that has them.
func OpenAIMessages(msgs []Message) []openai.ChatCompletionMessageParamUnion {
	calls, results := toolPairs(msgs)
	var out []openai.ChatCompletionMessageParamUnion
	for _, m := range msgs {
		var text []string
		switch m.Role {
		case RoleAssistant:
			var tcs []openai.ChatCompletionMessageToolCallUnionParam
			for _, b := range m.Content {
				switch {
				case b.Type == BlockText && b.Text != "":
					text = append(text, b.Text)
				case b.Type == BlockToolUse && results[b.ID]:
					tcs = append(tcs, openai.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
							ID: b.ID,
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
								Name: b.Name, Arguments: string(inputOrEmpty(b.Input)),
							},
						}})
				}
			}
			if len(text) == 0 && len(tcs) == 0 {
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{ToolCalls: tcs}
			if len(text) > 0 {
				a.Content.OfString = openai.String(strings.Join(text, "\n\n"))
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			for _, b := range m.Content {
				switch {
				case b.Type == BlockToolResult && calls[b.ToolUseID]:
					out = append(out, openai.ToolMessage(resultText(b), b.ToolUseID))
				case b.Type == BlockText && b.Text != "":
					text = append(text, b.Text)
				}
			}
			if len(text) > 0 {
				out = append(out, openai.UserMessage(strings.Join(text, "\n\n")))
			}
		}
	}
	return out
}

// classify maps err, which the call watched by w returned, to an *Error
// naming the model server it came from.
func (p *OpenAI) classify(w *watchdog, err error) *Error {
	return p.classifyErr(w.ctx, err).at(w.request())
}

func (p *OpenAI) classifyErr(ctx context.Context, err error) *Error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg, typ := apiErr.Message, apiErr.Type
		if msg == "" {
			b := parseErrorBody([]byte(apiErr.RawJSON()))
			msg, typ = b.Message, b.Type
		}
		e := classifyStatus("openai", apiErr.StatusCode, nil, typ, msg, p.secrets, err)
		if apiErr.Response != nil {
			e.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		return e.at(apiErr.Request)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// An {"error":…} event inside a started stream.
		b := parseErrorBody(se.Event.Data)
		return classifyStatus("openai", 0, nil, b.Type, b.Message, p.secrets, err)
	}
	return classifyTransport(ctx, "openai", err)
}

type oaCall struct {
	call    ToolCall
	args    strings.Builder
	started bool
}

type openaiStream struct {
	p       *OpenAI
	w       *watchdog
	s       *ssestream.Stream[oaChunk]
	byIndex map[int64]*oaCall // the latest call at each wire index
	calls   []*oaCall         // in order of appearance
	usage   Usage
	finish  string
	queue   pending
	ended   bool
}

func (o *openaiStream) next() (Event, error) {
	for {
		if ev, ok := o.queue.pop(); ok {
			return ev, nil
		}
		if o.ended {
			return Event{}, io.EOF
		}
		if !o.s.Next() {
			if err := o.s.Err(); err != nil {
				return Event{}, o.p.classify(o.w, err)
			}
			if o.finish == "" {
				return Event{}, &Error{Provider: "openai", Code: CodeNetwork, Retryable: true,
					Message: "the response stream ended before the message was complete"}
			}
			if err := o.end(); err != nil {
				return Event{}, err
			}
			continue
		}
		if err := o.handle(o.s.Current()); err != nil {
			return Event{}, err
		}
	}
}

// oaChunk is the part of a Chat Completions stream chunk that a turn
// reads. encoding/json decodes it in a fraction of the time the SDK's
// ChatCompletionChunk takes (which keeps every field and its raw JSON);
// fields not named here are skipped.
type oaChunk struct {
	Choices []oaChoice `json:"choices"`
	Usage   *oaUsage   `json:"usage"`
}

type oaChoice struct {
	Index int64 `json:"index"`
	Delta struct {
		Content   string        `json:"content"`
		ToolCalls []oaToolDelta `json:"tool_calls"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type oaToolDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a string of JSON, or (some servers) the object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// oaUsage counts tokens; a server that writes them as 12.0 is not refused.
type oaUsage struct {
	PromptTokens     float64 `json:"prompt_tokens"`
	CompletionTokens float64 `json:"completion_tokens"`
}

func (o *openaiStream) handle(c oaChunk) *Error {
	if u := c.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		o.usage = Usage{InputTokens: int64(u.PromptTokens), OutputTokens: int64(u.CompletionTokens)}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 { // only one choice is ever requested
			continue
		}
		if ch.Delta.Content != "" {
			o.queue.push(Event{Type: EventTextDelta, Text: ch.Delta.Content})
		}
		for _, tc := range ch.Delta.ToolCalls {
			if err := o.toolDelta(tc); err != nil {
				return err
			}
		}
		if ch.FinishReason != "" {
			o.finish = ch.FinishReason
		}
	}
	return nil
}

// arguments is a tool delta's arguments: the string's content, or the
// object as sent.
func (tc oaToolDelta) arguments() (string, *Error) {
	raw := bytes.TrimSpace(tc.Function.Arguments)
	switch {
	case len(raw) == 0:
		return "", nil
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", &Error{Provider: "openai", Code: CodeBadResponse, Message: "the model server sent a malformed stream event"}
		}
		return s, nil
	case raw[0] == '{':
		return string(raw), nil
	}
	return "", nil // null, or something no server means as arguments
}

func (o *openaiStream) toolDelta(tc oaToolDelta) *Error {
	c := o.byIndex[tc.Index]
	if c == nil || (tc.ID != "" && c.call.ID != "" && tc.ID != c.call.ID) {
		// A new call; a new id at a used index means a server that numbers
		// every call 0.
		if len(o.calls) >= maxToolCalls {
			return &Error{Provider: "openai", Code: CodeBadResponse, Message: "too many tool calls in one response"}
		}
		c = &oaCall{call: ToolCall{Index: len(o.calls), ID: tc.ID}}
		o.byIndex[tc.Index] = c
		o.calls = append(o.calls, c)
	}
	if c.call.ID == "" {
		c.call.ID = tc.ID
	}
	if c.call.Name == "" {
		c.call.Name = tc.Function.Name
	}
	args, err := tc.arguments()
	if err != nil {
		return err
	}
	if c.args.Len()+len(args) > maxToolInput {
		return &Error{Provider: "openai", Code: CodeBadResponse, Message: "tool input for " + c.call.Name + " is too large"}
	}
	c.args.WriteString(args)
	if !c.started && c.call.Name != "" {
		c.started = true
		if c.call.ID == "" {
			c.call.ID = newCallID()
		}
		o.queue.push(Event{Type: EventToolCallStart, ToolCall: c.call})
	}
	return nil
}

// end delivers the tool calls, usage and Done once the stream has finished.
func (o *openaiStream) end() *Error {
	o.ended = true
	for _, c := range o.calls {
		if c.call.Name == "" {
			return &Error{Provider: "openai", Code: CodeBadResponse, Message: "a tool call has no function name"}
		}
		in, err := validInput("openai", c.call.Name, c.args.String())
		if err != nil {
			return err
		}
		c.call.Input = in
		o.queue.push(Event{Type: EventToolCall, ToolCall: c.call})
	}
	stop := StopEndTurn
	switch o.finish {
	case "length":
		stop = StopMaxTokens
	case "tool_calls", "function_call":
		stop = StopToolUse
	}
	if len(o.calls) > 0 && stop == StopEndTurn {
		stop = StopToolUse // some servers say "stop" after tool calls
	}
	o.queue.push(Event{Type: EventUsage, Usage: o.usage}, Event{Type: EventDone, StopReason: stop})
	return nil
}

// newCallID names a tool call whose server gave it no id.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
