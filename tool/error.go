package tool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Code is a machine-readable failure class. The set is closed: agents and hosts
// branch on these values.
type Code string

// The failure codes of the tool contract.
const (
	CodeValidation   Code = "VALIDATION"    // the arguments break the input schema
	CodeAuthMissing  Code = "AUTH_MISSING"  // credentials are not configured
	CodeAuthInvalid  Code = "AUTH_INVALID"  // the upstream rejected the credentials
	CodeRateLimit    Code = "RATE_LIMIT"    // quota or rate limit reached upstream
	CodeNetwork      Code = "NETWORK_ERROR" // connection failed or was reset
	CodeHTTP         Code = "HTTP_ERROR"    // the upstream answered with an HTTP error status
	CodeAPI          Code = "API_ERROR"     // the upstream API reported an error
	CodeParse        Code = "PARSE_ERROR"   // the upstream body could not be understood
	CodeInvalidURL   Code = "INVALID_URL"   // a URL argument is malformed or not allowed
	CodeNotFound     Code = "NOT_FOUND"     // the requested thing does not exist
	CodeTimeout      Code = "TIMEOUT"       // the call or the upstream took too long
	CodeBlocked      Code = "BLOCKED"       // refused by policy or by an anti-bot wall
	CodeCanceled     Code = "CANCELED"      // the caller went away
	CodeInternal     Code = "INTERNAL"      // a bug in Toolport; the message says where
	CodeUnsupported  Code = "UNSUPPORTED"   // the request is valid but cannot be served (e.g. a PDF)
	CodeUnknownTool  Code = "UNKNOWN_TOOL"  // no tool by that name
	CodeConfig       Code = "CONFIG_ERROR"  // Toolport itself is misconfigured
	CodeUpstreamGone Code = "UPSTREAM_GONE" // the upstream API has been shut down
	// CodeRobotsDisallowed: the site's robots.txt forbids the fetch, or could
	// not be read (RFC 9309 then forbids everything). Not retryable.
	CodeRobotsDisallowed Code = "ROBOTS_DISALLOWED"
	// CodePDFEncrypted: the PDF needs a password to be read. Not retryable.
	CodePDFEncrypted Code = "PDF_ENCRYPTED"
	// CodePDFNoText: the PDF has no text layer (a scan). Not retryable.
	CodePDFNoText Code = "PDF_NO_TEXT"
	// CodeResultTooLarge: the tool's output is larger than the registry
	// passes on (WithMaxOutputBytes). Not retryable: the same call makes the
	// same output; a narrower one may fit.
	CodeResultTooLarge Code = "RESULT_TOO_LARGE"
)

// Error is a tool failure. It is what a tool handler returns (directly or wrapped)
// to fail in a way agents can act on. Handlers that return any other error get
// CodeInternal, or a code inferred by [Classify] for network and context errors.
type Error struct {
	Code    Code
	Message string // human-readable; must never contain a secret

	// Retryable says whether the same call may succeed later. The registry retries
	// a retryable failure once, and reports the flag to the agent either way.
	Retryable bool
	// RetryAfter is the upstream's hint (Retry-After) for a retryable failure.
	// Zero means "use the default delay"; a hint longer than the registry's
	// limit means "do not retry now".
	RetryAfter time.Duration
	// Status is the upstream HTTP status, when there was one.
	Status int
	// Violations lists the schema rules the arguments broke (CodeValidation),
	// at most MaxViolations of them; MoreViolations counts the others.
	Violations     []Violation
	MoreViolations int
	// Event, when set, is a host-facing notice (for example ikigai's
	// config_required) that surfaces print beside the result.
	Event *Event
	// Err is the underlying cause, kept for errors.Is/As and logs. It is not shown
	// to agents: its text may hold URLs with secrets.
	Err error
}

// Event is a notice for the human operating the host, not for the model.
type Event struct {
	Kind     string `json:"kind"`
	Content  string `json:"content"`
	DataJSON string `json:"data_json,omitempty"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message. A %w verb
// in format is honoured: the wrapped error becomes Err.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Retryable: code.retryableByDefault(), Err: errors.Unwrap(err)}
}

// retryableByDefault reports whether failures of this class are usually transient.
func (c Code) retryableByDefault() bool {
	switch c {
	case CodeNetwork, CodeTimeout, CodeRateLimit:
		return true
	}
	return false
}

// HTTPStatusError classifies an upstream HTTP error status: 429 is RATE_LIMIT,
// 502/503/504 are transient HTTP_ERRORs, 401/403 are AUTH_INVALID, 404 is
// NOT_FOUND, and anything else is HTTP_ERROR. retryAfter is the parsed
// Retry-After header, or zero.
func HTTPStatusError(status int, retryAfter time.Duration, message string) *Error {
	e := &Error{Code: CodeHTTP, Status: status, Message: message, RetryAfter: retryAfter}
	switch {
	case status == http.StatusTooManyRequests:
		e.Code, e.Retryable = CodeRateLimit, true
	case status == http.StatusBadGateway, status == http.StatusServiceUnavailable, status == http.StatusGatewayTimeout:
		e.Retryable = true
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		e.Code = CodeAuthInvalid
	case status == http.StatusNotFound:
		e.Code = CodeNotFound
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("HTTP %d: %s", status, http.StatusText(status))
	}
	return e
}

// Classify turns any error into an *Error. An *Error anywhere in the chain wins;
// context cancellation, deadlines and network errors get their own codes; the rest
// is CodeInternal. The returned message for unclassified errors is generic, since
// their text may carry URLs or other details that must not reach an agent.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeCanceled, Message: "the call was canceled", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Message: "the call timed out", Retryable: true, Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return &Error{Code: CodeTimeout, Message: "the upstream timed out", Retryable: true, Err: err}
		}
		return &Error{Code: CodeNetwork, Message: "network error: " + netMessage(err), Retryable: true, Err: err}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// netMessage describes a network error without the URL that net/http's *url.Error
// puts in front of it (it may hold an API key in its query).
func netMessage(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	return err.Error()
}

// ParseRetryAfter reads an HTTP Retry-After header (delay-seconds or an
// HTTP-date) relative to now, at most a year. It returns zero when the
// header is absent or unreadable. It is [httpclient.RetryAfterHeader], the
// one parser of the header in Toolport.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	return httpclient.RetryAfterHeader(h, now, 365*24*time.Hour)
}
