// Package httpclient holds the plumbing Toolport's clients of HTTP APIs
// share, so that each gets it right once: connection pools sized for a
// server's concurrency ([NewTransport]), checking a configured base URL and
// appending paths to it, reading a response body under a size cap, parsing
// Retry-After, refusing redirects, and clipping upstream text for error
// messages without splitting a character.
//
// [Core] is the client core the public API clients (brave, google, searxng,
// ckan, tidal, lrclib, reccobeats) share, go-github style: it holds the base
// URL, User-Agent, static headers and body cap, builds requests, sends them,
// reads the capped body and hands it to the client's own CheckResponse, which
// builds the client's typed error; secrets are scrubbed with one marker,
// [Redacted]. Each client keeps its own options, typed requests and errors
// (its public surface), and [Build] and [GetDecoded] spare it the rest.
// Retry-After is parsed here once ([RetryAfter]), and [SleepCtx] is the one
// context-aware sleep.
//
// The package is internal so that the core's shape can change without
// breaking importers of the clients; docs/decisions.md says what the clients
// keep public.
package httpclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
)

// ErrBaseURL is wrapped by every error of [ParseBaseURL]. Test with errors.Is.
var ErrBaseURL = errors.New("invalid base URL")

// BaseURLError reports a base URL that [ParseBaseURL] refused. Its text is
// the reason alone, so that a client can put its own name in front of it.
type BaseURLError struct {
	Reason string // e.g. "scheme must be http or https, got \"ftp\""
}

func (e *BaseURLError) Error() string        { return e.Reason }
func (e *BaseURLError) Is(target error) bool { return target == ErrBaseURL }

// ParseBaseURL checks raw, the root of an HTTP API as an operator or agent
// configured it, and returns it parsed. It must be an absolute http or https
// URL with a host, and no credentials, query or fragment: credentials would
// be sent to whoever the URL names, and a query would be silently dropped
// by [WithPath] callers. Surrounding space and trailing slashes are removed;
// the path is otherwise kept. Errors are [*BaseURLError] and never repeat
// the URL, which may hold a secret.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error's text repeats the URL
		}
		return nil, &BaseURLError{Reason: err.Error()}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, &BaseURLError{Reason: fmt.Sprintf("scheme must be http or https, got %q", Clip(u.Scheme, 20))}
	case u.Host == "" || u.Hostname() == "":
		return nil, &BaseURLError{Reason: "no host"}
	case u.User != nil:
		return nil, &BaseURLError{Reason: "credentials in the URL are not allowed"}
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, &BaseURLError{Reason: "a base URL has no query or fragment"}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// WithPath returns a copy of base with p (such as "/res/v1/web/search")
// appended to its path as is: unlike [url.URL.JoinPath] it does not clean
// the result, so a base path of "/api/3" and p "/action/x" give
// "/api/3/action/x" and nothing is resolved away. base is not changed.
func WithPath(base *url.URL, p string) *url.URL {
	u := *base
	u.Path = strings.TrimRight(u.Path, "/") + p
	u.RawPath = ""
	return &u
}

// ErrBodyTooLarge is wrapped by [ReadBody] when a body exceeds its limit.
var ErrBodyTooLarge = errors.New("response body too large")

// ReadBody reads all of r, but at most limit bytes: a longer body fails with
// an error wrapping [ErrBodyTooLarge] rather than being silently cut, since
// half a JSON document is worse than none. A read error is returned as is,
// with what was read.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	if limit < 0 {
		limit = 0
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return body, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
	}
	return body, nil
}

// RetryAfter parses the value of a Retry-After header: delay-seconds or an
// HTTP-date, measured from now. It returns zero when v is empty, unreadable,
// zero, negative or in the past, and at most limit (a server may not make a
// client wait forever, and a huge value must not overflow a Duration).
func RetryAfter(v string, now time.Time, limit time.Duration) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" || limit <= 0 {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || isOverflow(err) {
		switch {
		case err != nil: // more seconds than an int64 holds, so more than limit
			if v[0] == '-' {
				return 0
			}
			return limit
		case secs <= 0:
			return 0
		case secs >= int64(limit/time.Second):
			return limit
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), limit)
}

func isOverflow(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

// RetryAfterHeader is [RetryAfter] of h's Retry-After header.
func RetryAfterHeader(h http.Header, now time.Time, limit time.Duration) time.Duration {
	return RetryAfter(h.Get("Retry-After"), now, limit)
}

// NoRedirect is an http.Client CheckRedirect that never follows a redirect:
// the client gets the 3xx response itself. API clients that send a key use
// it, because following a redirect would hand the key to another host.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NoRedirects returns a copy of hc that does not follow redirects; when hc is
// nil, a new client over its own [NewTransport]. hc is not changed: it may be
// shared.
func NoRedirects(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	} else {
		c.Transport = NewTransport()
	}
	c.CheckRedirect = NoRedirect
	return c
}

// OneLine is upstream text made fit for an error message: its runs of white
// space (newlines included) folded to single spaces, then clipped as [Clip]
// does.
func OneLine(s string, n int) string {
	return Clip(strings.Join(strings.Fields(s), " "), n)
}

// Clip returns s cut to at most n bytes, at a character boundary, with "…"
// appended when something was cut. Invalid UTF-8 is first replaced with
// U+FFFD, so the result is always valid UTF-8 (upstream text goes into
// JSON and logs). It bounds the size of upstream text in error messages.
func Clip(s string, n int) string {
	return textclip.Bytes(validUTF8(s), n)
}

// ClipRunes is [Clip] counting characters instead of bytes, for text shown
// to people and agents (a 300-character description is 300 characters in
// Hebrew as in English).
func ClipRunes(s string, n int) string {
	return textclip.Runes(validUTF8(s), n)
}

// validUTF8 is s with invalid UTF-8 replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
