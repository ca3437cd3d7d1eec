// Package webfetch declares the web_fetch tool: fetch a URL and return the
// Markdown of its main content (or, with raw, the decoded document), paged
// by lines or by characters.
//
// Fetching goes through safehttp (address policy checked at connect time on
// every hop, body and time bounds); extraction through extract (charset
// detection, main-content extraction, HTML to Markdown). This package decides
// what a response means: which statuses and content types are errors, and
// when a page is an anti-bot wall rather than content. Before a page is
// fetched, its origin's robots.txt is consulted (see internal/robots), and
// so is each redirect target's, before the redirect is followed. When the
// extraction keeps under a tenth of the text the page shows, the result's
// notice says so and points to raw (see coverageNotice).
//
// A page whose HTML is an app shell (scripts, almost no text) is rendered
// in a local Chromium when one is configured (Config.Render, from
// TOOLPORT_FETCH_BROWSER), or when the call asks with render: true; see
// internal/render, which answers every request of the page through this
// tool's own safehttp client. Without a browser, the result's notice says
// the page needs JavaScript.
package webfetch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/toolport/toolport/extract"
	"github.com/toolport/toolport/extract/pdftext"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/render"
	"github.com/toolport/toolport/internal/robots"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// Name is the tool's name.
const Name = "web_fetch"

// Config holds web_fetch's settings. The zero value is the safe default.
type Config struct {
	// AllowPrivate lets web_fetch reach private, loopback and link-local
	// addresses (TOOLPORT_FETCH_ALLOW_PRIVATE=1): for intranets and tests.
	AllowPrivate bool
	// Allow lists address ranges reachable despite the policy.
	Allow []netip.Prefix
	// MaxBodyBytes caps the page size (default 10 MiB, TOOLPORT_FETCH_MAX_BYTES).
	MaxBodyBytes int64
	// Timeout bounds a whole fetch (default 30 s, TOOLPORT_FETCH_TIMEOUT).
	Timeout time.Duration
	// ConnectTimeout bounds DNS and connect (default 10 s).
	ConnectTimeout time.Duration
	// UserAgent replaces safehttp's browser-like default. Its last product
	// token ("Toolport" in the default) names web_fetch in robots.txt.
	UserAgent string
	// MaxConcurrent bounds the fetches in progress at once, across every
	// caller of one tool instance (default 8, TOOLPORT_FETCH_MAX_CONCURRENT).
	MaxConcurrent int
	// MaxInFlightBytes bounds the page bodies held for extraction at once
	// (default 24 MiB, TOOLPORT_FETCH_MAX_INFLIGHT_BYTES). A page larger
	// than this is processed alone.
	MaxInFlightBytes int64
	// QueueWait is how long a call waits for a slot or for bytes before
	// it fails with a retryable RATE_LIMIT error (default 5 s,
	// TOOLPORT_FETCH_QUEUE_WAIT).
	QueueWait time.Duration
	// IgnoreRobots skips robots.txt (TOOLPORT_FETCH_IGNORE_ROBOTS=1), for
	// deployments where every fetch is one a person asked for. By default
	// a page is fetched only when its origin's robots.txt allows it.
	IgnoreRobots bool
	// RobotsTimeout bounds one robots.txt fetch (default 5 s); a robots.txt
	// that does not answer in time disallows the fetch, as RFC 9309 says.
	RobotsTimeout time.Duration
	// PDF bounds PDF extraction (pages, characters, time, parsers at
	// once); zero fields take pdftext's defaults.
	PDF pdftext.Options
	// Render configures the browser that renders JavaScript-built pages;
	// an empty Render.ChromiumPath (TOOLPORT_FETCH_BROWSER unset) disables
	// rendering. HTTP, UserAgent and CheckRequest are set by Tool: the
	// page's requests go through this tool's client and robots.txt.
	Render render.Options
	// HTTP, when set, is used instead of a client built from the fields
	// above (tests inject resolvers and TLS roots this way).
	HTTP *safehttp.Client
}

// ConfigFromEnv reads TOOLPORT_FETCH_ALLOW_PRIVATE, TOOLPORT_FETCH_MAX_BYTES,
// TOOLPORT_FETCH_TIMEOUT (a Go duration such as 20s), TOOLPORT_FETCH_USER_AGENT,
// TOOLPORT_FETCH_MAX_CONCURRENT, TOOLPORT_FETCH_MAX_INFLIGHT_BYTES,
// TOOLPORT_FETCH_QUEUE_WAIT (a duration), TOOLPORT_FETCH_IGNORE_ROBOTS and
// TOOLPORT_FETCH_BROWSER (a Chromium binary, a path or a name on PATH).
func ConfigFromEnv(c *config.Config) (Config, error) {
	cfg := Config{
		AllowPrivate: c.Bool("TOOLPORT_FETCH_ALLOW_PRIVATE"), UserAgent: c.Env("TOOLPORT_FETCH_USER_AGENT"),
		IgnoreRobots: c.Bool("TOOLPORT_FETCH_IGNORE_ROBOTS"),
	}
	if b := strings.TrimSpace(c.Env("TOOLPORT_FETCH_BROWSER")); b != "" {
		// A browser that is not there is a configuration error, said at
		// start, not a surprise at the first JavaScript page.
		path, err := exec.LookPath(b)
		if err != nil {
			return cfg, fmt.Errorf("TOOLPORT_FETCH_BROWSER: %w", err)
		}
		cfg.Render.ChromiumPath = path
	}
	var err error
	if cfg.MaxBodyBytes, err = envPositive(c, "TOOLPORT_FETCH_MAX_BYTES", "bytes"); err != nil {
		return cfg, err
	}
	if cfg.MaxInFlightBytes, err = envPositive(c, "TOOLPORT_FETCH_MAX_INFLIGHT_BYTES", "bytes"); err != nil {
		return cfg, err
	}
	n, err := envPositive(c, "TOOLPORT_FETCH_MAX_CONCURRENT", "fetches")
	if err != nil {
		return cfg, err
	}
	if n > 1<<16 {
		return cfg, fmt.Errorf("TOOLPORT_FETCH_MAX_CONCURRENT: at most 65536, got %d", n)
	}
	cfg.MaxConcurrent = int(n)
	if cfg.Timeout, err = envDuration(c, "TOOLPORT_FETCH_TIMEOUT"); err != nil {
		return cfg, err
	}
	if cfg.QueueWait, err = envDuration(c, "TOOLPORT_FETCH_QUEUE_WAIT"); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// envPositive reads a positive integer; unset is zero (the default).
func envPositive(c *config.Config, name, unit string) (int64, error) {
	v := c.Env(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: want a positive number of %s, got %q", name, unit, v)
	}
	return n, nil
}

// envDuration reads a positive Go duration such as 20s; unset is zero.
func envDuration(c *config.Config, name string) (time.Duration, error) {
	v := c.Env(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a duration such as 20s, got %q", name, v)
	}
	return d, nil
}

// Character paging bounds: max_length defaults to DefaultMaxLength and may
// be at most MaxMaxLength, as in the reference MCP fetch server.
const (
	DefaultMaxLength = 5000
	MaxMaxLength     = 1_000_000
)

// Input is web_fetch's arguments: the spec's url, offset and limit, plus
// optional raw mode and character paging (start_index, max_length), which
// cannot be combined with offset and limit.
type Input struct {
	URL    string `json:"url" jsonschema:"The URL to fetch content from" schema:"format=uri,minLength=1,maxLength=8192"`
	Offset int    `json:"offset,omitempty" jsonschema:"Line number to start reading from (1-based)" schema:"minimum=1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Maximum number of lines to return" schema:"minimum=1"`
	// Pointers: 0 is a valid start_index, so absent must be told apart.
	StartIndex *int `json:"start_index,omitempty" jsonschema:"Character to start reading from (0-based); instead of offset/limit" schema:"minimum=0"`
	MaxLength  *int `json:"max_length,omitempty" jsonschema:"Maximum number of characters to return (default 5000); instead of offset/limit" schema:"minimum=1,maximum=1000000"`
	Raw        bool `json:"raw,omitempty" jsonschema:"Return the whole decoded document (e.g. HTML source) instead of its main content as markdown"`
	Render     bool `json:"render,omitempty" jsonschema:"Run the page's JavaScript in a browser first (single-page apps; detected ones are rendered anyway)"`
}

// Output is a fetched page. Content holds the requested part of the
// Markdown (or of the raw document).
type Output struct {
	URL        string `json:"url" jsonschema:"The fetched URL, after redirects"`
	Title      string `json:"title" jsonschema:"The page title"`
	Content    string `json:"content" jsonschema:"The page's main content as Markdown (the requested lines)"`
	TotalLines int    `json:"totalLines" jsonschema:"Lines in the whole Markdown, for paging with offset and limit"`
	Offset     int    `json:"offset" jsonschema:"The first line returned (1-based)"`
	Lines      int    `json:"lines" jsonschema:"How many lines were returned"`
	HasMore    bool   `json:"hasMore" jsonschema:"Whether content follows the returned part"`
	// NextOffset is the offset of the next page, when there is one (line paging).
	NextOffset int `json:"nextOffset,omitempty" jsonschema:"The offset to pass for the next page, when hasMore"`
	// TotalChars counts the characters (Unicode code points) of the whole document.
	TotalChars int `json:"totalChars" jsonschema:"Characters in the whole Markdown, for paging with start_index and max_length"`
	// StartIndex and NextStartIndex are set in character paging only.
	StartIndex     *int `json:"startIndex,omitempty" jsonschema:"The first character returned (0-based), in character paging"`
	NextStartIndex *int `json:"nextStartIndex,omitempty" jsonschema:"The start_index to pass for the next page, when hasMore"`
	// ContentType is the media type of the response (text/html, text/plain, …).
	ContentType string `json:"contentType"`
	// Raw says that Content is the decoded document, not extracted Markdown.
	Raw bool `json:"raw,omitempty"`
	// CanonicalURL is the page's declared canonical URL (link rel=canonical).
	CanonicalURL string `json:"canonicalUrl,omitempty" jsonschema:"The page's canonical URL, when it declares one"`
	// SiteName is the site's name as the page declares it (og:site_name,
	// else its JSON-LD's web site or publisher).
	SiteName string `json:"siteName,omitempty" jsonschema:"The site's name, when the page declares one"`
	// Lang is the page's language (BCP 47): <html lang>, a Content-Language
	// meta or header, else the extractor's finding (HTML only).
	Lang string `json:"lang,omitempty" jsonschema:"The page's language (BCP 47), when known"`
	// Notice warns that the extracted content may be incomplete: it kept
	// much less of the page's visible text than is usual for an article
	// page, and says how to get all of it.
	Notice string `json:"notice,omitempty" jsonschema:"A warning that the content may be incomplete, and how to get the whole page"`
	// Rendered says the content was extracted from the page as a browser
	// showed it after running its scripts.
	Rendered bool `json:"rendered,omitempty" jsonschema:"Whether the page was rendered in a browser (its JavaScript run) before extraction"`

	// requested is the URL the call asked for: the text form names the
	// fetched URL only when it differs (a redirect). A cached value does
	// not keep it, and names the URL always.
	requested string
}

// Summary says what was fetched.
func (o Output) Summary() string {
	title := o.Title
	if title == "" {
		title = o.URL
	}
	if o.StartIndex != nil {
		return fmt.Sprintf("Fetched %q: characters %d–%d of %d", title, *o.StartIndex, *o.StartIndex+utf8.RuneCountInString(o.Content), o.TotalChars)
	}
	if o.HasMore || o.Offset > 1 {
		return fmt.Sprintf("Fetched %q: lines %d–%d of %d", title, o.Offset, o.Offset+max(o.Lines, 1)-1, o.TotalLines)
	}
	return fmt.Sprintf("Fetched %q (%d lines)", title, o.TotalLines)
}

// description is what a model reads on every call: the spec's sentences,
// the default bound, and what the schema cannot say.
const description = "Fetches content from a specified URL and returns it as markdown: its main content. " +
	"Supports pagination via offset and limit parameters similar to file_read, or by characters (start_index, max_length). " +
	"A call with neither returns at most 5000 characters; the result says how to go on. " +
	"PDFs come as text with <!-- page N --> before each page. " +
	"Private network addresses and pages robots.txt disallows are refused."

// Tool declares web_fetch.
func Tool(cfg Config) *tool.Tool {
	hc := cfg.HTTP
	if hc == nil {
		hc = safehttp.NewClient(safehttp.Options{
			Policy:         safehttp.Policy{AllowPrivate: cfg.AllowPrivate, Allow: cfg.Allow},
			MaxBodyBytes:   cfg.MaxBodyBytes,
			Timeout:        cfg.Timeout,
			ConnectTimeout: cfg.ConnectTimeout,
			UserAgent:      cfg.UserAgent,
		})
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxInFlightBytes <= 0 {
		cfg.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	f := &fetcher{http: hc, limit: newLimiter(cfg.MaxConcurrent, cfg.MaxInFlightBytes, cfg.QueueWait), pdf: pdftext.New(cfg.PDF)}
	if !cfg.IgnoreRobots {
		f.robots = robots.NewChecker(robots.Options{HTTP: hc, UserAgent: cfg.UserAgent, Timeout: cfg.RobotsTimeout})
	}
	if cfg.Render.ChromiumPath != "" {
		ro := cfg.Render
		ro.HTTP, ro.UserAgent = hc, cmp.Or(cfg.UserAgent, safehttp.DefaultUserAgent)
		if f.robots != nil {
			ro.CheckRequest = f.robots.Check
		}
		f.browser = render.New(ro)
	}
	return tool.Must(tool.New(tool.Spec{
		Name: Name, Title: "Web fetch", Pack: "web", Description: description,
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true, Idempotent: true},
	}, f.fetch))
}

type fetcher struct {
	http   *safehttp.Client
	limit  *limiter        // shared by every call of this tool instance
	robots *robots.Checker // nil when robots.txt is ignored
	pdf    *pdftext.Extractor
	// browser renders JavaScript-built pages; nil when none is configured.
	browser *render.Renderer
}

func (f *fetcher) fetch(ctx context.Context, in Input) (Output, error) {
	// A malformed URL costs no slot: under load it must still fail as
	// INVALID_URL, not as a retryable RATE_LIMIT. (Addresses are checked
	// by the real client below.)
	target, err := (safehttp.Policy{AllowPrivate: true}).CheckURL(in.URL)
	if err != nil {
		return Output{}, fetchError(err)
	}
	charPaging := in.StartIndex != nil || in.MaxLength != nil
	if charPaging && (in.Offset != 0 || in.Limit != 0) {
		return Output{}, &tool.Error{Code: tool.CodeValidation,
			Message: "Page either by lines (offset, limit) or by characters (start_index, max_length), not both"}
	}
	release, err := f.limit.acquire(ctx)
	if err != nil {
		return Output{}, err
	}
	defer release()

	tool.ReportProgress(ctx, tool.Progress{Done: 0, Total: 2, Message: "fetching"})
	if err := f.allowed(ctx, target); err != nil {
		return Output{}, err
	}
	// Every redirect target is checked against its origin's robots.txt
	// before it is requested, the last one included: a chain through a
	// disallowed path stops there.
	var hopCheck safehttp.RedirectCheck
	if f.robots != nil {
		hopCheck = f.robots.Check
	}
	resp, err := f.http.GetCheckingRedirects(ctx, in.URL, nil, hopCheck)
	if err != nil {
		return Output{}, robotsError(err, target)
	}
	if err := checkResponse(resp); err != nil {
		return Output{}, err
	}
	// Extraction holds a parse tree several times the body's size: admit
	// it against the byte budget, with the body already counted in.
	releaseBytes, err := f.limit.reserve(ctx, int64(len(resp.Body)))
	if err != nil {
		return Output{}, err
	}
	defer releaseBytes()
	tool.ReportProgress(ctx, tool.Progress{Done: 1, Total: 2, Message: "extracting"})
	var info pageInfo
	title, markdown, mediaType, err := f.render(ctx, resp, in, &info)
	if err != nil {
		return Output{}, err
	}
	var out Output
	switch {
	case in.Offset != 0 || in.Limit != 0:
		out = page(markdown, in.Offset, in.Limit)
	case in.MaxLength != nil:
		out = pageChars(markdown, deref(in.StartIndex), *in.MaxLength)
	case in.StartIndex == nil && utf8.RuneCountInString(markdown) <= DefaultMaxLength:
		// A short page, asked for without paging, is returned whole as before.
		out = page(markdown, 0, 0)
	default:
		// No max_length: a long page must not come back whole (a model pays
		// for every character), so return DefaultMaxLength characters at
		// most, ending at a break, and nextStartIndex to go on from.
		out = pageCharsAtBreak(markdown, deref(in.StartIndex), DefaultMaxLength)
	}
	out.URL, out.Title, out.ContentType, out.Raw, out.requested = resp.URL.String(), title, mediaType, in.Raw, in.URL
	out.CanonicalURL, out.Lang, out.SiteName, out.Notice = info.canonical, info.lang, info.siteName, info.notice
	out.Rendered = info.rendered
	tool.ReportProgress(ctx, tool.Progress{Done: 2, Total: 2, Message: "done"})
	return out, nil
}

// allowed consults robots.txt for u, unless robots are ignored.
func (f *fetcher) allowed(ctx context.Context, u *url.URL) error {
	if f.robots == nil {
		return nil
	}
	if err := f.robots.Check(ctx, u); err != nil {
		return robotsError(err, u)
	}
	return nil
}

// robotsError maps a robots.txt refusal, of the URL asked for or of a
// redirect on the way from it (asked), to ROBOTS_DISALLOWED, and any other
// error as a fetch error.
func robotsError(err error, asked *url.URL) error {
	var de *robots.DisallowedError
	if !errors.As(err, &de) {
		return fetchError(err)
	}
	via := ""
	if !strings.EqualFold(de.Origin, asked.Scheme+"://"+asked.Host) || de.Path != cmp.Or(asked.EscapedPath(), "/") {
		via = " (a redirect from the URL asked for)"
	}
	return &tool.Error{Code: tool.CodeRobotsDisallowed, Err: err, Message: fmt.Sprintf(
		"Not fetching %s%s%s: %s. web_fetch respects robots.txt (the operator can set TOOLPORT_FETCH_IGNORE_ROBOTS=1)",
		de.Origin, de.Path, via, de.Reason)}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// page cuts the requested lines out of the Markdown.
func page(markdown string, offset, limit int) Output {
	lines := strings.Split(strings.TrimRight(markdown, "\n"), "\n")
	if markdown == "" {
		lines = nil
	}
	total := len(lines)
	if offset < 1 {
		offset = 1
	}
	start := min(offset-1, total)
	end := total
	if limit > 0 {
		end = min(start+limit, total)
	}
	out := Output{
		Content: strings.Join(lines[start:end], "\n"), TotalLines: total, TotalChars: utf8.RuneCountInString(markdown),
		Offset: offset, Lines: end - start, HasMore: end < total,
	}
	if out.HasMore {
		out.NextOffset = end + 1
	}
	return out
}

// pageChars cuts max characters (code points) from start out of the
// Markdown. Offset and Lines then say which lines the slice touches.
func pageChars(markdown string, start, maxLength int) Output {
	return cutChars(markdown, start, maxLength, false)
}

// pageCharsAtBreak is pageChars for a length the caller did not choose: a
// part that does not reach the end ends after its last line break, else
// after its last space, when that keeps at least half of it, so that no
// word is split across two calls.
func pageCharsAtBreak(markdown string, start, maxLength int) Output {
	return cutChars(markdown, start, maxLength, true)
}

func cutChars(markdown string, start, maxLength int, atBreak bool) Output {
	start = max(start, 0)
	maxLength = min(max(maxLength, 1), MaxMaxLength)
	total := utf8.RuneCountInString(markdown)
	totalLines := 0
	if markdown != "" {
		totalLines = strings.Count(strings.TrimRight(markdown, "\n"), "\n") + 1
	}
	from := byteIndex(markdown, min(start, total))
	to := from + byteIndex(markdown[from:], maxLength)
	if atBreak && to < len(markdown) {
		to = from + lastBreak(markdown[from:to], markdown[to:])
	}
	out := Output{
		Content: markdown[from:to], TotalLines: totalLines, TotalChars: total,
		StartIndex: &start, HasMore: to < len(markdown),
	}
	if out.Content != "" {
		out.Offset = strings.Count(markdown[:from], "\n") + 1
		out.Lines = strings.Count(strings.TrimRight(out.Content, "\n"), "\n") + 1
	}
	if out.HasMore {
		next := start + utf8.RuneCountInString(out.Content)
		out.NextStartIndex = &next
	}
	return out
}

// lastBreak is how many bytes of part to keep so that it ends at a line or
// word break, rest being the text after it: all of part when rest already
// starts with a space, or when the last break would leave less than half.
func lastBreak(part, rest string) int {
	if r, _ := utf8.DecodeRuneInString(rest); unicode.IsSpace(r) {
		return len(part)
	}
	half := len(part) / 2
	if i := strings.LastIndexByte(part, '\n'); i >= half {
		return i + 1
	}
	if i := strings.LastIndexFunc(part, unicode.IsSpace); i >= half {
		_, size := utf8.DecodeRuneInString(part[i:])
		return i + size
	}
	return len(part)
}

// byteIndex is the byte offset of the n-th code point of s, or len(s).
func byteIndex(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// render turns a response body into a title and Markdown according to its type.
// With raw, an HTML page is returned decoded but not extracted.
// pageInfo is what a page declares about itself, filled in by render.
type pageInfo struct {
	canonical, lang, siteName, notice string
	rendered                          bool
}

// Extraction that keeps less than lowCoverage of a page's visible text,
// when at least minDroppedRunes of text are left out, is reported in
// Output.Notice. On trafilatura's 983 judged pages (extract's
// TestComparisonCoverage), the 57 pages under 0.10 had a judged recall of
// 0.19 to 0.42; every band above had 0.80 or more.
const (
	lowCoverage     = 0.10
	minDroppedRunes = 1000
)

// coverageNotice is the notice for a document that kept little of its
// page, or "".
func coverageNotice(doc *extract.Document) string {
	if doc.Coverage() >= lowCoverage || doc.PageRunes-doc.ContentRunes < minDroppedRunes {
		return ""
	}
	return fmt.Sprintf("The extracted content keeps only %d%% of the text this page shows (%d of %d characters): "+
		"the main content may be incomplete. Fetch again with raw: true for the whole HTML document.",
		int(doc.Coverage()*100), doc.ContentRunes, doc.PageRunes)
}

func (f *fetcher) render(ctx context.Context, resp *safehttp.Response, in Input, info *pageInfo) (title, markdown, mediaType string, err error) {
	raw := in.Raw
	mediaType, _, perr := mime.ParseMediaType(resp.ContentType)
	if perr != nil {
		mediaType = strings.ToLower(strings.TrimSpace(strings.Split(resp.ContentType, ";")[0]))
	}
	switch kind := classifyType(mediaType, resp.Body); kind {
	case kindHTML:
		utf8, err := extract.DecodeHTML(resp.Body, resp.ContentType)
		if err != nil {
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "Failed to decode the page's text: %v", err)
		}
		if isChallenge(resp, utf8) {
			return "", "", mediaType, blocked(resp)
		}
		if raw && in.Render && f.browser != nil {
			// The document as the browser shows it once its scripts ran.
			text, err := f.renderRaw(ctx, resp, info)
			return htmlTitle(text), string(text), mediaType, err
		}
		if raw {
			text := bytes.ToValidUTF8(utf8, []byte("\uFFFD"))
			return htmlTitle(text), string(text), mediaType, nil
		}
		if in.Render && f.browser != nil {
			title, markdown, err := f.renderJS(ctx, resp, info, nil, false)
			return title, markdown, mediaType, err
		}
		doc, err := extract.Extract(ctx, utf8, resp.URL, extract.Options{ContentLanguage: resp.Header.Get("Content-Language")})
		// An app shell is rendered (or, with no browser, said to need
		// JavaScript); so is any page the call asked to render.
		shell := (errors.Is(err, extract.ErrNoContent) || err == nil && doc.ContentRunes < thinRunes) && looksLikeAppShell(utf8)
		if in.Render || shell {
			if err != nil {
				doc = nil
			}
			title, markdown, err := f.renderJS(ctx, resp, info, doc, shell)
			return title, markdown, mediaType, err
		}
		switch {
		case errors.Is(err, extract.ErrNoContent):
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "The page at %s has no readable content (it may need JavaScript to render)", hostPath(resp))
		case err != nil && ctx.Err() != nil:
			return "", "", mediaType, ctx.Err()
		case err != nil:
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "Failed to parse HTML: %v", err)
		}
		info.canonical, info.lang, info.siteName = doc.Canonical, doc.Lang, doc.SiteName
		info.notice = coverageNotice(doc)
		return doc.Title, doc.Markdown, mediaType, nil
	case kindPDF:
		if raw {
			return "", "", mediaType, &tool.Error{Code: tool.CodeUnsupported,
				Message: fmt.Sprintf("raw mode returns text documents; %s is a PDF: fetch it without raw for its text", hostPath(resp))}
		}
		return f.renderPDF(ctx, resp, mediaType)
	case kindText:
		// Text and JSON pass through, decoded to UTF-8 by the same rules.
		utf8, err := extract.DecodeHTML(resp.Body, resp.ContentType)
		if err != nil {
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "Failed to decode the text: %v", err)
		}
		return "", string(bytes.ToValidUTF8(utf8, []byte("\uFFFD"))), mediaType, nil
	default:
		return "", "", mediaType, &tool.Error{Code: tool.CodeUnsupported,
			Message: fmt.Sprintf("web_fetch cannot read %s content (from %s): only HTML, plain text and JSON are supported", describeType(mediaType), hostPath(resp))}
	}
}

// pdfProgressSteps bounds the progress reports of one PDF.
const pdfProgressSteps = 50

// renderPDF extracts a PDF's text. Its failures get their own codes, so
// that an agent can tell a scan from a locked document from a broken one.
func (f *fetcher) renderPDF(ctx context.Context, resp *safehttp.Response, mediaType string) (title, markdown, _ string, err error) {
	// A long PDF takes seconds: report its pages as steps between
	// "extracting" (1) and "done" (2), at most pdfProgressSteps of them.
	last := -1
	pctx := pdftext.WithProgress(ctx, func(read, total int) {
		if step := read * pdfProgressSteps / max(total, 1); step != last {
			last = step
			// Below 2, so that "done" still advances (MCP drops a report that does not).
			tool.ReportProgress(ctx, tool.Progress{Done: 1 + float64(read)/float64(total+1), Total: 2,
				Message: fmt.Sprintf("reading PDF page %d of %d", read, total)})
		}
	})
	doc, err := f.pdf.Extract(pctx, resp.Body)
	switch {
	case err == nil:
		markdown = doc.Markdown
		if doc.Truncated {
			markdown += fmt.Sprintf("\n\n<!-- only the first %d of %d pages were read -->\n", doc.PagesRead, doc.Pages)
		}
		return doc.Title, markdown, mediaType, nil
	case errors.Is(err, pdftext.ErrEncrypted):
		return "", "", mediaType, &tool.Error{Code: tool.CodePDFEncrypted, Err: err,
			Message: fmt.Sprintf("The PDF at %s is encrypted (it needs a password), so its text cannot be read", hostPath(resp))}
	case errors.Is(err, pdftext.ErrNoText):
		return "", "", mediaType, &tool.Error{Code: tool.CodePDFNoText, Err: err,
			Message: fmt.Sprintf("The PDF at %s has no text layer (it is likely a scan); reading it would need OCR", hostPath(resp))}
	case errors.Is(err, pdftext.ErrTooLarge):
		return "", "", mediaType, &tool.Error{Code: tool.CodeUnsupported, Err: err,
			Message: fmt.Sprintf("The PDF at %s is too large to read: %v", hostPath(resp), strings.TrimPrefix(err.Error(), "pdftext: "))}
	case errors.Is(err, pdftext.ErrBusy):
		return "", "", mediaType, &tool.Error{Code: tool.CodeRateLimit, Retryable: true, Err: err,
			Message: "web_fetch is busy reading other PDFs; try again shortly"}
	case ctx.Err() != nil:
		return "", "", mediaType, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return "", "", mediaType, &tool.Error{Code: tool.CodeTimeout, Err: err,
			Message: fmt.Sprintf("Reading the PDF at %s took too long", hostPath(resp))}
	}
	return "", "", mediaType, &tool.Error{Code: tool.CodeParse, Err: err,
		Message: fmt.Sprintf("Failed to read the PDF at %s: it is malformed or uses features this reader does not support", hostPath(resp))}
}

// htmlTitle is the text of a document's first <title>, read up to <body>.
func htmlTitle(doc []byte) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "title":
				if z.Next() == html.TextToken {
					return strings.Join(strings.Fields(string(z.Text())), " ")
				}
				return ""
			case "body":
				return ""
			}
		}
	}
}

type contentKind int

const (
	kindOther contentKind = iota
	kindHTML
	kindText
	kindPDF
)

func classifyType(mediaType string, body []byte) contentKind {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return kindHTML
	case mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", mediaType == "text/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-ndjson":
		return kindText
	case strings.HasPrefix(mediaType, "text/"):
		return kindText
	case mediaType == "application/pdf", mediaType == "application/x-pdf":
		return kindPDF
	case mediaType == "", mediaType == "application/octet-stream", mediaType == "binary/octet-stream":
		// Servers that do not say: sniff, as a browser would.
		if pdftext.IsPDF(body) {
			return kindPDF
		}
		sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(body))
		if sniffed == "application/octet-stream" || sniffed == "" {
			return kindOther
		}
		return classifyType(sniffed, body)
	}
	return kindOther
}

func describeType(mediaType string) string {
	switch {
	case mediaType == "application/pdf":
		return "PDF"
	case strings.HasPrefix(mediaType, "image/"):
		return "image (" + mediaType + ")"
	case strings.HasPrefix(mediaType, "audio/"), strings.HasPrefix(mediaType, "video/"):
		return "media (" + mediaType + ")"
	case mediaType == "":
		return "binary"
	}
	return mediaType
}

// checkResponse maps HTTP error statuses. Anti-bot walls are recognised before
// the generic status mapping so that they read as BLOCKED, not as a 403.
func checkResponse(resp *safehttp.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	if isChallenge(resp, resp.Body) {
		return blocked(resp)
	}
	retryAfter := tool.ParseRetryAfter(resp.Header, time.Now())
	e := tool.HTTPStatusError(resp.StatusCode, retryAfter, fmt.Sprintf("HTTP %s (from %s)", resp.Status, hostPath(resp)))
	// The spec reports every HTTP failure as HTTP_ERROR (429 keeps RATE_LIMIT
	// so agents back off); keys play no part in a fetch, so 401/403/404 are
	// the page's answer, not ours to reinterpret.
	if e.Code != tool.CodeRateLimit {
		e.Code = tool.CodeHTTP
	}
	return e
}

func blocked(resp *safehttp.Response) error {
	return &tool.Error{Code: tool.CodeBlocked, Status: resp.StatusCode,
		Message: fmt.Sprintf("%s answered with an anti-bot challenge (HTTP %d) instead of the page: it cannot be fetched without a browser", resp.URL.Host, resp.StatusCode)}
}

// hostPath names the page in messages without its credentials, query or
// fragment (which may hold tokens).
func hostPath(resp *safehttp.Response) string {
	return safehttp.RedactURL(resp.URL.String())
}

// fetchError maps safehttp's typed errors to the contract's codes.
func fetchError(err error) error {
	var blockedErr *safehttp.BlockedError
	var tooLarge *safehttp.TooLargeError
	switch {
	case errors.As(err, &blockedErr):
		return &tool.Error{Code: tool.CodeBlocked, Err: err, Message: fmt.Sprintf(
			"Refusing to fetch %s: it resolves to %s, a %s address. web_fetch only reaches public addresses (set TOOLPORT_FETCH_ALLOW_PRIVATE=1 to allow private ones)",
			blockedErr.Host, blockedErr.Addr, blockedErr.Reason)}
	case errors.Is(err, safehttp.ErrUserinfo):
		return &tool.Error{Code: tool.CodeInvalidURL, Err: err, Message: "Invalid URL: URLs with credentials (user:password@) are not fetched"}
	case errors.Is(err, safehttp.ErrUnsupportedScheme):
		return &tool.Error{Code: tool.CodeInvalidURL, Err: err, Message: "Invalid URL: only http and https URLs can be fetched"}
	case errors.Is(err, safehttp.ErrInvalidURL):
		return &tool.Error{Code: tool.CodeInvalidURL, Err: err, Message: "Invalid URL: " + strings.TrimPrefix(err.Error(), "safehttp: ")}
	case errors.Is(err, safehttp.ErrTooManyRedirects):
		return &tool.Error{Code: tool.CodeHTTP, Err: err, Message: "Failed to fetch URL: too many redirects (limit 10)"}
	case errors.As(err, &tooLarge):
		return &tool.Error{Code: tool.CodeUnsupported, Err: err, Message: fmt.Sprintf("Failed to fetch URL: the page is larger than the %d MiB limit", tooLarge.Limit>>20)}
	case errors.Is(err, safehttp.ErrDecode):
		return &tool.Error{Code: tool.CodeParse, Err: err, Message: "Failed to fetch URL: the compressed body is corrupt"}
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return &tool.Error{Code: tool.CodeTimeout, Retryable: true, Err: err, Message: "Failed to fetch URL: " + strings.TrimPrefix(err.Error(), "safehttp: ")}
	}
	// Connection refused, reset, DNS failure: safehttp's text names host and
	// path only, never the query.
	return &tool.Error{Code: tool.CodeNetwork, Retryable: true, Err: err, Message: "Failed to fetch URL: " + strings.TrimPrefix(err.Error(), "safehttp: ")}
}
