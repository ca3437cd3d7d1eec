package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// bodyKey carries, in a request's context, the body the fuzz client answers with.
type bodyKey struct{}

// memoryClient answers every request with the body in its context as an
// event stream, without a network: the providers are built once and each
// input reaches them through the context.
func memoryClient() *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ := r.Context().Value(bodyKey{}).([]byte)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})}
}

// maxFuzzStream bounds the inputs worth running: longer streams only repeat
// the events of short ones, and each byte costs the SDKs' decoders time.
const maxFuzzStream = 4 << 10

// FuzzStreams feeds arbitrary stream bodies to both SDK-backed providers: the
// event handling must not panic, and a stream that ends without error must
// obey the contract (Done last, complete tool calls with object inputs).
//
// The seeds are short streams CONSTRUCTED in the documented shapes of each API
// (the recordings of testdata/ are replayed whole by replay_test.go): the
// fuzzer minimises each new input in time quadratic in its length, so
// multi-KB seeds kept it minimising instead of fuzzing (12 execs in 60 s).
func FuzzStreams(f *testing.F) {
	for _, seed := range []string{
		// Anthropic: text, then a tool call whose input comes in fragments.
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		// Anthropic: an error event inside the stream.
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		// OpenAI: text, a tool call in argument fragments, then usage in a chunk without choices.
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}\n\ndata: [DONE]\n\n",
		// OpenAI-compatible quirks: two whole calls repeating index 0 with new
		// ids, arguments as an object (Ollama, vLLM).
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":{\"x\":1}}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"b\",\"function\":{\"name\":\"g\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		// OpenAI: an error object mid-stream.
		"data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n",
	} {
		f.Add([]byte(seed))
	}
	o := llm.Options{APIKey: "k", BaseURL: "http://model.invalid", HTTPClient: memoryClient()}
	a, err := llm.NewAnthropic("m", o)
	if err != nil {
		f.Fatal(err)
	}
	oa, err := llm.NewOpenAI("m", o)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > maxFuzzStream {
			return
		}
		ctx := context.WithValue(t.Context(), bodyKey{}, body)
		for _, p := range []llm.Provider{a, oa} {
			s, err := p.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				continue
			}
			var evs []llm.Event
			for s.Next() {
				evs = append(evs, s.Event())
			}
			if s.Err() != nil {
				continue
			}
			if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone {
				t.Fatalf("%s: stream ended without error and without Done: %+v", p.Model(), evs)
			}
			for _, ev := range evs {
				if ev.Type != llm.EventToolCall {
					continue
				}
				var obj map[string]any
				if json.Unmarshal(ev.ToolCall.Input, &obj) != nil || obj == nil || ev.ToolCall.Name == "" || ev.ToolCall.ID == "" {
					t.Fatalf("bad tool call %+v", ev.ToolCall)
				}
			}
		}
	})
}
