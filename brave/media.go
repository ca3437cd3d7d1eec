package brave

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

	"github.com/toolport/toolport/internal/httpclient"
)

// The news, image and video endpoints and their limits, as Brave's API
// reference documents them.
const (
	newsPath   = "/res/v1/news/search"
	imagesPath = "/res/v1/images/search"
	videosPath = "/res/v1/videos/search"

	MaxNewsCount  = 50  // news results per request
	MaxImageCount = 200 // image results per request (Brave's default is 50)
	MaxVideoCount = 50  // video results per request
)

var uiLangRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:[a-z]{2}-[a-z]{2,4})$`) })

// NewsParams is one news search request. Zero values are left to Brave's
// defaults (20 results, safesearch strict, spellcheck on).
type NewsParams struct {
	Query string // q: required, at most 400 characters and 50 words
	Count int    // results, 1..50
	// Offset is a PAGE index, 0..9, in units of Count, as for web search.
	Offset     int
	Country    string // two-letter country code, or "ALL"
	SearchLang string // language of the results, e.g. "en", "pt-br"
	UILang     string // language of the answer's text, e.g. "en-US"
	SafeSearch string // off, moderate or strict
	Freshness  string // pd, pw, pm, py, or YYYY-MM-DDtoYYYY-MM-DD
	Spellcheck *bool  // nil leaves Brave's default (on)
}

// Validate checks p against the API's documented limits.
func (p *NewsParams) Validate() error {
	return validatePaged(p.Query, p.Count, MaxNewsCount, p.Offset, p.Country, p.SearchLang, p.UILang, p.SafeSearch, p.Freshness)
}

func (p *NewsParams) values() url.Values {
	v := localeValues(p.Query, p.Count, p.Country, p.SearchLang, p.UILang, p.SafeSearch, p.Spellcheck)
	pagedValues(v, p.Offset, p.Freshness)
	return v
}

// VideoParams is one video search request. Zero values are left to Brave's
// defaults (20 results, safesearch moderate, spellcheck on).
type VideoParams struct {
	Query string // q: required, at most 400 characters and 50 words
	Count int    // results, 1..50
	// Offset is a PAGE index, 0..9, in units of Count, as for web search.
	Offset     int
	Country    string // two-letter country code, or "ALL"
	SearchLang string // language of the results, e.g. "en", "pt-br"
	UILang     string // language of the answer's text, e.g. "en-US"
	SafeSearch string // off, moderate or strict
	Freshness  string // pd, pw, pm, py, or YYYY-MM-DDtoYYYY-MM-DD
	Spellcheck *bool  // nil leaves Brave's default (on)
}

// Validate checks p against the API's documented limits.
func (p *VideoParams) Validate() error {
	return validatePaged(p.Query, p.Count, MaxVideoCount, p.Offset, p.Country, p.SearchLang, p.UILang, p.SafeSearch, p.Freshness)
}

func (p *VideoParams) values() url.Values {
	v := localeValues(p.Query, p.Count, p.Country, p.SearchLang, p.UILang, p.SafeSearch, p.Spellcheck)
	pagedValues(v, p.Offset, p.Freshness)
	return v
}

// ImageParams is one image search request. The image endpoint has no offset,
// no freshness and no ui_lang, and its safesearch is off or strict only.
// Zero values are left to Brave's defaults (50 results, safesearch strict,
// spellcheck on).
type ImageParams struct {
	Query      string // q: required, at most 400 characters and 50 words
	Count      int    // results, 1..200
	Country    string // two-letter country code, or "ALL"
	SearchLang string // language of the results, e.g. "en", "pt-br"
	SafeSearch string // off or strict
	Spellcheck *bool  // nil leaves Brave's default (on)
}

// Validate checks p against the API's documented limits.
func (p *ImageParams) Validate() error {
	if err := validateCommon(p.Query, p.Count, MaxImageCount, p.Country, p.SearchLang, ""); err != nil {
		return err
	}
	switch p.SafeSearch {
	case "", "off", "strict":
		return nil
	}
	return fmt.Errorf("safesearch for images must be off or strict, got %q", p.SafeSearch)
}

func (p *ImageParams) values() url.Values {
	return localeValues(p.Query, p.Count, p.Country, p.SearchLang, "", p.SafeSearch, p.Spellcheck)
}

func validateCommon(query string, count, maxCount int, country, searchLang, uiLang string) error {
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return errors.New("query must not be empty")
	case len([]rune(q)) > MaxQueryRunes:
		return fmt.Errorf("query is too long: Brave accepts at most %d characters", MaxQueryRunes)
	case len(strings.Fields(q)) > MaxQueryWords:
		return fmt.Errorf("query has too many words: Brave accepts at most %d", MaxQueryWords)
	case count < 0 || count > maxCount:
		return fmt.Errorf("count must be between 1 and %d, got %d", maxCount, count)
	case country != "" && !countryRe().MatchString(country):
		return fmt.Errorf("country must be a two-letter country code or ALL, got %q", country)
	case searchLang != "" && !searchLangRe().MatchString(searchLang):
		return fmt.Errorf("search_lang must be a language code such as en or pt-br, got %q", searchLang)
	case uiLang != "" && !uiLangRe().MatchString(uiLang):
		return fmt.Errorf("ui_lang must be a language and region such as en-US, got %q", uiLang)
	}
	return nil
}

func validatePaged(query string, count, maxCount, offset int, country, searchLang, uiLang, safeSearch, freshness string) error {
	if err := validateCommon(query, count, maxCount, country, searchLang, uiLang); err != nil {
		return err
	}
	if offset < 0 || offset > MaxPage {
		return fmt.Errorf("offset is a page index and must be between 0 and %d, got %d", MaxPage, offset)
	}
	switch safeSearch {
	case "", "off", "moderate", "strict":
	default:
		return fmt.Errorf("safesearch must be off, moderate or strict, got %q", safeSearch)
	}
	return ValidateFreshness(freshness)
}

func localeValues(query string, count int, country, searchLang, uiLang, safeSearch string, spellcheck *bool) url.Values {
	v := url.Values{}
	v.Set("q", strings.TrimSpace(query))
	if count > 0 {
		v.Set("count", strconv.Itoa(count))
	}
	if country != "" {
		v.Set("country", strings.ToUpper(country))
	}
	if searchLang != "" {
		v.Set("search_lang", strings.ToLower(searchLang))
	}
	if uiLang != "" {
		lang, region, _ := strings.Cut(uiLang, "-")
		if len(region) == 2 {
			region = strings.ToUpper(region)
		}
		v.Set("ui_lang", strings.ToLower(lang)+"-"+region)
	}
	if safeSearch != "" {
		v.Set("safesearch", safeSearch)
	}
	if spellcheck != nil {
		v.Set("spellcheck", strconv.FormatBool(*spellcheck))
	}
	return v
}

func pagedValues(v url.Values, offset int, freshness string) {
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if freshness != "" {
		v.Set("freshness", freshness)
	}
}

// MetaURL is Brave's breakdown of a result's URL.
type MetaURL struct {
	Scheme   string `json:"scheme,omitempty"`
	Netloc   string `json:"netloc,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Favicon  string `json:"favicon,omitempty"`
	Path     string `json:"path,omitempty"`
}

// Thumbnail is a result's preview image. Src is served by Brave's image
// proxy; Original, when present, is the publisher's own URL.
type Thumbnail struct {
	Src      string `json:"src"`
	Original string `json:"original,omitempty"`
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`
}

// Extra holds the flags Brave adds to image and video answers.
type Extra struct {
	MightBeOffensive bool `json:"might_be_offensive"`
}

// NewsResponse is the answer of the news endpoint.
type NewsResponse struct {
	Type    string       `json:"type"` // "news"
	Query   *Query       `json:"query,omitempty"`
	Results []NewsResult `json:"results"`

	RateLimit RateLimit `json:"-"`
}

// NewsResult is one news article. Title and Description may hold HTML
// highlighting and entities, as in web results; see [PlainText].
type NewsResult struct {
	Type          string     `json:"type"` // "news_result"
	Title         string     `json:"title"`
	URL           string     `json:"url"`
	Description   string     `json:"description,omitempty"`
	Age           string     `json:"age,omitempty"`      // e.g. "2 hours ago"
	PageAge       string     `json:"page_age,omitempty"` // ISO date-time of publication
	PageFetched   string     `json:"page_fetched,omitempty"`
	MetaURL       *MetaURL   `json:"meta_url,omitempty"`
	Thumbnail     *Thumbnail `json:"thumbnail,omitempty"`
	ExtraSnippets []string   `json:"extra_snippets,omitempty"`
}

// ImageResponse is the answer of the image endpoint.
type ImageResponse struct {
	Type    string        `json:"type"` // "images"
	Query   *Query        `json:"query,omitempty"`
	Results []ImageResult `json:"results"`
	Extra   *Extra        `json:"extra,omitempty"`

	RateLimit RateLimit `json:"-"`
}

// ImageResult is one image. URL is the page the image was found on;
// Properties.URL is the full-size image itself.
type ImageResult struct {
	Type        string           `json:"type"` // "image_result"
	Title       string           `json:"title"`
	URL         string           `json:"url"`
	Source      string           `json:"source,omitempty"` // the source's domain
	PageFetched string           `json:"page_fetched,omitempty"`
	Thumbnail   *Thumbnail       `json:"thumbnail,omitempty"`
	Properties  *ImageProperties `json:"properties,omitempty"`
	MetaURL     *MetaURL         `json:"meta_url,omitempty"`
	Confidence  string           `json:"confidence,omitempty"` // low, medium or high
}

// ImageProperties describes the full-size image. Width and Height are 0 when
// Brave does not know them.
type ImageProperties struct {
	URL         string `json:"url"`
	Placeholder string `json:"placeholder,omitempty"`
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
}

// VideoResponse is the answer of the video endpoint.
type VideoResponse struct {
	Type    string        `json:"type"` // "videos"
	Query   *Query        `json:"query,omitempty"`
	Results []VideoResult `json:"results"`
	Extra   *Extra        `json:"extra,omitempty"`

	RateLimit RateLimit `json:"-"`
}

// VideoResult is one video.
type VideoResult struct {
	Type        string     `json:"type"` // "video_result"
	Title       string     `json:"title"`
	URL         string     `json:"url"`
	Description string     `json:"description,omitempty"`
	Age         string     `json:"age,omitempty"` // "6 months ago" or "February 12, 2025"
	PageAge     string     `json:"page_age,omitempty"`
	PageFetched string     `json:"page_fetched,omitempty"`
	Thumbnail   *Thumbnail `json:"thumbnail,omitempty"`
	Video       *VideoData `json:"video,omitempty"`
	MetaURL     *MetaURL   `json:"meta_url,omitempty"`
}

// VideoData is what Brave knows about the video itself.
type VideoData struct {
	Duration             string       `json:"duration,omitempty"` // a time string, e.g. "03:45:00"; its format varies
	Views                int64        `json:"views,omitempty"`
	Creator              string       `json:"creator,omitempty"`   // channel or creator
	Publisher            string       `json:"publisher,omitempty"` // platform, e.g. YouTube
	RequiresSubscription bool         `json:"requires_subscription,omitempty"`
	Tags                 []string     `json:"tags,omitempty"`
	Author               *VideoAuthor `json:"author,omitempty"`
}

// VideoAuthor is the profile of a video's author.
type VideoAuthor struct {
	Name     string `json:"name"`
	URL      string `json:"url,omitempty"`
	LongName string `json:"long_name,omitempty"`
	Img      string `json:"img,omitempty"`
}

// News runs one news search. Failures are as for [Client.Search].
func (c *Client) News(ctx context.Context, p *NewsParams) (*NewsResponse, error) {
	return query(ctx, c, newsPath, p, DecodeNewsResponse, func(r *NewsResponse) *RateLimit { return &r.RateLimit })
}

// Images runs one image search. Failures are as for [Client.Search].
func (c *Client) Images(ctx context.Context, p *ImageParams) (*ImageResponse, error) {
	return query(ctx, c, imagesPath, p, DecodeImageResponse, func(r *ImageResponse) *RateLimit { return &r.RateLimit })
}

// Videos runs one video search. Failures are as for [Client.Search].
func (c *Client) Videos(ctx context.Context, p *VideoParams) (*VideoResponse, error) {
	return query(ctx, c, videosPath, p, DecodeVideoResponse, func(r *VideoResponse) *RateLimit { return &r.RateLimit })
}

// DecodeNewsResponse parses a 200 body of the news endpoint, as
// [DecodeSearchResponse] does for web search.
func DecodeNewsResponse(body []byte, contentType string) (*NewsResponse, error) {
	return decodeAnswer[NewsResponse](body, contentType, func(r *NewsResponse) string { return r.Type })
}

// DecodeImageResponse parses a 200 body of the image endpoint.
func DecodeImageResponse(body []byte, contentType string) (*ImageResponse, error) {
	return decodeAnswer[ImageResponse](body, contentType, func(r *ImageResponse) string { return r.Type })
}

// DecodeVideoResponse parses a 200 body of the video endpoint.
func DecodeVideoResponse(body []byte, contentType string) (*VideoResponse, error) {
	return decodeAnswer[VideoResponse](body, contentType, func(r *VideoResponse) string { return r.Type })
}

// decodeAnswer parses a 200 body into T. A leading UTF-8 byte-order mark is
// ignored; a body whose type is "ErrorResponse" is returned as an [*Error].
func decodeAnswer[T any](body []byte, contentType string, typeOf func(*T) string) (*T, error) {
	body = httpclient.TrimBOM(body)
	var r T
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &ParseError{ContentType: contentType, Err: err}
	}
	if typeOf(&r) == "ErrorResponse" {
		e := &Error{StatusCode: http.StatusOK}
		e.fill(body)
		return nil, e
	}
	return &r, nil
}
