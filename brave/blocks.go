package brave

import (
	"bytes"
	"encoding/json"
)

// The blocks a web search returns beside "web", as Brave's Web Search API
// reference documents them. Text fields may hold HTML highlighting and
// entities, as in web results; see [PlainText].

// FAQ is the "faq" block: questions and answers found on the result pages.
type FAQ struct {
	Type    string `json:"type"` // "faq"
	Results []QA   `json:"results"`
}

// QA is one question and its answer, with the page it came from.
type QA struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Title    string   `json:"title,omitempty"`
	URL      string   `json:"url"`
	MetaURL  *MetaURL `json:"meta_url,omitempty"`
}

// Discussions is the "discussions" block: forum threads about the query.
type Discussions struct {
	Type             string             `json:"type"` // "search"
	Results          []DiscussionResult `json:"results"`
	MutatedByGoggles bool               `json:"mutated_by_goggles,omitempty"`
}

// DiscussionResult is one forum thread.
type DiscussionResult struct {
	Type        string     `json:"type"` // "discussion"
	Title       string     `json:"title"`
	URL         string     `json:"url"`
	Description string     `json:"description,omitempty"`
	Age         string     `json:"age,omitempty"`
	Data        *ForumData `json:"data,omitempty"`
}

// ForumData is what Brave knows about a thread.
type ForumData struct {
	ForumName  string `json:"forum_name,omitempty"`
	NumAnswers int    `json:"num_answers,omitempty"`
	Score      Text   `json:"score,omitempty"`
	Title      string `json:"title,omitempty"`
	Question   string `json:"question,omitempty"`
	TopComment string `json:"top_comment,omitempty"`
}

// Text is a string field whose type Brave's reference does not pin down
// (a thread's score is "15" there; an infobox attribute may be null): text is
// kept, a number is kept as its digits, and anything else is "" rather than
// an error that would drop the whole block.
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = Text(s)
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*t = Text(n)
		return nil
	}
	*t = ""
	return nil
}

// Infobox is the "infobox" block (Brave's GraphInfobox): a knowledge panel
// about the entity the query names.
type Infobox struct {
	Type    string          `json:"type"` // "graph"
	Results []InfoboxResult `json:"results"`
}

// InfoboxResult is one knowledge panel. Attributes are label-value pairs,
// e.g. ["Developer", "Microsoft"].
type InfoboxResult struct {
	Type        string     `json:"type"` // "infobox"
	Title       string     `json:"title"`
	URL         string     `json:"url,omitempty"`
	Description string     `json:"description,omitempty"`
	LongDesc    string     `json:"long_desc,omitempty"`
	Label       string     `json:"label,omitempty"`
	Category    string     `json:"category,omitempty"`
	WebsiteURL  string     `json:"website_url,omitempty"`
	Attributes  [][]Text   `json:"attributes,omitempty"`
	Thumbnail   *Thumbnail `json:"thumbnail,omitempty"`
}

// NewsBlock is the "news" block of a web search; its results are shaped
// like the news endpoint's.
type NewsBlock struct {
	Type             string       `json:"type"` // "news"
	Results          []NewsResult `json:"results"`
	MutatedByGoggles bool         `json:"mutated_by_goggles,omitempty"`
}

// VideoBlock is the "videos" block of a web search; its results are shaped
// like the video endpoint's.
type VideoBlock struct {
	Type             string        `json:"type"` // "videos"
	Results          []VideoResult `json:"results"`
	MutatedByGoggles bool          `json:"mutated_by_goggles,omitempty"`
}

// decodeBlock decodes one optional block; an absent, null or malformed
// block is nil.
func decodeBlock[T any](raw json.RawMessage) *T {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var b T
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	return &b
}
