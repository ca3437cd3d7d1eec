// Package render loads a page in a local headless Chromium, runs its
// scripts and returns the resulting DOM as HTML, for pages (single-page
// apps) whose HTML holds no content until JavaScript builds it.
//
// The browser is not trusted with the network. Every request the page
// makes is paused (the DevTools Fetch domain) and answered by Render itself
// through the caller's safehttp.Client, so the same address policy (and
// its body and time bounds) applies to a script's fetch() as to web_fetch:
// the browser opens no socket of its own for them. What the Fetch domain
// does not see (WebSockets, WebRTC, workers in other targets, DNS
// prefetch) meets two layers set on the command line, each enough alone
// (TestRenderBuildsArticleAndBlocksPrivateAddresses fails without both): a
// proxy that refuses everything, with loopback no longer exempt, and a
// host resolver rule under which no name or address literal resolves. Each render starts its own browser with a new profile
// directory and opens the page in a fresh browser context; all of it is
// removed when Render returns, so no cookie or storage outlives a call.
//
// Renders are bounded: at most MaxConcurrent at once (a caller waits at
// most QueueWait), Timeout for the whole render, MaxRequests subrequests
// and MaxBytes of their bodies, MaxHTMLBytes of rendered HTML.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/safehttp"
)

// Defaults of Options.
const (
	DefaultTimeout       = 15 * time.Second
	DefaultMaxConcurrent = 2
	DefaultQueueWait     = 5 * time.Second
	DefaultMaxRequests   = 150
	DefaultMaxBytes      = 20 << 20
	DefaultMaxHTMLBytes  = 10 << 20
	// quiet is how long the page must have no request in progress, after
	// its load event, before it is taken as rendered.
	quiet = 500 * time.Millisecond
	// subrequestsAtOnce bounds the page's requests fetched in parallel.
	subrequestsAtOnce = 6
)

// Options configure a Renderer.
type Options struct {
	// ChromiumPath is the browser binary (required).
	ChromiumPath string
	// HTTP answers every request the page makes (required): its address
	// policy is the one the page is held to.
	HTTP *safehttp.Client
	// UserAgent replaces the browser's on every request, when set.
	UserAgent string
	// CheckRequest, when set, is asked before any request the page makes
	// is fetched (a frame, a navigation away, a script, data, an image),
	// e.g. robots.txt: a render fetches on the user's behalf like any
	// fetch, and a site's robots.txt may keep its API or assets out of
	// reach. The page's own document is not asked: the caller has
	// fetched it.
	CheckRequest  func(ctx context.Context, u *url.URL) error
	Timeout       time.Duration
	MaxConcurrent int
	QueueWait     time.Duration
	MaxRequests   int
	MaxBytes      int64
	MaxHTMLBytes  int64
	// ExtraFlags are added to the browser's command line. Tests use it to
	// switch off Chromium's own Local Network Access checks, so that they
	// show that Toolport's interception, not Chromium, blocks a request.
	ExtraFlags []chromedp.ExecAllocatorOption
}

// Renderer renders pages; it is safe for concurrent use.
type Renderer struct {
	opts  Options
	slots chan struct{}
}

// New returns a Renderer. It starts nothing: each Render starts a browser.
func New(opts Options) *Renderer {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.QueueWait <= 0 {
		opts.QueueWait = DefaultQueueWait
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxHTMLBytes <= 0 {
		opts.MaxHTMLBytes = DefaultMaxHTMLBytes
	}
	return &Renderer{opts: opts, slots: make(chan struct{}, opts.MaxConcurrent)}
}

// Page is a document already fetched by the caller (robots.txt, policy and
// size checked): the browser is given these bytes, not a second fetch.
type Page struct {
	URL         *url.URL // final URL of the document, after redirects
	ContentType string
	Body        []byte
	// CSP holds the document's Content-Security-Policy header values. The
	// browser gets them with the document, so the page's scripts are held
	// to the site's own policy too, as in a visitor's browser: a page
	// whose policy forbids a request does not make it.
	CSP []string
}

// Result is a rendered page.
type Result struct {
	HTML []byte // the DOM after scripts ran, serialised, UTF-8
	// Requests counts the page's subrequests; Blocked those refused (by
	// the address policy, a scheme, a bound or CheckRequest).
	Requests, Blocked int
}

// Errors of Render besides the context's and the browser's own.
var (
	// ErrBusy: MaxConcurrent renders were in progress for all of QueueWait.
	ErrBusy = errors.New("render: the browser is busy with other pages")
	// ErrTooLarge: the rendered HTML exceeds MaxHTMLBytes.
	ErrTooLarge = errors.New("render: the rendered page is too large")
	// ErrTimeout: the page did not finish rendering within Timeout.
	ErrTimeout = errors.New("render: the page did not finish rendering in time")
)

// Render opens p in a new browser and returns its DOM once the page has
// loaded and has had no request in progress for a short while.
func (r *Renderer) Render(ctx context.Context, p Page) (*Result, error) {
	if err := r.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { <-r.slots }()

	rctx, cancel := context.WithTimeoutCause(ctx, r.opts.Timeout, ErrTimeout)
	defer cancel()
	res, err := r.render(rctx, p)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), ErrTimeout) {
		return nil, fmt.Errorf("%w (%s)", ErrTimeout, r.opts.Timeout)
	}
	return res, err
}

func (r *Renderer) acquire(ctx context.Context) error {
	select {
	case r.slots <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(r.opts.QueueWait)
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("%w: %d renders in progress for %s", ErrBusy, cap(r.slots), r.opts.QueueWait)
	}
}

func (r *Renderer) render(ctx context.Context, p Page) (*Result, error) {
	profile, err := os.MkdirTemp("", "toolport-render-*")
	if err != nil {
		return nil, fmt.Errorf("render: profile directory: %w", err)
	}
	defer os.RemoveAll(profile)
	refuse, err := startRefusingProxy()
	if err != nil {
		return nil, err
	}
	defer refuse.Close()

	flags := append(QuietFlags(),
		chromedp.ExecPath(r.opts.ChromiumPath),
		chromedp.UserDataDir(profile),
		// What escapes interception goes to a proxy that refuses it;
		// "<-loopback>" removes Chromium's implicit exemption of loopback.
		chromedp.ProxyServer("http://"+refuse.Addr().String()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.WindowSize(1280, 1024),
	)
	flags = append(flags, r.opts.ExtraFlags...)
	if os.Geteuid() == 0 {
		flags = append(flags, chromedp.NoSandbox) // Chromium refuses to start its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, flags...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		return nil, fmt.Errorf("render: start %s: %w", r.opts.ChromiumPath, err)
	}
	// A fresh browser context (incognito-like): disposed with tctx.
	tctx, cancelTab := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	defer cancelTab()

	ic := &interceptor{r: r, page: p, sem: make(chan struct{}, subrequestsAtOnce)}
	ic.bytesLeft.Store(r.opts.MaxBytes)
	ictx, stop := context.WithCancel(tctx)
	defer stop()
	paused := chromedp.Events(ictx, fetch.RequestPaused) // subscribed from here on
	if _, err := chromedp.Call(tctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return nil, fmt.Errorf("render: enable interception: %w", err)
	}
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		for ev, err := range paused {
			if err != nil {
				return
			}
			ic.handle(ictx, ev)
		}
	}()
	defer func() {
		stop()
		<-loop
		ic.wg.Wait()
	}()

	if err := chromedp.Do(tctx, chromedp.Navigate(p.URL.String())); err != nil {
		return nil, fmt.Errorf("render: load %s: %w", safehttp.RedactURL(p.URL.String()), err)
	}
	if err := ic.settle(tctx); err != nil {
		return nil, err
	}
	// A page over the cap is not sent over the protocol at all: the
	// script answers a marker no serialised document starts with.
	const tooLarge = "\x00too large"
	html, err := chromedp.Run(tctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(() => { const h = document.documentElement ? document.documentElement.outerHTML : ""; return h.length > %d ? %q : h })()`,
		r.opts.MaxHTMLBytes, tooLarge)))
	if err != nil {
		return nil, fmt.Errorf("render: read the page: %w", err)
	}
	if html == tooLarge || int64(len(html)) > r.opts.MaxHTMLBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, r.opts.MaxHTMLBytes)
	}
	return &Result{HTML: []byte(html), Requests: int(ic.requests.Load()), Blocked: int(ic.blocked.Load())}, nil
}

// interceptor answers the paused requests of one render.
type interceptor struct {
	r    *Renderer
	page Page

	wg        sync.WaitGroup
	sem       chan struct{}
	docServed atomic.Bool
	requests  atomic.Int64
	blocked   atomic.Int64
	bytesLeft atomic.Int64
	inFlight  atomic.Int64
	// last is when a request last started or ended (unix nanoseconds).
	last atomic.Int64
}

func (ic *interceptor) handle(ctx context.Context, ev fetch.EventRequestPaused) {
	ic.inFlight.Add(1)
	ic.last.Store(time.Now().UnixNano())
	ic.wg.Go(func() {
		defer func() {
			ic.inFlight.Add(-1)
			ic.last.Store(time.Now().UnixNano())
		}()
		select {
		case ic.sem <- struct{}{}:
			defer func() { <-ic.sem }()
		case <-ctx.Done():
			return
		}
		ic.answer(ctx, ev)
	})
}

// answer fulfils or fails one paused request.
func (ic *interceptor) answer(ctx context.Context, ev fetch.EventRequestPaused) {
	req := ev.Request
	u, err := url.Parse(req.URL)
	if err != nil {
		ic.fail(ctx, ev.RequestID)
		return
	}
	if ev.ResourceType == network.ResourceTypeDocument && !ic.docServed.Load() && sameDocument(u, ic.page.URL) {
		ic.docServed.Store(true)
		h := http.Header{"Content-Type": {ic.page.ContentType}}
		if len(ic.page.CSP) > 0 {
			h["Content-Security-Policy"] = ic.page.CSP
		}
		ic.fulfil(ctx, ev.RequestID, http.StatusOK, h, ic.page.Body)
		return
	}
	if ic.requests.Add(1) > int64(ic.r.opts.MaxRequests) {
		ic.fail(ctx, ev.RequestID)
		return
	}
	if _, err := (safehttp.Policy{AllowPrivate: true}).CheckURL(req.URL); err != nil {
		// Not http(s), or credentials in the URL: the address check is the client's.
		ic.fail(ctx, ev.RequestID)
		return
	}
	if ic.r.opts.CheckRequest != nil {
		if err := ic.r.opts.CheckRequest(ctx, u); err != nil {
			ic.fail(ctx, ev.RequestID)
			return
		}
	}
	status, header, body, err := ic.do(ctx, req)
	if err != nil {
		ic.fail(ctx, ev.RequestID)
		return
	}
	ic.fulfil(ctx, ev.RequestID, status, header, body)
}

// do makes the page's request through the guarded client.
func (ic *interceptor) do(ctx context.Context, req *network.Request) (int, http.Header, []byte, error) {
	var body io.Reader
	if len(req.PostDataEntries) > 0 {
		var b bytes.Buffer
		for _, e := range req.PostDataEntries {
			b.Write(e.Bytes)
		}
		body = &b
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, body)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range req.Headers {
		if s, ok := v.(string); ok {
			hr.Header.Set(k, s)
		}
	}
	// The transport negotiates and decodes compression itself.
	hr.Header.Del("Accept-Encoding")
	if ic.r.opts.UserAgent != "" {
		hr.Header.Set("User-Agent", ic.r.opts.UserAgent)
	}
	resp, err := ic.r.opts.HTTP.HTTPClient().Do(hr)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	left := ic.bytesLeft.Load()
	data, err := io.ReadAll(io.LimitReader(resp.Body, max(left, 0)+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if ic.bytesLeft.Add(-int64(len(data))) < 0 {
		return 0, nil, nil, errors.New("render: the page's requests exceed the byte budget")
	}
	return resp.StatusCode, resp.Header, data, nil
}

// hopHeaders describe the transfer, which fulfilment replaces.
var hopHeaders = []string{"Content-Encoding", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"}

func (ic *interceptor) fulfil(ctx context.Context, id fetch.RequestID, status int, header http.Header, body []byte) {
	header = header.Clone()
	for _, h := range hopHeaders {
		header.Del(h)
	}
	var entries []*fetch.HeaderEntry
	for k, vs := range header {
		for _, v := range vs {
			entries = append(entries, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	_, _ = chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID: id, ResponseCode: int64(status), ResponseHeaders: entries, Body: body,
	})
}

func (ic *interceptor) fail(ctx context.Context, id fetch.RequestID) {
	ic.blocked.Add(1)
	_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient})
}

// settle waits until no request has been in progress for quiet (counted
// from the load event at the earliest, so that a script's first request
// after load is waited for), checking every quiet/5; the render's deadline
// bounds it.
func (ic *interceptor) settle(ctx context.Context) error {
	loaded := time.Now()
	tick := time.NewTicker(quiet / 5)
	defer tick.Stop()
	for {
		last := time.Unix(0, max(ic.last.Load(), loaded.UnixNano()))
		if ic.inFlight.Load() == 0 && time.Since(last) >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// sameDocument reports whether u (as the browser sends it) is the
// document d, ignoring fragments, the host's case and an empty path, which
// the browser writes as "/".
func sameDocument(u, d *url.URL) bool {
	norm := func(x *url.URL) string {
		y := *x
		y.Fragment, y.RawFragment, y.Host = "", "", strings.ToLower(y.Host)
		if y.Path == "" && y.RawPath == "" {
			y.Path = "/"
		}
		return y.String()
	}
	return norm(u) == norm(d)
}

// refusingProxy is where the browser sends what interception does not
// see: it answers every request, CONNECT included, with 403.
type refusingProxy struct {
	l   net.Listener
	srv *http.Server
}

func startRefusingProxy() (*refusingProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("render: refusing proxy: %w", err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Connection", "close")
			http.Error(w, "blocked by toolport", http.StatusForbidden)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(l) }()
	return &refusingProxy{l: l, srv: srv}, nil
}

func (p *refusingProxy) Addr() net.Addr { return p.l.Addr() }
func (p *refusingProxy) Close()         { _ = p.srv.Close() }

// QuietFlags are the options of a headless Chromium that starts nothing of
// its own: no background networking, updates, sync, extensions or sound
// (on a closed network those connections fail by the dozen at each start).
// The page renderer and the browser tests start Chromium with them.
func QuietFlags() []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
	}
}
