// Package reccobeats is a client for the ReccoBeats API
// (https://api.reccobeats.com/v1), a free, keyless source of Spotify-style
// audio features (tempo, key, mode, energy, valence, …) for tracks.
//
// ReccoBeats takes Spotify track ids or its own UUIDs, not ISRCs: the way
// from a track to its features is a track lookup ([Client.Tracks] by
// Spotify id, or [Client.FindByISRC], which searches the title and keeps
// rows with the same ISRC), then [Client.AudioFeatures] with the ids found,
// up to [MaxIDs] a call. Unknown ids are left out of an answer (still a
// 200) and rows may come back in any order: join them on the Spotify id in
// their href ([AudioFeatures.SpotifyID], [BySpotifyID]), never on position.
// The catalogue has gaps, and its tempo and key can be off (doubled BPM,
// the relative major or minor): treat them as estimates.
//
// It follows the shape of google/go-github: a [Client] built once over an
// *http.Client, typed requests and responses, and a typed [*Error] for
// every upstream error status, matching [ErrNotFound] or [ErrRateLimited]
// with errors.Is. The client never retries: a 429 comes back with the
// server's Retry-After in Error.RetryAfter, and the caller decides.
//
// Supported surface: [NewClient] and its options, the typed requests and
// responses, the Decode functions, [*Error] with its fields and
// [CheckResponse]. Sending, the body cap and secret scrubbing are
// Toolport's internal client core, shared by all its API clients.
package reccobeats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/httpclient"

	"github.com/toolport/toolport/internal/isrc"
)

// Defaults and limits.
const (
	// DefaultBaseURL is the API's host; the client appends /v1/... to it.
	DefaultBaseURL = "https://api.reccobeats.com"
	// DefaultUserAgent names the client explicitly: ReccoBeats has answered
	// 403 to a library's default User-Agent.
	DefaultUserAgent = "Toolport/0.1 (https://github.com/toolport/toolport)"
	// DefaultMaxBodyBytes bounds a response body. A search page of 25
	// tracks is ~30 KB, most of it country lists.
	DefaultMaxBodyBytes = 4 << 20

	// MaxIDs is the most ids one /audio-features call takes (the docs say
	// 40); the client applies it to /track too.
	MaxIDs = 40
	// MaxSearchRunes bounds a search text.
	MaxSearchRunes = 200
	// MaxSearchSize bounds a search page. ReccoBeats publishes no limit;
	// this is the client's, to keep answers small.
	MaxSearchSize = 50
	// MaxISRCPages is how many search pages [Client.FindByISRC] reads at
	// most before giving up.
	MaxISRCPages = 3

	apiPath       = "/v1"
	maxRetryAfter = 24 * time.Hour
	maxDetail     = 300
)

// Client calls ReccoBeats. It is safe for concurrent use.
type Client struct {
	core *httpclient.Core // base URL, User-Agent, body cap, sending, CheckResponse
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL points the client at another server: a scheme and host and
// an optional path prefix, e.g. "http://127.0.0.1:8080"; the client
// appends /v1/audio-features and so on. An empty (or
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
// client does not follow redirects.
func NewClient(httpClient *http.Client, opts ...Option) (*Client, error) {
	c := &Client{core: httpclient.NewCore("reccobeats", DefaultBaseURL, DefaultUserAgent, DefaultMaxBodyBytes)}
	return httpclient.Build(c, c.core, httpClient, opts)
}

// Artist is a track's artist.
type Artist struct {
	ID   string `json:"id"`   // ReccoBeats UUID
	Name string `json:"name"` //
	Href string `json:"href"` // the artist's open.spotify.com URL
}

// Track is a ReccoBeats track.
type Track struct {
	ID         string   `json:"id"` // ReccoBeats UUID
	TrackTitle string   `json:"trackTitle"`
	Artists    []Artist `json:"artists"`
	DurationMs int64    `json:"durationMs"`
	ISRC       string   `json:"isrc"`
	EAN        string   `json:"ean"`  // "" when null
	UPC        string   `json:"upc"`  // "" when null
	Href       string   `json:"href"` // the track's open.spotify.com URL
	// AvailableCountries is a comma-separated list of country codes; see
	// [Track.Countries].
	AvailableCountries string `json:"availableCountries"`
	Popularity         int    `json:"popularity"`
}

// SpotifyID returns the Spotify track id at the end of t.Href, or "".
func (t *Track) SpotifyID() string { return SpotifyIDFromURL(t.Href) }

// Duration returns DurationMs as a time.Duration (0 when negative).
func (t *Track) Duration() time.Duration {
	if t.DurationMs <= 0 || t.DurationMs > int64(24*time.Hour/time.Millisecond) {
		return 0
	}
	return time.Duration(t.DurationMs) * time.Millisecond
}

// Countries splits AvailableCountries.
func (t *Track) Countries() []string {
	var out []string
	for c := range strings.SplitSeq(t.AvailableCountries, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// AudioFeatures are one track's audio features. There is no time
// signature.
type AudioFeatures struct {
	ID   string `json:"id"`   // ReccoBeats UUID of the track
	Href string `json:"href"` // the track's open.spotify.com URL: join on it
	ISRC string `json:"isrc"`

	Acousticness     float64 `json:"acousticness"`     // 0..1
	Danceability     float64 `json:"danceability"`     // 0..1
	Energy           float64 `json:"energy"`           // 0..1
	Instrumentalness float64 `json:"instrumentalness"` // 0..1
	Key              int     `json:"key"`              // pitch class, 0 = C (Spotify's convention); may be the relative key
	Liveness         float64 `json:"liveness"`         // 0..1
	Loudness         float64 `json:"loudness"`         // dB, usually -60..0
	Mode             int     `json:"mode"`             // 1 major, 0 minor
	Speechiness      float64 `json:"speechiness"`      // 0..1
	Tempo            float64 `json:"tempo"`            // BPM; may be double the felt tempo
	Valence          float64 `json:"valence"`          // 0..1
}

// SpotifyID returns the Spotify track id at the end of f.Href, or "".
func (f *AudioFeatures) SpotifyID() string { return SpotifyIDFromURL(f.Href) }

// BySpotifyID indexes rows by the Spotify id in their href, the way to
// match them to the ids asked for. Rows without one are left out.
func BySpotifyID(rows []AudioFeatures) map[string]AudioFeatures {
	m := make(map[string]AudioFeatures, len(rows))
	for _, r := range rows {
		if id := r.SpotifyID(); id != "" {
			m[id] = r
		}
	}
	return m
}

var (
	// Compiled on first use, not at every start of every binary that
	// links this package (BENCHMARKS.md, start-up).
	spotifyIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-Za-z]{22}$`) })
	uuidRe      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	})
)

// IsSpotifyID reports whether s looks like a Spotify id (22 base-62
// characters).
func IsSpotifyID(s string) bool { return spotifyIDRe().MatchString(s) }

// IsReccoBeatsID reports whether s looks like a ReccoBeats id (a UUID).
func IsReccoBeatsID(s string) bool { return uuidRe().MatchString(s) }

// SpotifyIDFromURL returns the id of an open.spotify.com/track/{id} URL
// (with or without a query), or "" when u is not one.
func SpotifyIDFromURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || !strings.EqualFold(p.Hostname(), "open.spotify.com") {
		return ""
	}
	id, ok := strings.CutPrefix(p.Path, "/track/")
	if !ok || !IsSpotifyID(id) {
		return ""
	}
	return id
}

// NormalizeISRC returns s upper-cased without hyphens or spaces, or ""
// when that is not an ISRC (CC XXX YY NNNNN): Toolport's one ISRC rule,
// package internal/isrc.
func NormalizeISRC(s string) string {
	n, err := isrc.Normalize(s)
	if err != nil {
		return ""
	}
	return n
}

// ErrInvalidInput is wrapped by the error of a call whose arguments cannot
// be sent; no request was made.
var ErrInvalidInput = errors.New("reccobeats: invalid input")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// checkIDs validates a batch of Spotify or ReccoBeats ids.
func checkIDs(ids []string) error {
	if len(ids) == 0 {
		return invalid("no ids")
	}
	if len(ids) > MaxIDs {
		return invalid("%d ids: at most %d a call", len(ids), MaxIDs)
	}
	for _, id := range ids {
		if !IsSpotifyID(id) && !IsReccoBeatsID(id) {
			return invalid("%q is neither a Spotify id nor a ReccoBeats id", httpclient.Clip(id, 40))
		}
	}
	return nil
}

// Tracks returns the tracks with the given Spotify or ReccoBeats ids
// (GET /v1/track?ids=a,b), at most [MaxIDs]. Unknown ids are left out.
func (c *Client) Tracks(ctx context.Context, ids []string) ([]Track, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	body, err := c.get(ctx, "/track", url.Values{"ids": {strings.Join(ids, ",")}})
	if err != nil {
		return nil, err
	}
	return DecodeTracks(body)
}

// AudioFeatures returns the audio features of the tracks with the given
// Spotify or ReccoBeats ids (GET /v1/audio-features?ids=a,b), at most
// [MaxIDs]. Unknown ids are left out and rows may be reordered: match them
// with [BySpotifyID].
func (c *Client) AudioFeatures(ctx context.Context, ids []string) ([]AudioFeatures, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	body, err := c.get(ctx, "/audio-features", url.Values{"ids": {strings.Join(ids, ",")}})
	if err != nil {
		return nil, err
	}
	return DecodeAudioFeaturesList(body)
}

// TrackAudioFeatures returns the audio features of the track with
// ReccoBeats id id (GET /v1/track/{id}/audio-features). An unknown track
// is an [*Error] matching [ErrNotFound].
func (c *Client) TrackAudioFeatures(ctx context.Context, id string) (*AudioFeatures, error) {
	if !IsReccoBeatsID(id) {
		return nil, invalid("%q is not a ReccoBeats id (a UUID)", httpclient.Clip(id, 40))
	}
	body, err := c.get(ctx, "/track/"+id+"/audio-features", nil)
	if err != nil {
		return nil, err
	}
	return DecodeAudioFeatures(body)
}

// SearchParams is a track search. ReccoBeats matches the text literally
// (it is not a fuzzy search).
type SearchParams struct {
	Text string // searchText: required
	Page int    // 0-based page; 0 is the first
	Size int    // rows a page, 1..MaxSearchSize; 0 leaves the API's default
}

// Validate checks p before a request is spent on it.
func (p *SearchParams) Validate() error {
	t := strings.TrimSpace(p.Text)
	switch {
	case t == "":
		return invalid("search text is required")
	case !utf8.ValidString(t):
		return invalid("search text is not valid UTF-8")
	case utf8.RuneCountInString(t) > MaxSearchRunes:
		return invalid("search text is longer than %d characters", MaxSearchRunes)
	case p.Page < 0 || p.Page > 10000:
		return invalid("page must be between 0 and 10000, got %d", p.Page)
	case p.Size < 0 || p.Size > MaxSearchSize:
		return invalid("size must be between 1 and %d, got %d", MaxSearchSize, p.Size)
	}
	return nil
}

func (p *SearchParams) values() url.Values {
	v := url.Values{"searchText": {strings.TrimSpace(p.Text)}}
	if p.Page > 0 {
		v.Set("page", strconv.Itoa(p.Page))
	}
	if p.Size > 0 {
		v.Set("size", strconv.Itoa(p.Size))
	}
	return v
}

// TrackPage is one page of a track search.
type TrackPage struct {
	Content       []Track `json:"content"`
	Page          int     `json:"page"`
	Size          int     `json:"size"`
	TotalElements int     `json:"totalElements"`
	TotalPages    int     `json:"totalPages"`
}

// SearchTracks runs a track search (GET /v1/track/search). No match is a
// page with no content and a nil error.
func (c *Client) SearchTracks(ctx context.Context, p *SearchParams) (*TrackPage, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	body, err := c.get(ctx, "/track/search", p.values())
	if err != nil {
		return nil, err
	}
	return DecodeTrackPage(body)
}

// FindByISRC finds the ReccoBeats tracks with ISRC isrc. ReccoBeats has no
// ISRC lookup, so it searches title (the track's title as the catalogue
// spells it: the search is literal) and keeps the rows whose ISRC equals
// isrc, reading at most [MaxISRCPages] pages and stopping at the first
// page with a match. No match is an error matching [ErrNotFound].
//
// The matches' ids (or Spotify ids) then go to [Client.AudioFeatures].
func (c *Client) FindByISRC(ctx context.Context, isrc, title string) ([]Track, error) {
	want := NormalizeISRC(isrc)
	if want == "" {
		return nil, invalid("%q is not an ISRC", httpclient.Clip(isrc, 40))
	}
	p := &SearchParams{Text: title}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	for page := 0; page < MaxISRCPages; page++ {
		p.Page = page
		tp, err := c.SearchTracks(ctx, p)
		if err != nil {
			return nil, err
		}
		var out []Track
		for _, t := range tp.Content {
			if NormalizeISRC(t.ISRC) == want {
				out = append(out, t)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if len(tp.Content) == 0 || page+1 >= tp.TotalPages {
			break
		}
	}
	return nil, fmt.Errorf("%w: no track with ISRC %s in the first search results for %q", ErrNotFound, want, httpclient.Clip(strings.TrimSpace(title), 100))
}

// get sends one GET to /v1+path and returns the body of a 2xx answer; any
// other status is an [*Error]. Transport and context failures are
// returned wrapped, so that errors.Is(err, context.DeadlineExceeded) holds.
func (c *Client) get(ctx context.Context, path string, query url.Values) ([]byte, error) {
	_, body, err := c.core.Get(ctx, apiPath+path, query, CheckResponse)
	return body, err
}

// ParseError reports a 2xx body that is not the JSON ReccoBeats documents.
type ParseError struct {
	Err error // the decoder's error; it names a position, never the body
}

func (e *ParseError) Error() string { return "reccobeats: malformed response: " + e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

func decode(body []byte, v any) error {
	if err := json.Unmarshal(httpclient.TrimBOM(body), v); err != nil {
		return &ParseError{Err: err}
	}
	return nil
}

// contentList is the {"content":[...]} envelope of the batch endpoints.
type contentList[T any] struct {
	Content *[]T `json:"content"`
}

// decodeContent parses a {"content":[...]} envelope; an object without
// "content" is malformed, a null or empty list is no rows.
func decodeContent[T any](body []byte) ([]T, error) {
	var env contentList[T]
	if err := decode(body, &env); err != nil {
		return nil, err
	}
	if env.Content == nil {
		return nil, &ParseError{Err: errors.New(`no "content" list`)}
	}
	if *env.Content == nil {
		return []T{}, nil
	}
	return *env.Content, nil
}

// DecodeAudioFeaturesList parses the body of /v1/audio-features.
func DecodeAudioFeaturesList(body []byte) ([]AudioFeatures, error) {
	return decodeContent[AudioFeatures](body)
}

// DecodeTracks parses the body of /v1/track?ids=: a {"content":[...]}
// list of tracks, the envelope of the other batch endpoint (no answer of
// this one has been recorded).
func DecodeTracks(body []byte) ([]Track, error) { return decodeContent[Track](body) }

// DecodeAudioFeatures parses the body of /v1/track/{id}/audio-features: one
// object, which must have an id.
func DecodeAudioFeatures(body []byte) (*AudioFeatures, error) {
	var f AudioFeatures
	if err := decode(body, &f); err != nil {
		return nil, err
	}
	if f.ID == "" {
		return nil, &ParseError{Err: errors.New("audio features without an id")}
	}
	return &f, nil
}

// DecodeTrackPage parses the body of /v1/track/search.
func DecodeTrackPage(body []byte) (*TrackPage, error) {
	var p struct {
		TrackPage
		Content *[]Track `json:"content"`
	}
	if err := decode(body, &p); err != nil {
		return nil, err
	}
	if p.Content == nil {
		return nil, &ParseError{Err: errors.New(`no "content" list`)}
	}
	tp := p.TrackPage
	tp.Content = *p.Content
	if tp.Content == nil {
		tp.Content = []Track{}
	}
	return &tp, nil
}
