package brave

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Brave's local (place) search is two steps: a web search whose
// "locations" block lists places with opaque ids (valid about 8 hours),
// then /res/v1/local/pois and /res/v1/local/descriptions for 1 to 20 of
// those ids. Both endpoints are part of Brave's Search plan.
const (
	poisPath         = "/res/v1/local/pois"
	descriptionsPath = "/res/v1/local/descriptions"

	MaxLocalIDs     = 20  // ids per request
	maxLocalIDBytes = 256 // Brave's ids are ~44 bytes; anything far longer is not one
)

// Locations is the "locations" block of a web search: the places the query
// names, each with the id the local endpoints take.
type Locations struct {
	Type    string           `json:"type"` // "locations"
	Results []LocationResult `json:"results"`
}

// LocationResult is one place (Brave's LocationResult), as both the web
// search's locations block and /res/v1/local/pois return it. Every field but
// ID and Title may be missing.
type LocationResult struct {
	Type          string         `json:"type"` // "location_result"
	ID            string         `json:"id"`
	Title         string         `json:"title"`
	URL           string         `json:"url,omitempty"`
	ProviderURL   string         `json:"provider_url,omitempty"`
	Description   string         `json:"description,omitempty"`
	PostalAddress *PostalAddress `json:"postal_address,omitempty"`
	Contact       *Contact       `json:"contact,omitempty"`
	Thumbnail     *Thumbnail     `json:"thumbnail,omitempty"`
	Rating        *Rating        `json:"rating,omitempty"`
	OpeningHours  *OpeningHours  `json:"opening_hours,omitempty"`
	// Coordinates is [latitude, longitude] when Brave knows them.
	Coordinates   []float64 `json:"coordinates,omitempty"`
	Distance      *Distance `json:"distance,omitempty"`
	Categories    []string  `json:"categories,omitempty"`
	PriceRange    string    `json:"price_range,omitempty"`
	ServesCuisine []string  `json:"serves_cuisine,omitempty"`
	Timezone      string    `json:"timezone,omitempty"`
}

// PostalAddress is a place's address (schema.org field names, as Brave
// sends them).
type PostalAddress struct {
	DisplayAddress  string `json:"displayAddress,omitempty"`
	StreetAddress   string `json:"streetAddress,omitempty"`
	AddressLocality string `json:"addressLocality,omitempty"`
	AddressRegion   string `json:"addressRegion,omitempty"`
	PostalCode      string `json:"postalCode,omitempty"`
	Country         string `json:"country,omitempty"`
}

// Contact is how to reach a place.
type Contact struct {
	Telephone string `json:"telephone,omitempty"`
	Email     string `json:"email,omitempty"`
}

// Rating is a place's average rating.
type Rating struct {
	RatingValue float64 `json:"ratingValue"`
	BestRating  float64 `json:"bestRating,omitempty"`
	ReviewCount int     `json:"reviewCount,omitempty"`
}

// OpeningHours holds today's hours and, when Brave has them, the week's
// (one list per day: a place may open more than once a day).
type OpeningHours struct {
	CurrentDay []DayHours   `json:"current_day,omitempty"`
	Days       [][]DayHours `json:"days,omitempty"`
}

// DayHours is one opening of a day, e.g. Mon 07:00 to 21:00.
type DayHours struct {
	AbbrName string `json:"abbr_name,omitempty"`
	FullName string `json:"full_name,omitempty"`
	Opens    string `json:"opens,omitempty"`
	Closes   string `json:"closes,omitempty"`
}

// Distance is how far a place is from the caller's location.
type Distance struct {
	Value float64 `json:"value"`
	Units string  `json:"units,omitempty"` // km or miles
}

// LocalParams asks for details of places found by a web search.
type LocalParams struct {
	IDs        []string // 1 to 20 ids from a web search's locations block
	SearchLang string   // e.g. "en"
	UILang     string   // e.g. "en-US"
	Units      string   // metric or imperial; "" leaves Brave's default
}

// Validate checks p against the API's documented limits.
func (p *LocalParams) Validate() error {
	switch {
	case len(p.IDs) == 0:
		return errors.New("ids: at least one location id is needed")
	case len(p.IDs) > MaxLocalIDs:
		return fmt.Errorf("ids: at most %d, got %d", MaxLocalIDs, len(p.IDs))
	case p.SearchLang != "" && !searchLangRe().MatchString(p.SearchLang):
		return fmt.Errorf("search_lang must be a language code such as en or pt-br, got %q", p.SearchLang)
	case p.UILang != "" && !uiLangRe().MatchString(p.UILang):
		return fmt.Errorf("ui_lang must be a language and region such as en-US, got %q", p.UILang)
	}
	for i, id := range p.IDs {
		if strings.TrimSpace(id) == "" || len(id) > maxLocalIDBytes {
			return fmt.Errorf("ids[%d] must be a location id of 1 to %d bytes", i, maxLocalIDBytes)
		}
	}
	switch p.Units {
	case "", "metric", "imperial":
		return nil
	}
	return fmt.Errorf("units must be metric or imperial, got %q", p.Units)
}

func (p *LocalParams) values() url.Values {
	v := url.Values{}
	for _, id := range p.IDs {
		v.Add("ids", strings.TrimSpace(id))
	}
	if p.SearchLang != "" {
		v.Set("search_lang", strings.ToLower(p.SearchLang))
	}
	if p.UILang != "" {
		v.Set("ui_lang", p.UILang)
	}
	if p.Units != "" {
		v.Set("units", p.Units)
	}
	return v
}

// LocalPOIsResponse is the answer of /res/v1/local/pois.
type LocalPOIsResponse struct {
	Type    string           `json:"type"` // "local_pois"
	Results []LocationResult `json:"results"`

	RateLimit RateLimit `json:"-"`
}

// LocalDescriptionsResponse is the answer of /res/v1/local/descriptions.
type LocalDescriptionsResponse struct {
	Type    string             `json:"type"` // "local_descriptions"
	Results []LocalDescription `json:"results"`

	RateLimit RateLimit `json:"-"`
}

// LocalDescription is an AI-written description of a place, in Markdown.
type LocalDescription struct {
	Type        string `json:"type"` // "local_description"
	ID          string `json:"id"`
	Description string `json:"description"`
}

// LocalPOIs returns the details of places by their ids. Failures are as for
// [Client.Search].
func (c *Client) LocalPOIs(ctx context.Context, p *LocalParams) (*LocalPOIsResponse, error) {
	return query(ctx, c, poisPath, p, DecodeLocalPOIsResponse, func(r *LocalPOIsResponse) *RateLimit { return &r.RateLimit })
}

// LocalDescriptions returns descriptions of places by their ids. Units are
// not sent (they do not apply). Failures are as for [Client.Search].
func (c *Client) LocalDescriptions(ctx context.Context, p *LocalParams) (*LocalDescriptionsResponse, error) {
	q := *p
	q.Units = ""
	return query(ctx, c, descriptionsPath, &q, DecodeLocalDescriptionsResponse, func(r *LocalDescriptionsResponse) *RateLimit { return &r.RateLimit })
}

// DecodeLocalPOIsResponse parses a 200 body of /res/v1/local/pois.
func DecodeLocalPOIsResponse(body []byte, contentType string) (*LocalPOIsResponse, error) {
	return decodeAnswer[LocalPOIsResponse](body, contentType, func(r *LocalPOIsResponse) string { return r.Type })
}

// DecodeLocalDescriptionsResponse parses a 200 body of
// /res/v1/local/descriptions.
func DecodeLocalDescriptionsResponse(body []byte, contentType string) (*LocalDescriptionsResponse, error) {
	return decodeAnswer[LocalDescriptionsResponse](body, contentType, func(r *LocalDescriptionsResponse) string { return r.Type })
}
