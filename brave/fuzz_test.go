package brave

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

func addFixtures(f *testing.F) {
	tooltest.Seed(f, "brave", "*.json", "\xef\xbb\xbf{}", `{"type":"ErrorResponse","error":{"code":"X","detail":"y"}}`,
		blocksBody) // CONSTRUCTED: every optional block
}

// FuzzDecodeSearchResponse: any body yields a response or a typed error, never
// a panic.
func FuzzDecodeSearchResponse(f *testing.F) {
	addFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		sr, err := DecodeSearchResponse(body, "application/json")
		if err != nil {
			var pe *ParseError
			var e *Error
			if !errors.As(err, &pe) && !errors.As(err, &e) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		for _, r := range sr.Results() {
			PlainText(r.Title)
			PlainText(r.Description)
		}
	})
}

// FuzzCheckResponse: any error body and rate-limit headers yield a bounded
// *Error.
func FuzzCheckResponse(f *testing.F) {
	addFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		// The body's first line doubles as header values, to fuzz both.
		line, _, _ := bytes.Cut(body, []byte("\n"))
		h := http.Header{}
		for _, k := range []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Policy", "Retry-After"} {
			h.Set(k, string(line))
		}
		err := CheckResponse(&http.Response{StatusCode: 429, Header: h}, body, time.Unix(0, 0))
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v", err)
		}
		if len(e.Detail) > maxDetail+len("…") || len(e.RateLimit.Windows) > maxWindows || e.RetryAfter < 0 || e.RetryAfter > maxReset {
			t.Fatalf("unbounded error: %+v", e)
		}
		e.QuotaExceeded()
		_ = e.Error()
	})
}

// FuzzPlainText: the output never keeps a tag that was in the input as markup.
func FuzzPlainText(f *testing.F) {
	f.Add("Semantic Kernel <strong>combines</strong> the model&#x27;s")
	f.Add("<<strong>>&amp;lt;")
	f.Fuzz(func(t *testing.T, s string) {
		out := PlainText(s)
		if strings.Contains(s, "<strong>") && !strings.Contains(s, "&") && strings.Contains(out, "<strong>") {
			t.Fatalf("PlainText(%q) = %q keeps a tag", s, out)
		}
	})
}

// FuzzDecodeMediaResponses: any body yields a news, image or video response
// or a typed error, never a panic.
func FuzzDecodeMediaResponses(f *testing.F) {
	addFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(err error) {
			var pe *ParseError
			var e *Error
			if err != nil && !errors.As(err, &pe) && !errors.As(err, &e) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		}
		if r, err := DecodeNewsResponse(body, "application/json"); err == nil {
			for _, x := range r.Results {
				PlainText(x.Title)
				PlainText(x.Description)
			}
		} else {
			check(err)
		}
		_, err := DecodeImageResponse(body, "application/json")
		check(err)
		_, err = DecodeVideoResponse(body, "application/json")
		check(err)
	})
}
