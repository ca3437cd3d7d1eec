package reccobeats

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Sentinels errors.Is matches.
var (
	// ErrNotFound: ReccoBeats does not know the track (a 404, or no search
	// row with the ISRC in [Client.FindByISRC]). A normal outcome: the
	// catalogue has gaps.
	ErrNotFound = errors.New("reccobeats: not found")
	// ErrRateLimited: 429; Error.RetryAfter says how long to wait, when
	// the server said. ReccoBeats publishes no limits.
	ErrRateLimited = errors.New("reccobeats: rate limited")
)

// Error is an error status from ReccoBeats.
type Error struct {
	StatusCode int // HTTP status
	// Message is the upstream explanation: the "message" (or "error") of a
	// JSON body, or the start of a plain-text one, clipped; "" when none.
	Message string
	// RetryAfter is the Retry-After header as a delay (at most a day); zero
	// when absent or unreadable.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return httpclient.ErrorText("reccobeats", e.StatusCode, "", e.Message)
}

// Is matches [ErrNotFound] for a 404 and [ErrRateLimited] for a 429.
func (e *Error) Is(target error) bool {
	return httpclient.StatusIs(e.StatusCode, target, ErrNotFound, ErrRateLimited)
}

// Temporary reports whether the same call may succeed later: a 429 or a
// 5xx other than 501.
func (e *Error) Temporary() bool { return httpclient.TemporaryStatus(e.StatusCode) }

// errorBody holds the fields an error body may explain itself with. No
// ReccoBeats error body has been recorded; these are the usual ones.
type errorBody struct {
	Message string `json:"message"`
	Error   string `json:"error"`
	Detail  string `json:"detail"`
}

// CheckResponse returns nil for a 2xx status and an [*Error] otherwise,
// read from the body and the Retry-After header; now is the time a
// Retry-After date is measured from.
func CheckResponse(resp *http.Response, body []byte, now time.Time) error {
	if httpclient.Success(resp.StatusCode) {
		return nil
	}
	e := &Error{
		StatusCode: resp.StatusCode,
		RetryAfter: httpclient.RetryAfterHeader(resp.Header, now, maxRetryAfter),
	}
	trimmed := bytes.TrimSpace(httpclient.TrimBOM(body))
	var eb errorBody
	switch {
	case len(trimmed) == 0:
	case trimmed[0] == '{':
		// A JSON object whose fields are not strings says nothing usable.
		if json.Unmarshal(trimmed, &eb) == nil {
			msg := eb.Message
			if msg == "" {
				msg = eb.Detail
			}
			if msg == "" {
				msg = eb.Error
			}
			e.Message = httpclient.OneLine(msg, maxDetail)
		}
	case trimmed[0] != '<' && trimmed[0] != '[':
		// Plain text; HTML (a proxy's page) and arrays are left out.
		e.Message = httpclient.OneLine(string(trimmed), maxDetail)
	}
	return e
}
