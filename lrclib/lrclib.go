// Package lrclib is a client for LRCLIB (https://lrclib.net), a free,
// keyless, crowd-sourced lyrics database: look a track up by its signature
// (title, artist, album, duration), by LRCLIB id, or search it.
//
// It follows the shape of google/go-github: a [Client] built once over an
// *http.Client, typed requests and records, and a typed [*Error] for every
// upstream error status. A miss is a normal outcome, not a failure to
// report: it is an *Error that errors.Is matches with [ErrNotFound]. An
// instrumental track is a found [Record] with Instrumental set and no
// lyrics.
//
// The client never retries: a 429 or 5xx comes back as an *Error whose
// RetryAfter holds the server's Retry-After, and the caller decides.
//
// LRCLIB asks clients to identify themselves with a User-Agent naming the
// application, its version and its home page; [DefaultUserAgent] does.
// Its lyrics are contributed by users: store them for the index, do not
// republish them.
//
// Supported surface: [NewClient] and its options, the typed requests and
// responses, the Decode functions, [*Error] with its fields and
// [CheckResponse]. Sending, the body cap and secret scrubbing are
// Toolport's internal client core, shared by all its API clients.
package lrclib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/httpclient"
)

// Defaults and limits.
const (
	// DefaultBaseURL is LRCLIB's root; the client appends /api/... to it.
	DefaultBaseURL = "https://lrclib.net"
	// DefaultUserAgent is the "App/version (home page)" LRCLIB asks for.
	DefaultUserAgent = "Toolport/0.1 (https://github.com/toolport/toolport)"
	// DefaultMaxBodyBytes bounds a response body. A search answer of 20
	// records with synced lyrics is ~50 KB.
	DefaultMaxBodyBytes = 4 << 20

	// MaxFieldRunes bounds each text parameter; titles and names are far
	// shorter, and a longer one is a mistake, not a track.
	MaxFieldRunes = 500
	// MaxDuration bounds the duration of a signature lookup.
	MaxDuration = 24 * time.Hour
	// DurationTolerance is how far LRCLIB lets a record's duration differ
	// from the one asked for in /api/get; [MatchDuration] uses it too.
	DurationTolerance = 2 * time.Second

	maxRetryAfter = 24 * time.Hour // a server may not make a caller wait longer
	maxDetail     = 300            // upstream text kept in an error
)

// Client calls LRCLIB. It is safe for concurrent use.
type Client struct {
	core *httpclient.Core // base URL, User-Agent, body cap, sending, CheckResponse
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL points the client at another server: a scheme and host and
// an optional path prefix, e.g. "http://127.0.0.1:8080". An empty (or
// all-space) raw keeps DefaultBaseURL, so that a caller can pass an unset
// setting straight through.
func WithBaseURL(raw string) Option {
	return func(c *Client) error { return c.core.SetBaseURLUnlessEmpty(raw) }
}

// WithUserAgent sets the User-Agent header; empty keeps DefaultUserAgent.
func WithUserAgent(ua string) Option {
	return func(c *Client) error { c.core.SetUserAgent(ua); return nil }
}

// WithMaxBodyBytes bounds how much of a response body is read; n <= 0
// keeps DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(c *Client) error { c.core.SetMaxBodyBytes(n); return nil }
}

// NewClient returns a client. A nil httpClient means a new client over its
// own pooled transport; deadlines come from the context of each call. The
// client does not follow redirects: LRCLIB sends none, and one would be a
// misconfigured base URL, better reported than silently followed.
func NewClient(httpClient *http.Client, opts ...Option) (*Client, error) {
	c := &Client{core: httpclient.NewCore("lrclib", DefaultBaseURL, DefaultUserAgent, DefaultMaxBodyBytes)}
	return httpclient.Build(c, c.core, httpClient, opts)
}

// Record is one LRCLIB lyrics record.
type Record struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"` // usually equal to TrackName
	TrackName  string `json:"trackName"`
	ArtistName string `json:"artistName"`
	// AlbumName is as contributed: search results hold junk such as "null",
	// "." or "N/A".
	AlbumName string `json:"albumName"`
	// Duration is in seconds, possibly fractional (233.0, 239.84); junk
	// records have 1.0.
	Duration float64 `json:"duration"`
	// Instrumental is set for a track without words; both lyrics are then
	// empty. It is an answer, not a miss.
	Instrumental bool `json:"instrumental"`
	// PlainLyrics is the text without timings; "" when LRCLIB sent null.
	PlainLyrics string `json:"plainLyrics"`
	// SyncedLyrics is LRC ("[mm:ss.xx] line", one per line); "" when LRCLIB
	// sent null, which plain-only records do.
	SyncedLyrics string `json:"syncedLyrics"`
}

// HasLyrics reports whether r holds any lyrics text.
func (r *Record) HasLyrics() bool { return r.PlainLyrics != "" || r.SyncedLyrics != "" }

// Length returns Duration as a time.Duration (0 when it is not a sane
// number of seconds).
func (r *Record) Length() time.Duration {
	d := r.Duration
	if math.IsNaN(d) || d <= 0 || d > MaxDuration.Seconds() {
		return 0
	}
	return time.Duration(d * float64(time.Second))
}

// GetParams is a lookup by signature. TrackName and ArtistName are
// required; AlbumName and Duration narrow the match and should be given
// when known (LRCLIB matches the duration within ±2 s).
type GetParams struct {
	TrackName  string
	ArtistName string
	AlbumName  string
	// Duration is the track's length; it is sent in whole seconds. Zero
	// leaves it out.
	Duration time.Duration
	// Cached calls /api/get-cached, which reads LRCLIB's own database
	// only; /api/get may also ask external sources and so be slow.
	Cached bool
}

// ErrInvalidInput is wrapped by the error of a call whose arguments cannot
// be sent; no request was made.
var ErrInvalidInput = errors.New("lrclib: invalid input")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// checkField validates one text parameter.
func checkField(name, v string, required bool) error {
	switch {
	case required && strings.TrimSpace(v) == "":
		return invalid("%s is required", name)
	case !utf8.ValidString(v):
		return invalid("%s is not valid UTF-8", name)
	case utf8.RuneCountInString(v) > MaxFieldRunes:
		return invalid("%s is longer than %d characters", name, MaxFieldRunes)
	}
	return nil
}

// Validate checks p before a request is spent on it.
func (p *GetParams) Validate() error {
	if err := checkField("track_name", p.TrackName, true); err != nil {
		return err
	}
	if err := checkField("artist_name", p.ArtistName, true); err != nil {
		return err
	}
	if err := checkField("album_name", p.AlbumName, false); err != nil {
		return err
	}
	if p.Duration < 0 || p.Duration > MaxDuration {
		return invalid("duration must be between 0 and %s, got %s", MaxDuration, p.Duration)
	}
	return nil
}

func (p *GetParams) values() url.Values {
	v := url.Values{}
	v.Set("track_name", strings.TrimSpace(p.TrackName))
	v.Set("artist_name", strings.TrimSpace(p.ArtistName))
	if a := strings.TrimSpace(p.AlbumName); a != "" {
		v.Set("album_name", a)
	}
	// LRCLIB matches whole seconds ±2; under half a second rounds to no
	// duration at all rather than to a duration of 0.
	if secs := int64(p.Duration.Round(time.Second) / time.Second); secs > 0 {
		v.Set("duration", strconv.FormatInt(secs, 10))
	}
	return v
}

// Get looks a track up by its signature (GET /api/get, or /api/get-cached
// when p.Cached). A miss is an [*Error] matching [ErrNotFound].
func (c *Client) Get(ctx context.Context, p *GetParams) (*Record, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	path := "/api/get"
	if p.Cached {
		path = "/api/get-cached"
	}
	body, err := c.get(ctx, path, p.values())
	if err != nil {
		return nil, err
	}
	return DecodeRecord(body)
}

// GetByID returns the record with LRCLIB id id (GET /api/get/{id}). A miss
// is an [*Error] matching [ErrNotFound].
func (c *Client) GetByID(ctx context.Context, id int64) (*Record, error) {
	if id <= 0 {
		return nil, invalid("id must be positive, got %d", id)
	}
	body, err := c.get(ctx, "/api/get/"+strconv.FormatInt(id, 10), nil)
	if err != nil {
		return nil, err
	}
	return DecodeRecord(body)
}

// SearchParams is a search: either Query (free text over title, artist
// and album) or TrackName, optionally narrowed by ArtistName and
// AlbumName. LRCLIB returns at most 20 records and has no paging.
type SearchParams struct {
	Query      string // q
	TrackName  string // track_name
	ArtistName string // artist_name
	AlbumName  string // album_name
}

// Validate checks p before a request is spent on it.
func (p *SearchParams) Validate() error {
	q, track := strings.TrimSpace(p.Query), strings.TrimSpace(p.TrackName)
	switch {
	case q == "" && track == "":
		return invalid("a search needs q or track_name")
	case q != "" && (track != "" || strings.TrimSpace(p.ArtistName) != "" || strings.TrimSpace(p.AlbumName) != ""):
		return invalid("q and the track_name/artist_name/album_name fields are alternatives: give one or the other")
	}
	for _, f := range []struct{ name, v string }{
		{"q", p.Query}, {"track_name", p.TrackName}, {"artist_name", p.ArtistName}, {"album_name", p.AlbumName},
	} {
		if err := checkField(f.name, f.v, false); err != nil {
			return err
		}
	}
	return nil
}

func (p *SearchParams) values() url.Values {
	v := url.Values{}
	for _, f := range []struct{ k, v string }{
		{"q", p.Query}, {"track_name", p.TrackName}, {"artist_name", p.ArtistName}, {"album_name", p.AlbumName},
	} {
		if s := strings.TrimSpace(f.v); s != "" {
			v.Set(f.k, s)
		}
	}
	return v
}

// Search runs a search (GET /api/search). No match is an empty slice and
// a nil error. Results hold junk: see [MatchDuration].
func (c *Client) Search(ctx context.Context, p *SearchParams) ([]Record, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	body, err := c.get(ctx, "/api/search", p.values())
	if err != nil {
		return nil, err
	}
	return DecodeRecords(body)
}

// MatchDuration returns the records of rs that have lyrics and whose
// duration is within [DurationTolerance] of d, in their original order:
// the filter search results need, since they hold other recordings and
// junk rows. Instrumental records are kept too (they are a real answer:
// the track has no words). rs is not changed.
func MatchDuration(rs []Record, d time.Duration) []Record {
	var out []Record
	for _, r := range rs {
		l := r.Length()
		if l == 0 || (!r.HasLyrics() && !r.Instrumental) {
			continue
		}
		if diff := l - d; diff <= DurationTolerance && diff >= -DurationTolerance {
			out = append(out, r)
		}
	}
	return out
}

// get sends one GET and returns the body of a 2xx answer; any other status
// is an [*Error]. Transport and context failures are returned wrapped, so
// that errors.Is(err, context.DeadlineExceeded) holds.
func (c *Client) get(ctx context.Context, path string, query url.Values) ([]byte, error) {
	_, body, err := c.core.Get(ctx, path, query, CheckResponse)
	return body, err
}

// ParseError reports a 2xx body that is not the JSON LRCLIB documents.
type ParseError struct {
	Err error // the decoder's error; it names a position, never the body
}

func (e *ParseError) Error() string { return "lrclib: malformed response: " + e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// DecodeRecord parses the body of /api/get or /api/get/{id}: one record,
// which must have an id.
func DecodeRecord(body []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(httpclient.TrimBOM(body), &r); err != nil {
		return nil, &ParseError{Err: err}
	}
	if r.ID <= 0 {
		return nil, &ParseError{Err: errors.New("record without an id")}
	}
	return &r, nil
}

// DecodeRecords parses the body of /api/search: an array of records. A
// null body is an empty result.
func DecodeRecords(body []byte) ([]Record, error) {
	var rs []Record
	if err := json.Unmarshal(httpclient.TrimBOM(body), &rs); err != nil {
		return nil, &ParseError{Err: err}
	}
	if rs == nil {
		rs = []Record{}
	}
	return rs, nil
}
