package lrclib

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Sentinels an [*Error] matches with errors.Is, by status.
var (
	// ErrNotFound: LRCLIB has no such track (404, name "TrackNotFound").
	// For an ingestion pipeline this is a normal outcome: the track has no
	// lyrics in LRCLIB.
	ErrNotFound = errors.New("lrclib: track not found")
	// ErrRateLimited: 429; Error.RetryAfter says how long to wait, when
	// the server said.
	ErrRateLimited = errors.New("lrclib: rate limited")
)

// Error names LRCLIB's error names.
const (
	NameTrackNotFound   = "TrackNotFound"   // 404
	NameValidationError = "ValidationError" // 400
	NameUnknownError    = "UnknownError"    // 500
)

// Error is an error status from LRCLIB.
type Error struct {
	StatusCode int    // HTTP status
	Name       string // LRCLIB's error name, e.g. TrackNotFound; "" when the body had none
	// Message is LRCLIB's message, or the start of a plain-text body (a
	// missing parameter gets a plain-text 400), clipped.
	Message string
	// RetryAfter is the Retry-After header as a delay (at most a day); zero
	// when absent or unreadable.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return httpclient.ErrorText("lrclib", e.StatusCode, e.Name, e.Message)
}

// Is matches [ErrNotFound] for a 404 and [ErrRateLimited] for a 429.
func (e *Error) Is(target error) bool {
	return httpclient.StatusIs(e.StatusCode, target, ErrNotFound, ErrRateLimited)
}

// Temporary reports whether the same call may succeed later: a 429 or a
// 5xx other than 501.
func (e *Error) Temporary() bool { return httpclient.TemporaryStatus(e.StatusCode) }

// errorBody is LRCLIB's error shape, {"message","name","statusCode"}. The
// docs show "code" where the live API sends "statusCode"; both only repeat
// the HTTP status, which is what the client goes by, so neither is read.
type errorBody struct {
	Message string `json:"message"`
	Name    string `json:"name"`
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
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &eb) == nil {
		e.Name = httpclient.Clip(strings.TrimSpace(eb.Name), 100)
		e.Message = httpclient.Clip(strings.TrimSpace(eb.Message), maxDetail)
	} else if len(trimmed) > 0 && !bytes.HasPrefix(trimmed, []byte("<")) {
		// Plain text, such as the 400 for a missing parameter; HTML (a
		// proxy's error page) says nothing useful and is left out.
		e.Message = httpclient.OneLine(string(trimmed), maxDetail)
	}
	return e
}
