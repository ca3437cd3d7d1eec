package websearch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

// LocalInput is the input of local_search_brave.
type LocalInput struct {
	Query        string `json:"query" jsonschema:"What and where, e.g. pizza near Union Square San Francisco" schema:"minLength=2"`
	Count        int    `json:"count,omitempty" jsonschema:"Places to return (1-20)" schema:"minimum=1,maximum=20,default=5"`
	Country      string `json:"country,omitempty" jsonschema:"Two-letter country code, or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang   string `json:"search_lang,omitempty" jsonschema:"Language code, e.g. en" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	Units        string `json:"units,omitempty" jsonschema:"Distance units" schema:"enum=metric|imperial"`
	Descriptions bool   `json:"descriptions,omitempty" jsonschema:"Also fetch a short description of each place (one more request)"`
}

// Place is one point of interest.
type Place struct {
	Name        string   `json:"name"`
	URL         string   `json:"url,omitempty"`
	Address     string   `json:"address,omitempty"`
	Phone       string   `json:"phone,omitempty"`
	Rating      float64  `json:"rating,omitempty" jsonschema:"Average rating out of rating_max"`
	RatingMax   float64  `json:"rating_max,omitempty"`
	Reviews     int      `json:"reviews,omitempty"`
	HoursToday  string   `json:"hours_today,omitempty" jsonschema:"e.g. Monday 07:00-21:00"`
	Latitude    *float64 `json:"latitude,omitempty"`
	Longitude   *float64 `json:"longitude,omitempty"`
	Distance    string   `json:"distance,omitempty" jsonschema:"From the searcher, e.g. 0.3 miles"`
	Categories  []string `json:"categories,omitempty"`
	PriceRange  string   `json:"price_range,omitempty"`
	Description string   `json:"description,omitempty"`
}

// LocalOutput is what local_search_brave returns.
type LocalOutput struct {
	Places []Place `json:"places"`
	Count  int     `json:"count"`
	query  string
}

func (o LocalOutput) Summary() string {
	if o.Count == 0 {
		return fmt.Sprintf("No places for %q: Brave found no locations (name a place or area in the query, or use web_search_brave)", o.query)
	}
	noun := "places"
	if o.Count == 1 {
		noun = "place"
	}
	return fmt.Sprintf("%d %s for %q", o.Count, noun, o.query)
}

const maxPlaceDescription = 600 // runes: Brave's descriptions are Markdown pages

// Local declares local_search_brave: a web search for the query's
// locations, then Brave's POI details for them (both in Brave's Search plan).
func Local(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	s := &braveMedia{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:        "local_search_brave",
		Title:       "Brave Local Search",
		Description: "Find places and businesses (restaurants, shops, services) with Brave Search: address, phone, rating, today's hours, coordinates.",
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, s.local))
}

func (s *braveMedia) local(ctx context.Context, in LocalInput) (LocalOutput, error) {
	const name = "local_search_brave"
	if err := s.cfg.braveReady(name, s.clientErr); err != nil {
		return LocalOutput{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxLocalIDs {
		in.Count = 5
	}
	sp := brave.SearchParams{Query: strings.TrimSpace(in.Query), Country: in.Country, SearchLang: in.SearchLang,
		ResultFilter: []string{"locations"}}
	if err := sp.Validate(); err != nil {
		return LocalOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	out := LocalOutput{Places: []Place{}, query: sp.Query}
	resp, err := s.client.Search(cctx, &sp)
	if err != nil {
		return LocalOutput{}, planFailure(s.cfg, name, "Search", err, ctx)
	}
	var found []brave.LocationResult
	seen := map[string]bool{}
	if resp.Locations != nil {
		for _, l := range resp.Locations.Results {
			if l.ID != "" && !seen[l.ID] && len(found) < in.Count {
				seen[l.ID] = true
				found = append(found, l)
			}
		}
	}
	if len(found) == 0 {
		return out, nil
	}
	lp := brave.LocalParams{SearchLang: in.SearchLang, Units: in.Units}
	for _, l := range found {
		lp.IDs = append(lp.IDs, l.ID)
	}
	pois, err := s.client.LocalPOIs(cctx, &lp)
	if err != nil {
		return LocalOutput{}, planFailure(s.cfg, name, "Search", err, ctx)
	}
	// The POI details replace the search's shorter records; a place the
	// POI endpoint no longer knows (ids expire) keeps what the search said.
	byID := map[string]brave.LocationResult{}
	for _, p := range pois.Results {
		byID[p.ID] = p
	}
	descriptions := map[string]string{}
	if in.Descriptions {
		d, err := s.client.LocalDescriptions(cctx, &lp)
		if err != nil {
			return LocalOutput{}, planFailure(s.cfg, name, "Search", err, ctx)
		}
		for _, r := range d.Results {
			descriptions[r.ID] = textclip.Runes(strings.TrimSpace(r.Description), maxPlaceDescription)
		}
	}
	for _, l := range found {
		if p, ok := byID[l.ID]; ok {
			l = p
		}
		pl := placeOf(l)
		if d := descriptions[l.ID]; d != "" {
			pl.Description = d
		}
		out.Places = append(out.Places, pl)
	}
	out.Count = len(out.Places)
	return out, nil
}

func placeOf(l brave.LocationResult) Place {
	p := Place{Name: brave.PlainText(l.Title), URL: l.URL, PriceRange: l.PriceRange, Categories: l.Categories,
		Description: textclip.Runes(brave.PlainText(l.Description), maxPlaceDescription)}
	if a := l.PostalAddress; a != nil {
		p.Address = a.DisplayAddress
		if p.Address == "" {
			p.Address = joinNonEmpty(", ", a.StreetAddress, a.AddressLocality, a.AddressRegion, a.PostalCode, a.Country)
		}
	}
	if c := l.Contact; c != nil {
		p.Phone = c.Telephone
	}
	if r := l.Rating; r != nil && r.RatingValue > 0 {
		p.Rating, p.RatingMax, p.Reviews = r.RatingValue, r.BestRating, max(r.ReviewCount, 0)
	}
	if h := l.OpeningHours; h != nil {
		var spans []string
		day := ""
		for _, d := range h.CurrentDay {
			if day == "" {
				day = d.FullName
			}
			if d.Opens != "" || d.Closes != "" {
				spans = append(spans, d.Opens+"-"+d.Closes)
			}
		}
		if len(spans) > 0 {
			p.HoursToday = strings.TrimSpace(day + " " + strings.Join(spans, ", "))
		}
	}
	if c := l.Coordinates; len(c) == 2 && c[0] >= -90 && c[0] <= 90 && c[1] >= -180 && c[1] <= 180 {
		p.Latitude, p.Longitude = &c[0], &c[1]
	}
	if d := l.Distance; d != nil && d.Value >= 0 {
		p.Distance = strings.TrimSpace(fmt.Sprintf("%g %s", d.Value, d.Units))
	}
	return p
}

// planFailure maps a failed call of one of Brave's plan-bound tools: a key
// whose plan lacks the endpoint gets a message naming the plan that has it.
func planFailure(cfg Config, toolName, plan string, err error, parent context.Context) *tool.Error {
	var be *brave.Error
	if !errors.As(err, &be) {
		return upstreamFailure("Brave Search", err, parent, cfg.timeout())
	}
	if be.Code != brave.CodeOptionNotInPlan {
		return braveAPIError(be)
	}
	return &tool.Error{Code: tool.CodeAuthInvalid, Status: be.StatusCode, Err: be, Message: fmt.Sprintf(
		"Your Brave Search plan does not include %s (%s); Brave's %s plan does. "+
			"Or set TOOLPORT_BRAVE_TOOLS (or 'web_search.brave.tools' in the credentials file) to the searches your plan has, e.g. web.",
		toolName, describe(be.Code, be.Detail), plan)}
}
