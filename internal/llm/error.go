package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/tool"
)

// Code classifies a model failure.
type Code string

// Failure codes. The server passes them on in its error events.
const (
	CodeNotConfigured  Code = "not_configured"  // no model set up; see ErrNoModel
	CodeAuth           Code = "auth"            // key missing, invalid or not allowed (401, 403)
	CodeRateLimit      Code = "rate_limit"      // 429
	CodeOverloaded     Code = "overloaded"      // 529, 503: the provider is busy
	CodeServer         Code = "server_error"    // 500, 502, 504 and other 5xx
	CodeInvalidRequest Code = "invalid_request" // 400, 404, 413, 422…: retrying will not help
	CodeNetwork        Code = "network"         // connection failed or dropped
	CodeTimeout        Code = "timeout"         // no data for Options.IdleTimeout
	CodeCanceled       Code = "canceled"        // the caller's context ended
	CodeBadResponse    Code = "bad_response"    // a response that cannot be understood
)

// Error is a failed model call. Message is safe to show to users and to log:
// it never contains API keys, headers, or a URL's user info or query (a
// server that cannot be reached is named by scheme, host and path).
type Error struct {
	Code       Code
	Message    string
	Retryable  bool
	RetryAfter time.Duration // the server's Retry-After, if it sent one
	Status     int           // HTTP status, 0 when there was no HTTP answer
	Provider   string        // "anthropic", "openai", "scripted"
	// URL is the model server's address the call failed on (scheme, host
	// and path: never user info or query, which may hold keys); "" when
	// unknown. The message of a server that cannot be reached names it.
	URL string
	// Err is the underlying error, for errors.Is/As; not shown by Error.
	Err error
}

func (e *Error) Error() string {
	if e.Provider == "" {
		return "llm: " + e.Message
	}
	return "llm: " + e.Provider + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoModel is returned by [FromConfig] when no model is configured. The
// server reports it as an error event; its message says how to fix it.
var ErrNoModel = &Error{
	Code: CodeNotConfigured,
	Message: "no model configured: set TOOLPORT_MODEL to provider:model, e.g. " +
		"TOOLPORT_MODEL=anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY, " +
		"TOOLPORT_MODEL=openai:gpt-4.1 with OPENAI_API_KEY, or " +
		"TOOLPORT_MODEL=openai:qwen2.5@http://127.0.0.1:11434/v1 for a local OpenAI-compatible server " +
		"(keys may also go in the credentials file under llm.anthropic.api_key / llm.openai.api_key)",
}

// maxMessage bounds the part of an upstream error message that is kept.
const maxMessage = 300

// timeoutCause is the cause of a request's context canceled by the
// provider's watchdog: the response headers (firstByte) or more of the
// response did not come within after.
type timeoutCause struct {
	firstByte bool
	after     time.Duration
}

func (e *timeoutCause) Error() string {
	if e.firstByte {
		return fmt.Sprintf("llm: no response headers from the model server within %s", e.after)
	}
	return fmt.Sprintf("llm: no data from the model server for %s", e.after)
}

// classifyStatus turns an HTTP error answer into an *Error. upstream is the
// provider's own error message (may be empty), errType its error type.
func classifyStatus(provider string, status int, header http.Header, errType, upstream string, secrets []string, cause error) *Error {
	e := &Error{Provider: provider, Status: status, Err: cause}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		errType == "authentication_error" || errType == "permission_error":
		e.Code = CodeAuth
		// Upstream auth messages may echo part of the key: keep only our own.
		e.Message = fmt.Sprintf("authentication failed (HTTP %d): check the %s API key", status, provider)
		return e
	case status == http.StatusTooManyRequests || errType == "rate_limit_error":
		e.Code, e.Retryable = CodeRateLimit, true
		e.Message = "rate limit exceeded"
	case status == 529 || status == http.StatusServiceUnavailable || errType == "overloaded_error":
		e.Code, e.Retryable = CodeOverloaded, true
		e.Message = "the model server is overloaded"
	case status == http.StatusRequestTimeout || errType == "timeout_error":
		e.Code, e.Retryable = CodeTimeout, true
		e.Message = "the model server timed out"
	case status >= 500 || errType == "api_error" || (status == 0 && !invalidRequestType(errType)):
		// Status 0 is an error reported inside a started stream: unless it
		// says the request was at fault, the server failed mid-answer.
		e.Code, e.Retryable = CodeServer, true
		e.Message = "the model server failed"
	default:
		e.Code = CodeInvalidRequest
		e.Message = "the model server rejected the request"
	}
	if status != 0 {
		e.Message += fmt.Sprintf(" (HTTP %d)", status)
	}
	if m := cleanMessage(upstream, secrets); m != "" {
		e.Message += ": " + m
	}
	if header != nil {
		e.RetryAfter = retryAfter(header)
	}
	return e
}

func invalidRequestType(t string) bool {
	switch t {
	case "invalid_request_error", "not_found_error", "request_too_large", "invalid_request":
		return true
	}
	return false
}

// retryAfter reads retry-after-ms (OpenAI, Anthropic) or Retry-After.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		var ms float64
		if _, err := fmt.Sscanf(v, "%g", &ms); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return tool.ParseRetryAfter(h, time.Now())
}

// cleanMessage makes an upstream message safe to show: secrets removed,
// control characters dropped, length bounded.
func cleanMessage(s string, secrets []string) string {
	if len(secrets) > 0 { // the one scrubber: every form of a key, one marker
		s = record.NewScrubber(secrets...).String(s)
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	s = strings.TrimSpace(s)
	s = httpclient.Clip(s, maxMessage)
	return s
}

// apiErrorBody is the error envelope both APIs use:
// {"error":{"type":"…","message":"…","code":…}}. OpenAI-compatible servers
// sometimes send {"error":"message"} or {"message":"…"}.
type apiErrorBody struct {
	Type    string
	Message string
}

func parseErrorBody(body []byte) apiErrorBody {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return apiErrorBody{}
	}
	var out apiErrorBody
	var inner struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(env.Error, &inner) == nil:
		out.Type, out.Message = inner.Type, inner.Message
	case json.Unmarshal(env.Error, &s) == nil:
		out.Message = s
	}
	if out.Message == "" {
		out.Message = env.Message
	}
	return out
}

// classifyTransport turns an error that has no HTTP answer (a failed
// connection, a canceled context, a broken or malformed stream) into an *Error.
// ctx is the request's context, whose cause tells a watchdog timeout from the
// caller's cancellation.
func classifyTransport(ctx context.Context, provider string, err error) *Error {
	var le *Error
	if errors.As(err, &le) {
		return le
	}
	e := &Error{Provider: provider, Err: err}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ne net.Error
	var te *timeoutCause
	switch {
	case ctx != nil && errors.As(context.Cause(ctx), &te):
		e.Code, e.Retryable = CodeTimeout, true
		if te.firstByte {
			e.Message = fmt.Sprintf("the model server did not answer within %s (first-byte timeout, TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT)", te.after)
		} else {
			e.Message = fmt.Sprintf("the model server stopped sending data for %s (idle timeout, TOOLPORT_MODEL_IDLE_TIMEOUT)", te.after)
		}
	case ctx != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		e.Code, e.Retryable = CodeTimeout, true
		e.Message = "the model call ran out of time"
	case ctx != nil && ctx.Err() != nil:
		e.Code = CodeCanceled
		e.Message = "the model call was canceled"
	case errors.As(err, &syn) || errors.As(err, &typ):
		e.Code = CodeBadResponse
		e.Message = "the model server sent a malformed stream event"
	case errors.As(err, &ne) && ne.Timeout():
		e.Code, e.Retryable = CodeTimeout, true
		e.Message = "the model server timed out"
	default:
		// Connection refused, reset, unexpected EOF, TLS failures… The
		// transport's text may carry credentials, so it stays in Err only;
		// the URL is named without them, so a person sees which server.
		e.Code, e.Retryable = CodeNetwork, true
		e.Message = "could not reach the model server or the connection dropped"
		if where := safeURL(err); where != "" {
			e.URL = where
			e.Message += " (" + where + ")"
		}
	}
	return e
}

// safeURL is the URL of the request err failed on, without user info, query
// or fragment (which may hold keys), or "" when err names none.
func safeURL(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return ""
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// at records the model server a refused request went to, so that a person
// (and the log) can tell a wrong base URL from a failing server. The
// message leaves it out: the chat agent adds it where a person reads it.
func (e *Error) at(req *http.Request) *Error {
	if req == nil || req.URL == nil || req.URL.Host == "" || e.URL != "" {
		return e
	}
	u := req.URL
	e.URL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	return e
}
