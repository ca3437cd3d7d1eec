package llm_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// memoryClient answers every request with body as an event stream, without
// a network, so that fuzzing runs fast.
func memoryClient(body []byte) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})}
}

// FuzzStreams feeds arbitrary stream bodies to both SDK-backed providers: the
// event handling must not panic, and a stream that ends without error must
// obey the contract (Done last, complete tool calls with object inputs).
func FuzzStreams(f *testing.F) {
	f.Add(readFixture(f, "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse"))
	f.Add(readFixture(f, "openai/gpt-4.1.single-tool-call.sse"))
	f.Add(readFixture(f, "openai/gpt-4.1.parallel-tool-calls.sse"))
	f.Add(ollamaStream)
	f.Add(vllmStream)
	f.Add(quirkyStream)
	f.Fuzz(func(t *testing.T, body []byte) {
		o := llm.Options{APIKey: "k", BaseURL: "http://model.invalid", HTTPClient: memoryClient(body)}
		a, err := llm.NewAnthropic("m", o)
		if err != nil {
			t.Fatal(err)
		}
		oa, err := llm.NewOpenAI("m", o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []llm.Provider{a, oa} {
			s, err := p.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
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
