package websearch

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// AnswerInput is the input of answer_brave.
type AnswerInput struct {
	Question   string `json:"question" schema:"minLength=2,maxLength=2000"`
	Country    string `json:"country,omitempty" jsonschema:"Two-letter country code of the searches, or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	Language   string `json:"language,omitempty" jsonschema:"Language of the answer, e.g. en" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" schema:"enum=off|moderate|strict"`
}

// AnswerCitation is one source of an answer; [n] in the answer is Number.
type AnswerCitation struct {
	Number  int    `json:"number"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// AnswerOutput is what answer_brave returns.
type AnswerOutput struct {
	Answer    string           `json:"answer" jsonschema:"The answer; [n] marks cite citations[n]"`
	Citations []AnswerCitation `json:"citations"`
	question  string
	cut       bool
}

func (o AnswerOutput) Summary() string {
	s := fmt.Sprintf("Answer to %q with %d citations", o.question, len(o.Citations))
	if o.cut {
		s += " (cut at Brave's length limit)"
	}
	return s
}

// Bounds on what answer_brave returns and reports while it streams.
const (
	maxAnswerRunes      = 20000
	maxCitationSnippet  = 300
	maxCitations        = 30
	progressEveryRunes  = 80  // a progress report each time the answer grew this much
	progressTailRunes   = 300 // the end of the answer so far, in each report
	defaultAnswerTimout = 60 * time.Second
)

// Answers declares answer_brave: Brave's Answers API (AI Grounding, in
// Brave's Answers plan), an answer written from a web search, with
// citations. The answer streams: while it is written, each
// [tool.ReportProgress] carries its latest text (MCP progress
// notifications, the CLI's progress line).
func Answers(cfg Config) *tool.Tool {
	if cfg.BraveAnswersAPIKey != "" {
		cfg.BraveAPIKey = cfg.BraveAnswersAPIKey
	}
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:        "answer_brave",
		Title:       "Brave Answers",
		Description: "Ask Brave's AI a question; it searches the web and answers with numbered citations. For a cited summary, not for raw results.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.answer))
}

func (s *braveMedia) answer(ctx context.Context, in AnswerInput) (AnswerOutput, error) {
	const name = "answer_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return AnswerOutput{}, err
	}
	p := brave.AnswerParams{Question: strings.TrimSpace(in.Question), Country: in.Country, Language: in.Language, SafeSearch: in.SafeSearch}
	if err := p.Validate(); err != nil {
		return AnswerOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	timeout := defaultAnswerTimout // Brave asks clients to allow 30 s and more
	if s.cfg.Timeout > 0 {
		timeout = s.cfg.Timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var raw strings.Builder
	n, reported := 0, 0
	a, err := s.client.Answer(cctx, &p, func(delta string) {
		if raw.Len() > 4*maxAnswerRunes {
			return
		}
		raw.WriteString(delta)
		if n += utf8.RuneCountInString(delta); n-reported >= progressEveryRunes {
			reported = n
			text, _, _ := brave.ParseAnswerText(raw.String())
			tool.ReportProgress(ctx, tool.Progress{Done: float64(n), Message: tailRunes(text, progressTailRunes)})
		}
	})
	if err != nil {
		return AnswerOutput{}, planFailure(s.cfg, name, "Answers", err, ctx)
	}
	out := AnswerOutput{Answer: textclip.Runes(a.Text, maxAnswerRunes), Citations: []AnswerCitation{}, question: p.Question,
		cut: a.FinishReason == "length"}
	for _, c := range a.Citations {
		if len(out.Citations) == maxCitations {
			break
		}
		out.Citations = append(out.Citations, AnswerCitation{Number: c.Number, URL: c.URL,
			Snippet: textclip.Runes(brave.PlainText(c.Snippet), maxCitationSnippet)})
	}
	return out, nil
}

// tailRunes is the last n runes of s, marked as cut when shorter.
func tailRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return textclip.Ellipsis + string(r[len(r)-n:])
}
