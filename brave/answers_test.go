package brave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/tooltest"
)

// stalled returns a client whose server never answers, and a context that
// is cancelled once the request has arrived: a call in flight when its
// deadline passes, without waiting out real time.
func stalled(t *testing.T) (*Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := tooltest.NewServer(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	}})
	c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// sse renders chunks of answer text as Brave's stream: OpenAI-style
// chat.completion.chunk events, then [DONE]. CONSTRUCTED from the
// streaming format in Brave's Answers reference (brave/brave-search-skills,
// brave-search/references/answers.md); no recording exists.
func sse(pieces ...string) string {
	var b strings.Builder
	for i, p := range pieces {
		content, _ := json.Marshal(p)
		finish := "null"
		if i == len(pieces)-1 {
			finish = `"stop"`
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"brave","choices":[{"index":0,"delta":{"role":"assistant","content":%s},"finish_reason":%s}]}`+"\n\n", content, finish)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// The citation tag's JSON (number, url, snippet, start_index, end_index,
// favicon) is not in Brave's published reference; its fields are those
// third-party clients of the API read. CONSTRUCTED.
const cite1 = `<citation>{"start_index":0,"end_index":52,"number":1,"url":"https://go.dev/blog/go1.22","favicon":"https://imgs.search.brave.com/f1","snippet":"Go 1.22 makes loop variables per-iteration."}</citation>`
const cite2 = `<citation>{"start_index":53,"end_index":90,"number":2,"url":"https://go.dev/wiki/LoopvarExperiment","snippet":"The loopvar experiment"}</citation>`

var sseHeader = http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}

func TestAnswerStreamsTextAndCitations(t *testing.T) {
	pieces := []string{"Since Go 1.22 each loop iteration", " has its own variable.", cite1[:30], cite1[30:], " It was the loopvar experiment.", cite2,
		cite1, `<usage>{"X-Request-Requests":1,"X-Request-Total-Cost":0.005}</usage>`}
	c, last := serve(t, 200, sseHeader, []byte(sse(pieces...)))
	var got []string
	a, err := c.Answer(context.Background(), &AnswerParams{Question: " what changed for loops in go 1.22? ", Country: "us", Language: "EN", SafeSearch: "strict", MaxCompletionTokens: 500},
		func(s string) { got = append(got, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, pieces) {
		t.Errorf("streamed %q", got)
	}
	req := last()
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "brave", "stream": true, "enable_citations": true, "country": "US", "language": "en", "safesearch": "strict",
		"max_completion_tokens": 500.0, "messages": []any{map[string]any{"role": "user", "content": "what changed for loops in go 1.22?"}}}
	if req.Method != http.MethodPost || req.URL.Path != "/res/v1/chat/completions" || !reflect.DeepEqual(body, want) ||
		req.Header.Get("X-Subscription-Token") != testKey {
		t.Errorf("request %s %s %v", req.Method, req.URL, body)
	}
	if a.Text != "Since Go 1.22 each loop iteration has its own variable. [1] It was the loopvar experiment. [2] [1]" {
		t.Errorf("text = %q", a.Text)
	}
	if len(a.Citations) != 2 || a.Citations[0].URL != "https://go.dev/blog/go1.22" || a.Citations[0].Snippet == "" ||
		a.Citations[1].Number != 2 || a.Citations[1].EndIndex != 90 {
		t.Errorf("citations = %+v", a.Citations)
	}
	if a.Usage["X-Request-Total-Cost"] != 0.005 || a.Model != "brave" || a.FinishReason != "stop" {
		t.Errorf("answer = %+v", a)
	}
}

func TestAnswerReadsABlockingCompletion(t *testing.T) {
	// The blocking example of Brave's Answers reference.
	body := `{"id":"chatcmpl-...","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"Paris is the capital..."},"index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60}}`
	c, _ := serve(t, 200, jsonHeader, []byte(body))
	a, err := c.Answer(context.Background(), &AnswerParams{Question: "What is the capital of France?"}, nil)
	if err != nil || a.Text != "Paris is the capital..." || a.FinishReason != "stop" || a.Citations != nil {
		t.Errorf("answer = %+v, %v", a, err)
	}
}

func TestParseAnswerText(t *testing.T) {
	for _, tt := range []struct{ name, raw, want string }{
		{"plain", "Just text.", "Just text."},
		{"a cut tag at the end is hidden", "Text so far" + cite1[:20], "Text so far"},
		{"a cut opening at the end is hidden", "Text so far<cit", "Text so far"},
		{"other angle brackets stay", "a < b and <b>bold</b>", "a < b and <b>bold</b>"},
		{"bad citation JSON is dropped", "Claim.<citation>{oops</citation> Next.", "Claim. Next."},
		{"citation without a number is dropped", `Claim.<citation>{"url":"https://x"}</citation>`, "Claim."},
		{"a citation after a space takes no second one", "Claim. " + cite1 + "next", "Claim. [1] next"},
		{"text spelling a mark stays as it is", "a  [b] " + cite1, "a  [b] [1]"},
		{"text spelling a tag is text", "<" + cite1 + "citation>", "< [1] citation>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, _, _ := ParseAnswerText(tt.raw); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAnswerFailures(t *testing.T) {
	p := &AnswerParams{Question: "why?"}
	t.Run("429 with rate-limit headers", func(t *testing.T) {
		h := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"2, 10000"}, "X-Ratelimit-Remaining": {"0, 9000"}, "X-Ratelimit-Reset": {"1, 100000"}}
		c, _ := serve(t, 429, h, fixture(t, "error_429_rate_limited.json"))
		_, err := c.Answer(context.Background(), p, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRateLimited || e.RetryAfter.Seconds() != 1 {
			t.Errorf("err = %#v", err)
		}
	})
	t.Run("5xx", func(t *testing.T) {
		c, _ := serve(t, 500, nil, []byte("internal error"))
		_, err := c.Answer(context.Background(), p, nil)
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 500 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("stream cut before [DONE]", func(t *testing.T) {
		cut := strings.TrimSuffix(sse("Half an answer"), "data: [DONE]\n\n")
		c, _ := serve(t, 200, sseHeader, []byte(cut))
		_, err := c.Answer(context.Background(), p, nil)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed chunk", func(t *testing.T) {
		c, _ := serve(t, 200, sseHeader, []byte("data: {\"choices\":[{\"delta\":\n\ndata: [DONE]\n\n"))
		_, err := c.Answer(context.Background(), p, nil)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("error event in the stream", func(t *testing.T) {
		c, _ := serve(t, 200, sseHeader, []byte(`data: {"type":"ErrorResponse","error":{"code":"OPTION_NOT_IN_PLAN","detail":"Answers is not in your plan"}}`+"\n\n"))
		_, err := c.Answer(context.Background(), p, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeOptionNotInPlan {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("stream over the body cap", func(t *testing.T) {
		srv := tooltest.NewServer(t, tooltest.Reply{Header: sseHeader, Body: []byte(sse(strings.Repeat("x", 5000)))})
		c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL), WithMaxBodyBytes(1000))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Answer(context.Background(), p, nil); !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled while Brave is silent", func(t *testing.T) {
		c, ctx := stalled(t)
		if _, err := c.Answer(ctx, p, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("bad question makes no request", func(t *testing.T) {
		srv := tooltest.NewServer(t, tooltest.Reply{})
		c, _ := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL))
		for _, bad := range []AnswerParams{{Question: "  "}, {Question: strings.Repeat("é", MaxQuestionRunes+1)}, {Question: "q", SafeSearch: "none"}, {Question: "q", Country: "USA"}} {
			if _, err := c.Answer(context.Background(), &bad, nil); err == nil {
				t.Errorf("%+v: no error", bad)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests", n)
		}
	})
}

// FuzzDecodeAnswerStream: any stream yields an answer or a typed error,
// never a panic; its citations are numbered and unique. (What the text
// reads is FuzzParseAnswerText's: text that spells a tag, such as
// "<" + "<citation>…</citation>" + "citation>", is text and stays.)
func FuzzDecodeAnswerStream(f *testing.F) {
	f.Add([]byte(sse("Hello", cite1, " world", cite2)))
	f.Add([]byte(sse("cut" + cite1[:10])))
	f.Add([]byte("data: [DONE]\n"))
	f.Add([]byte(`data: {"type":"ErrorResponse","error":{"code":"X"}}` + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := DecodeAnswerStream(strings.NewReader(string(body)), 1<<16, "text/event-stream", nil)
		if err != nil {
			var pe *ParseError
			var e *Error
			if !errors.As(err, &pe) && !errors.As(err, &e) && !errors.Is(err, ErrBodyTooLarge) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		seen := map[int]bool{}
		for _, c := range a.Citations {
			if c.Number <= 0 || seen[c.Number] {
				t.Fatalf("citations %+v", a.Citations)
			}
			seen[c.Number] = true
		}
	})
}

// FuzzParseAnswerText: ParseAnswerText reads an answer as its format says.
// The input is three pieces of text around a citation and a usage tag,
// "a<citation>…</citation>b<usage>…</usage>c", so the readable text is known
// without asking the parser: the pieces as they are, with "[1]" where the
// citation was, set off by a space (one, also after a piece ending in one,
// and one more when a word follows right away), the ends trimmed. A piece
// holds no tag of its own, and the last does not end in the start of one (a
// stream cut mid-tag, which is dropped). So "<" + citation + "citation>"
// reads "< [1] citation>": text that spells a tag is text (an earlier
// property, "no <citation> in the text", would have called it a kept tag).
func FuzzParseAnswerText(f *testing.F) {
	f.Add("Claim.", " Next.", "")
	f.Add("<", "citation>", "a < b")
	f.Add("a<cit", "</citation>", "<usage x")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if !answerText(a, false) || !answerText(b, false) || !answerText(c, true) {
			return
		}
		const usage = `<usage>{"X-Request-Requests":1}</usage>`
		text, cs, u := ParseAnswerText(a + cite1 + b + usage + c)
		want := a
		if a != "" && !strings.HasSuffix(a, " ") {
			want += " "
		}
		want += "[1]"
		if r, _ := utf8.DecodeRuneInString(b + usage); unicode.IsLetter(r) || unicode.IsDigit(r) {
			want += " "
		}
		want = strings.TrimSpace(want + b + c)
		if text != want || len(cs) != 1 || cs[0].Number != 1 || u["X-Request-Requests"] != 1 {
			t.Fatalf("ParseAnswerText(%q) = %q, %+v, %v; want %q, citation 1, usage", a+cite1+b+usage+c, text, cs, u, want)
		}
	})
}

// answerText reports whether s is text to ParseAnswerText wherever it
// stands: no tag, and, when last, no start of one at its very end.
func answerText(s string, last bool) bool {
	for _, tag := range []string{"<citation>", "<usage>"} {
		if strings.Contains(s, tag) {
			return false
		}
		for i := 1; last && i < len(tag); i++ {
			if strings.HasSuffix(s, tag[:i]) {
				return false
			}
		}
	}
	return true
}

// FuzzDecodeLocalAndContext: the place and LLM-context decoders yield a
// response or a typed error for any body.
func FuzzDecodeLocalAndContext(f *testing.F) {
	for _, b := range tooltest.Fixtures(f, "brave", "docs_example_local_*") {
		f.Add(b)
	}
	f.Add([]byte(llmContextBody))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, decode := range []func([]byte, string) error{
			func(b []byte, ct string) error { _, err := DecodeLocalPOIsResponse(b, ct); return err },
			func(b []byte, ct string) error { _, err := DecodeLocalDescriptionsResponse(b, ct); return err },
			func(b []byte, ct string) error { _, err := DecodeLLMContextResponse(b, ct); return err },
			func(b []byte, ct string) error { _, err := DecodeAnswerResponse(b, ct); return err },
		} {
			if err := decode(body, "application/json"); err != nil {
				var pe *ParseError
				var e *Error
				if !errors.As(err, &pe) && !errors.As(err, &e) {
					t.Fatalf("untyped error %T: %v", err, err)
				}
			}
		}
	})
}
