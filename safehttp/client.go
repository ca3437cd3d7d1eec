// Package safehttp is the outbound HTTP client for fetching untrusted URLs
// on behalf of an agent, and for API clients that want the same guarantees.
//
// It defends against server-side request forgery by checking every address
// at connect time, inside the dialer, for every connection and every
// redirect hop: a host name that resolves to a public address for one
// lookup and to 127.0.0.1 for the next (DNS rebinding) is still refused,
// because the check runs on the address actually dialled, not on an earlier
// lookup. See Policy for the refused ranges. Hosts written in the numeric
// IPv4 forms browsers accept (2130706433, 0x7f000001, 127.1) are read as the
// address they denote and never looked up, and error text names URLs only
// through RedactURL.
//
// Environment proxies (HTTP_PROXY, HTTPS_PROXY) are deliberately ignored:
// with a proxy the dialer would only ever see the proxy's address, and the
// address check would be bypassed.
//
// Get also bounds everything an untrusted server controls: connect, TLS
// handshake, header and total time (a server that dribbles its body hits the
// total timeout), the number of redirects, and the body size after
// decompression (a gzip or brotli bomb fails with *TooLargeError).
package safehttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/textclip"
)

// Defaults used for zero Options fields.
const (
	DefaultConnectTimeout        = 10 * time.Second
	DefaultResponseHeaderTimeout = 20 * time.Second
	DefaultTimeout               = 30 * time.Second
	DefaultMaxBodyBytes          = 10 << 20
	DefaultMaxRedirects          = 10

	// DefaultUserAgent looks like a current desktop browser, because some
	// CDNs refuse clients that do not, and names Toolport so that site
	// operators can tell who is fetching.
	DefaultUserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Toolport/1.0"
)

// maxHeaderBytes bounds the response headers an untrusted server may send.
const maxHeaderBytes = 1 << 20

// Options configures a Client. A zero field selects its default.
type Options struct {
	// Policy decides which addresses may be dialled. The zero Policy
	// refuses everything but public unicast addresses.
	Policy Policy

	// ConnectTimeout bounds name resolution plus TCP connect, and
	// separately the TLS handshake. Default 10s.
	ConnectTimeout time.Duration

	// ResponseHeaderTimeout bounds the wait for response headers after
	// the request has been written. Default 20s.
	ResponseHeaderTimeout time.Duration

	// Timeout bounds a whole exchange, redirects and body included.
	// Default 30s.
	Timeout time.Duration

	// MaxBodyBytes caps the body Get reads, both as received and after
	// decompression. Default 10 MiB.
	MaxBodyBytes int64

	// MaxRedirects is how many redirects are followed. Default 10; a
	// negative value follows none (the 3xx response itself is returned).
	MaxRedirects int

	// UserAgent replaces DefaultUserAgent.
	UserAgent string

	// Resolver resolves host names; nil means net.DefaultResolver. Tests
	// use it to point names at loopback addresses.
	Resolver *net.Resolver

	// TLSConfig, if set, is cloned into the transport, e.g. to trust a
	// private or test CA. Nil uses the system roots.
	TLSConfig *tls.Config
}

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return o
}

// ErrTooManyRedirects reports that a fetch stopped at Options.MaxRedirects.
var ErrTooManyRedirects = errors.New("safehttp: too many redirects")

// Client fetches URLs under an address Policy and the limits in Options.
// It is safe for concurrent use; reuse one Client so connections are pooled.
type Client struct {
	opts Options
	hc   *http.Client
	// get is hc without its own Timeout, for Get, which bounds the
	// exchange with a context deadline instead: with both, whichever timer
	// fired first named the timeout, and the error text varied.
	get *http.Client
}

// NewClient returns a Client configured by opts.
func NewClient(opts Options) *Client {
	c := &Client{opts: opts.withDefaults()}
	tr := &http.Transport{
		Proxy:                  nil, // never from the environment: it would bypass the address check
		DialContext:            c.dialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        opts.TLSConfig.Clone(),
		TLSHandshakeTimeout:    c.opts.ConnectTimeout,
		ResponseHeaderTimeout:  c.opts.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	httpclient.SizePool(tr) // the shared pool sizes; the dialer above is the policy
	c.hc = &http.Client{
		Transport:     locationCheck{tr},
		CheckRedirect: c.checkRedirect,
		Timeout:       c.opts.Timeout,
	}
	get := *c.hc
	get.Timeout = 0
	c.get = &get
	return c
}

// HTTPClient returns an *http.Client with the same dialer address check,
// redirect policy and total timeout, for API clients that build their own
// requests. Unlike Get it does not cap bodies (wrap them in an
// io.LimitReader) and, when the request sets no Accept-Encoding, the
// transport asks for and transparently decodes gzip. Each call returns a
// new *http.Client sharing one transport, so changing it affects no one else.
func (c *Client) HTTPClient() *http.Client {
	hc := *c.hc
	return &hc
}

// dialContext dials addr with a net.Dialer whose ControlContext runs the
// Policy on each address the dialer actually connects to, after resolution.
//
// A host in a numeric IPv4 form (2130706433, 127.1) is dialled as the
// address it denotes and a bad port is refused, so neither reaches DNS even
// for requests built outside Get (see HTTPClient).
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot split %s into host and port", ErrInvalidURL, quoteBounded(addr, 100))
	}
	if err := checkPort(port); err != nil {
		return nil, err
	}
	if ip, isIP, err := canonicalHost(host); err != nil {
		return nil, err
	} else if isIP {
		addr = net.JoinHostPort(ip.String(), port)
	}
	trusted := c.opts.Policy.allowsHost(host)
	d := &net.Dialer{
		Timeout:   c.opts.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		Resolver:  c.opts.Resolver,
		ControlContext: func(_ context.Context, network, address string, _ syscall.RawConn) error {
			switch network {
			case "tcp", "tcp4", "tcp6":
			default:
				return fmt.Errorf("safehttp: refusing to dial network %q", network)
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("safehttp: cannot check dial address: %w", err) // fail closed
			}
			if trusted {
				return nil
			}
			if err := c.opts.Policy.CheckAddr(ap.Addr()); err != nil {
				var be *BlockedError
				if errors.As(err, &be) {
					be.Host = host
				}
				return err
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, addr)
}

// checkRedirect enforces the redirect limit and validates each target URL
// (scheme, userinfo, literal address) before it is requested. Addresses of
// named hosts are checked when they are dialled.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.opts.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > c.opts.MaxRedirects {
		return fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, c.opts.MaxRedirects)
	}
	if err := c.opts.Policy.checkParsed(req.URL); err != nil {
		return &opError{op: "redirect to " + redact(req.URL), err: err}
	}
	return nil
}

// RedirectCheck decides whether a fetch may follow a redirect to next,
// e.g. whether robots.txt allows it. An error stops the fetch.
type RedirectCheck func(ctx context.Context, next *url.URL) error

// GetCheckingRedirects is Get that asks check before following each
// redirect, after the address policy has passed the target. An error from
// check stops the fetch and is returned wrapped (errors.As finds it). Only
// this call's redirects are checked: other requests, such as check's own
// fetches through HTTPClient, are not.
func (c *Client) GetCheckingRedirects(ctx context.Context, rawURL string, hdr http.Header, check RedirectCheck) (*Response, error) {
	if check == nil {
		return c.Get(ctx, rawURL, hdr)
	}
	// A copy of the client for this call: it shares the transport (and its
	// connections) and adds check to the redirect policy.
	hc := *c.get
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := c.checkRedirect(req, via); err != nil {
			return err
		}
		if err := check(req.Context(), req.URL); err != nil {
			return &opError{op: "redirect to " + redact(req.URL), err: err}
		}
		return nil
	}
	return c.getWith(ctx, &hc, rawURL, hdr)
}

// Response is a fetched response with its body read, decoded and closed.
type Response struct {
	URL        *url.URL // final URL, after redirects
	StatusCode int
	Status     string // e.g. "404 Not Found"
	// Header is the final response's header. When Get decoded the body,
	// Content-Encoding and Content-Length are removed, so that the header
	// describes Body.
	Header http.Header
	// ContentType is the Content-Type header as sent (charset parameter
	// included, for the caller to decode with), or, if the server sent
	// none, the type sniffed by http.DetectContentType.
	ContentType string
	Body        []byte // decoded body, at most Options.MaxBodyBytes
	Redirects   int    // redirects followed to reach URL
}

// Get fetches rawURL and reads its whole body.
//
// hdr adds to or replaces the default User-Agent, Accept and
// Accept-Language headers; Accept-Encoding is always Get's own ("gzip, br"),
// since it decodes the body itself (gzip, br and deflate). A body in an
// encoding it cannot undo is returned as received, with its Content-Encoding
// header left in place, as browsers do.
//
// A response with any status is returned with a nil error; the caller
// decides what a 404 means. Errors are typed for mapping to error codes:
// ErrInvalidURL, ErrUnsupportedScheme and ErrUserinfo (bad URL, also for a
// redirect target), *BlockedError (address refused), ErrTooManyRedirects,
// *TooLargeError (body over the cap; Get never returns a truncated body),
// ErrDecode (corrupt compressed body), and timeouts, for which
// errors.Is(err, context.DeadlineExceeded) holds and which have a
// Timeout() bool method returning true. Error text never contains the URL's
// query, fragment or credentials.
func (c *Client) Get(ctx context.Context, rawURL string, hdr http.Header) (*Response, error) {
	return c.getWith(ctx, c.get, rawURL, hdr)
}

// getWith is one Get through hc, c.get or a copy of it.
func (c *Client) getWith(ctx context.Context, hc *http.Client, rawURL string, hdr http.Header) (*Response, error) {
	u, err := c.opts.Policy.CheckURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot build request", ErrInvalidURL) // unreachable: u was just parsed
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Language", "en-US,en;q=0.9")
	for k, vs := range hdr {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept-Encoding", "gzip, br")

	resp, err := hc.Do(req)
	if err != nil {
		return nil, &opError{op: "GET " + redact(u), err: classify(err)}
	}
	defer resp.Body.Close()

	body, decoded, err := readBody(resp, c.opts.MaxBodyBytes)
	if err != nil {
		return nil, &opError{op: "GET " + redact(resp.Request.URL), err: classify(err)}
	}
	if decoded {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" && len(body) > 0 {
		ct = http.DetectContentType(body)
	}
	redirects := 0
	for r := resp.Request; r.Response != nil && r.Response.Request != nil; r = r.Response.Request {
		redirects++
	}
	final := *resp.Request.URL
	return &Response{
		URL:         &final,
		StatusCode:  resp.StatusCode,
		Status:      resp.Status,
		Header:      resp.Header,
		ContentType: ct,
		Body:        body,
		Redirects:   redirects,
	}, nil
}

// locationCheck refuses a redirect whose Location header does not parse,
// before net/http's client sees it: the client's own error for that case
// quotes the header verbatim, credentials and query included.
type locationCheck struct{ rt http.RoundTripper }

func (l locationCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return resp, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return resp, nil
	}
	if _, perr := req.URL.Parse(loc); perr != nil {
		resp.Body.Close()
		return nil, &opError{op: "redirect to " + RedactURL(loc), err: fmt.Errorf("%w: malformed Location header: %s", ErrInvalidURL, parseReason(perr))}
	}
	return resp, nil
}

// parseReason is why url.Parse failed, without the *url.Error's copy of
// the input and without the pieces of it that the reason quotes (an
// "invalid port" quotes what follows the last colon, which may be a
// password).
func parseReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return textclip.Bytes(dropQuoted(err.Error()), 100)
}

// dropQuoted removes the quoted parts of an error text, which net/url and
// net/textproto fill with pieces of their untrusted input.
func dropQuoted(s string) string {
	i := strings.IndexByte(s, '"')
	j := strings.LastIndexByte(s, '"')
	if i < 0 || j == i {
		return s
	}
	return strings.Join(strings.Fields(s[:i]+s[j+1:]), " ")
}

// classify strips the *url.Error that net/http wraps around failures (its
// text repeats the full URL, query included) and marks timeouts. Should the
// cause quote that URL too, the quote is redacted.
func classify(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
		if ue.URL != "" && strings.Contains(err.Error(), ue.URL) {
			err = &scrubbedError{err: err, raw: ue.URL}
		}
	}
	// A malformed header is quoted whole, and a malformed Location header
	// is where credentials and tokens would be: keep the reason only.
	var pe textproto.ProtocolError
	if errors.As(err, &pe) {
		return fmt.Errorf("malformed response: %s", dropQuoted(string(pe)))
	}
	// A refusal names host, address and range itself; drop the
	// "dial tcp 127.0.0.1:80:" wrapper around it.
	var be *BlockedError
	if errors.As(err, &be) {
		return be
	}
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return err
	}
	if isTimeout(err) {
		return &timeoutError{err: err}
	}
	return err
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// timeoutError marks any timeout (connect, TLS, headers, total) so that
// callers can test for all of them one way.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string        { return "timed out: " + e.err.Error() }
func (e *timeoutError) Unwrap() error        { return e.err }
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// opError names the operation (with a redacted URL) in front of its cause,
// without repeating the package prefix of a cause from this package.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "safehttp: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "safehttp: ")
}
func (e *opError) Unwrap() error { return e.err }

// Timeout reports whether the cause was a timeout, so that a fetch error
// satisfies the usual interface{ Timeout() bool } check.
func (e *opError) Timeout() bool {
	var te *timeoutError
	return errors.As(e.err, &te)
}

// scrubbedError is err with every copy of the URL raw in its text redacted.
type scrubbedError struct {
	err error
	raw string
}

func (e *scrubbedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.raw, RedactURL(e.raw))
}
func (e *scrubbedError) Unwrap() error { return e.err }
