package searxng

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/httpclient"
)

// maxMessage bounds the upstream text kept in an Error.
const maxMessage = 300

// maxRetryAfter bounds a parsed Retry-After.
const maxRetryAfter = time.Hour

// Error is an error status from the instance. SearXNG answers errors with
// a short text or HTML page, not JSON, so Message is that text (for a plain
// text body) with its whitespace collapsed, bounded.
type Error struct {
	StatusCode int
	Message    string
	RetryAfter time.Duration // the Retry-After header; zero when absent
}

func (e *Error) Error() string {
	s := fmt.Sprintf("searxng: HTTP %d", e.StatusCode)
	if e.FormatDisabled() {
		s += " (the instance does not serve format=json: add json to search.formats in its settings.yml)"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// FormatDisabled reports the 403 SearXNG sends for format=json when
// search.formats in settings.yml does not list json (its default).
func (e *Error) FormatDisabled() bool { return e.StatusCode == http.StatusForbidden }

// RateLimited reports a 429: SearXNG's limiter (or a proxy in front) refused
// this client.
func (e *Error) RateLimited() bool { return e.StatusCode == http.StatusTooManyRequests }

// CheckResponse returns nil for a 2xx status and an [*Error] otherwise. now is
// the time a Retry-After date is measured from.
func CheckResponse(resp *http.Response, body []byte, now time.Time) error {
	if httpclient.Success(resp.StatusCode) {
		return nil
	}
	e := &Error{StatusCode: resp.StatusCode, RetryAfter: httpclient.RetryAfterHeader(resp.Header, now, maxRetryAfter)}
	// Only a text body is kept: an HTML error page would put markup in the
	// message an agent reads.
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && mt == "text/plain" && utf8.Valid(body) {
		e.Message = httpclient.Clip(strings.Join(strings.Fields(string(body)), " "), maxMessage)
	}
	return e
}
