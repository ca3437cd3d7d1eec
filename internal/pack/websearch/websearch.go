// Package websearch declares the web search tools web_search_brave,
// web_search_google and web_search_searxng on the tool contract. All three
// return the same result shape, {results:[{title,url,snippet}], count}, and
// take the same domain filters, so an agent can use any of them
// (web_search_brave adds optional fields: extra snippets per result and,
// when result_filter asks, Brave's faq, discussions, infobox, news and
// videos blocks). Beside them it declares Brave's other searches,
// news_search_brave, image_search_brave and video_search_brave, each with the
// fields its kind of result needs; which Brave searches are declared is configurable
// (TOOLPORT_BRAVE_TOOLS), since not every Brave plan includes them all.
//
// The upstream clients live in packages brave, google and searxng; this package maps
// tool inputs to requests, filters results by domain, and turns upstream
// failures into the contract's error codes with messages an agent can act on.
package websearch

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/google"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/searxng"
	"github.com/toolport/toolport/tool"
)

// Defaults for the zero fields of Config.
const (
	DefaultTimeout       = 12 * time.Second // a whole call, extra Brave pages included
	DefaultMaxExtraPages = 3                // Brave pages fetched to refill filtered results
	DefaultMaxRateWait   = 2 * time.Second  // longest wait for Brave's per-second window between pages
	maxDomains           = 50               // per list
)

// Config holds what the search tools need. The zero value declares both tools;
// calls then fail with AUTH_MISSING until keys are set.
type Config struct {
	BraveAPIKey string // BRAVE_API_KEY or web_search.brave.api_key
	// BraveAnswersAPIKey is the key answer_brave sends when set: Brave's
	// Answers plan may have a key of its own (BRAVE_ANSWERS_API_KEY or
	// web_search.brave.answers_api_key). "" means BraveAPIKey.
	BraveAnswersAPIKey string
	GoogleAPIKey       string // GOOGLE_SEARCH_API_KEY or web_search.google.api_key
	GoogleEngineID     string // GOOGLE_SEARCH_ENGINE_ID or web_search.google.engine_id

	// BraveTools lists the Brave searches to declare: "web", "news",
	// "images", "videos" (TOOLPORT_BRAVE_TOOLS or web_search.brave.tools,
	// e.g. "web,news", "all" or "none"). nil means DefaultBraveTools.
	BraveTools []string
	// braveToolsErr is why TOOLPORT_BRAVE_TOOLS could not be read; the
	// default set is declared and its calls report CONFIG_ERROR.
	braveToolsErr error
	// googleModeErr is why TOOLPORT_GOOGLE_SEARCH could not be read.
	googleModeErr error

	// Base URLs are scheme and host; "" means the real API.
	BraveBaseURL  string // BRAVE_API_BASE_URL
	GoogleBaseURL string // GOOGLE_SEARCH_BASE_URL
	// SearxngURL is the base URL of a SearXNG instance (TOOLPORT_SEARXNG_URL
	// or web_search.searxng.url). SearXNG has no public default, so
	// web_search_searxng is declared only when it is set.
	SearxngURL string

	// HTTPClient makes the requests; nil means a plain &http.Client{}.
	HTTPClient *http.Client
	UserAgent  string // "" means the clients' default
	// Timeout bounds one call, all upstream requests included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes bounds an upstream response body; 0 means 5 MiB.
	MaxBodyBytes int64
	// MaxExtraPages bounds the further Brave pages fetched when domain filters
	// (or an offset that is not a multiple of count) leave fewer than count
	// results; 0 means DefaultMaxExtraPages, a negative value none.
	MaxExtraPages int
	// MaxRateWait is the longest Toolport waits for Brave's per-second window
	// to reset before fetching a further page; a longer reset ends the paging.
	// 0 means DefaultMaxRateWait, a negative value never waits.
	MaxRateWait time.Duration
	// Google decides whether web_search_google is declared (TOOLPORT_GOOGLE_SEARCH):
	// GoogleAuto (the zero value) until google.EndOfService and not after,
	// GoogleOn always (for a key that still works), GoogleOff never.
	Google GoogleMode
	// Now is the clock that decides whether Google's API has ended; nil
	// means time.Now.
	Now func() time.Time

	// BraveLimiter, when set, spaces every Brave request (all four
	// searches share it): Brave's per-second limit, shared by the replicas
	// when it is kept in Redis.
	BraveLimiter brave.Limiter
}

// ConfigFromEnv reads the settings from environment variables and the
// credentials file. The API keys are read with [config.Config.Secret], so they
// are listed by c.Secrets() for redaction.
func ConfigFromEnv(c *config.Config) Config {
	cfg := Config{
		BraveAPIKey:        c.Secret("BRAVE_API_KEY", "web_search.brave.api_key"),
		BraveAnswersAPIKey: c.Secret("BRAVE_ANSWERS_API_KEY", "web_search.brave.answers_api_key"),
		GoogleAPIKey:       c.Secret("GOOGLE_SEARCH_API_KEY", "web_search.google.api_key"),
		GoogleEngineID:     c.Lookup("GOOGLE_SEARCH_ENGINE_ID", "web_search.google.engine_id"),
		BraveBaseURL:       c.Default("BRAVE_API_BASE_URL", brave.DefaultBaseURL),
		GoogleBaseURL:      c.Default("GOOGLE_SEARCH_BASE_URL", google.DefaultBaseURL),
		SearxngURL:         strings.TrimSpace(c.Lookup("TOOLPORT_SEARXNG_URL", "web_search.searxng.url")),
	}
	if v := c.Lookup("TOOLPORT_BRAVE_TOOLS", "web_search.brave.tools"); v != "" {
		cfg.BraveTools, cfg.braveToolsErr = ParseBraveTools(v)
	}
	cfg.Google, cfg.googleModeErr = ParseGoogleMode(c.Env("TOOLPORT_GOOGLE_SEARCH"))
	return cfg
}

// GoogleMode says whether web_search_google is declared.
type GoogleMode int

const (
	GoogleAuto GoogleMode = iota // until google.EndOfService
	GoogleOn                     // always
	GoogleOff                    // never
)

// ParseGoogleMode reads TOOLPORT_GOOGLE_SEARCH: "", "auto", "on" or "off".
func ParseGoogleMode(v string) (GoogleMode, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		return GoogleAuto, nil
	case "on", "1", "true":
		return GoogleOn, nil
	case "off", "0", "false":
		return GoogleOff, nil
	}
	return GoogleAuto, fmt.Errorf("want auto, on or off, got %q", v)
}

// GoogleEnded reports whether Google's Custom Search JSON API has ended by
// the configuration's clock.
func (c Config) GoogleEnded() bool { return !c.now().Before(google.EndOfService) }

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// offersGoogle reports whether Tools declares web_search_google.
func (c Config) offersGoogle() bool {
	switch c.Google {
	case GoogleOn:
		return true
	case GoogleOff:
		return false
	}
	return !c.GoogleEnded()
}

// Validate reports settings that would make every call fail: a malformed base
// URL or TOOLPORT_BRAVE_TOOLS. Missing keys are not an error here; calls
// report them (AUTH_MISSING).
func (c Config) Validate() error {
	if c.braveToolsErr != nil {
		return fmt.Errorf("TOOLPORT_BRAVE_TOOLS: %w", c.braveToolsErr)
	}
	if c.googleModeErr != nil {
		return fmt.Errorf("TOOLPORT_GOOGLE_SEARCH: %w", c.googleModeErr)
	}
	if err := checkBraveTools(c.BraveTools); err != nil {
		return fmt.Errorf("TOOLPORT_BRAVE_TOOLS: %w", err)
	}
	if _, err := c.braveClient(); err != nil {
		return fmt.Errorf("BRAVE_API_BASE_URL: %w", err)
	}
	if _, err := c.googleClient(); err != nil {
		return fmt.Errorf("GOOGLE_SEARCH_BASE_URL: %w", err)
	}
	if c.SearxngURL != "" {
		if _, err := c.searxngClient(); err != nil {
			return fmt.Errorf("TOOLPORT_SEARXNG_URL: %w", err)
		}
	}
	return nil
}

// Tools declares the Brave searches cfg.BraveTools selects, then
// web_search_google until Google's API ends (see [Config.Google]), then
// web_search_searxng when cfg.SearxngURL is set. It never
// fails: a bad setting surfaces as CONFIG_ERROR when a tool is called (see
// [Config.Validate] to check at start-up).
func Tools(cfg Config) []*tool.Tool {
	var tools []*tool.Tool
	for _, name := range cfg.braveTools() {
		tools = append(tools, braveDeclarations[name](cfg))
	}
	if cfg.offersGoogle() {
		tools = append(tools, Google(cfg))
	}
	if cfg.SearxngURL != "" {
		tools = append(tools, Searxng(cfg))
	}
	return tools
}

// braveAvailable is the Brave tools' [tool.Spec.Available]: what stops
// every call of theirs, in a line for listings (the calls themselves say it
// at length, with where to get a key).
func (c Config) braveAvailable(clientErr error) func() error {
	return func() error {
		switch {
		case c.BraveAPIKey == "":
			return errors.New("BRAVE_API_KEY is not set")
		case clientErr != nil:
			return fmt.Errorf("BRAVE_API_BASE_URL: %w", clientErr)
		case c.braveToolsErr != nil:
			return fmt.Errorf("TOOLPORT_BRAVE_TOOLS: %w", c.braveToolsErr)
		}
		return nil
	}
}

// googleAvailable is web_search_google's [tool.Spec.Available].
func (c Config) googleAvailable(clientErr error) func() error {
	return func() error {
		switch {
		case c.GoogleAPIKey == "" && c.GoogleEngineID == "":
			return errors.New("GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID are not set")
		case c.GoogleAPIKey == "":
			return errors.New("GOOGLE_SEARCH_API_KEY is not set")
		case c.GoogleEngineID == "":
			return errors.New("GOOGLE_SEARCH_ENGINE_ID is not set")
		case clientErr != nil:
			return fmt.Errorf("GOOGLE_SEARCH_BASE_URL: %w", clientErr)
		case c.GoogleEnded() && c.Google != GoogleOn:
			return errors.New("the Custom Search JSON API ended on " + google.EndOfService.Format(time.DateOnly))
		}
		return nil
	}
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c Config) maxExtraPages() int {
	switch {
	case c.MaxExtraPages < 0:
		return 0
	case c.MaxExtraPages == 0:
		return DefaultMaxExtraPages
	}
	return c.MaxExtraPages
}

func (c Config) maxRateWait() time.Duration {
	switch {
	case c.MaxRateWait < 0:
		return 0
	case c.MaxRateWait == 0:
		return DefaultMaxRateWait
	}
	return c.MaxRateWait
}

func (c Config) braveClient() (*brave.Client, error) {
	opts := []brave.Option{brave.WithUserAgent(c.UserAgent), brave.WithMaxBodyBytes(c.MaxBodyBytes), brave.WithLimiter(c.BraveLimiter)}
	if c.BraveBaseURL != "" {
		opts = append(opts, brave.WithBaseURL(c.BraveBaseURL))
	}
	return brave.NewClient(c.HTTPClient, c.BraveAPIKey, opts...)
}

func (c Config) googleClient() (*google.Client, error) {
	opts := []google.Option{google.WithUserAgent(c.UserAgent), google.WithMaxBodyBytes(c.MaxBodyBytes)}
	if c.GoogleBaseURL != "" {
		opts = append(opts, google.WithBaseURL(c.GoogleBaseURL))
	}
	return google.NewClient(c.HTTPClient, c.GoogleAPIKey, opts...)
}

func (c Config) searxngClient() (*searxng.Client, error) {
	return searxng.NewClient(c.HTTPClient, searxng.WithBaseURL(c.SearxngURL),
		searxng.WithUserAgent(c.UserAgent), searxng.WithMaxBodyBytes(c.MaxBodyBytes))
}

// Result is one search result, the same for every provider.
type Result struct {
	Title   string `json:"title" jsonschema:"Page title"`
	URL     string `json:"url" jsonschema:"Full URL"`
	Snippet string `json:"snippet" jsonschema:"Result snippet or description"`
}

// Output is what every web search tool returns.
type Output struct {
	Results []Result `json:"results" jsonschema:"The search results, best first"`
	Count   int      `json:"count" jsonschema:"Number of results returned"`

	query    string
	filtered bool
	// unresponsive names the engines behind a SearXNG instance that failed
	// a search that found nothing, so the summary can tell an outage from
	// an empty answer.
	unresponsive string
}

// Summary says how many results the query found.
func (o Output) Summary() string {
	noun := "results"
	if o.Count == 1 {
		noun = "result"
	}
	s := fmt.Sprintf("%d %s for %q", o.Count, noun, o.query)
	if o.filtered {
		s += " (domain-filtered)"
	}
	if o.Count == 0 && o.unresponsive != "" {
		s += "; the instance's engines did not answer: " + o.unresponsive + ". This is an outage, not an empty result: retry later or check the instance"
	}
	return s
}

func newOutput(query string, results []Result, filtered bool) Output {
	if results == nil {
		results = []Result{}
	}
	return Output{Results: results, Count: len(results), query: query, filtered: filtered}
}
