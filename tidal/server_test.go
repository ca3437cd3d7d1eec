package tidal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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

	mu         sync.Mutex
	expiresIn  int
	issued     int
	valid      map[string]bool
	tokenGate  chan struct{} // when set, token requests wait for it to close
	legacyOnly bool          // GET /searchResults?filter[query] answers 404
	// hook, when set, may answer an API request itself (returning true).
	hook     func(w http.ResponseWriter, r *http.Request) bool
	requests []*url.URL // API requests, in order

	catalog catalog
}

const (
	testClientID     = "client-id-123"
	testClientSecret = "very-secret-value-456"
)

// catalog holds the recorded resources, keyed for the constructed answers.
type catalog struct {
	album     map[string]any   // the album resource (data[0] of the recording)
	artworks  []any            // included artworks
	artists   []any            // included artists (deduplicated)
	tracks    []map[string]any // all 46 tracks in album order, with artists linkage
	byISRC    map[string]map[string]any
	albumBody []byte
	page3Body []byte
	page2Body []byte // CONSTRUCTED
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadCatalog(t testing.TB) catalog {
	t.Helper()
	c := catalog{albumBody: readTestdata(t, "album_396698918.json"), page3Body: readTestdata(t, "album_396698918_items_page3.json"),
		byISRC: map[string]map[string]any{}}
	var album, page3 struct {
		Data     json.RawMessage  `json:"data"`
		Included []map[string]any `json:"included"`
	}
	must(t, json.Unmarshal(c.albumBody, &album))
	must(t, json.Unmarshal(c.page3Body, &page3))
	var data []map[string]any
	must(t, json.Unmarshal(album.Data, &data))
	c.album = data[0]
	seen := map[string]bool{}
	for _, r := range album.Included {
		switch r["type"] {
		case "artworks":
			c.artworks = append(c.artworks, r)
		case "artists":
			if !seen[r["id"].(string)] {
				seen[r["id"].(string)] = true
				c.artists = append(c.artists, r)
			}
		case "tracks":
			c.tracks = append(c.tracks, r)
		}
	}
	c.page2Body = constructedMiddlePage(t, c.tracks[0], c.artists)
	var page2 struct {
		Included []map[string]any `json:"included"`
	}
	must(t, json.Unmarshal(c.page2Body, &page2))
	for _, r := range append(page2.Included, page3.Included...) {
		if r["type"] == "tracks" {
			c.tracks = append(c.tracks, r)
		}
	}
	for _, tr := range c.tracks {
		c.byISRC[tr["attributes"].(map[string]any)["isrc"].(string)] = tr
	}
	if len(c.tracks) != 46 {
		t.Fatalf("catalog has %d tracks, want 46", len(c.tracks))
	}
	return c
}

// constructedMiddlePage builds the missing items page (cursor 3nI1Esi,
// tracks 21–40) in the shape of the recorded last page. CONSTRUCTED: ids
// 396698939… and ISRCs AUNMG2400031… follow the recorded numbering.
func constructedMiddlePage(t testing.TB, template map[string]any, artists []any) []byte {
	var ids []any
	included := append([]any(nil), artists...)
	for n := 21; n <= 40; n++ {
		id := fmt.Sprint(396698918 + n)
		ids = append(ids, map[string]any{"id": id, "type": "tracks", "meta": map[string]any{"trackNumber": n, "volumeNumber": 1}})
		tr := map[string]any{}
		b, _ := json.Marshal(template)
		must(t, json.Unmarshal(b, &tr))
		tr["id"] = id
		at := tr["attributes"].(map[string]any)
		at["title"] = fmt.Sprintf("CONSTRUCTED %d", n)
		at["isrc"] = fmt.Sprintf("AUNMG24000%d", 10+n)
		at["duration"] = "PT2M30S"
		included = append(included, tr)
	}
	body, err := json.Marshal(map[string]any{
		"data":     ids,
		"included": included,
		"links": map[string]any{
			"self": "/albums/396698918/relationships/items?include=items.artists&page%5Bcursor%5D=3nI1Esi&countryCode=US",
			"next": "/albums/396698918/relationships/items?countryCode=US&page%5Bcursor%5D=3nI1F0y",
			"meta": map[string]any{"nextCursor": "3nI1F0y"},
		},
	})
	must(t, err)
	return body
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newFakeTidal(t *testing.T) *fakeTidal {
	f := &fakeTidal{t: t, expiresIn: 3600, valid: map[string]bool{}, catalog: loadCatalog(t)}
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
			writeJSON(w, 200, string(f.catalog.albumBody))
		case "381265361":
			writeJSON(w, 200, string(readTestdata(f.t, "album_381265361.json")))
		default:
			writeJSON(w, 200, `{"data":[],"links":{"self":"/albums"}}`)
		}
	case r.URL.Path == "/v2/albums/396698918/relationships/items":
		switch q.Get("page[cursor]") {
		case "3nI1Esi":
			writeJSON(w, 200, string(f.catalog.page2Body))
		case "3nI1F0y":
			writeJSON(w, 200, string(f.catalog.page3Body))
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

// searchTrack is a recorded track linked to its artist and the album, as
// include=tracks.artists,tracks.albums.coverArt returns it.
func (f *fakeTidal) searchTrack(tr map[string]any) map[string]any {
	out := map[string]any{"id": tr["id"], "type": "tracks", "attributes": tr["attributes"], "relationships": map[string]any{
		"artists": tr["relationships"].(map[string]any)["artists"],
		"albums":  map[string]any{"data": []any{map[string]any{"id": "396698918", "type": "albums"}}},
	}}
	return out
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
			for _, tr := range c.tracks[:20] {
				ids = append(ids, ident(tr))
				included = append(included, f.searchTrack(tr))
			}
			rels["tracks"] = map[string]any{"data": ids, "links": map[string]any{
				"self": "/searchResults/opaque-search-id/relationships/tracks?countryCode=US",
				"next": "/searchResults/opaque-search-id/relationships/tracks?countryCode=US&page%5Bcursor%5D=p2",
				"meta": map[string]any{"nextCursor": "p2"}}}
		}
		if strings.Contains(include, "albums") {
			included = append(included, f.searchAlbum())
		}
		if wantAlbums {
			rels["albums"] = map[string]any{"data": []any{map[string]any{"id": "396698918", "type": "albums"}},
				"links": map[string]any{"self": "/searchResults/opaque-search-id/relationships/albums?countryCode=US"}}
		}
		included = append(included, c.artists...)
		included = append(included, c.artworks...)
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

func (f *fakeTidal) searchAlbum() map[string]any {
	a := f.catalog.album
	rels := a["relationships"].(map[string]any)
	return map[string]any{"id": a["id"], "type": "albums", "attributes": a["attributes"], "relationships": map[string]any{
		"artists": rels["artists"], "coverArt": rels["coverArt"]}}
}

// writeTrackPage answers GET /searchResults/{id}/relationships/tracks.
func (f *fakeTidal) writeTrackPage(w http.ResponseWriter, from int) {
	c := f.catalog
	to := min(from+20, len(c.tracks))
	var ids []any
	included := []any{f.searchAlbum()}
	for _, tr := range c.tracks[from:to] {
		ids = append(ids, ident(tr))
		included = append(included, f.searchTrack(tr))
	}
	included = append(included, c.artists...)
	included = append(included, c.artworks...)
	links := map[string]any{"self": "/searchResults/opaque-search-id/relationships/tracks"}
	if to < len(c.tracks) {
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
		if tr, ok := f.catalog.byISRC[s]; ok {
			data = append(data, f.searchTrack(tr))
		}
	}
	if len(data) > 0 {
		included = append(included, f.searchAlbum())
		included = append(included, f.catalog.artists...)
		included = append(included, f.catalog.artworks...)
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
		for _, tr := range f.catalog.tracks {
			if tr["id"] == id {
				data = append(data, f.searchTrack(tr))
				break
			}
		}
	}
	if len(data) > 0 {
		if incl["albums"] {
			album := f.searchAlbum()
			if !incl["albums.coverArt"] {
				delete(album["relationships"].(map[string]any), "coverArt")
			}
			included = append(included, album)
		}
		if incl["artists"] {
			included = append(included, f.catalog.artists...)
		}
		if incl["albums.coverArt"] {
			included = append(included, f.catalog.artworks...)
		}
	}
	body, err := json.Marshal(map[string]any{"data": data, "included": included, "links": map[string]any{"self": "/tracks"}})
	must(f.t, err)
	writeJSON(w, 200, string(body))
}
