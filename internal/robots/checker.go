package robots

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/toolport/toolport/safehttp"
)

// Defaults for zero Options fields.
const (
	DefaultTimeout    = 5 * time.Second
	DefaultTTL        = time.Hour
	DefaultErrorTTL   = 5 * time.Minute
	DefaultMaxEntries = 1024
	// DefaultMaxBytes bounds the cache's parsed rules: at most MaxSize of
	// patterns and MaxRules rules each, so at least 24 of the largest
	// files fit, and thousands of ordinary ones.
	DefaultMaxBytes = 16 << 20
	// MaxTTL is RFC 9309 §2.4's limit on caching a robots.txt.
	MaxTTL = 24 * time.Hour
	// maxRedirects is RFC 9309 §2.3.1.2's minimum number of hops to follow.
	maxRedirects = 5
)

// Options configures a Checker.
type Options struct {
	// HTTP fetches robots.txt. Its address policy applies to every hop.
	HTTP *safehttp.Client
	// UserAgent is the User-Agent header sent, the one the page fetches
	// send; its product token (see ProductToken) selects the groups.
	UserAgent string
	// Timeout bounds one robots.txt fetch, redirects included (default 5 s).
	Timeout time.Duration
	// TTL is how long a fetched robots.txt is trusted (default 1 h, at most
	// 24 h). ErrorTTL is how long an unreachable one disallows (default
	// 5 min), so that a site that was down is asked again soon.
	TTL, ErrorTTL time.Duration
	// MaxEntries bounds the origins cached (default 1024), and MaxBytes
	// the bytes their rules hold (default 16 MiB, at least 1 MiB); the
	// least recently used is dropped first.
	MaxEntries int
	MaxBytes   int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DisallowedError is a refusal: robots.txt disallows the URL, or could not
// be reached, which RFC 9309 treats as disallowing everything.
type DisallowedError struct {
	Origin string // scheme://host[:port]
	Path   string // the path refused (no query: it may hold tokens)
	Reason string // why, for people: "robots.txt disallows it", "robots.txt answered HTTP 503", …
}

func (e *DisallowedError) Error() string {
	return fmt.Sprintf("robots: %s%s: %s", e.Origin, e.Path, e.Reason)
}

// UnreachableError reports that an origin did not answer its robots.txt
// request at all: the name did not resolve, the connection was refused or
// reset, or nothing came back within the timeout. It wraps the network
// error (errors.Is finds context.DeadlineExceeded for a timeout).
type UnreachableError struct {
	Origin string // scheme://host[:port]
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("robots: %s/robots.txt: %v", e.Origin, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Checker answers whether URLs may be fetched under their origins'
// robots.txt. It is safe for concurrent use; concurrent checks of one
// origin share a single fetch.
type Checker struct {
	hc    *http.Client
	opts  Options
	token string
	group singleflight.Group

	mu    sync.Mutex
	lru   *list.List // of *entry, most recent first
	index map[string]*list.Element
	bytes int // the entries' sizes, summed
}

type entry struct {
	origin  string
	rules   *Rules
	reason  string // why rules disallow everything, when they do
	expires time.Time
}

// size estimates the bytes e holds in the cache.
func (e *entry) size() int { return 64 + len(e.origin) + len(e.reason) + e.rules.Size() }

// NewChecker returns a Checker configured by opts.
func NewChecker(opts Options) *Checker {
	if opts.UserAgent == "" {
		opts.UserAgent = safehttp.DefaultUserAgent
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	opts.TTL = min(opts.TTL, MaxTTL)
	if opts.ErrorTTL <= 0 {
		opts.ErrorTTL = DefaultErrorTTL
	}
	opts.ErrorTTL = min(opts.ErrorTTL, opts.TTL)
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	opts.MaxBytes = max(opts.MaxBytes, 1<<20) // room for the largest file

	if opts.Now == nil {
		opts.Now = time.Now
	}
	hc := opts.HTTP.HTTPClient()
	// Keep safehttp's per-hop URL check and add RFC 9309's hop limit.
	check := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return errTooManyRedirects
		}
		if check != nil {
			return check(req, via)
		}
		return nil
	}
	token := ProductToken(opts.UserAgent)
	if token == "" {
		token = "Toolport"
	}
	return &Checker{hc: hc, opts: opts, token: token, lru: list.New(), index: map[string]*list.Element{}}
}

var errTooManyRedirects = errors.New("too many redirects")

// Token is the product token the Checker matches groups against.
func (c *Checker) Token() string { return c.token }

// Check returns nil when u may be fetched, a *DisallowedError when
// robots.txt forbids it, an *UnreachableError when the origin does not
// answer at all, and another error when robots.txt could not be asked for a
// reason that would stop the page fetch as well (the address policy refused
// the host, or ctx ended).
func (c *Checker) Check(ctx context.Context, u *url.URL) error {
	origin := u.Scheme + "://" + strings.ToLower(u.Host)
	e, err := c.rules(ctx, origin)
	if err != nil {
		return err
	}
	if e.rules.Allowed(u.RequestURI()) {
		return nil
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	reason := e.reason
	if reason == "" {
		reason = fmt.Sprintf("robots.txt disallows this path for %s", c.token)
	}
	return &DisallowedError{Origin: origin, Path: path, Reason: reason}
}

// rules returns the cached entry of origin, fetching it when missing or
// stale. One fetch serves every caller waiting for the same origin; a
// caller whose ctx ends stops waiting without cancelling it for the others.
func (c *Checker) rules(ctx context.Context, origin string) (*entry, error) {
	if e := c.lookup(origin); e != nil {
		return e, nil
	}
	ch := c.group.DoChan(origin, func() (any, error) {
		if e := c.lookup(origin); e != nil {
			return e, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
		defer cancel()
		e, err := c.fetch(fctx, origin)
		if err != nil {
			return nil, err
		}
		c.store(e)
		return e, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*entry), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch asks origin for its robots.txt and applies RFC 9309 §2.3.1 to the
// answer. Only failures that would stop the page fetch too are errors.
func (c *Checker) fetch(ctx context.Context, origin string) (*entry, error) {
	now := c.opts.Now()
	unreachable := func(reason string) *entry {
		return &entry{origin: origin, rules: DisallowAll(), reason: reason, expires: now.Add(c.opts.ErrorTTL)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/robots.txt", nil)
	if err != nil {
		return nil, fmt.Errorf("robots: %w: %v", safehttp.ErrInvalidURL, err)
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "text/plain,*/*;q=0.5")
	resp, err := c.hc.Do(req)
	if err != nil {
		var blocked *safehttp.BlockedError
		switch {
		case errors.As(err, &blocked), errors.Is(err, safehttp.ErrInvalidURL),
			errors.Is(err, safehttp.ErrUnsupportedScheme), errors.Is(err, safehttp.ErrUserinfo):
			return nil, err
		case errors.Is(err, errTooManyRedirects):
			// §2.3.1.2: more than five hops may be treated as unavailable.
			return &entry{origin: origin, rules: AllowAll(), expires: now.Add(c.opts.TTL)}, nil
		}
		// No answer at all (a name that does not resolve, a refused
		// connection, silence until the timeout): the page cannot be
		// fetched either, and saying "robots.txt disallows it" would send
		// the user looking in the wrong place. RFC 9309's rule for an
		// unreachable robots.txt is kept for sites that answer (5xx, 429,
		// a body cut short). Not cached: the network may come back.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is origin/robots.txt, named by the error
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s: %w", c.opts.Timeout, context.DeadlineExceeded)
		}
		return nil, &UnreachableError{Origin: origin, Err: err}
	}
	defer resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize))
		if err != nil {
			// A body cut short may have lost the rules that matter: treat
			// it as unreachable rather than parse a part of it.
			if ctx.Err() != nil {
				return unreachable(fmt.Sprintf("robots.txt did not answer within %s, which disallows everything (RFC 9309)", c.opts.Timeout)), nil
			}
			return unreachable("robots.txt could not be read, which disallows everything (RFC 9309)"), nil
		}
		// Beyond the size cap the file is ignored (§2.5 asks for at least
		// 500 KiB to be parsed).
		return &entry{origin: origin, rules: Parse(body, c.token), expires: now.Add(c.opts.TTL)}, nil
	case s == http.StatusTooManyRequests || s >= 500:
		// 429 is a 4xx, but a site asking us to slow down is not saying it
		// has no robots.txt: treat it as unreachable, as major crawlers do.
		return unreachable(fmt.Sprintf("robots.txt answered HTTP %d, which disallows everything (RFC 9309)", s)), nil
	default:
		// 4xx, and a 3xx that could not be followed: unavailable, so
		// allowed (§2.3.1.3).
		return &entry{origin: origin, rules: AllowAll(), expires: now.Add(c.opts.TTL)}, nil
	}
}

func (c *Checker) lookup(origin string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[origin]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if !c.opts.Now().Before(e.expires) {
		c.remove(el)
		return nil
	}
	c.lru.MoveToFront(el)
	return e
}

func (c *Checker) store(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.index[e.origin]; ok {
		c.remove(el)
	}
	c.index[e.origin] = c.lru.PushFront(e)
	c.bytes += e.size()
	for c.lru.Len() > c.opts.MaxEntries || c.bytes > c.opts.MaxBytes {
		c.remove(c.lru.Back())
	}
}

// remove drops el from the cache; c.mu is held.
func (c *Checker) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.index, e.origin)
	c.bytes -= e.size()
}

// Bytes reports the estimated bytes the cached rules hold.
func (c *Checker) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Len reports how many origins are cached.
func (c *Checker) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
