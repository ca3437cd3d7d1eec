// Package record saves what Toolport's HTTP clients exchange with their
// upstreams, as fixtures the tests replay, with every secret removed.
//
// A [Recorder] hands out http.RoundTrippers that wrap the transports the
// clients already use. Each exchange is written under the recording
// directory as
//
//	DIR/manifest.json                      the index: date, Toolport version, one entry per exchange
//	DIR/<upstream>/<NNN>-<slug>.<ext>      the response body, byte for byte (secrets replaced by [REDACTED])
//	DIR/<upstream>/<NNN>-<slug>.headers.txt the status line and the headers that matter, "Name: value"
//
// the same body-plus-header-file layout as the fixtures under each client's
// testdata (read with tooltest.Fixture and tooltest.HeaderFixture), with the
// manifest saying which request each body answered. [Load] reads a recording
// back and [Replay] serves it to the real clients in tests.
//
// Secrets never reach the disk: credential headers (Authorization,
// X-Subscription-Token, cookies, …) are not written at all, credential query
// and form parameters (key=, api_key=, token=, …) are replaced by [REDACTED],
// and every secret the recorder was given or learnt on the way (a header's
// value, an OAuth token in a response body) is replaced by [REDACTED] wherever
// it appears, raw, URL-encoded, JSON-escaped or in base64. Learning is
// bounded ([MaxLearntPerBody], [MaxLearnt]); a body past the bounds has its
// credential fields redacted in place and the recording is reported
// incomplete ([Recorder.Err]).
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// FormatVersion is the manifest layout's version.
const FormatVersion = 1

// ManifestName is the manifest's file name in a recording directory.
const ManifestName = "manifest.json"

// MaxBodyBytes bounds each body the recorder keeps and [Load] reads back; a
// longer response is passed on to the client whole but recorded cut, and
// marked so.
const MaxBodyBytes = 8 << 20

// maxRequestBody bounds the request body kept in the manifest.
const maxRequestBody = 64 << 10

// Manifest indexes a recording.
type Manifest struct {
	Format    int        `json:"format"`
	Recorded  time.Time  `json:"recorded"`
	Version   string     `json:"toolportVersion"`
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one request and its answer.
type Exchange struct {
	Upstream string `json:"upstream"` // the label the transport was made with, e.g. "brave"
	Method   string `json:"method"`
	Host     string `json:"host"`
	Path     string `json:"path"`
	Query    string `json:"query,omitempty"` // raw, scrubbed
	// RequestBody is a textual request body (form or JSON), scrubbed;
	// absent when there was none or it was binary or long.
	RequestBody string `json:"requestBody,omitempty"`
	Status      int    `json:"status,omitempty"` // 0 when no response came
	// Error is the transport error when no response came (connection
	// refused, timeout), scrubbed.
	Error string `json:"error,omitempty"`
	// Body and Headers name files relative to the recording directory.
	Body      string `json:"body,omitempty"`
	Headers   string `json:"headers,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// DurationMs is how long the upstream took to answer the headers.
	DurationMs int64 `json:"durationMs"`
}

// Options configures a [Recorder].
type Options struct {
	// Secrets are credentials to scrub wherever they appear
	// (config.Config.Secrets()).
	Secrets []string
	// MoreSecrets, when set, is asked before each exchange for secrets
	// registered since (config.Config.Secrets, which grows as the packs read
	// their keys).
	MoreSecrets func() []string
	// Version is written to the manifest (internal/version's Short()).
	Version string
	// Now replaces time.Now.
	Now func() time.Time
}

// Recorder writes exchanges to a directory. It is safe for concurrent use.
type Recorder struct {
	dir   string
	scrub *Scrubber
	now   func() time.Time
	more  func() []string

	mu       sync.Mutex
	manifest Manifest
	err      error // the first write error, reported by Err
}

// New returns a recorder writing to dir, which it creates (mode 0700) if
// needed. A directory that already holds a recording is refused, so that two
// runs never mix.
func New(dir string, opts Options) (*Recorder, error) {
	if dir == "" {
		return nil, errors.New("record: no directory")
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		return nil, fmt.Errorf("record: %s already holds a recording (choose a new directory)", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	r := &Recorder{dir: dir, scrub: NewScrubber(opts.Secrets...), now: now, more: opts.MoreSecrets,
		manifest: Manifest{Format: FormatVersion, Recorded: now().UTC(), Version: opts.Version, Exchanges: []Exchange{}}}
	if err := r.writeManifest(); err != nil {
		return nil, err
	}
	return r, nil
}

// Dir is the recording directory.
func (r *Recorder) Dir() string { return r.dir }

// AddSecrets teaches the recorder more secrets to scrub.
func (r *Recorder) AddSecrets(secrets ...string) { r.scrub.Add(secrets...) }

// Err returns the first error writing the recording, or nil. Recording
// errors never fail the exchange itself: the client gets its answer.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Transport returns a RoundTripper that sends requests through next (nil
// means http.DefaultTransport) and records them under upstream.
func (r *Recorder) Transport(upstream string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{rec: r, upstream: cleanName(upstream), next: next}
}

// Client returns a copy of hc (nil means a zero http.Client) whose transport
// records under upstream. hc is not changed.
func (r *Recorder) Client(upstream string, hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	c.Transport = r.Transport(upstream, c.Transport)
	return c
}

type transport struct {
	rec      *Recorder
	upstream string
	next     http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.rec
	if r.more != nil {
		r.scrub.Add(r.more()...)
	}
	// Learn what the request carries before anything is written.
	r.scrub.LearnHeader(req.Header)
	r.scrub.LearnValues(req.URL.Query())
	var reqBody []byte
	if req.Body != nil && req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(io.LimitReader(rc, maxRequestBody+1))
			rc.Close()
		}
	}
	unlearnt := 0
	if len(reqBody) > 0 {
		if form, err := url.ParseQuery(string(reqBody)); err == nil && isForm(req.Header) {
			unlearnt += r.scrub.LearnValues(form)
		}
		unlearnt += r.scrub.LearnJSON(reqBody)
	}
	ex := Exchange{Upstream: t.upstream, Method: req.Method, Host: req.URL.Host, Path: req.URL.EscapedPath(),
		Query: r.scrub.Query(req.URL.RawQuery)}
	// A body with credentials past the learning bounds is not kept: some
	// of them would be written as they are.
	if len(reqBody) > 0 && len(reqBody) <= maxRequestBody && isText(reqBody) && unlearnt == 0 {
		if isForm(req.Header) {
			ex.RequestBody = r.scrub.Query(string(reqBody))
		} else {
			ex.RequestBody = r.scrub.String(string(reqBody))
		}
	}
	start := r.now()
	resp, err := t.next.RoundTrip(req)
	ex.DurationMs = r.now().Sub(start).Milliseconds()
	if err != nil {
		ex.Error = r.scrub.String(err.Error())
		r.add(ex, nil, nil, nil)
		return resp, err
	}
	ex.Status = resp.StatusCode
	r.scrub.LearnHeader(resp.Header)
	// The body is recorded as the client reads it, so that a stream (a
	// model's server-sent events) reaches the client as it arrives; the
	// exchange is written when the client has read it all or closed it.
	resp.Body = &teeBody{rc: resp.Body, done: func(body []byte, truncated bool) {
		ex.Truncated = truncated
		var over []span
		if !truncated {
			values, at := credentialFields(body)
			if r.scrub.learn(values) > 0 {
				over = at
			}
		}
		r.add(ex, resp, body, over)
	}}
	return resp, nil
}

// teeBody passes a response body through, keeping up to MaxBodyBytes of
// it, and hands what it kept to done once: at EOF, a read error or Close.
type teeBody struct {
	rc        io.ReadCloser
	buf       bytes.Buffer
	truncated bool
	once      sync.Once
	done      func(body []byte, truncated bool)
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if room := MaxBodyBytes - b.buf.Len(); n > 0 {
		if n > room {
			b.buf.Write(p[:room])
			b.truncated = true
		} else {
			b.buf.Write(p[:n])
		}
	}
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.finish()
	return b.rc.Close()
}

func (b *teeBody) finish() { b.once.Do(func() { b.done(b.buf.Bytes(), b.truncated) }) }

func isForm(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

// isText reports whether a request body can go into the manifest as text.
func isText(b []byte) bool { return utf8.Valid(b) && !bytes.ContainsRune(b, 0) }

// add writes one exchange's files and the manifest. over, when set, is
// where the body's credential fields lie because it held more than the
// scrubber learns from one body: those fields are redacted in place, the
// values themselves are not scrubbed elsewhere, and the recording is
// reported incomplete.
func (r *Recorder) add(ex Exchange, resp *http.Response, body []byte, over []span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.manifest.Exchanges) >= maxExchanges {
		r.fail(fmt.Errorf("record: more than %d exchanges; the rest are not recorded", maxExchanges))
		return
	}
	n := len(r.manifest.Exchanges) + 1
	if resp != nil {
		stem := fmt.Sprintf("%s/%03d-%s-%s", ex.Upstream, n, strings.ToLower(ex.Method), slug(ex.Path))
		ex.Body = stem + extension(resp.Header.Get("Content-Type"))
		ex.Headers = stem + ".headers.txt"
		if over != nil {
			body = redactFields(body, over)
			r.fail(fmt.Errorf("record: %s holds %d credential fields, more than the %d learnt from one body (or the %d in all); "+
				"they are redacted in that file but not elsewhere", ex.Body, len(over), MaxLearntPerBody, MaxLearnt))
		}
		if err := r.writeFile(ex.Body, r.scrub.Bytes(body)); err != nil {
			r.fail(err)
		}
		if err := r.writeFile(ex.Headers, r.headerFile(resp)); err != nil {
			r.fail(err)
		}
	}
	r.manifest.Exchanges = append(r.manifest.Exchanges, ex)
	if err := r.writeManifest(); err != nil {
		r.fail(err)
	}
}

func (r *Recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// headerFile is the status line and the kept headers, scrubbed.
func (r *Recorder) headerFile(resp *http.Response) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	for _, name := range sortedKeys(resp.Header) {
		if !keepHeader(name) {
			continue
		}
		for _, v := range resp.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, r.scrub.String(oneLine(v)))
		}
	}
	return b.Bytes()
}

func oneLine(v string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(v) }

// keepHeader says which response headers a recording keeps: those the
// clients read (type, rate limits, Retry-After, Location) and nothing that
// identifies a session or a machine.
func keepHeader(name string) bool {
	if isSecretHeader(name) {
		return false
	}
	n := strings.ToLower(name)
	switch n {
	case "content-type", "content-language", "retry-after", "location", "www-authenticate", "cache-control", "age":
		return true
	}
	return strings.Contains(n, "ratelimit") || strings.Contains(n, "rate-limit") || strings.Contains(n, "quota")
}

// writeFile writes rel under the directory, refusing paths that leave it.
func (r *Recorder) writeFile(rel string, b []byte) error {
	p, err := within(r.dir, rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

func (r *Recorder) writeManifest() error {
	b, err := json.MarshalIndent(r.manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	// The manifest holds scrubbed fields only, but is scrubbed once more as
	// a whole: a secret learnt late must not survive in an early entry.
	b = r.scrub.Bytes(append(b, '\n'))
	tmp := filepath.Join(r.dir, ManifestName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(r.dir, ManifestName)); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a path made fit for a file name: "/res/v1/web/search" becomes
// "res-v1-web-search".
func slug(path string) string {
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(path), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	if s == "" {
		s = "root"
	}
	return s
}

// cleanName is an upstream label made fit for a directory name.
func cleanName(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" {
		return "upstream"
	}
	return s
}

func extension(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return ".json"
	case mt == "text/html":
		return ".html"
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return ".xml"
	case strings.HasPrefix(mt, "text/"):
		return ".txt"
	}
	return ".bin"
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
