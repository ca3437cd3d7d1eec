// Package webfetch declares the web_fetch tool: fetch a URL and return the
// Markdown of its main content, paged by lines.
//
// Fetching goes through safehttp (address policy checked at connect time on
// every hop, body and time bounds); extraction through extract (charset
// detection, main-content extraction, HTML to Markdown). This package decides
// what a response means: which statuses and content types are errors, and
// when a page is an anti-bot wall rather than content.
package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/toolport/toolport/extract"
	"github.com/toolport/toolport/internal/config"
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
	// UserAgent replaces safehttp's browser-like default.
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
	// HTTP, when set, is used instead of a client built from the fields
	// above (tests inject resolvers and TLS roots this way).
	HTTP *safehttp.Client
}

// ConfigFromEnv reads TOOLPORT_FETCH_ALLOW_PRIVATE, TOOLPORT_FETCH_MAX_BYTES,
// TOOLPORT_FETCH_TIMEOUT (a Go duration such as 20s), TOOLPORT_FETCH_USER_AGENT,
// TOOLPORT_FETCH_MAX_CONCURRENT, TOOLPORT_FETCH_MAX_INFLIGHT_BYTES and
// TOOLPORT_FETCH_QUEUE_WAIT (a duration).
func ConfigFromEnv(c *config.Config) (Config, error) {
	cfg := Config{AllowPrivate: c.Bool("TOOLPORT_FETCH_ALLOW_PRIVATE"), UserAgent: c.Env("TOOLPORT_FETCH_USER_AGENT")}
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

// Input is web_fetch's arguments, as the spec defines them.
type Input struct {
	URL    string `json:"url" jsonschema:"The URL to fetch content from" schema:"format=uri,minLength=1,maxLength=8192"`
	Offset int    `json:"offset,omitempty" jsonschema:"Line number to start reading from (1-based)" schema:"minimum=1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Maximum number of lines to return" schema:"minimum=1"`
}

// Output is a fetched page. Content holds the requested lines of the Markdown.
type Output struct {
	URL        string `json:"url" jsonschema:"The fetched URL, after redirects"`
	Title      string `json:"title" jsonschema:"The page title"`
	Content    string `json:"content" jsonschema:"The page's main content as Markdown (the requested lines)"`
	TotalLines int    `json:"totalLines" jsonschema:"Lines in the whole Markdown, for paging with offset and limit"`
	Offset     int    `json:"offset" jsonschema:"The first line returned (1-based)"`
	Lines      int    `json:"lines" jsonschema:"How many lines were returned"`
	HasMore    bool   `json:"hasMore" jsonschema:"Whether lines follow the returned ones"`
	// ContentType is the media type of the response (text/html, text/plain, …).
	ContentType string `json:"contentType"`
}

// Summary says what was fetched.
func (o Output) Summary() string {
	title := o.Title
	if title == "" {
		title = o.URL
	}
	if o.HasMore || o.Offset > 1 {
		return fmt.Sprintf("Fetched %q: lines %d–%d of %d", title, o.Offset, o.Offset+max(o.Lines, 1)-1, o.TotalLines)
	}
	return fmt.Sprintf("Fetched %q (%d lines)", title, o.TotalLines)
}

const description = "Fetches content from a specified URL and returns it as markdown: the page's main content " +
	"(navigation, ads, footers and cookie banners dropped; headings, links, lists, tables and code kept). " +
	"Supports pagination via offset and limit parameters similar to file_read: totalLines says how many lines there are. " +
	"Plain text and JSON are returned as they are; PDFs and images are not supported. " +
	"Private and local network addresses are refused."

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
	f := &fetcher{http: hc, limit: newLimiter(cfg.MaxConcurrent, cfg.MaxInFlightBytes, cfg.QueueWait)}
	return tool.Must(tool.New(tool.Spec{
		Name: Name, Title: "Web fetch", Pack: "web", Description: description,
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true, Idempotent: true},
	}, f.fetch))
}

type fetcher struct {
	http  *safehttp.Client
	limit *limiter // shared by every call of this tool instance
}

func (f *fetcher) fetch(ctx context.Context, in Input) (Output, error) {
	// A malformed URL costs no slot: under load it must still fail as
	// INVALID_URL, not as a retryable RATE_LIMIT. (Addresses are checked
	// by the real client below.)
	if _, err := (safehttp.Policy{AllowPrivate: true}).CheckURL(in.URL); err != nil {
		return Output{}, fetchError(err)
	}
	release, err := f.limit.acquire(ctx)
	if err != nil {
		return Output{}, err
	}
	defer release()

	tool.ReportProgress(ctx, tool.Progress{Done: 0, Total: 2, Message: "fetching"})
	resp, err := f.http.Get(ctx, in.URL, nil)
	if err != nil {
		return Output{}, fetchError(err)
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
	title, markdown, mediaType, err := render(ctx, resp)
	if err != nil {
		return Output{}, err
	}
	out := page(markdown, in.Offset, in.Limit)
	out.URL, out.Title, out.ContentType = resp.URL.String(), title, mediaType
	tool.ReportProgress(ctx, tool.Progress{Done: 2, Total: 2, Message: "done"})
	return out, nil
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
	return Output{
		Content: strings.Join(lines[start:end], "\n"), TotalLines: total,
		Offset: offset, Lines: end - start, HasMore: end < total,
	}
}

// render turns a response body into a title and Markdown according to its type.
func render(ctx context.Context, resp *safehttp.Response) (title, markdown, mediaType string, err error) {
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
		doc, err := extract.Extract(ctx, utf8, resp.URL, extract.Options{})
		switch {
		case errors.Is(err, extract.ErrNoContent):
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "The page at %s has no readable content (it may need JavaScript to render)", hostPath(resp))
		case err != nil && ctx.Err() != nil:
			return "", "", mediaType, ctx.Err()
		case err != nil:
			return "", "", mediaType, tool.Errorf(tool.CodeParse, "Failed to parse HTML: %v", err)
		}
		return doc.Title, doc.Markdown, mediaType, nil
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

type contentKind int

const (
	kindOther contentKind = iota
	kindHTML
	kindText
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
	case mediaType == "", mediaType == "application/octet-stream", mediaType == "binary/octet-stream":
		// Servers that do not say: sniff, as a browser would.
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
