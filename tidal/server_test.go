package tidal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// fakeTidal is a JSON:API server on 127.0.0.1 that stands in for TIDAL. The
// album and its last items page are served byte for byte from testdata; the
// middle items page, search and ISRC answers are CONSTRUCTED in the shapes
// of examples/CONSTRUCTED_search_and_isrc_shapes.md from the recorded
// resources.
type fakeTidal struct {
	t   *testing.T
	srv *httptest.Server

	tokenCalls atomic.Int32
	apiCalls   atomic.Int32

	mu        sync.Mutex
	expiresIn int
	issued    int
	valid     map[string]bool
	tokenGate chan struct{} // when set, token requests wait for it to close
	// tokenSeen is closed when the first token request arrives, so tests
	// wait on it rather than poll tokenCalls with sleeps.
	tokenSeen     chan struct{}
	tokenSeenOnce sync.Once
	legacyOnly    bool // GET /searchResults?filter[query] answers 404
	// hook, when set, may answer an API request itself (returning true).
	hook     func(w http.ResponseWriter, r *http.Request) bool
	requests []*url.URL // API requests, in order

	catalog *tooltest.TIDALCatalog
}

const (
	testClientID     = "client-id-123"
	testClientSecret = "very-secret-value-456"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "tidal", name)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newFakeTidal(t *testing.T) *fakeTidal {
	f := &fakeTidal{t: t, expiresIn: 3600, valid: map[string]bool{}, tokenSeen: make(chan struct{}), catalog: tooltest.LoadTIDALCatalog(t)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a client for the fake server with a roomy rate-limit bucket.
func (f *fakeTidal) client(mod ...func(*Config)) *Client {
	cfg := Config{ClientID: testClientID, ClientSecret: testClientSecret, BaseURL: f.srv.URL, AuthURL: f.srv.URL, HTTPClient: f.srv.Client()}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	c.bucket.tokens, c.bucket.capacity, c.bucket.rate = 1000, 1000, 1000
	return c
}

func (f *fakeTidal) revokeAll() {
	f.mu.Lock()
	f.valid = map[string]bool{}
	f.mu.Unlock()
}

func (f *fakeTidal) apiRequests() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*url.URL(nil), f.requests...)
}

func (f *fakeTidal) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/oauth2/token" {
		f.serveToken(w, r)
		return
	}
	f.apiCalls.Add(1)
	f.mu.Lock()
	f.requests = append(f.requests, r.URL)
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	ok := f.valid[tok]
	hook := f.hook
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusUnauthorized, `{"errors":[{"status":"401","code":"UNAUTHORIZED","detail":"Invalid or expired token"}]}`)
		return
	}
	if r.Header.Get("Accept") != "application/vnd.api+json" {
		writeJSON(w, http.StatusNotAcceptable, `{"errors":[{"status":"406"}]}`)
		return
	}
	if hook != nil && hook(w, r) {
		return
	}
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/v2/albums":
		switch q.Get("filter[id]") {
		case "396698918":
			writeJSON(w, 200, string(f.catalog.AlbumBody))
		case "381265361":
			writeJSON(w, 200, string(readTestdata(f.t, "album_381265361.json")))
		default:
			writeJSON(w, 200, `{"data":[],"links":{"self":"/albums"}}`)
		}
	case r.URL.Path == "/v2/albums/396698918/relationships/items":
		switch q.Get("page[cursor]") {
		case "3nI1Esi":
			writeJSON(w, 200, string(f.catalog.Page2Body))
		case "3nI1F0y":
			writeJSON(w, 200, string(f.catalog.Page3Body))
		default:
			writeJSON(w, 400, `{"errors":[{"status":"400","code":"INVALID_CURSOR"}]}`)
		}
	case r.URL.Path == "/v2/searchResults":
		if f.legacyOnly {
			writeJSON(w, 404, `{"errors":[{"status":"404","code":"NOT_FOUND","detail":"no such route"}]}`)
			return
		}
		f.writeSearch(w, q.Get("filter[query]"), q.Get("include"), false)
	case strings.HasPrefix(r.URL.Path, "/v2/searchResults/") && !strings.Contains(r.URL.Path, "/relationships/"):
		f.writeSearch(w, strings.TrimPrefix(r.URL.Path, "/v2/searchResults/"), q.Get("include"), true)
	case strings.HasPrefix(r.URL.Path, "/v2/searchResults/") && strings.HasSuffix(r.URL.Path, "/relationships/tracks"):
		from := map[string]int{"p2": 20, "p3": 40}[q.Get("page[cursor]")]
		f.writeTrackPage(w, from)
	case r.URL.Path == "/v2/tracks" && q.Has("filter[id]"):
		f.writeTracksByID(w, q["filter[id]"], q.Get("include"))
	case r.URL.Path == "/v2/tracks":
		f.writeISRC(w, q["filter[isrc]"])
	default:
		writeJSON(w, 404, string(readTestdata(f.t, "error_404_artist_not_found.json")))
	}
}

func (f *fakeTidal) serveToken(w http.ResponseWriter, r *http.Request) {
	f.tokenCalls.Add(1)
	f.tokenSeenOnce.Do(func() { close(f.tokenSeen) })
	f.mu.Lock()
	gate := f.tokenGate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || r.FormValue("grant_type") != "client_credentials" {
		writeJSON(w, 400, `{"error":"unsupported_grant_type"}`)
		return
	}
	if !ok || id != testClientID || secret != testClientSecret {
		writeJSON(w, 401, `{"error":"invalid_client","error_description":"Client authentication failed"}`)
		return
	}
	f.mu.Lock()
	f.issued++
	tok := fmt.Sprintf("access-token-%d", f.issued)
	f.valid[tok] = true
	exp := f.expiresIn
	f.mu.Unlock()
	writeJSON(w, 200, fmt.Sprintf(`{"access_token":%q,"token_type":"Bearer","expires_in":%d,"scope":""}`, tok, exp))
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/vnd.api+json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func ident(r map[string]any) map[string]any { return map[string]any{"id": r["id"], "type": r["type"]} }

// writeSearch answers a search for the album: 20 track hits a page (46 in
// all) and the album. CONSTRUCTED per section 1 (current, data array) or 2
// (legacy, data object) of CONSTRUCTED_search_and_isrc_shapes.md.
func (f *fakeTidal) writeSearch(w http.ResponseWriter, query, include string, legacy bool) {
	c := f.catalog
	sr := map[string]any{"id": "opaque-search-id", "type": "searchResults",
		"attributes": map[string]any{"query": query, "trackingId": "5896e37d-e847-4ca6-9629-ef8001719f7f"}}
	if legacy {
		sr["id"] = query
	}
	rels := map[string]any{}
	var included []any
	wantTracks, wantAlbums := false, false
	for p := range strings.SplitSeq(include, ",") {
		wantTracks = wantTracks || strings.HasPrefix(p, "tracks")
		wantAlbums = wantAlbums || strings.HasPrefix(p, "albums")
	}
	if !strings.Contains(query, "nothing") {
		if wantTracks {
			var ids []any
			for _, tr := range c.Tracks[:20] {
				ids = append(ids, ident(tr))
				included = append(included, f.catalog.SearchTrack(tr))
			}
			rels["tracks"] = map[string]any{"data": ids, "links": map[string]any{
				"self": "/searchResults/opaque-search-id/relationships/tracks?countryCode=US",
				"next": "/searchResults/opaque-search-id/relationships/tracks?countryCode=US&page%5Bcursor%5D=p2",
				"meta": map[string]any{"nextCursor": "p2"}}}
		}
		if strings.Contains(include, "albums") {
			included = append(included, f.catalog.SearchAlbum())
		}
		if wantAlbums {
			rels["albums"] = map[string]any{"data": []any{map[string]any{"id": "396698918", "type": "albums"}},
				"links": map[string]any{"self": "/searchResults/opaque-search-id/relationships/albums?countryCode=US"}}
		}
		included = append(included, c.Artists...)
		included = append(included, c.Artworks...)
	} else {
		rels["tracks"] = map[string]any{"data": []any{}}
		rels["albums"] = map[string]any{"data": []any{}}
	}
	sr["relationships"] = rels
	var data any = []any{sr}
	if legacy {
		data = sr
	}
	body, err := json.Marshal(map[string]any{"data": data, "included": included, "links": map[string]any{"self": "/searchResults"}})
	must(f.t, err)
	writeJSON(w, 200, string(body))
}

// writeTrackPage answers GET /searchResults/{id}/relationships/tracks.
func (f *fakeTidal) writeTrackPage(w http.ResponseWriter, from int) {
	c := f.catalog
	to := min(from+20, len(c.Tracks))
	var ids []any
	included := []any{f.catalog.SearchAlbum()}
	for _, tr := range c.Tracks[from:to] {
		ids = append(ids, ident(tr))
		included = append(included, f.catalog.SearchTrack(tr))
	}
	included = append(included, c.Artists...)
	included = append(included, c.Artworks...)
	links := map[string]any{"self": "/searchResults/opaque-search-id/relationships/tracks"}
	if to < len(c.Tracks) {
		links["next"] = fmt.Sprintf("/searchResults/opaque-search-id/relationships/tracks?countryCode=US&page%%5Bcursor%%5D=p%d", to/20+1)
	}
	body, err := json.Marshal(map[string]any{"data": ids, "included": included, "links": links})
	must(f.t, err)
	writeJSON(w, 200, string(body))
}

// writeISRC answers GET /tracks?filter[isrc]=… (CONSTRUCTED per section 3):
// one track per known ISRC, unknown ones absent, data [] when none match.
func (f *fakeTidal) writeISRC(w http.ResponseWriter, isrcs []string) {
	data := []any{}
	var included []any
	for _, s := range isrcs {
		if tr, ok := f.catalog.ByISRC[s]; ok {
			data = append(data, f.catalog.SearchTrack(tr))
		}
	}
	if len(data) > 0 {
		included = append(included, f.catalog.SearchAlbum())
		included = append(included, f.catalog.Artists...)
		included = append(included, f.catalog.Artworks...)
	}
	body, err := json.Marshal(map[string]any{"data": data, "included": included, "links": map[string]any{"self": "/tracks"}})
	must(f.t, err)
	writeJSON(w, 200, string(body))
}

// writeTracksByID answers GET /tracks?filter[id]=…, CONSTRUCTED from the
// recorded track, album, artist and artwork resources in the shape of the
// ISRC answer (section 3 of CONSTRUCTED_search_and_isrc_shapes.md): one
// track resource per known id, unknown ids absent, data [] when none match.
// Relationships and included resources follow include, as TIDAL does.
func (f *fakeTidal) writeTracksByID(w http.ResponseWriter, ids []string, include string) {
	incl := map[string]bool{}
	for p := range strings.SplitSeq(include, ",") {
		incl[p] = true
	}
	data := []any{}
	var included []any
	for _, id := range ids {
		for _, tr := range f.catalog.Tracks {
			if tr["id"] == id {
				data = append(data, f.catalog.SearchTrack(tr))
				break
			}
		}
	}
	if len(data) > 0 {
		if incl["albums"] {
			album := f.catalog.SearchAlbum()
			if !incl["albums.coverArt"] {
				delete(album["relationships"].(map[string]any), "coverArt")
			}
			included = append(included, album)
		}
		if incl["artists"] {
			included = append(included, f.catalog.Artists...)
		}
		if incl["albums.coverArt"] {
			included = append(included, f.catalog.Artworks...)
		}
	}
	body, err := json.Marshal(map[string]any{"data": data, "included": included, "links": map[string]any{"self": "/tracks"}})
	must(f.t, err)
	writeJSON(w, 200, string(body))
}
