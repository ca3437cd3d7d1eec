package brave

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/httpclient"
)

// Brave's Answers API (AI Grounding, part of the Answers plan) is
// OpenAI-compatible: POST /res/v1/chat/completions with model "brave" and one
// user message. Citations come only in a streamed answer (enable_citations
// with stream), as <citation>{json}</citation> tags inside the text, and the
// cost as a <usage>{json}</usage> tag at its end.
const (
	answersPath = "/res/v1/chat/completions"

	MaxQuestionRunes = 2000 // Brave documents none; a question, not a document
	maxStreamLine    = 1 << 20
)

// AnswerParams is one question.
type AnswerParams struct {
	Question   string // the one user message
	Country    string // two-letter country code of the searches, or "ALL"
	Language   string // the answer's language, e.g. "en"
	SafeSearch string // off, moderate or strict
	// MaxCompletionTokens bounds the answer's length; 0 leaves it to Brave.
	MaxCompletionTokens int
}

// Validate checks p before a request is spent on it.
func (p *AnswerParams) Validate() error {
	q := strings.TrimSpace(p.Question)
	switch {
	case q == "":
		return errors.New("question must not be empty")
	case len([]rune(q)) > MaxQuestionRunes:
		return fmt.Errorf("question is too long: at most %d characters", MaxQuestionRunes)
	case p.Country != "" && !countryRe().MatchString(p.Country):
		return fmt.Errorf("country must be a two-letter country code or ALL, got %q", p.Country)
	case p.Language != "" && !searchLangRe().MatchString(p.Language):
		return fmt.Errorf("language must be a language code such as en or pt-br, got %q", p.Language)
	case p.MaxCompletionTokens < 0:
		return fmt.Errorf("max_completion_tokens must not be negative, got %d", p.MaxCompletionTokens)
	}
	switch p.SafeSearch {
	case "", "off", "moderate", "strict":
		return nil
	}
	return fmt.Errorf("safesearch must be off, moderate or strict, got %q", p.SafeSearch)
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type answerRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Stream              bool          `json:"stream"`
	EnableCitations     bool          `json:"enable_citations"`
	Country             string        `json:"country,omitempty"`
	Language            string        `json:"language,omitempty"`
	SafeSearch          string        `json:"safesearch,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
}

func (p *AnswerParams) body() []byte {
	b, _ := json.Marshal(answerRequest{ // plain strings and ints: it cannot fail
		Model: "brave", Messages: []chatMessage{{Role: "user", Content: strings.TrimSpace(p.Question)}},
		Stream: true, EnableCitations: true, Country: strings.ToUpper(p.Country), Language: strings.ToLower(p.Language),
		SafeSearch: p.SafeSearch, MaxCompletionTokens: p.MaxCompletionTokens,
	})
	return b
}

// Answer is a finished answer.
type Answer struct {
	// Text is the answer with each citation tag replaced by its number in
	// brackets, e.g. "… in 1990 [1]."
	Text         string
	Citations    []Citation // in order of first use, one per number
	Usage        map[string]float64
	Model        string
	FinishReason string // stop, length, or "" when Brave did not say

	RateLimit RateLimit
}

// Citation is one source of an answer. StartIndex and EndIndex are Brave's
// offsets of the cited span in its own text (with the tags), kept as sent.
type Citation struct {
	Number     int    `json:"number"`
	URL        string `json:"url"`
	Snippet    string `json:"snippet,omitempty"`
	Favicon    string `json:"favicon,omitempty"`
	StartIndex int    `json:"start_index,omitempty"`
	EndIndex   int    `json:"end_index,omitempty"`
}

// Answer asks one question and reads the streamed answer. onText, when not
// nil, is called with each piece of raw text (tags included) as it arrives,
// so a caller can show the answer growing ([ParseAnswerText] makes the text
// so far readable). Failures are an [*Error] for an error status, a
// [*ParseError] for a stream that is not the documented one or ends early,
// [ErrBodyTooLarge] for one over the client's body cap, or a transport or
// context error.
func (c *Client) Answer(ctx context.Context, p *AnswerParams, onText func(string)) (*Answer, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	req, err := c.core.NewRequest(ctx, http.MethodPost, answersPath, nil, p.body())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream, application/json")
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	hc := c.core.HTTPClient()
	if hc == nil {
		return nil, errors.New("brave: no HTTP client")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	defer resp.Body.Close()
	limit := c.core.MaxBodyBytes()
	ct := resp.Header.Get("Content-Type")
	if !httpclient.Success(resp.StatusCode) || !strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
		body, err := httpclient.ReadBody(resp.Body, limit)
		switch {
		case errors.Is(err, httpclient.ErrBodyTooLarge):
			return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
		case err != nil:
			return nil, fmt.Errorf("brave: reading response: %w", err)
		}
		if err := c.check(resp, body, c.core.Now()); err != nil {
			return nil, err
		}
		a, err := DecodeAnswerResponse(body, ct)
		if err != nil {
			return nil, err
		}
		a.RateLimit = ParseRateLimit(resp.Header)
		return a, nil
	}
	a, err := DecodeAnswerStream(resp.Body, limit, ct, onText)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("brave: %w", ctx.Err())
		}
		return nil, err
	}
	a.RateLimit = ParseRateLimit(resp.Header)
	return a, nil
}

// completionChunk is one streamed chunk, or a whole blocking answer
// (message in place of delta).
type completionChunk struct {
	Type    string `json:"type,omitempty"` // "ErrorResponse" for an error
	Model   string `json:"model"`
	Choices []struct {
		Delta        *chatMessage `json:"delta,omitempty"`
		Message      *chatMessage `json:"message,omitempty"`
		FinishReason *string      `json:"finish_reason,omitempty"`
	} `json:"choices"`
}

// DecodeAnswerStream reads a streamed answer (server-sent events of
// OpenAI-style chunks, ended by "data: [DONE]") of at most limit bytes.
// onText, when not nil, gets each chunk's text as it is read.
func DecodeAnswerStream(r io.Reader, limit int64, contentType string, onText func(string)) (*Answer, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, limit+1), 64<<10)
	var raw strings.Builder
	var a Answer
	var read int64
	for {
		line, err := readLine(br)
		read += int64(len(line)) + 1
		if read > limit {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // no [DONE]: the answer may be cut
			}
			return nil, &ParseError{ContentType: contentType, Err: err}
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // comments, event names, ids and blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		var ch completionChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return nil, &ParseError{ContentType: contentType, Err: err}
		}
		if ch.Type == "ErrorResponse" {
			e := &Error{StatusCode: http.StatusOK}
			e.fill(data)
			return nil, e
		}
		if ch.Model != "" {
			a.Model = ch.Model
		}
		for _, c := range ch.Choices {
			if c.Delta != nil && c.Delta.Content != "" {
				raw.WriteString(c.Delta.Content)
				if onText != nil {
					onText(c.Delta.Content)
				}
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				a.FinishReason = *c.FinishReason
			}
		}
	}
	a.Text, a.Citations, a.Usage = ParseAnswerText(raw.String())
	return &a, nil
}

// readLine reads one line without its end, failing on one over
// maxStreamLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, part...)
		if len(line) > maxStreamLine {
			return nil, fmt.Errorf("an event line is over %d bytes", maxStreamLine)
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// DecodeAnswerResponse parses a blocking (not streamed) answer: an
// OpenAI-style chat completion. Such answers carry no citations.
func DecodeAnswerResponse(body []byte, contentType string) (*Answer, error) {
	ch, err := decodeAnswer[completionChunk](body, contentType, func(r *completionChunk) string { return r.Type })
	if err != nil {
		return nil, err
	}
	a := &Answer{Model: ch.Model}
	var raw strings.Builder
	for _, c := range ch.Choices {
		if c.Message != nil {
			raw.WriteString(c.Message.Content)
		}
		if c.FinishReason != nil {
			a.FinishReason = *c.FinishReason
		}
	}
	if len(ch.Choices) == 0 {
		return nil, &ParseError{ContentType: contentType, Err: errors.New("the completion has no choices")}
	}
	a.Text, a.Citations, a.Usage = ParseAnswerText(raw.String())
	return a, nil
}

// ParseAnswerText turns an answer's raw text into readable text: each
// <citation>{json}</citation> becomes "[n]" set off by a space (and a
// [Citation]), a <usage>{json}</usage> is read into usage and removed, and
// an unfinished tag at the end (a stream cut mid-tag) is dropped. A tag whose
// JSON does not parse is removed without a trace; other text is kept as it
// is, but for white space at either end.
func ParseAnswerText(raw string) (text string, citations []Citation, usage map[string]float64) {
	var b strings.Builder
	seen := map[int]bool{}
	for {
		i := strings.IndexByte(raw, '<')
		if i < 0 {
			b.WriteString(raw)
			break
		}
		b.WriteString(raw[:i])
		rest := raw[i:]
		tag := ""
		for _, t := range []string{"citation", "usage"} {
			if strings.HasPrefix(rest, "<"+t+">") {
				tag = t
			} else if strings.HasPrefix("<"+t+">", rest) {
				tag = "partial" // "<cit" at the very end
			}
		}
		if tag == "" {
			b.WriteByte('<')
			raw = rest[1:]
			continue
		}
		if tag == "partial" {
			break
		}
		open, end := "<"+tag+">", "</"+tag+">"
		j := strings.Index(rest, end)
		if j < 0 {
			break // unfinished: the stream is still writing it
		}
		inner := rest[len(open):j]
		raw = rest[j+len(end):]
		switch tag {
		case "citation":
			var c Citation
			if json.Unmarshal([]byte(inner), &c) != nil || c.Number <= 0 {
				continue
			}
			if s := b.String(); s != "" && s[len(s)-1] != ' ' {
				b.WriteByte(' ') // "claim [1]", also after "claim "
			}
			fmt.Fprintf(&b, "[%d]", c.Number)
			if r, _ := utf8.DecodeRuneInString(raw); unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteByte(' ') // the text goes on right after the tag
			}
			if !seen[c.Number] {
				seen[c.Number] = true
				citations = append(citations, c)
			}
		case "usage":
			var u map[string]float64
			if json.Unmarshal([]byte(inner), &u) == nil {
				usage = u
			}
		}
	}
	return strings.TrimSpace(b.String()), citations, usage
}
