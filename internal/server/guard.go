package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// hostSet is the Host allow-list: the loopback names (localhost and every
// loopback IP, any port) and the configured names. A page on another name
// that resolves to this machine (DNS rebinding) carries that name in Host,
// so it is refused even though it reaches the listener.
type hostSet map[string]bool

// newHostSet normalizes the configured hosts; entries may carry a port,
// which is ignored.
func newHostSet(hosts []string) (hostSet, error) {
	set := hostSet{}
	for _, h := range hosts {
		name := hostName(strings.TrimSpace(h))
		switch {
		case name == "":
			return nil, fmt.Errorf("server: allowed host %q is empty", h)
		case strings.Contains(h, "*"):
			return nil, fmt.Errorf("server: allowed host %q: wildcards are not supported, list each name", h)
		case strings.ContainsAny(strings.TrimSpace(h), "/@ \t,?#"):
			return nil, fmt.Errorf("server: allowed host %q is not a host name or IP address", h)
		}
		set[name] = true
	}
	return set, nil
}

// hostName is the lower-cased name of a Host header or host:port, without
// port, IPv6 brackets or a trailing dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func (s hostSet) allows(host string) bool {
	name := hostName(host)
	if name == "" {
		return false
	}
	return isLoopback(name) || s[name]
}

// nonLoopback reports whether the set names anything besides loopback.
func (s hostSet) nonLoopback() bool {
	for name := range s {
		if !isLoopback(name) {
			return true
		}
	}
	return false
}

// guard applies the rules every route shares, before routing and before any
// body byte is read:
//
//   - the Host must be allowed (403), against DNS rebinding;
//   - a state-changing request (any method but GET, HEAD, OPTIONS) sent by a
//     browser must come from this origin or an allowed one: Sec-Fetch-Site
//     "cross-site" or "same-site" is refused, and without it an Origin that
//     does not match the Host (403), against cross-site request forgery;
//   - a request body must be application/json (415): a page can send
//     text/plain or a form cross-origin without a CORS preflight, but not JSON;
//   - the body must arrive within BodyReadTimeout. The deadline is set on the
//     connection here, so that it also bounds the server's own draining of a
//     body no handler read; withBody lifts it once the body is in.
//
// Refusals close the connection rather than read the body they refuse.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			refuse(w, r, http.StatusForbidden, "FORBIDDEN_HOST",
				"this server does not answer to that Host; add the name to --allowed-hosts (TOOLPORT_ALLOWED_HOSTS)")
			return
		}
		if err := s.origins.Check(r); err != nil {
			refuse(w, r, http.StatusForbidden, "CROSS_ORIGIN",
				"a cross-origin request that changes state is refused; trusted origins go in --allowed-origins (TOOLPORT_ALLOWED_ORIGINS)")
			return
		}
		hasBody := r.ContentLength != 0
		if ct := r.Header.Get("Content-Type"); hasBody || (ct != "" && !safeMethod(r.Method)) {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				refuse(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
					"request bodies must be JSON, sent with Content-Type: application/json")
				return
			}
		}
		if hasBody {
			// Without a deadline a client that sends a byte now and then
			// would hold its connection (and goroutine) for ever. Not every
			// connection supports deadlines (tests' recorders): then only the
			// size bounds apply.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// refuseDrain is how long a refused request's unread body may keep arriving
// before the connection is closed. Closing a socket with unread data makes
// the kernel answer with a reset, which can reach an ordinary client before
// it has read the answer; a short lingering drain avoids that, and it is short
// enough that slow clients cannot hold connections open with it.
const refuseDrain = 250 * time.Millisecond

// refuse answers an error without waiting for the request body. net/http
// drains up to 256 KiB of an unread body after the handler, at the client's
// pace, even on a connection it then closes; a read deadline refuseDrain away
// bounds that, and the connection is closed once the answer is out.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refuseDrain))
	}
	writeError(w, status, code, msg)
}

// withBody reads the whole request body, within MaxBodyBytes and the read
// deadline guard set, before h runs, and hands h the body from memory. It
// runs after authentication: an unauthenticated request is answered without
// reading its body. Once the body is in, the deadline is lifted, so that a
// long response (a chat or MCP event stream) is not cut by it (net/http's
// HTTP/1 server also lifts it when the body ends; this keeps it so whatever
// the transport).
func (s *Server) withBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			refuse(w, r, http.StatusRequestEntityTooLarge, "TOO_LARGE", fmt.Sprintf("the request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				refuse(w, r, http.StatusRequestEntityTooLarge, "TOO_LARGE", fmt.Sprintf("the request body is larger than %d bytes", s.cfg.MaxBodyBytes))
			case errors.Is(err, os.ErrDeadlineExceeded):
				refuse(w, r, http.StatusRequestTimeout, "REQUEST_TIMEOUT", fmt.Sprintf("the request body did not arrive within %s", s.cfg.BodyReadTimeout))
			default:
				refuse(w, r, http.StatusBadRequest, "BAD_REQUEST", "the request body could not be read")
			}
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}
