package google

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// maxMessage bounds the upstream text kept in an Error.
const maxMessage = 500

// Error is an error answer from Google:
// {"error":{"code":429,"message":"…","errors":[{"domain","reason","message"}],"status":"RESOURCE_EXHAUSTED"}}.
type Error struct {
	StatusCode int    // HTTP status
	Status     string // the canonical status, e.g. RESOURCE_EXHAUSTED; absent in old answers
	Message    string // bounded; never holds the key
	// Reasons are the reason codes of "errors" and of ErrorInfo "details",
	// e.g. dailyLimitExceeded, rateLimitExceeded, keyInvalid, API_KEY_INVALID.
	Reasons    []string
	RetryAfter time.Duration // the Retry-After header; zero when absent
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "google: HTTP %d", e.StatusCode)
	if e.Status != "" {
		b.WriteString(" " + e.Status)
	}
	if len(e.Reasons) > 0 {
		b.WriteString(" (" + strings.Join(e.Reasons, ", ") + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

func (e *Error) hasReason(reasons ...string) bool {
	for _, r := range e.Reasons {
		for _, want := range reasons {
			if strings.EqualFold(r, want) {
				return true
			}
		}
	}
	return false
}

// QuotaExceeded reports a quota or rate-limit failure: today a 429
// RESOURCE_EXHAUSTED, formerly a 403 dailyLimitExceeded.
func (e *Error) QuotaExceeded() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.Status == "RESOURCE_EXHAUSTED" ||
		e.hasReason("dailyLimitExceeded", "dailyLimitExceededUnreg", "rateLimitExceeded",
			"userRateLimitExceeded", "quotaExceeded", "RATE_LIMIT_EXCEEDED")
}

// DailyQuota reports a quota that resets daily, which a short wait cannot fix.
func (e *Error) DailyQuota() bool {
	return e.hasReason("dailyLimitExceeded", "dailyLimitExceededUnreg") ||
		strings.Contains(strings.ToLower(e.Message), "per day")
}

// KeyInvalid reports a key the API does not accept.
func (e *Error) KeyInvalid() bool {
	return e.StatusCode == http.StatusUnauthorized || e.Status == "UNAUTHENTICATED" ||
		e.hasReason("keyInvalid", "API_KEY_INVALID", "keyExpired", "API_KEY_EXPIRED") ||
		strings.Contains(e.Message, "API key not valid")
}

// scrub passes the upstream's text through scrub (the core's, which puts
// [httpclient.Redacted] where the key was): Google echoes a bad key back.
func (e *Error) scrub(scrub func(string) string) {
	e.Message = scrub(e.Message)
	for i, r := range e.Reasons {
		e.Reasons[i] = scrub(r)
	}
}

type errorBody struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Errors  []struct {
			Reason string `json:"reason"`
		} `json:"errors"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

// maxReasons bounds how many reasons are kept.
const maxReasons = 8

func (e *Error) fill(body []byte) {
	body = httpclient.TrimBOM(body)
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil || eb.Error == nil {
		return
	}
	e.Status = httpclient.Clip(strings.TrimSpace(eb.Error.Status), 100)
	e.Message = httpclient.Clip(strings.TrimSpace(eb.Error.Message), maxMessage)
	add := func(r string) {
		r = httpclient.Clip(strings.TrimSpace(r), 100)
		if r != "" && len(e.Reasons) < maxReasons && !e.hasReason(r) {
			e.Reasons = append(e.Reasons, r)
		}
	}
	for _, x := range eb.Error.Errors {
		add(x.Reason)
	}
	for _, x := range eb.Error.Details {
		add(x.Reason)
	}
}

// CheckResponse returns nil for a 2xx status and an [*Error] otherwise. now is
// the time a Retry-After date is measured from.
func CheckResponse(resp *http.Response, body []byte, now time.Time) error {
	if httpclient.Success(resp.StatusCode) {
		return nil
	}
	e := &Error{StatusCode: resp.StatusCode}
	e.fill(body)
	e.RetryAfter = httpclient.RetryAfterHeader(resp.Header, now, maxRetryAfter)
	return e
}

// maxRetryAfter bounds a parsed Retry-After.
const maxRetryAfter = 48 * time.Hour
