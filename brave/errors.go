package brave

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Upstream error codes Toolport distinguishes.
const (
	CodeTokenInvalid         = "SUBSCRIPTION_TOKEN_INVALID" // bad or missing key: 422, not 401
	CodeSubscriptionNotFound = "SUBSCRIPTION_NOT_FOUND"
	CodeRateLimited          = "RATE_LIMITED"  // the per-second limit
	CodeQuotaLimited         = "QUOTA_LIMITED" // the monthly quota
	CodeValidation           = "VALIDATION"
	CodeOptionNotInPlan      = "OPTION_NOT_IN_PLAN" // the key's plan lacks the endpoint or option (HTTP 400)
)

// maxDetail bounds the upstream text kept in an Error.
const maxDetail = 500

// Error is an error answer from Brave.
type Error struct {
	StatusCode int    // HTTP status
	Code       string // Brave's code, e.g. SUBSCRIPTION_TOKEN_INVALID; "" if the body had none
	Detail     string // Brave's human-readable detail (bounded; never holds the token)
	// RetryAfter is when a retry may succeed: the Retry-After header, else the
	// reset of the rate-limit window that ran out. Zero when unknown.
	RetryAfter time.Duration
	RateLimit  RateLimit
}

func (e *Error) Error() string { return httpclient.ErrorText("brave", e.StatusCode, e.Code, e.Detail) }

// QuotaExceeded reports whether the monthly quota ran out, as opposed to the
// per-second rate: waiting a second will not help.
func (e *Error) QuotaExceeded() bool {
	if e.Code == CodeQuotaLimited {
		return true
	}
	if e.Code == CodeRateLimited {
		return false
	}
	w, ok := e.RateLimit.Longest()
	return e.StatusCode == http.StatusTooManyRequests && ok && w.Remaining == 0 && len(e.RateLimit.Windows) > 1
}

// apiError is one entry of a Brave error body. Live answers carry one as
// "error"; the API reference shows an "errors" array.
type apiError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

type errorBody struct {
	Error  *apiError  `json:"error"`
	Errors []apiError `json:"errors"`
}

// fill reads the code and detail from an error body, when it has them.
func (e *Error) fill(body []byte) {
	body = httpclient.TrimBOM(body)
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil {
		return
	}
	a := eb.Error
	if a == nil && len(eb.Errors) > 0 {
		a = &eb.Errors[0]
	}
	if a == nil {
		return
	}
	e.Code = httpclient.Clip(strings.TrimSpace(a.Code), 100)
	e.Detail = httpclient.Clip(strings.TrimSpace(a.Detail), maxDetail)
}

// CheckResponse returns nil for a 2xx status and an [*Error] otherwise, read
// from the body, the Retry-After header and the X-RateLimit-* headers. now is
// the time Retry-After dates are measured from.
func CheckResponse(resp *http.Response, body []byte, now time.Time) error {
	if httpclient.Success(resp.StatusCode) {
		return nil
	}
	e := &Error{StatusCode: resp.StatusCode, RateLimit: ParseRateLimit(resp.Header)}
	e.fill(body)
	e.RetryAfter = httpclient.RetryAfterHeader(resp.Header, now, maxReset)
	if e.RetryAfter == 0 && resp.StatusCode == http.StatusTooManyRequests {
		var w RateWindow
		var ok bool
		if e.QuotaExceeded() {
			w, ok = e.RateLimit.Longest()
		} else {
			w, ok = e.RateLimit.Shortest()
		}
		if ok {
			e.RetryAfter = w.Reset
		}
	}
	return e
}

// maxReset bounds parsed delays: no window is longer than a year.
const maxReset = 366 * 24 * time.Hour

func clampSeconds(secs int64) time.Duration {
	if secs <= 0 {
		return 0
	}
	if secs > int64(maxReset/time.Second) {
		return maxReset
	}
	return time.Duration(secs) * time.Second
}

// RateLimit is the subscription's state as reported by the X-RateLimit-*
// headers: one window per policy, shortest first on current plans (per
// second, then per month).
type RateLimit struct {
	Windows []RateWindow
}

// RateWindow is one rate-limit window.
type RateWindow struct {
	Limit     int           // requests allowed in the window
	Remaining int           // requests left in the window
	Reset     time.Duration // until the window resets
	Window    time.Duration // the window's length (X-RateLimit-Policy "w="); 0 if not sent
}

// maxWindows bounds header parsing.
const maxWindows = 8

// ParseRateLimit reads X-RateLimit-Limit, -Remaining, -Reset and -Policy,
// e.g. "1, 2000", "0, 1977", "1, 389223", "1;w=1, 2000;w=2592000". Headers that
// are missing, malformed or of different lengths yield no windows.
func ParseRateLimit(h http.Header) RateLimit {
	limit := intList(h.Get("X-RateLimit-Limit"))
	remaining := intList(h.Get("X-RateLimit-Remaining"))
	reset := intList(h.Get("X-RateLimit-Reset"))
	n := len(limit)
	if n == 0 || len(remaining) != n || len(reset) != n {
		return RateLimit{}
	}
	windows := policyWindows(h.Get("X-RateLimit-Policy"))
	rl := RateLimit{Windows: make([]RateWindow, n)}
	for i := range n {
		w := RateWindow{Limit: int(limit[i]), Remaining: int(remaining[i]), Reset: clampSeconds(reset[i])}
		if len(windows) == n {
			w.Window = windows[i]
		}
		rl.Windows[i] = w
	}
	return rl
}

// Shortest returns the window with the shortest period (the per-second one).
// Without a policy header it is the first, as Brave lists them shortest first.
func (r RateLimit) Shortest() (RateWindow, bool) {
	if len(r.Windows) == 0 {
		return RateWindow{}, false
	}
	best := r.Windows[0]
	for _, w := range r.Windows[1:] {
		if w.Window > 0 && best.Window > 0 && w.Window < best.Window {
			best = w
		}
	}
	return best, true
}

// Longest returns the window with the longest period (the monthly quota).
func (r RateLimit) Longest() (RateWindow, bool) {
	if len(r.Windows) == 0 {
		return RateWindow{}, false
	}
	best := r.Windows[len(r.Windows)-1]
	for _, w := range r.Windows {
		if w.Window > 0 && best.Window > 0 && w.Window > best.Window {
			best = w
		}
	}
	return best, true
}

func intList(s string) []int64 {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxWindows {
		return nil
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 || v > 1<<40 {
			return nil
		}
		out[i] = v
	}
	return out
}

// policyWindows reads the "w=" of each policy in "1;w=1, 2000;w=2592000".
func policyWindows(s string) []time.Duration {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxWindows {
		return nil
	}
	out := make([]time.Duration, len(parts))
	for i, p := range parts {
		for param := range strings.SplitSeq(p, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(param), "=")
			if ok && k == "w" {
				secs, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil
				}
				out[i] = clampSeconds(secs)
			}
		}
	}
	return out
}
