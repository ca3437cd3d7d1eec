package brave

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// poisFixture is Brave's documented /res/v1/local/pois example. As published
// it is not JSON (a trailing comma after reviewCount); this removes trailing
// commas, the one normalisation, so that the documented fields can be checked.
func poisFixture(t *testing.T) []byte {
	return regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(fixture(t, "docs_example_local_pois.jsonc"), []byte("$1"))
}

func TestLocalPOIsDecodesTheDocumentedExample(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, poisFixture(t))
	r, err := c.LocalPOIs(context.Background(), &LocalParams{
		IDs: []string{"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=", "second"}, SearchLang: "EN", UILang: "en-US", Units: "imperial"})
	if err != nil {
		t.Fatal(err)
	}
	req := last()
	if req.URL.Path != "/res/v1/local/pois" || !reflect.DeepEqual(req.Query["ids"], []string{"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=", "second"}) ||
		req.Query.Get("search_lang") != "en" || req.Query.Get("ui_lang") != "en-US" || req.Query.Get("units") != "imperial" {
		t.Errorf("request = %s", req.URL)
	}
	if r.Type != "local_pois" || len(r.Results) != 1 {
		t.Fatalf("response = %+v", r)
	}
	want := LocationResult{
		Type: "location_result", ID: "loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=", Title: "Park Mediterranean Grill",
		URL: "https://yelp.com/biz/park-mediterranean-grill-sf", ProviderURL: "https://yelp.com/biz/park-mediterranean-grill-sf",
		PostalAddress: &PostalAddress{DisplayAddress: "123 Main St, San Francisco, CA 94102", StreetAddress: "123 Main St",
			AddressLocality: "San Francisco", AddressRegion: "CA", PostalCode: "94102", Country: "US"},
		Contact:      &Contact{Telephone: "+1 415-555-0123"},
		Thumbnail:    &Thumbnail{Src: "https://example.com/thumb.jpg", Original: "https://example.com/original.jpg"},
		Rating:       &Rating{RatingValue: 4.5, BestRating: 5, ReviewCount: 234},
		OpeningHours: &OpeningHours{CurrentDay: []DayHours{{AbbrName: "Mon", FullName: "Monday", Opens: "07:00", Closes: "21:00"}}},
		Coordinates:  []float64{37.7749, -122.4194}, Distance: &Distance{Value: 0.3, Units: "miles"},
		Categories: []string{"Mediterranean", "Greek"}, PriceRange: "$$", ServesCuisine: []string{"Mediterranean", "Greek"},
		Timezone: "America/Los_Angeles",
	}
	if !reflect.DeepEqual(r.Results[0], want) {
		t.Errorf("result =\n%+v\nwant\n%+v", r.Results[0], want)
	}
}

func TestLocalPOIsRejectTheDocsExampleAsPublished(t *testing.T) {
	// The published example has a trailing comma: a body like it is a
	// ParseError, not a half-read place.
	_, err := DecodeLocalPOIsResponse(fixture(t, "docs_example_local_pois.jsonc"), "application/json")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("err = %v", err)
	}
}

func TestLocalDescriptionsDecodeTheDocumentedExample(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "docs_example_local_descriptions.json"))
	r, err := c.LocalDescriptions(context.Background(), &LocalParams{IDs: []string{"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA="}, Units: "metric"})
	if err != nil {
		t.Fatal(err)
	}
	if req := last(); req.URL.Path != "/res/v1/local/descriptions" || req.Query.Has("units") {
		t.Errorf("request = %s", req.URL)
	}
	if r.Type != "local_descriptions" || len(r.Results) != 1 || r.Results[0].ID != "loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=" ||
		!strings.HasPrefix(r.Results[0].Description, "### Overview\nA cozy") {
		t.Errorf("response = %+v", r)
	}
}

func TestSearchReadsTheLocationsBlock(t *testing.T) {
	// CONSTRUCTED from Brave's documented LocationResult fields: a web
	// search with result_filter=locations.
	body := `{"type":"search","query":{"original":"pizza in rome"},"locations":{"type":"locations","results":[
		{"type":"location_result","id":"locA","title":"Pizzeria A","coordinates":[41.9,12.5],"postal_address":{"displayAddress":"Via Roma 1"}},
		{"type":"location_result","id":"locB","title":"Pizzeria B"}]}}`
	c, last := serve(t, 200, jsonHeader, []byte(body))
	r, err := c.Search(context.Background(), &SearchParams{Query: "pizza in rome", ResultFilter: []string{"locations"}})
	if err != nil {
		t.Fatal(err)
	}
	if last().Query.Get("result_filter") != "locations" {
		t.Errorf("request = %s", last().URL)
	}
	if r.Locations == nil || len(r.Locations.Results) != 2 || r.Locations.Results[0].Coordinates[1] != 12.5 ||
		r.Locations.Results[0].PostalAddress.DisplayAddress != "Via Roma 1" || r.Web != nil {
		t.Errorf("locations = %+v", r.Locations)
	}
}

func TestLocalParamsValidate(t *testing.T) {
	many := make([]string, MaxLocalIDs+1)
	for i := range many {
		many[i] = "id"
	}
	for _, tt := range []struct {
		name string
		p    LocalParams
		want string
	}{
		{"no ids", LocalParams{}, "at least one"},
		{"too many ids", LocalParams{IDs: many}, "at most 20"},
		{"blank id", LocalParams{IDs: []string{" "}}, "ids[0]"},
		{"huge id", LocalParams{IDs: []string{strings.Repeat("a", 300)}}, "ids[0]"},
		{"units", LocalParams{IDs: []string{"a"}, Units: "furlongs"}, "units"},
		{"ui_lang", LocalParams{IDs: []string{"a"}, UILang: "english"}, "ui_lang"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	srv := tooltest.NewServer(t, tooltest.Reply{Body: poisFixture(t)})
	c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LocalPOIs(context.Background(), &LocalParams{}); err == nil || len(srv.Requests()) != 0 {
		t.Errorf("no ids: err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestLocalErrorsAreTyped(t *testing.T) {
	rate := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"1, 2000"},
		"X-Ratelimit-Remaining": {"0, 1977"}, "X-Ratelimit-Reset": {"1, 389223"}}
	ids := &LocalParams{IDs: []string{"a"}}
	t.Run("429 with rate-limit headers", func(t *testing.T) {
		c, _ := serve(t, 429, rate, fixture(t, "error_429_rate_limited.json"))
		_, err := c.LocalPOIs(context.Background(), ids)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRateLimited || e.RetryAfter.Seconds() != 1 || len(e.RateLimit.Windows) != 2 {
			t.Errorf("err = %#v", err)
		}
	})
	t.Run("5xx", func(t *testing.T) {
		c, _ := serve(t, 503, http.Header{"Content-Type": {"text/html"}}, []byte("<html>upstream down</html>"))
		_, err := c.LocalDescriptions(context.Background(), ids)
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 503 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		c, _ := serve(t, 200, jsonHeader, []byte(`{"type":"local_pois","results":[{"coordinates":"north"}]}`))
		_, err := c.LocalPOIs(context.Background(), ids)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled while Brave is silent", func(t *testing.T) {
		c, ctx := stalled(t)
		if _, err := c.LocalPOIs(ctx, ids); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}
