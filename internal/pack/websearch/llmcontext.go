package websearch

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// LLMContextInput is the input of llm_context_brave.
type LLMContextInput struct {
	Query      string   `json:"query" schema:"minLength=2"`
	MaxTokens  int      `json:"max_tokens,omitempty" jsonschema:"Approximate size of the content in tokens" schema:"minimum=1024,maximum=32768,default=4096"`
	MaxURLs    int      `json:"max_urls,omitempty" jsonschema:"Pages to draw from" schema:"minimum=1,maximum=50,default=10"`
	Threshold  string   `json:"threshold,omitempty" jsonschema:"How relevant a passage must be (Brave's default: balanced)" schema:"enum=strict|balanced|lenient"`
	Freshness  string   `json:"freshness,omitempty" jsonschema:"pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD" schema:"pattern=^(pd|pw|pm|py|[0-9]{4}-[0-9]{2}-[0-9]{2}to[0-9]{4}-[0-9]{2}-[0-9]{2})$"`
	Country    string   `json:"country,omitempty" jsonschema:"Two-letter country code, or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string   `json:"search_lang,omitempty" jsonschema:"Language code, e.g. en" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	Goggles    []string `json:"goggles,omitempty" jsonschema:"Goggle URLs or inline definitions that re-rank sources" schema:"maxItems=5,items.minLength=1,items.maxLength=2048"`
}

// ContextSource is one page's passages.
type ContextSource struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Host     string   `json:"host,omitempty"`
	Date     string   `json:"date,omitempty" jsonschema:"The page's date, when known"`
	Snippets []string `json:"snippets" jsonschema:"Passages: text, or JSON for tables and code"`
}

// LLMContextOutput is what llm_context_brave returns.
type LLMContextOutput struct {
	Sources []ContextSource `json:"sources"`
	Count   int             `json:"count"`
	query   string
	runes   int
}

func (o LLMContextOutput) Summary() string {
	return fmt.Sprintf("%d sources, %d characters of content for %q", o.Count, o.runes, o.query)
}

// maxRunesPerToken turns Brave's token budget into a bound Toolport keeps
// itself: Brave's budget is approximate, and ~4 characters make a token in
// English text.
const maxRunesPerToken = 4

// LLMContext declares llm_context_brave: Brave's LLM Context API, the
// relevant passages of the top pages within a token budget (Search plan).
func LLMContext(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:        "llm_context_brave",
		Title:       "Brave LLM Context",
		Description: "Search the web with Brave and get the relevant passages of the top pages, within a token budget, to ground an answer. Cite the source URLs.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.llmContext))
}

func (s *braveMedia) llmContext(ctx context.Context, in LLMContextInput) (LLMContextOutput, error) {
	const name = "llm_context_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return LLMContextOutput{}, err
	}
	if in.MaxTokens == 0 {
		in.MaxTokens = 4096 // the registry applies the default; a direct caller may not
	}
	if in.MaxURLs == 0 {
		in.MaxURLs = 10
	}
	p := brave.LLMContextParams{Query: strings.TrimSpace(in.Query), MaxTokens: in.MaxTokens, MaxURLs: in.MaxURLs,
		ThresholdMode: in.Threshold, Freshness: in.Freshness, Country: in.Country, SearchLang: in.SearchLang, Goggles: in.Goggles}
	if err := p.Validate(); err != nil {
		return LLMContextOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	resp, err := s.client.LLMContext(cctx, &p)
	if err != nil {
		return LLMContextOutput{}, planFailure(s.cfg, name, "Search", err, ctx)
	}
	out := LLMContextOutput{Sources: []ContextSource{}, query: p.Query}
	budget := in.MaxTokens * maxRunesPerToken
	seen := map[string]int{} // url → index in out.Sources
	items := resp.Grounding.Generic
	if resp.Grounding.POI != nil {
		items = append(items, *resp.Grounding.POI)
	}
	items = append(items, resp.Grounding.Map...)
	for _, it := range items {
		if it.URL == "" || budget <= 0 {
			continue
		}
		i, ok := seen[it.URL]
		if !ok {
			if len(out.Sources) == in.MaxURLs {
				continue
			}
			src := resp.Sources[it.URL]
			title := strings.TrimSpace(it.Title)
			if title == "" {
				title = strings.TrimSpace(firstNonEmpty(it.Name, src.Title))
			}
			cs := ContextSource{URL: it.URL, Title: textclip.Runes(title, 300), Host: src.Hostname, Snippets: []string{}}
			if len(src.Age) > 1 {
				cs.Date = src.Age[1] // Brave sends [long date, ISO date, relative age]
			} else if len(src.Age) == 1 {
				cs.Date = src.Age[0]
			}
			i = len(out.Sources)
			seen[it.URL] = i
			out.Sources = append(out.Sources, cs)
		}
		for _, sn := range it.Snippets {
			sn = strings.TrimSpace(sn)
			if sn == "" || budget <= 0 {
				continue
			}
			sn = textclip.Runes(sn, budget)
			n := len([]rune(sn))
			budget -= n
			out.runes += n
			out.Sources[i].Snippets = append(out.Sources[i].Snippets, sn)
		}
	}
	out.Count = len(out.Sources)
	return out, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
