package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/llm"
)

// providers builds each SDK-backed provider against a test server URL.
var providers = []struct {
	name string
	new  func(t *testing.T, url string) llm.Provider
	key  string
}{
	{"anthropic", func(t *testing.T, url string) llm.Provider { return newAnthropic(t, url) }, testKey},
	{"openai", func(t *testing.T, url string) llm.Provider { return newOpenAI(t, url, openaiKey) }, openaiKey},
}

func TestHTTPErrorsAreClassified(t *testing.T) {
	tests := []struct {
		status     int
		header     http.Header
		body       string
		code       llm.Code
		retryable  bool
		retryAfter time.Duration
		msgHas     string
	}{
		{401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-test-0123456789secret / sk-proj-test-0123456789secret"}}`,
			llm.CodeAuth, false, 0, "authentication failed"},
		{403, nil, `{"type":"error","error":{"type":"permission_error","message":"no access"}}`, llm.CodeAuth, false, 0, "HTTP 403"},
		{429, http.Header{"Retry-After": {"7"}}, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			llm.CodeRateLimit, true, 7 * time.Second, "per-minute rate limit"},
		{529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, llm.CodeOverloaded, true, 0, "overloaded"},
		{503, nil, `{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error"}}`, llm.CodeOverloaded, true, 0, "not ready yet"},
		{500, nil, `{"error":{"message":"boom","type":"server_error"}}`, llm.CodeServer, true, 0, "HTTP 500"},
		{400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 64000"}}`,
			llm.CodeInvalidRequest, false, 0, "max_tokens: must be at most 64000"},
		{404, nil, `{"error":{"message":"The model 'nope' does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			llm.CodeInvalidRequest, false, 0, "does not exist"},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(p.name+"/"+http.StatusText(tt.status), func(t *testing.T) {
				srv, _ := replayServer(t, tt.status, tt.header, []byte(tt.body))
				_, err := p.new(t, srv.URL).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want *llm.Error", err)
				}
				if e.Code != tt.code || e.Retryable != tt.retryable || e.Status != tt.status || e.RetryAfter != tt.retryAfter {
					t.Errorf("got code=%s retryable=%v status=%d retryAfter=%v, want %s %v %d %v",
						e.Code, e.Retryable, e.Status, e.RetryAfter, tt.code, tt.retryable, tt.status, tt.retryAfter)
				}
				if !strings.Contains(e.Error(), tt.msgHas) {
					t.Errorf("message %q does not contain %q", e.Error(), tt.msgHas)
				}
				// The server refused is known (the agent names it to the
				// person), without a query.
				if !strings.HasPrefix(e.URL, srv.URL+"/v1/") || strings.Contains(e.URL, "?") {
					t.Errorf("URL = %q, want the request's URL on %s", e.URL, srv.URL)
				}
				for _, secret := range []string{testKey, openaiKey, "127.0.0.1"} {
					if strings.Contains(e.Error(), secret) {
						t.Errorf("message %q leaks %q", e.Error(), secret)
					}
				}
			})
		}
	}
}

func TestUnreachableServerIsANetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close() // nothing listens there any more
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			_, err := p.new(t, "http://user:pa55word@"+host).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			var e *llm.Error
			if !errors.As(err, &e) || e.Code != llm.CodeNetwork || !e.Retryable {
				t.Fatalf("err = %v, want retryable network error", err)
			}
			// It names the server, so a person sees which is down, but
			// not the credentials in its URL.
			if !strings.Contains(e.Error(), "(http://"+host+"/") || strings.Contains(e.Error(), "pa55word") || strings.Contains(e.Error(), "user@") {
				t.Errorf("message %q: want the URL http://%s/… without its credentials", e.Error(), host)
			}
		})
	}
}

// firstEvent is the opening of a stream for each provider: enough for one
// text delta.
var firstEvent = map[string]string{
	"anthropic": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
	"openai": `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}` + "\n\n",
}

// stallingServer sends the first event, then, depending on how: waits until
// the client goes away (reporting it on gone), or drops the connection.
func stallingServer(t *testing.T, provider, how string) (url string, gone <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(firstEvent[provider]))
		w.(http.Flusher).Flush()
		switch how {
		case "drop":
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "stall":
			<-r.Context().Done()
			close(ch)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func TestStreamFailuresMidStream(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name+"/connection dropped", func(t *testing.T) {
			url, _ := stallingServer(t, p.name, "drop")
			s, err := p.new(t, url).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := llm.Collect(s)
			var e *llm.Error
			if !errors.As(err, &e) || e.Code != llm.CodeNetwork || !e.Retryable {
				t.Fatalf("err = %v, want retryable network error", err)
			}
			if r.Message.Text() != "Hello" {
				t.Errorf("text before the drop = %q", r.Message.Text())
			}
		})

		t.Run(p.name+"/context canceled", func(t *testing.T) {
			url, gone := stallingServer(t, p.name, "stall")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := p.new(t, url).Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !s.Next() || s.Event().Text != "Hello" {
				t.Fatalf("first event = %+v, err %v", s.Event(), s.Err())
			}
			cancel()
			if s.Next() {
				t.Fatalf("event after cancel: %+v", s.Event())
			}
			var e *llm.Error
			if !errors.As(s.Err(), &e) || e.Code != llm.CodeCanceled || e.Retryable {
				t.Fatalf("err = %v, want canceled", s.Err())
			}
			<-gone // the server saw the request end: the HTTP stream stopped
		})

		t.Run(p.name+"/closed by the consumer", func(t *testing.T) {
			url, gone := stallingServer(t, p.name, "stall")
			s, err := p.new(t, url).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if !s.Next() {
				t.Fatal(s.Err())
			}
			s.Close()
			<-gone
			if s.Next() {
				t.Error("Next after Close returned true")
			}
		})

		t.Run(p.name+"/idle timeout", func(t *testing.T) {
			url, _ := stallingServer(t, p.name, "stall")
			var prov llm.Provider
			var err error
			o := llm.Options{IdleTimeout: 50 * time.Millisecond}
			if p.name == "anthropic" {
				o.APIKey, o.BaseURL = testKey, url
				prov, err = llm.NewAnthropic("claude-sonnet-4-5", o)
			} else {
				o.APIKey, o.BaseURL = openaiKey, url+"/v1"
				prov, err = llm.NewOpenAI("gpt-4.1", o)
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := prov.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = llm.Collect(s)
			var e *llm.Error
			if !errors.As(err, &e) || e.Code != llm.CodeTimeout || !e.Retryable {
				t.Fatalf("err = %v, want retryable timeout", err)
			}
		})
	}
}

func TestOpenAIErrorEventMidStream(t *testing.T) {
	body := firstEvent["openai"] + `data: {"error":{"message":"upstream model crashed","type":"server_error"}}` + "\n\n"
	srv, _ := replayServer(t, http.StatusOK, sseHeader, []byte(body))
	s, err := newOpenAI(t, srv.URL, openaiKey).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = llm.Collect(s)
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeServer || !e.Retryable || !strings.Contains(e.Message, "upstream model crashed") {
		t.Fatalf("err = %v, want retryable server error with the upstream message", err)
	}
}

func TestOpenAIMalformedChunk(t *testing.T) {
	body := firstEvent["openai"] + "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\n\n"
	srv, _ := replayServer(t, http.StatusOK, sseHeader, []byte(body))
	s, err := newOpenAI(t, srv.URL, openaiKey).Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := llm.Collect(s)
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeBadResponse {
		t.Fatalf("err = %v, want bad_response", err)
	}
	if r.Message.Text() != "Hello" {
		t.Errorf("text before the bad chunk = %q", r.Message.Text())
	}
}
