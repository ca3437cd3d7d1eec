package webuitest

import (
	"context"
	"fmt"

	"github.com/toolport/toolport/tool"
)

// The result shapes of local_search_brave, llm_context_brave and
// answer_brave, as the cards read them.

type placeHit struct {
	Name       string   `json:"name"`
	URL        string   `json:"url,omitempty"`
	Address    string   `json:"address,omitempty"`
	Rating     float64  `json:"rating,omitempty"`
	RatingMax  float64  `json:"rating_max,omitempty"`
	Reviews    int      `json:"reviews,omitempty"`
	HoursToday string   `json:"hours_today,omitempty"`
	Latitude   *float64 `json:"latitude,omitempty"`
	Longitude  *float64 `json:"longitude,omitempty"`
}

type placesOut struct {
	Places []placeHit `json:"places"`
	Count  int        `json:"count"`
}

func (o placesOut) Summary() string { return fmt.Sprintf("%d places", o.Count) }

type contextSource struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Host     string   `json:"host,omitempty"`
	Snippets []string `json:"snippets"`
}

type contextOut struct {
	Sources []contextSource `json:"sources"`
	Count   int             `json:"count"`
}

func (o contextOut) Summary() string { return fmt.Sprintf("%d sources", o.Count) }

type answerCitation struct {
	Number  int    `json:"number"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

type answerOut struct {
	Answer    string           `json:"answer"`
	Citations []answerCitation `json:"citations"`
}

func (o answerOut) Summary() string { return fmt.Sprintf("answer with %d citations", len(o.Citations)) }

// braveCardTools are stand-ins for Brave's place, context and answer tools.
func braveCardTools() []*tool.Tool {
	lat, lon := 32.794, 34.989
	return []*tool.Tool{
		tool.Must(tool.New(tool.Spec{Name: "local_search_brave", Description: "Finds places.", Pack: "web"},
			func(ctx context.Context, in cardQuery) (placesOut, error) {
				return placesOut{Count: 2, Places: []placeHit{
					{Name: "Haifa Air Monitoring Station", URL: "https://www.example.org/station", Address: "1 HaNassi Ave, Haifa",
						Rating: 4.5, RatingMax: 5, Reviews: 12, HoursToday: "Monday 08:00-16:00", Latitude: &lat, Longitude: &lon},
					{Name: "תחנת ניטור עכו", Address: "עכו"},
				}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "llm_context_brave", Description: "Grounding content.", Pack: "web"},
			func(ctx context.Context, in cardQuery) (contextOut, error) {
				return contextOut{Count: 1, Sources: []contextSource{{URL: "https://www.example.org/pm25", Title: "PM2.5 explained",
					Host: "example.org", Snippets: []string{"PM2.5 are particles under 2.5 µm.", "They reach the lungs."}}}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "answer_brave", Description: "Answers with citations.", Pack: "web"},
			func(ctx context.Context, in cardQuery) (answerOut, error) {
				return answerOut{Answer: "Haifa's air is mostly good [1].", Citations: []answerCitation{
					{Number: 1, URL: "https://www.example.org/air/1", Snippet: "Air quality in Haifa"}}}, nil
			})),
	}
}
