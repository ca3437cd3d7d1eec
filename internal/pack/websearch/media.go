package websearch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// The Brave searches, by the names TOOLPORT_BRAVE_TOOLS uses.
const (
	BraveWeb    = "web"
	BraveNews   = "news"
	BraveImages = "images"
	BraveVideos = "videos"
	BraveLocal  = "local"
	BraveLLM    = "llm_context"
	BraveAnswer = "answers"
)

// DefaultBraveTools is what is declared when TOOLPORT_BRAVE_TOOLS is unset:
// web search only. It is the one search every Brave plan has served,
// including the free plan the spec's texts point users to (2,000
// searches/month); Brave documents news, image and video search as part of
// its paid Search plan, and a user on another plan should not see tools that
// always fail. Users with the Search plan set TOOLPORT_BRAVE_TOOLS=all.
var DefaultBraveTools = []string{BraveWeb}

// braveDeclarations declares each Brave search, in the order Tools lists them.
var braveDeclarations = map[string]func(Config) *tool.Tool{
	BraveWeb: Brave, BraveNews: News, BraveImages: Images, BraveVideos: Videos,
	BraveLocal: Local, BraveLLM: LLMContext, BraveAnswer: Answers,
}

var braveOrder = []string{BraveWeb, BraveNews, BraveImages, BraveVideos, BraveLocal, BraveLLM, BraveAnswer}

// ParseBraveTools reads a TOOLPORT_BRAVE_TOOLS value: names separated by
// commas or spaces, from web, news, images and videos (singular forms and the
// tool names are accepted too), or "all", or "none" for no Brave tool. The
// result is in a fixed order without repeats.
func ParseBraveTools(s string) ([]string, error) {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil, errors.New("empty list: name the Brave searches to offer (" + strings.Join(braveOrder, ", ") + "), all, or none")
	}
	chosen := map[string]bool{}
	for _, f := range fields {
		switch f {
		case "all":
			return slices.Clone(braveOrder), nil
		case "none":
			if len(fields) > 1 {
				return nil, errors.New(`"none" cannot be combined with other names`)
			}
			return []string{}, nil
		case "web", "web_search_brave":
			chosen[BraveWeb] = true
		case "news", "news_search_brave":
			chosen[BraveNews] = true
		case "images", "image", "image_search_brave":
			chosen[BraveImages] = true
		case "videos", "video", "video_search_brave":
			chosen[BraveVideos] = true
		case "local", "places", "local_search_brave":
			chosen[BraveLocal] = true
		case "llm_context", "context", "llm_context_brave":
			chosen[BraveLLM] = true
		case "answers", "answer", "answer_brave":
			chosen[BraveAnswer] = true
		default:
			return nil, fmt.Errorf("unknown Brave search %q: use %s, all or none", textclip.Runes(f, 40), strings.Join(braveOrder, ", "))
		}
	}
	var out []string
	for _, name := range braveOrder {
		if chosen[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// checkBraveTools reports names Tools cannot declare, for a Config built in
// code rather than by ConfigFromEnv.
func checkBraveTools(names []string) error {
	for _, n := range names {
		if braveDeclarations[n] == nil {
			return fmt.Errorf("unknown Brave search %q: use one of %s", textclip.Runes(n, 40), strings.Join(braveOrder, ", "))
		}
	}
	return nil
}

// braveTools is the selection to declare: the default when none was given or
// the given one could not be read.
func (c Config) braveTools() []string {
	if c.BraveTools == nil || c.braveToolsErr != nil || checkBraveTools(c.BraveTools) != nil {
		return DefaultBraveTools
	}
	var out []string
	for _, name := range braveOrder {
		if slices.Contains(c.BraveTools, name) {
			out = append(out, name)
		}
	}
	return out
}

// braveReady reports what stops any Brave call: a missing key, a bad base URL
// or an unreadable TOOLPORT_BRAVE_TOOLS.
func (c Config) braveReady(toolName string, clientErr error) *tool.Error {
	switch {
	case c.BraveAPIKey == "":
		return braveMissing(toolName)
	case clientErr != nil:
		return &tool.Error{Code: tool.CodeConfig, Message: "BRAVE_API_BASE_URL is not a valid base URL (want e.g. https://api.search.brave.com)", Err: clientErr}
	case c.braveToolsErr != nil:
		return &tool.Error{Code: tool.CodeConfig, Message: "TOOLPORT_BRAVE_TOOLS: " + c.braveToolsErr.Error(), Err: c.braveToolsErr}
	}
	return nil
}

// NewsInput is the input of news_search_brave.
type NewsInput struct {
	Query      string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count      int    `json:"count,omitempty" jsonschema:"Number of articles to return (1-50)" schema:"minimum=1,maximum=50,default=10"`
	Offset     int    `json:"offset,omitempty" jsonschema:"Result offset for pagination: results to skip, a multiple of count below 10 × count (Brave serves 10 pages of count)" schema:"minimum=0,default=0"`
	Freshness  string `json:"freshness,omitempty" jsonschema:"Only results Brave found in this period: pd (past day), pw (past week), pm (past month), py (past year), or a date range YYYY-MM-DDtoYYYY-MM-DD" schema:"pattern=^(pd|pw|pm|py|[0-9]{4}-[0-9]{2}-[0-9]{2}to[0-9]{4}-[0-9]{2}-[0-9]{2})$"`
	Country    string `json:"country,omitempty" jsonschema:"Two-letter country code the results should come from (e.g. US, DE), or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string `json:"search_lang,omitempty" jsonschema:"Language code of the results (e.g. en, de, pt-br)" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	UILang     string `json:"ui_lang,omitempty" jsonschema:"Language and region of the answer's text, e.g. en-US" schema:"pattern=^[A-Za-z]{2}-[A-Za-z]+$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off, moderate or strict (Brave's default for news)" schema:"enum=off|moderate|strict"`
	Spellcheck *bool  `json:"spellcheck,omitempty" jsonschema:"Let Brave correct the query's spelling (Brave's default: true)"`
}

// VideoInput is the input of video_search_brave.
type VideoInput struct {
	Query      string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count      int    `json:"count,omitempty" jsonschema:"Number of videos to return (1-50)" schema:"minimum=1,maximum=50,default=10"`
	Offset     int    `json:"offset,omitempty" jsonschema:"Result offset for pagination: results to skip, a multiple of count below 10 × count (Brave serves 10 pages of count)" schema:"minimum=0,default=0"`
	Freshness  string `json:"freshness,omitempty" jsonschema:"Only results Brave found in this period: pd (past day), pw (past week), pm (past month), py (past year), or a date range YYYY-MM-DDtoYYYY-MM-DD" schema:"pattern=^(pd|pw|pm|py|[0-9]{4}-[0-9]{2}-[0-9]{2}to[0-9]{4}-[0-9]{2}-[0-9]{2})$"`
	Country    string `json:"country,omitempty" jsonschema:"Two-letter country code the results should come from (e.g. US, DE), or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string `json:"search_lang,omitempty" jsonschema:"Language code of the results (e.g. en, de, pt-br)" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	UILang     string `json:"ui_lang,omitempty" jsonschema:"Language and region of the answer's text, e.g. en-US" schema:"pattern=^[A-Za-z]{2}-[A-Za-z]+$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off, moderate (Brave's default for videos) or strict" schema:"enum=off|moderate|strict"`
	Spellcheck *bool  `json:"spellcheck,omitempty" jsonschema:"Let Brave correct the query's spelling (Brave's default: true)"`
}

// ImageInput is the input of image_search_brave. Brave's image search has no
// offset, freshness or ui_lang, and no moderate safesearch.
type ImageInput struct {
	Query      string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count      int    `json:"count,omitempty" jsonschema:"Number of images to return (1-200)" schema:"minimum=1,maximum=200,default=20"`
	Country    string `json:"country,omitempty" jsonschema:"Two-letter country code the results should come from (e.g. US, DE), or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string `json:"search_lang,omitempty" jsonschema:"Language code of the results (e.g. en, de, pt-br)" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off or strict (Brave's default for images; there is no moderate)" schema:"enum=off|strict"`
	Spellcheck *bool  `json:"spellcheck,omitempty" jsonschema:"Let Brave correct the query's spelling (Brave's default: true)"`
}

// NewsResult is one news article.
type NewsResult struct {
	Title       string `json:"title" jsonschema:"Headline"`
	URL         string `json:"url" jsonschema:"Full URL of the article"`
	Description string `json:"description,omitempty" jsonschema:"Summary of the article"`
	Source      string `json:"source,omitempty" jsonschema:"The publisher's host name, e.g. www.bbc.co.uk"`
	Age         string `json:"age,omitempty" jsonschema:"How old the article is, as Brave says it, e.g. 2 hours ago"`
	PageAge     string `json:"page_age,omitempty" jsonschema:"Publication date and time (ISO 8601), when known"`
	Thumbnail   string `json:"thumbnail,omitempty" jsonschema:"URL of a thumbnail image (served by Brave)"`
}

// ImageResult is one image.
type ImageResult struct {
	Title      string `json:"title" jsonschema:"Title of the image or its page"`
	URL        string `json:"url" jsonschema:"The page the image is on"`
	ImageURL   string `json:"image_url,omitempty" jsonschema:"The full-size image itself"`
	Thumbnail  string `json:"thumbnail,omitempty" jsonschema:"URL of a thumbnail (about 500 px wide, served by Brave)"`
	Source     string `json:"source,omitempty" jsonschema:"The source's domain"`
	Width      int    `json:"width,omitempty" jsonschema:"Width of the full-size image in pixels, when known"`
	Height     int    `json:"height,omitempty" jsonschema:"Height of the full-size image in pixels, when known"`
	Confidence string `json:"confidence,omitempty" jsonschema:"Brave's confidence that the image matches: low, medium or high"`
}

// VideoResult is one video.
type VideoResult struct {
	Title       string `json:"title" jsonschema:"Title of the video"`
	URL         string `json:"url" jsonschema:"Full URL of the video's page"`
	Description string `json:"description,omitempty" jsonschema:"Description of the video"`
	Duration    string `json:"duration,omitempty" jsonschema:"Length as Brave gives it, e.g. 03:45:00"`
	Creator     string `json:"creator,omitempty" jsonschema:"Channel or creator"`
	Publisher   string `json:"publisher,omitempty" jsonschema:"Platform, e.g. YouTube"`
	Views       int64  `json:"views,omitempty" jsonschema:"View count, when known"`
	Thumbnail   string `json:"thumbnail,omitempty" jsonschema:"URL of a thumbnail image (served by Brave)"`
	Age         string `json:"age,omitempty" jsonschema:"When it was published, as Brave says it, e.g. 6 months ago"`
}

// NewsOutput is what news_search_brave returns.
type NewsOutput struct {
	Results []NewsResult `json:"results" jsonschema:"The articles, best first"`
	Count   int          `json:"count" jsonschema:"Number of results returned"`
	summary mediaSummary
}

// ImageOutput is what image_search_brave returns.
type ImageOutput struct {
	Results []ImageResult `json:"results" jsonschema:"The images, best first"`
	Count   int           `json:"count" jsonschema:"Number of results returned"`
	summary mediaSummary
}

// VideoOutput is what video_search_brave returns.
type VideoOutput struct {
	Results []VideoResult `json:"results" jsonschema:"The videos, best first"`
	Count   int           `json:"count" jsonschema:"Number of results returned"`
	summary mediaSummary
}

func (o NewsOutput) Summary() string  { return o.summary.text(o.Count) }
func (o ImageOutput) Summary() string { return o.summary.text(o.Count) }
func (o VideoOutput) Summary() string { return o.summary.text(o.Count) }

// mediaSummary says how many results a query found, and the query Brave
// searched instead when its spellcheck changed it.
type mediaSummary struct {
	one, many string // "news result", "news results"
	query     string
	altered   string
}

func (s mediaSummary) text(n int) string {
	noun := s.many
	if n == 1 {
		noun = s.one
	}
	out := fmt.Sprintf("%d %s for %q", n, noun, s.query)
	if s.altered != "" && s.altered != s.query {
		out += fmt.Sprintf(" (Brave searched for %q)", s.altered)
	}
	return out
}

func newSummary(one, many, query string, q *brave.Query) mediaSummary {
	s := mediaSummary{one: one, many: many, query: query}
	if q != nil {
		s.altered = strings.TrimSpace(q.Altered)
	}
	return s
}

// News declares news_search_brave.
func News(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:  "news_search_brave",
		Title: "Brave News Search",
		Description: "Search recent news articles using Brave Search API. Use it for current events and breaking news; " +
			"freshness narrows results to the past day, week, month, year or a date range. Returns articles with " +
			"title, url, description, source, age and a thumbnail.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.news))
}

// Images declares image_search_brave.
func Images(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:  "image_search_brave",
		Title: "Brave Image Search",
		Description: "Search images using Brave Search API. Returns images with the page they are on (url), " +
			"the full-size image (image_url), a thumbnail, the source domain and the image's width and height when known.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.images))
}

// Videos declares video_search_brave.
func Videos(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:  "video_search_brave",
		Title: "Brave Video Search",
		Description: "Search videos using Brave Search API. Returns videos with title, url, description, duration, " +
			"creator, publisher (platform), view count, thumbnail and age.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.videos))
}

type braveMedia struct {
	cfg       Config
	client    *brave.Client
	clientErr error
}

// pageOf turns the tool's result offset into Brave's page index.
func pageOf(offset, count int) (int, *tool.Error) {
	if offset%count != 0 {
		return 0, validationError("offset", "multipleOf", fmt.Sprintf(
			"offset: Brave serves results in pages of count, so offset must be a multiple of count (%d), got %d", count, offset))
	}
	if page := offset / count; page <= brave.MaxPage {
		return page, nil
	}
	return 0, validationError("offset", "maximum", fmt.Sprintf(
		"offset: Brave serves at most %d pages of count results, so offset must be below %d for count %d, got %d",
		brave.MaxPage+1, (brave.MaxPage+1)*count, count, offset))
}

// fail maps a failed Brave call of toolName.
func (s *braveMedia) fail(toolName string, err error, parent context.Context) *tool.Error {
	return braveFailure(toolName, err, parent, s.cfg.timeout())
}

func (s *braveMedia) news(ctx context.Context, in NewsInput) (NewsOutput, error) {
	const name = "news_search_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return NewsOutput{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxNewsCount {
		in.Count = 10 // the registry applies the default; a direct caller may not
	}
	page, verr := pageOf(in.Offset, in.Count)
	if verr != nil {
		return NewsOutput{}, verr
	}
	p := brave.NewsParams{Query: strings.TrimSpace(in.Query), Count: in.Count, Offset: page, Country: in.Country,
		SearchLang: in.SearchLang, UILang: in.UILang, SafeSearch: in.SafeSearch, Freshness: in.Freshness, Spellcheck: in.Spellcheck}
	if err := p.Validate(); err != nil {
		return NewsOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	resp, err := s.client.News(cctx, &p)
	if err != nil {
		return NewsOutput{}, s.fail(name, err, ctx)
	}
	out := NewsOutput{Results: []NewsResult{}, summary: newSummary("news result", "news results", p.Query, resp.Query)}
	seen := map[string]bool{}
	for _, r := range resp.Results {
		if r.URL == "" || seen[r.URL] || len(out.Results) == in.Count {
			continue
		}
		seen[r.URL] = true
		out.Results = append(out.Results, NewsResult{
			Title: brave.PlainText(r.Title), URL: r.URL, Description: brave.PlainText(r.Description),
			Source: metaHost(r.MetaURL), Age: r.Age, PageAge: r.PageAge, Thumbnail: thumbnailOf(r.Thumbnail),
		})
	}
	out.Count = len(out.Results)
	return out, nil
}

func (s *braveMedia) images(ctx context.Context, in ImageInput) (ImageOutput, error) {
	const name = "image_search_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return ImageOutput{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxImageCount {
		in.Count = 20
	}
	p := brave.ImageParams{Query: strings.TrimSpace(in.Query), Count: in.Count, Country: in.Country,
		SearchLang: in.SearchLang, SafeSearch: in.SafeSearch, Spellcheck: in.Spellcheck}
	if err := p.Validate(); err != nil {
		return ImageOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	resp, err := s.client.Images(cctx, &p)
	if err != nil {
		return ImageOutput{}, s.fail(name, err, ctx)
	}
	out := ImageOutput{Results: []ImageResult{}, summary: newSummary("image", "images", p.Query, resp.Query)}
	seen := map[string]bool{}
	for _, r := range resp.Results {
		res := ImageResult{Title: brave.PlainText(r.Title), URL: r.URL, Thumbnail: thumbnailOf(r.Thumbnail),
			Source: r.Source, Confidence: r.Confidence}
		if pr := r.Properties; pr != nil {
			res.ImageURL, res.Width, res.Height = pr.URL, max(pr.Width, 0), max(pr.Height, 0)
		}
		if res.Source == "" {
			res.Source = metaHost(r.MetaURL)
		}
		key := res.ImageURL + " " + res.URL
		if (res.URL == "" && res.ImageURL == "") || seen[key] || len(out.Results) == in.Count {
			continue
		}
		seen[key] = true
		out.Results = append(out.Results, res)
	}
	out.Count = len(out.Results)
	return out, nil
}

func (s *braveMedia) videos(ctx context.Context, in VideoInput) (VideoOutput, error) {
	const name = "video_search_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return VideoOutput{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxVideoCount {
		in.Count = 10
	}
	page, verr := pageOf(in.Offset, in.Count)
	if verr != nil {
		return VideoOutput{}, verr
	}
	p := brave.VideoParams{Query: strings.TrimSpace(in.Query), Count: in.Count, Offset: page, Country: in.Country,
		SearchLang: in.SearchLang, UILang: in.UILang, SafeSearch: in.SafeSearch, Freshness: in.Freshness, Spellcheck: in.Spellcheck}
	if err := p.Validate(); err != nil {
		return VideoOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	resp, err := s.client.Videos(cctx, &p)
	if err != nil {
		return VideoOutput{}, s.fail(name, err, ctx)
	}
	out := VideoOutput{Results: []VideoResult{}, summary: newSummary("video", "videos", p.Query, resp.Query)}
	seen := map[string]bool{}
	for _, r := range resp.Results {
		if r.URL == "" || seen[r.URL] || len(out.Results) == in.Count {
			continue
		}
		seen[r.URL] = true
		res := VideoResult{Title: brave.PlainText(r.Title), URL: r.URL, Description: brave.PlainText(r.Description),
			Thumbnail: thumbnailOf(r.Thumbnail), Age: r.Age}
		if v := r.Video; v != nil {
			res.Duration, res.Creator, res.Publisher, res.Views = v.Duration, v.Creator, v.Publisher, max(v.Views, 0)
			if res.Creator == "" && v.Author != nil {
				res.Creator = v.Author.Name
			}
		}
		out.Results = append(out.Results, res)
	}
	out.Count = len(out.Results)
	return out, nil
}

// metaHost is the host name Brave gives for a result's URL.
func metaHost(m *brave.MetaURL) string {
	if m == nil {
		return ""
	}
	if m.Hostname != "" {
		return m.Hostname
	}
	return m.Netloc
}

func thumbnailOf(t *brave.Thumbnail) string {
	if t == nil {
		return ""
	}
	return t.Src
}
