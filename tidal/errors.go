package tidal

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Kinds of failure. Every error the client returns is an [*Error] that
// matches exactly one of them with errors.Is; an API error status matches
// the kind its status implies (401 and 403 ErrAuthInvalid, 404 ErrNotFound,
// 429 ErrRateLimited, any other ErrStatus).
var (
	// ErrAuthMissing: no client ID or secret is configured. No request was sent.
	ErrAuthMissing = errors.New("tidal: client credentials are not configured")
	// ErrAuthInvalid: the token endpoint refused the client credentials, or
	// the API refused a fresh token.
	ErrAuthInvalid = errors.New("tidal: credentials refused")
	// ErrNotFound: the resource does not exist (in the configured country).
	ErrNotFound = errors.New("tidal: not found")
	// ErrRateLimited: TIDAL answered 429, or the client's own bucket holds
	// the request back; Error.RetryAfter says for how long.
	ErrRateLimited = errors.New("tidal: rate limited")
	// ErrStatus: another error status.
	ErrStatus = errors.New("tidal: error status")
	// ErrInvalidInput: an argument cannot be sent (an empty query, an id
	// that is not a TIDAL id). No request was sent.
	ErrInvalidInput = errors.New("tidal: invalid input")
	// ErrConfig: a base or auth URL is unusable ([NewClient] only).
	ErrConfig = errors.New("tidal: invalid configuration")
	// ErrMalformed: an answer the client cannot read: not JSON:API, too
	// large, a resource of the wrong shape, a pagination link that leaves
	// the API, a token answer without a token.
	ErrMalformed = errors.New("tidal: malformed response")
	// ErrNetwork: no answer: a transport failure, or the context ended
	// (errors.Is also matches context.Canceled or DeadlineExceeded then).
	ErrNetwork = errors.New("tidal: no response")
)

// Error is a failure of a TIDAL call. Its message never holds the client
// secret or a token.
type Error struct {
	// Kind is the sentinel the error matches: ErrNotFound, ErrStatus, …
	Kind error
	// Message says what failed, for people and agents, without the "tidal:"
	// prefix: e.g. "TIDAL API: HTTP 404: NOT_FOUND: Artist … not found".
	Message string
	// StatusCode is the HTTP status of an error answer; 0 when there was none.
	StatusCode int
	// Code, Category, Detail and Parameter come from TIDAL's JSON:API error
	// object (code, meta.category, detail, source.parameter), clipped; for the
	// token endpoint, Code is the OAuth2 "error" and Detail its description.
	Code, Category, Detail, Parameter string
	// Auth is set when the failure came from the token endpoint.
	Auth bool
	// RetryAfter is how long to wait before trying again, for ErrRateLimited.
	// TIDAL sends no Retry-After: it comes from the client's token bucket,
	// which follows TIDAL's x-ratelimit-* headers.
	RetryAfter time.Duration
	// Err is the underlying error (a transport or decoding error), if any.
	Err error
}

func (e *Error) Error() string { return "tidal: " + e.Message }

func (e *Error) Unwrap() error { return e.Err }

// Is matches e's kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.Kind }

// Temporary reports whether the same call may succeed later: a rate limit,
// a 502, 503 or 504, or a transport failure other than the caller's own
// cancellation or deadline.
func (e *Error) Temporary() bool {
	switch e.Kind {
	case ErrRateLimited:
		return true
	case ErrStatus:
		return e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusServiceUnavailable ||
			e.StatusCode == http.StatusGatewayTimeout
	case ErrNetwork:
		return !errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded)
	}
	return false
}

// statusKind is the kind an error status implies.
func statusKind(status int) error {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrAuthInvalid
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusTooManyRequests:
		return ErrRateLimited
	}
	return ErrStatus
}

// newError returns an *Error of kind with a message.
func newError(kind error, message string) *Error { return &Error{Kind: kind, Message: message} }

// malformed reports an answer the client cannot read.
func malformed(message string, status int, err error) *Error {
	return &Error{Kind: ErrMalformed, Message: message, StatusCode: status, Err: err}
}

// networkError reports a request that got no answer; what names the
// endpoint ("TIDAL", "TIDAL auth"). Err keeps the cause, whose text may
// include the URL: callers show Message.
func networkError(what string, err error) *Error {
	msg := what + ": connection failed"
	switch {
	case errors.Is(err, context.Canceled):
		msg = what + ": the request was canceled"
	case errors.Is(err, context.DeadlineExceeded):
		msg = what + ": the request timed out"
	}
	return &Error{Kind: ErrNetwork, Message: msg, Err: err}
}

// contextError reports the caller's context ending between requests.
func contextError(err error) *Error { return networkError("TIDAL", err) }
