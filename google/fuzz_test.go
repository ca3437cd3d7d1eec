package google

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

func addFixtures(f *testing.F) {
	tooltest.Seed(f, "google", "*.json", "\xef\xbb\xbf{\"items\":[]}")
}

// FuzzDecodeSearchResponse: any body yields a response or a *ParseError.
func FuzzDecodeSearchResponse(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, func(body []byte) (*SearchResponse, error) {
		return DecodeSearchResponse(body, "application/json")
	}, nil)
}

// FuzzCheckResponse: any error body yields a bounded *Error.
func FuzzCheckResponse(f *testing.F) {
	addFixtures(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		h := http.Header{"Retry-After": {string(body[:min(len(body), 40)])}}
		err := CheckResponse(&http.Response{StatusCode: 403, Header: h}, body, time.Unix(0, 0))
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v", err)
		}
		if len(e.Message) > maxMessage+len("…") || len(e.Reasons) > maxReasons || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Fatalf("unbounded error: %+v", e)
		}
		e.QuotaExceeded()
		e.KeyInvalid()
		_ = e.Error()
	})
}
