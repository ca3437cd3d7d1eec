package tidal

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTracksByID(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	// 23 known ids (every other track of the album, last first: an order
	// of our own), then misses, a duplicate with spaces and an empty one.
	var ids []string
	for i := len(f.catalog.Tracks) - 2; i >= 0; i -= 2 {
		ids = append(ids, f.catalog.Tracks[i]["id"].(string))
	}
	ids = append(ids, "1", " 396698919 ", "999999999", "")
	tracks, err := c.TracksByID(context.Background(), ids)
	must(t, err)
	var got []string
	for _, tr := range tracks {
		got = append(got, tr.ID)
		if tr.Title == "" || tr.ISRC == "" || tr.Duration <= 0 || tr.ArtistName() != "Air Max '97" ||
			tr.Album == nil || tr.Album.Title != "PRODUCTION DOSSIER" || tr.ArtworkURL() != artwork640 {
			t.Errorf("track %s not resolved: %+v", tr.ID, tr)
		}
	}
	if !slices.Equal(got, ids[:23]) {
		t.Errorf("found %v\nwant  %v (the order asked, misses left out)", got, ids[:23])
	}
	first := tracks[slices.Index(got, "396698919")]
	if first.Title != "4M" || first.ISRC != "AUNMG2400011" || first.Duration != 3*time.Minute {
		t.Errorf("track 396698919 = %q %s %s, want the recorded 4M AUNMG2400011 PT3M", first.Title, first.ISRC, first.Duration)
	}

	reqs := f.apiRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (chunks of %d)", len(reqs), lookupChunk)
	}
	if n0, n1 := len(reqs[0].Query()["filter[id]"]), len(reqs[1].Query()["filter[id]"]); n0 != 20 || n1 != 5 {
		t.Errorf("chunk sizes %d, %d; want 20, 5 (25 distinct ids)", n0, n1)
	}
	for _, r := range reqs {
		q := r.Query()
		if r.Path != "/v2/tracks" || q.Get("include") != "albums,albums.coverArt,artists" || q.Get("countryCode") != "US" {
			t.Errorf("request %s: want /v2/tracks with include=albums,albums.coverArt,artists and countryCode=US", r)
		}
	}
}

func TestTracksByIDEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		ids       []string
		hook      func(w http.ResponseWriter, r *http.Request) bool
		want      []string
		kind      error // nil for success
		retryable bool
		requests  int32
	}{
		{name: "no ids", ids: nil, want: []string{}, requests: 0},
		{name: "only blanks", ids: []string{"", "  "}, want: []string{}, requests: 0},
		{name: "all misses", ids: []string{"1", "2"}, want: []string{}, requests: 1},
		{name: "a bad id is refused before any request", ids: []string{"396698919", "12/../albums"},
			kind: ErrInvalidInput, requests: 0},
		{name: "a 404 chunk is a miss", ids: []string{"396698919"}, want: []string{},
			hook: func(w http.ResponseWriter, r *http.Request) bool {
				writeJSON(w, 404, `{"errors":[{"status":"404","code":"NOT_FOUND","detail":"Track not found"}]}`)
				return true
			}, requests: 1},
		{name: "a malformed body is a parse error", ids: []string{"396698919"},
			hook: func(w http.ResponseWriter, r *http.Request) bool {
				writeJSON(w, 200, `<html>gateway</html>`)
				return true
			}, kind: ErrMalformed, requests: 1},
		{name: "a 503 is retryable", ids: []string{"396698919"},
			hook: func(w http.ResponseWriter, r *http.Request) bool {
				writeJSON(w, 503, `{"errors":[{"status":"503","code":"UNAVAILABLE"}]}`)
				return true
			}, kind: ErrStatus, retryable: true, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTidal(t)
			f.hook = tt.hook
			c := f.client()
			tracks, err := c.TracksByID(context.Background(), tt.ids)
			if tt.kind != nil {
				if te := kindError(t, err, tt.kind); te.Temporary() != tt.retryable {
					t.Errorf("retryable = %v, want %v", te.Temporary(), tt.retryable)
				}
			} else {
				must(t, err)
				var got []string
				for _, tr := range tracks {
					got = append(got, tr.ID)
				}
				if tracks == nil || !slices.Equal(got, tt.want) {
					t.Errorf("got %v (nil: %v), want %v", got, tracks == nil, tt.want)
				}
			}
			if n := f.apiCalls.Load(); n != tt.requests {
				t.Errorf("%d API requests, want %d", n, tt.requests)
			}
		})
	}
}

func TestTracksByIDNeedsCredentials(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client(func(cfg *Config) { cfg.ClientSecret = "" })
	_, err := c.TracksByID(context.Background(), []string{"396698919"})
	if te := kindError(t, err, ErrAuthMissing); !strings.Contains(te.Message, "TIDAL_CLIENT_ID") {
		t.Errorf("message %q does not say what to set", te.Message)
	}
}
