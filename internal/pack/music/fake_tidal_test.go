package music

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tidal"
)

// fakeTidal is a JSON:API server on 127.0.0.1 standing in for TIDAL. Album
// answers and the last album items page are the recordings in the tidal
// package's testdata, served byte for byte. The middle items page and the
// search answers are CONSTRUCTED from the recorded resources, in the shapes
// the tidal package's tests use (current search form: data is an array).
type fakeTidal struct {
	srv       *httptest.Server
	catalog   *tooltest.TIDALCatalog // album 396698918 and its items pages
	notFound  []byte                 // error_404_artist_not_found.json
	single    []byte                 // album_381265361.json
	tracks    []any                  // recorded track resources of album 396698918's first page
	albumRes  map[string]any         // album 396698918, as included in a search
	singleRes map[string]any
	included  []any        // artists and artworks of both albums
	requests  atomic.Int32 // API requests (not token requests) served
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "tidal", name)
}

type jsonDoc struct {
	Data     []map[string]any `json:"data"`
	Included []map[string]any `json:"included"`
}

func newFakeTidal(t testing.TB) *fakeTidal {
	f := &fakeTidal{catalog: tooltest.LoadTIDALCatalog(t), single: readFixture(t, "album_381265361.json"),
		notFound: readFixture(t, "error_404_artist_not_found.json")}
	var album, single jsonDoc
	if err := json.Unmarshal(f.catalog.AlbumBody, &album); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.single, &single); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range append(album.Included, single.Included...) {
		key := fmt.Sprint(r["type"], "/", r["id"])
		switch r["type"] {
		case "tracks":
			if len(f.tracks) < 20 && strings.HasPrefix(r["id"].(string), "3966989") {
				f.tracks = append(f.tracks, f.catalog.SearchTrack(r))
			}
		case "artists", "artworks":
			if !seen[key] {
				seen[key] = true
				f.included = append(f.included, r)
			}
		}
	}
	f.albumRes = f.catalog.SearchAlbum()
	f.singleRes = tooltest.TIDALSearchAlbum(single.Data[0])
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/oauth2/token" {
			f.requests.Add(1)
		}
		f.serve(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTidal) client(t testing.TB, opts ...func(*tidal.Config)) *tidal.Client {
	cfg := tidal.Config{ClientID: "id", ClientSecret: "secret", BaseURL: f.srv.URL, AuthURL: f.srv.URL,
		HTTPClient: f.srv.Client()}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := tidal.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/vnd.api+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (f *fakeTidal) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/v1/oauth2/token":
		write(w, 200, []byte(`{"access_token":"token-1","token_type":"Bearer","expires_in":3600}`))
	case r.Header.Get("Authorization") != "Bearer token-1":
		write(w, 401, []byte(`{"errors":[{"status":"401","code":"UNAUTHORIZED"}]}`))
	case r.URL.Path == "/v2/albums":
		switch q.Get("filter[id]") {
		case "396698918":
			write(w, 200, f.catalog.AlbumBody)
		case "381265361":
			write(w, 200, f.single)
		default:
			write(w, 200, []byte(`{"data":[],"links":{"self":"/albums"}}`))
		}
	case r.URL.Path == "/v2/albums/396698918/relationships/items":
		switch q.Get("page[cursor]") {
		case "3nI1Esi":
			write(w, 200, f.catalog.Page2Body)
		case "3nI1F0y":
			write(w, 200, f.catalog.Page3Body)
		default:
			write(w, 400, []byte(`{"errors":[{"status":"400","code":"INVALID_CURSOR"}]}`))
		}
	case r.URL.Path == "/v2/tracks":
		f.writeTracks(w, q["filter[isrc]"], q["filter[id]"])
	case r.URL.Path == "/v2/searchResults" && strings.Contains(q.Get("filter[query]"), "search-404"):
		write(w, 404, f.notFound)
	case r.URL.Path == "/v2/searchResults" && strings.Contains(q.Get("filter[query]"), "search-400"):
		write(w, 400, []byte(`{"errors":[{"status":"400","code":"INVALID_QUERY","detail":"query refused"}]}`))
	case r.URL.Path == "/v2/searchResults":
		f.writeSearch(w, q.Get("filter[query]"), q.Get("include"))
	default:
		write(w, 404, f.notFound)
	}
}

// writeSearch answers GET /searchResults: the 20 recorded tracks of the
// first album page and both albums; nothing for a query with "nothing".
func (f *fakeTidal) writeSearch(w http.ResponseWriter, query, include string) {
	rels := map[string]any{"tracks": map[string]any{"data": []any{}}, "albums": map[string]any{"data": []any{}}}
	var included []any
	if !strings.Contains(query, "nothing") {
		var ids []any
		for _, tr := range f.tracks {
			ids = append(ids, map[string]any{"id": tr.(map[string]any)["id"], "type": "tracks"})
		}
		if strings.Contains(include, "tracks") {
			rels["tracks"] = map[string]any{"data": ids}
			included = append(included, f.tracks...)
		}
		if strings.Contains(include, "albums") {
			rels["albums"] = map[string]any{"data": []any{
				map[string]any{"id": "396698918", "type": "albums"}, map[string]any{"id": "381265361", "type": "albums"}}}
			included = append(included, f.singleRes)
		}
		included = append(included, f.albumRes) // tracks link to it too
		included = append(included, f.included...)
	}
	body, _ := json.Marshal(map[string]any{
		"data":     []any{map[string]any{"id": "search-1", "type": "searchResults", "relationships": rels}},
		"included": included, "links": map[string]any{"self": "/searchResults"}})
	write(w, 200, body)
}

// writeTracks answers GET /tracks?filter[isrc]=…&filter[id]=… with the
// recorded tracks of the first album page that match, each linked to the
// album (CONSTRUCTED: the recorded resources in the documented lookup shape).
func (f *fakeTidal) writeTracks(w http.ResponseWriter, isrcs, ids []string) {
	data := []any{}
	for _, tr := range f.tracks {
		m := tr.(map[string]any)
		isrc, _ := m["attributes"].(map[string]any)["isrc"].(string)
		if slices.Contains(isrcs, isrc) || slices.Contains(ids, m["id"].(string)) {
			data = append(data, m)
		}
	}
	included := append([]any{f.albumRes}, f.included...)
	body, _ := json.Marshal(map[string]any{"data": data, "included": included, "links": map[string]any{"self": "/tracks"}})
	write(w, 200, body)
}
