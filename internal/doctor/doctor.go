// Package doctor checks every upstream Toolport's configuration names —
// search APIs, CKAN portals, TIDAL, LRCLIB, ReccoBeats, the chat model, the
// embeddings server, PostgreSQL, Weaviate, Redis, the trace exporter — with
// the user's own keys: is it configured, does it answer, does the key work,
// what do its rate-limit headers say, and does one cheap real call through
// the client the tools use come back in the shape the tool promises.
//
// Every check is bounded: a short timeout each, all in parallel, and at most
// one HTTP request per upstream host (a second one is refused by the check's
// transport, not sent). Checks that spend the user's quota say so
// ([Check.CostsQuota]) and run only when [Options.AllowQuota] is set.
//
// # Checking and recording upstreams
//
// `internal/doctor` builds one check per upstream from the configuration (`FromConfig`), reusing the
// packs' `ConfigFromEnv` and the clients (a tool's upstream is called through the tool, so its
// output schema is checked too), and runs them in parallel behind a per-check transport that sends
// at most one request per host and keeps the first answer's status and rate-limit headers, from which
// a failure is classified (unreachable, key rejected, 429, 5xx, wrong shape). `toolport doctor` and
// `GET /api/doctor` are thin surfaces over it. `internal/record` is an `http.RoundTripper` that the
// CLI wraps around the clients' transports (`Env.Recorder`, from `--record` or `TOOLPORT_RECORD_DIR`):
// it writes each exchange as a body file and a headers file plus a manifest, scrubbing every secret
// it was given or learnt on the way, and replays a recording for tests (`tooltest.ReplayRecording`).
// All secrets (each in six forms) are matched by one Aho–Corasick automaton of its own
// (`record/matcher.go`: the marker rewriting steps it and rolls it back, which libraries do not
// expose), so scrubbing is linear in the bytes whatever the number of secrets; what is learnt from
// upstreams is bounded per body and in all, because an upstream names its own "token" fields.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/tool"
)

// Status is a check's verdict.
type Status string

// The verdicts. Only Failing makes a report fail: an upstream that is not
// configured, or whose check was skipped, is not broken.
const (
	OK            Status = "ok"
	NotConfigured Status = "not configured"
	Failing       Status = "failing"
	Skipped       Status = "skipped"
)

// DefaultTimeout bounds one check.
const DefaultTimeout = 6 * time.Second

// Result is what one check found.
type Result struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Detail says what worked, or why the check failed or was skipped.
	Detail string `json:"detail,omitempty"`
	// Fix says what to do about a failing or unconfigured upstream.
	Fix      string `json:"fix,omitempty"`
	Endpoint string `json:"endpoint,omitempty"` // the address checked, never with credentials
	// CostsQuota marks a check that spends a request of the user's quota.
	CostsQuota bool `json:"costsQuota,omitempty"`
	// Optional marks an engine Toolport works well without (see [Check]).
	Optional bool `json:"optional,omitempty"`
	// Reachable and KeyWorks are known only when the check got that far.
	Reachable *bool `json:"reachable,omitempty"`
	KeyWorks  *bool `json:"keyWorks,omitempty"`
	// Warning says what the user should know even when the check passes
	// (an upstream that is about to end).
	Warning string `json:"warning,omitempty"`
	// Limits are the upstream's rate-limit and quota headers, as sent.
	Limits map[string]string `json:"limits,omitempty"`
	// Requests counts the HTTP requests sent (at most one per host).
	Requests   int   `json:"requests"`
	DurationMs int64 `json:"durationMs"`
}

// Report is the outcome of a run.
type Report struct {
	Version string    `json:"version,omitempty"`
	Checked time.Time `json:"checked"`
	// OK is false when a configured upstream failed.
	OK      bool     `json:"ok"`
	Results []Result `json:"results"`
}

// Failing counts the failing checks.
func (r Report) Failing() int {
	n := 0
	for _, res := range r.Results {
		if res.Status == Failing {
			n++
		}
	}
	return n
}

// Check is one upstream's check.
type Check struct {
	Name  string // short, e.g. "brave"
	Title string // e.g. "Brave Search"
	// Endpoint is the address the check calls, shown to the user.
	Endpoint string
	// Configured says whether the configuration names this upstream; when
	// false, Fix says how to configure it and Run is not called.
	Configured bool
	// Missing says what is missing when not configured (the Detail).
	Missing string
	// Optional marks an engine with a built-in stand-in (SQLite, the
	// in-process index): not configured is then no fault, so no Fix is
	// given; Fix applies only when it is configured and failing.
	Optional bool
	// Fix is what to do when the check fails for want of a valid key or
	// configuration (a rejected key, a bad URL).
	Fix string
	// CostsQuota marks checks that spend the user's quota; Cost says how
	// much ("one web search").
	CostsQuota bool
	Cost       string
	// Warning is reported whatever the outcome (see [Result.Warning]).
	Warning string
	// Run makes the check's one call with hc, which counts and bounds the
	// requests, and returns what worked. Its error is classified with what
	// the transport saw: no answer, 401/403, 429, another status, or an
	// answer the client could not use.
	Run func(ctx context.Context, hc *http.Client) (detail string, err error)
}

// Options tunes [Run].
type Options struct {
	// Timeout bounds each check; 0 means DefaultTimeout.
	Timeout time.Duration
	// AllowQuota runs the checks that cost quota; otherwise they are
	// reported as skipped.
	AllowQuota bool
	// Transport is the base of every check's HTTP client; nil means a new
	// httpclient.NewTransport per run.
	Transport http.RoundTripper
	// Wrap, when set, wraps each check's transport (a recorder's
	// Transport, for `toolport doctor --record`).
	Wrap func(upstream string, rt http.RoundTripper) http.RoundTripper
	// Secrets are scrubbed from every message.
	Secrets []string
	// Version goes into the report.
	Version string
	// Now replaces time.Now.
	Now func() time.Time
}

// Run runs checks in parallel and returns their results in the checks'
// order.
func Run(ctx context.Context, checks []Check, o Options) Report {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base := o.Transport
	if base == nil {
		t := httpclient.NewTransport()
		defer t.CloseIdleConnections()
		base = t
	}
	scrub := record.NewScrubber(o.Secrets...)
	rep := Report{Version: o.Version, Checked: o.Now().UTC(), Results: make([]Result, len(checks))}
	var wg sync.WaitGroup
	for i, c := range checks {
		res := Result{Name: c.Name, Title: c.Title, Endpoint: c.Endpoint, CostsQuota: c.CostsQuota, Optional: c.Optional, Warning: c.Warning}
		switch {
		case !c.Configured:
			res.Status, res.Detail = NotConfigured, c.Missing
			if !c.Optional {
				res.Fix = c.Fix
			}
			rep.Results[i] = res
			continue
		case c.CostsQuota && !o.AllowQuota:
			res.Status = Skipped
			res.Detail = "costs quota (" + c.Cost + "); not run"
			res.Fix = "run `toolport doctor --yes`, or press \"Include checks that cost quota\" in the page's settings, to include it"
			rep.Results[i] = res
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.Results[i] = runOne(ctx, c, res, base, o, scrub)
		}()
	}
	wg.Wait()
	rep.OK = rep.Failing() == 0
	return rep
}

func runOne(ctx context.Context, c Check, res Result, base http.RoundTripper, o Options, scrub *record.Scrubber) Result {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rt := base
	if o.Wrap != nil {
		rt = o.Wrap(c.Name, rt)
	}
	p := &probe{next: rt, seen: map[string]bool{}}
	hc := &http.Client{Transport: p, CheckRedirect: httpclient.NoRedirect}
	start := o.Now()
	detail, err := safeRun(ctx, c, hc)
	res.DurationMs = o.Now().Sub(start).Milliseconds()

	p.mu.Lock()
	defer p.mu.Unlock()
	res.Requests, res.Limits = p.sent, p.limits
	for k, v := range res.Limits { // an upstream may echo anything in a header
		res.Limits[k] = scrub.String(v)
	}
	if p.status != 0 || err == nil {
		res.Reachable = ptr(true)
	}
	if err == nil {
		res.Status, res.Detail = OK, scrub.String(detail)
		if p.status != 0 {
			res.KeyWorks = ptr(true)
		}
		return res
	}
	res.Status = Failing
	res.Detail, res.Fix = classify(ctx, c, p, err)
	res.Detail, res.Fix = scrub.String(res.Detail), scrub.String(res.Fix)
	switch {
	case strings.HasPrefix(res.Detail, "key rejected"):
		res.KeyWorks = ptr(false)
	case p.status == http.StatusTooManyRequests:
		res.KeyWorks = ptr(true)
	case p.status == 0 && p.transportErr != nil:
		res.Reachable = ptr(false)
	}
	return res
}

// safeRun runs the check, turning a panic into a failure.
func safeRun(ctx context.Context, c Check, hc *http.Client) (detail string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the check failed unexpectedly: %v", r)
		}
	}()
	return c.Run(ctx, hc)
}

// classify says why a check failed and what to do, from what its transport
// saw first: a retry or a fallback request the probe refused says nothing
// the first answer did not.
func classify(ctx context.Context, c Check, p *probe, err error) (detail, fix string) {
	msg := httpclient.OneLine(err.Error(), 300)
	var te *tool.Error
	var le *llm.Error
	keyRejected := errors.As(err, &te) && te.Code == tool.CodeAuthInvalid || errors.As(err, &le) && le.Code == llm.CodeAuth && le.Status != 0
	switch {
	case errors.As(err, &te) && te.Code == tool.CodeConfig && p.status != 0:
		// The upstream answered, and the tool says its settings, not a key,
		// are wrong: SearXNG's 403 for a disabled JSON format.
		return fmt.Sprintf("misconfigured (HTTP %d): %s", p.status, msg), c.Fix
	case p.status == http.StatusUnauthorized || p.status == http.StatusForbidden || keyRejected && p.status < 500:
		return fmt.Sprintf("key rejected (HTTP %d): %s", p.status, msg), c.Fix
	case p.status == http.StatusTooManyRequests:
		d := "rate limited (HTTP 429"
		if ra := p.header.Get("Retry-After"); ra != "" {
			d += ", Retry-After " + httpclient.Clip(ra, 40)
		}
		return d + "): " + msg, "the key works; wait for the limit to reset, or raise the plan's quota"
	case p.status >= 500:
		return fmt.Sprintf("upstream error (HTTP %d): %s", p.status, msg), "the upstream is failing; try again later"
	case p.status >= 300:
		return fmt.Sprintf("unexpected HTTP %d: %s", p.status, msg), "check the base URL (" + c.Endpoint + ")"
	case p.status >= 200 && (errors.Is(err, errOneRequest) || strings.Contains(msg, errOneRequest.Error())):
		return "answered, but the client then needed a second request, which the doctor does not send: " + msg,
			"nothing may be wrong: the first answer asked for more (a redirect, a page, a fallback); check the base URL (" + c.Endpoint + ")"
	case p.status >= 200:
		return "answered, but not in the shape the client expects: " + msg,
			"the API may have changed: record it with `toolport doctor --record DIR` and report the diff (see CONTRIBUTING.md)"
	case p.transportErr != nil:
		return "unreachable: " + describeNetErr(p.transportErr), "check the network, a proxy, or the base URL (" + c.Endpoint + ")"
	case ctx.Err() != nil:
		return "no answer in time: " + msg, "the upstream is slow or unreachable; check the address (" + c.Endpoint + ")"
	}
	return msg, c.Fix
}

// describeNetErr names a transport failure without the URL it was for.
func describeNetErr(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.As(err, &dns):
		return "cannot resolve " + dns.Name
	case errors.As(err, &op) && op.Op == "dial":
		return "cannot connect: " + httpclient.OneLine(op.Err.Error(), 200)
	}
	return httpclient.OneLine(err.Error(), 200)
}

func ptr[T any](v T) *T { return &v }

// probe is a check's transport: it sends at most one request per host,
// and keeps the first answer's status and rate-limit headers and the first
// transport error.
type probe struct {
	next http.RoundTripper

	mu           sync.Mutex
	seen         map[string]bool
	sent         int
	status       int
	header       http.Header
	limits       map[string]string
	transportErr error
}

// errOneRequest refuses a second request to a host.
var errOneRequest = errors.New("doctor: one request per upstream; a second was not sent")

func (p *probe) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	if p.seen[req.URL.Host] {
		p.mu.Unlock()
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errOneRequest
	}
	p.seen[req.URL.Host] = true
	p.sent++
	p.mu.Unlock()

	resp, err := p.next.RoundTrip(req)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.transportErr == nil {
			p.transportErr = err
		}
		return nil, err
	}
	// The last host's answer is the one that says most (TIDAL's token
	// endpoint answers before its API), unless an earlier one failed.
	if p.status == 0 || p.status < 300 {
		p.status, p.header = resp.StatusCode, resp.Header.Clone()
	}
	for k, vs := range resp.Header {
		if isLimitHeader(k) {
			if p.limits == nil {
				p.limits = map[string]string{}
			}
			p.limits[k] = httpclient.Clip(strings.Join(vs, ", "), 120)
		}
	}
	return resp, nil
}

func isLimitHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "retry-after" || strings.Contains(n, "ratelimit") || strings.Contains(n, "rate-limit") || strings.Contains(n, "quota")
}

// LimitsLine renders limits sorted, for one-line output.
func LimitsLine(limits map[string]string) string {
	keys := make([]string, 0, len(limits))
	for k := range limits {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+limits[k])
	}
	return strings.Join(parts, "; ")
}
