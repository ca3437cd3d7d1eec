// Package servertest provides a scripted language model that speaks the real
// Anthropic Messages and OpenAI Chat Completions streaming protocols over
// loopback HTTP, so that the chat server can be tested end to end through the
// official SDKs, in process or as a `toolport serve` process:
//
//	ms := servertest.NewModelServer(t,
//		servertest.Turn{Match: "weather", Events: []servertest.Event{
//			servertest.Text("Let me look."), servertest.Call("call_1", "getWeather", `{"city":"Boston"}`)}},
//		servertest.Turn{Match: "weather", Step: 1, Events: []servertest.Event{servertest.Text("Sunny.")}},
//	)
//	cmd.Env = append(os.Environ(), ms.Env("anthropic")...) // TOOLPORT_MODEL, key and base URL
//
// It answers POST /v1/messages (Anthropic) and POST /v1/chat/completions
// (OpenAI; base URL [ModelServer.OpenAIBaseURL]).
package servertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// ModelName is the model the scripted server claims to be.
const ModelName = "scripted-model"

// APIKey is the key the scripted server expects (any non-empty key is
// accepted; this one is what [ModelServer.Env] sets).
const APIKey = "sk-scripted-test-key"

// Turn is one scripted model response.
//
// A request is answered by the first turn with a Match that is contained
// (case-insensitively) in the request's last user text and whose Step equals
// the number of assistant messages after that text (the model calls the chat
// turn has already made); such turns can play any number of times,
// concurrently. Otherwise the next turn without a Match plays, each once, in
// order. A request with no turn to play gets a 400 answer.
type Turn struct {
	Match string
	Step  int

	// Status, when neither 0 nor 200, makes the turn an error answer with
	// that status and Body (default: the API's error envelope for the
	// status), with a Retry-After header when RetryAfter is set.
	Status     int
	Body       string
	RetryAfter string

	// Raw, when set, is sent as the whole response body (a recorded SSE
	// stream from internal/llm/testdata), in small flushed pieces.
	Raw []byte

	// Events make up a generated stream.
	Events []Event
	// InputTokens and OutputTokens are the usage reported.
	InputTokens, OutputTokens int
}

// Event is one step of a generated stream.
type Event struct {
	// Delay is waited before the event (the client may go away meanwhile).
	Delay time.Duration
	// Text is streamed as text deltas.
	Text string
	// ID, Name and Input make a tool call (Input is JSON; "" means {}).
	ID, Name, Input string
	// Break drops the connection at this point, mid-stream.
	Break bool
}

// Text returns a text event.
func Text(s string) Event { return Event{Text: s} }

// Call returns a tool call event.
func Call(id, name, input string) Event { return Event{ID: id, Name: name, Input: input} }

// Pause returns an event that only waits.
func Pause(d time.Duration) Event { return Event{Delay: d} }

// Break returns an event that drops the connection.
func Break() Event { return Event{Break: true} }

// Request is a request the server received.
type Request struct {
	Path string
	Body []byte
}

// JSON decodes the request body.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// ModelServer is a scripted model on a loopback HTTP server.
type ModelServer struct {
	// URL is the server's base URL (scheme and host): the Anthropic base URL.
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	matched  []Turn
	ordered  []Turn
	next     int
	requests []Request
}

// NewModelServer starts a scripted model playing turns; it stops when the test ends.
func NewModelServer(t testing.TB, turns ...Turn) *ModelServer {
	t.Helper()
	m := &ModelServer{}
	m.Add(turns...)
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	t.Cleanup(m.Close)
	return m
}

// Add appends turns to the script.
func (m *ModelServer) Add(turns ...Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range turns {
		if t.Match != "" {
			m.matched = append(m.matched, t)
		} else {
			m.ordered = append(m.ordered, t)
		}
	}
}

// Close stops the server, dropping open streams.
func (m *ModelServer) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

// AnthropicBaseURL is the value for ANTHROPIC_BASE_URL.
func (m *ModelServer) AnthropicBaseURL() string { return m.URL }

// OpenAIBaseURL is the value for OPENAI_BASE_URL.
func (m *ModelServer) OpenAIBaseURL() string { return m.URL + "/v1" }

// Env returns the environment that points `toolport serve` at this server
// with provider "anthropic" or "openai".
func (m *ModelServer) Env(provider string) []string {
	if provider == "openai" {
		return []string{"TOOLPORT_MODEL=openai:" + ModelName, "OPENAI_API_KEY=" + APIKey, "OPENAI_BASE_URL=" + m.OpenAIBaseURL()}
	}
	return []string{"TOOLPORT_MODEL=anthropic:" + ModelName, "ANTHROPIC_API_KEY=" + APIKey, "ANTHROPIC_BASE_URL=" + m.AnthropicBaseURL()}
}

// Requests returns the requests received so far, in order.
func (m *ModelServer) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// maxRequestBody bounds what the scripted server reads of a request.
const maxRequestBody = 32 << 20

func (m *ModelServer) serve(w http.ResponseWriter, r *http.Request) {
	var anthropic bool
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		anthropic = true
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return
	}
	text, step := lastUserText(body)
	turn, ok := m.pick(Request{Path: r.URL.Path, Body: body}, text, step)
	if !ok {
		writeError(w, anthropic, http.StatusBadRequest, "", fmt.Sprintf("no scripted turn for %q (step %d)", text, step))
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		writeError(w, anthropic, turn.Status, turn.Body, "scripted failure")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	flush()
	if turn.Raw != nil {
		raw := turn.Raw
		for len(raw) > 0 {
			n := min(97, len(raw))
			if _, err := w.Write(raw[:n]); err != nil {
				return
			}
			flush()
			raw = raw[n:]
		}
		return
	}
	var g generator
	if anthropic {
		g = &anthropicGen{w: w, turn: turn}
	} else {
		g = &openaiGen{w: w, turn: turn}
	}
	g.start()
	flush()
	for _, ev := range turn.Events {
		if ev.Delay > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(ev.Delay):
			}
		}
		if ev.Break {
			// Abort the response: the client sees the connection drop
			// in the middle of the stream.
			panic(http.ErrAbortHandler)
		}
		switch {
		case ev.Name != "":
			in := ev.Input
			if in == "" {
				in = "{}"
			}
			g.call(ev.ID, ev.Name, in)
		case ev.Text != "":
			g.text(ev.Text)
		}
		flush()
	}
	g.finish()
	flush()
}

func (m *ModelServer) pick(req Request, text string, step int) (Turn, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	lower := strings.ToLower(text)
	for _, t := range m.matched {
		if t.Step == step && strings.Contains(lower, strings.ToLower(t.Match)) {
			return t, true
		}
	}
	// The agent's titling call after a conversation's first answer is
	// answered like a real model would, without taking a scripted turn, so
	// that scripts list only the turns a test is about (a test may still
	// match it with a Turn of its own, above).
	if strings.HasPrefix(text, titleRequest) {
		return Turn{Events: []Event{Text("A scripted title")}}, true
	}
	if m.next < len(m.ordered) {
		m.next++
		return m.ordered[m.next-1], true
	}
	return Turn{}, false
}

// titleRequest begins the user message of the agent's titling call
// (internal/agent/title.go).
const titleRequest = "Write a short title for this conversation."

// lastUserText finds the last user message with text in an Anthropic or
// OpenAI request, and counts the assistant messages after it.
func lastUserText(body []byte) (string, int) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", 0
	}
	step := 0
	for i := len(req.Messages) - 1; i >= 0; i-- {
		msg := req.Messages[i]
		switch msg.Role {
		case "assistant":
			step++
			continue
		case "user":
		default:
			continue
		}
		if t := contentText(msg.Content); t != "" {
			return t, step
		}
	}
	return "", step
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func writeError(w http.ResponseWriter, anthropic bool, status int, body, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if body != "" {
		io.WriteString(w, body)
		return
	}
	typ := "api_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == 529 || status == http.StatusServiceUnavailable:
		typ = "overloaded_error"
	case status < 500:
		typ = "invalid_request_error"
	}
	var v any
	if anthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	} else {
		v = map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil}}
	}
	json.NewEncoder(w).Encode(v)
}

// generator writes one protocol's stream.
type generator interface {
	start()
	text(s string)
	call(id, name, input string)
	finish()
}

func writeData(w io.Writer, event string, v any) {
	var b bytes.Buffer
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	data, _ := json.Marshal(v)
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	w.Write(b.Bytes())
}

// pieces splits s into fragments of at most n bytes, as the APIs stream
// tool arguments (anywhere, even mid-key).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		// Cut on a rune boundary, as a real stream's JSON strings must:
		// a piece that split a character would arrive as U+FFFD.
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

type anthropicGen struct {
	w     io.Writer
	turn  Turn
	index int
	open  string // type of the open content block, "" if none
	calls int
}

func (g *anthropicGen) start() {
	writeData(g.w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": ModelName, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": g.turn.InputTokens, "output_tokens": 1},
	}})
}

func (g *anthropicGen) closeBlock() {
	if g.open != "" {
		writeData(g.w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": g.index})
		g.index++
		g.open = ""
	}
}

func (g *anthropicGen) text(s string) {
	if g.open != "text" {
		g.closeBlock()
		writeData(g.w, "content_block_start", map[string]any{"type": "content_block_start", "index": g.index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		g.open = "text"
	}
	writeData(g.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": g.index,
		"delta": map[string]any{"type": "text_delta", "text": s}})
}

func (g *anthropicGen) call(id, name, input string) {
	g.closeBlock()
	g.calls++
	if id == "" {
		id = fmt.Sprintf("toolu_scripted_%d", g.calls)
	}
	writeData(g.w, "content_block_start", map[string]any{"type": "content_block_start", "index": g.index,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
	g.open = "tool_use"
	writeData(g.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": g.index,
		"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
	for _, p := range pieces(input, 7) {
		writeData(g.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": g.index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
	}
}

func (g *anthropicGen) finish() {
	g.closeBlock()
	stop := "end_turn"
	if g.calls > 0 {
		stop = "tool_use"
	}
	writeData(g.w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"input_tokens": g.turn.InputTokens, "output_tokens": g.turn.OutputTokens}})
	writeData(g.w, "message_stop", map[string]any{"type": "message_stop"})
}

type openaiGen struct {
	w     io.Writer
	turn  Turn
	calls int
}

func (g *openaiGen) chunk(delta map[string]any, finish any) {
	writeData(g.w, "", map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
		"model": ModelName, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
}

func (g *openaiGen) start() { g.chunk(map[string]any{"role": "assistant", "content": ""}, nil) }

func (g *openaiGen) text(s string) { g.chunk(map[string]any{"content": s}, nil) }

func (g *openaiGen) call(id, name, input string) {
	idx := g.calls
	g.calls++
	if id == "" {
		id = fmt.Sprintf("call_scripted_%d", g.calls)
	}
	g.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": idx, "id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": ""}}}}, nil)
	for _, p := range pieces(input, 7) {
		g.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": idx,
			"function": map[string]any{"arguments": p}}}}, nil)
	}
}

func (g *openaiGen) finish() {
	finish := "stop"
	if g.calls > 0 {
		finish = "tool_calls"
	}
	g.chunk(map[string]any{}, finish)
	writeData(g.w, "", map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
		"model": ModelName, "choices": []any{}, "usage": map[string]any{
			"prompt_tokens": g.turn.InputTokens, "completion_tokens": g.turn.OutputTokens,
			"total_tokens": g.turn.InputTokens + g.turn.OutputTokens}})
	io.WriteString(g.w, "data: [DONE]\n\n")
}
