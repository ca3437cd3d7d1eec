package music

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	notFound  []byte         // error_404_artist_not_found.json
	album     []byte         // album_396698918.json
	single    []byte         // album_381265361.json
	page3     []byte         // album_396698918_items_page3.json
	page2     []byte         // CONSTRUCTED
	tracks    []any          // recorded track resources of album 396698918's first page
	albumRes  map[string]any // album 396698918, as included in a search
	singleRes map[string]any
	included  []any // artists and artworks of both albums
	searches  int
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
	f := &fakeTidal{album: readFixture(t, "album_396698918.json"), single: readFixture(t, "album_381265361.json"),
		page3: readFixture(t, "album_396698918_items_page3.json"), notFound: readFixture(t, "error_404_artist_not_found.json")}
	var album, single jsonDoc
	if err := json.Unmarshal(f.album, &album); err != nil {
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
				f.tracks = append(f.tracks, searchTrack(r, "396698918"))
			}
		case "artists", "artworks":
			if !seen[key] {
				seen[key] = true
				f.included = append(f.included, r)
			}
		}
	}
	f.albumRes = searchAlbum(album.Data[0])
	f.singleRes = searchAlbum(single.Data[0])
	f.page2 = middlePage(t, album.Included)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// searchTrack links a recorded track to its artists and album, as
// include=tracks.artists,tracks.albums.coverArt returns it.
func searchTrack(tr map[string]any, albumID string) map[string]any {
	return map[string]any{"id": tr["id"], "type": "tracks", "attributes": tr["attributes"], "relationships": map[string]any{
		"artists": tr["relationships"].(map[string]any)["artists"],
		"albums":  map[string]any{"data": []any{map[string]any{"id": albumID, "type": "albums"}}},
	}}
}

func searchAlbum(a map[string]any) map[string]any {
	rels := a["relationships"].(map[string]any)
	return map[string]any{"id": a["id"], "type": "albums", "attributes": a["attributes"],
		"relationships": map[string]any{"artists": rels["artists"], "coverArt": rels["coverArt"]}}
}

// middlePage builds the items page the fixtures lack (cursor 3nI1Esi,
// tracks 21–40, next → 3nI1F0y). CONSTRUCTED from the first recorded track.
func middlePage(t testing.TB, included []map[string]any) []byte {
	var tmpl map[string]any
	for _, r := range included {
		if r["type"] == "tracks" {
			tmpl = r
			break
		}
	}
	var ids, inc []any
	for _, r := range included {
		if r["type"] == "artists" {
			inc = append(inc, r)
			break
		}
	}
	for n := 21; n <= 40; n++ {
		id := fmt.Sprint(396698918 + n)
		ids = append(ids, map[string]any{"id": id, "type": "tracks", "meta": map[string]any{"trackNumber": n, "volumeNumber": 1}})
		b, _ := json.Marshal(tmpl)
		var tr map[string]any
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		tr["id"] = id
		at := tr["attributes"].(map[string]any)
		at["title"] = fmt.Sprintf("CONSTRUCTED %d", n)
		at["isrc"] = fmt.Sprintf("AUNMG24000%d", 10+n)
		inc = append(inc, tr)
	}
	body, err := json.Marshal(map[string]any{"data": ids, "included": inc, "links": map[string]any{
		"next": "/albums/396698918/relationships/items?countryCode=US&page%5Bcursor%5D=3nI1F0y"}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func (f *fakeTidal) client(t testing.TB) *tidal.Client {
	c, err := tidal.NewClient(tidal.Config{ClientID: "id", ClientSecret: "secret", BaseURL: f.srv.URL, AuthURL: f.srv.URL,
		HTTPClient: f.srv.Client()})
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
			write(w, 200, f.album)
		case "381265361":
			write(w, 200, f.single)
		default:
			write(w, 200, []byte(`{"data":[],"links":{"self":"/albums"}}`))
		}
	case r.URL.Path == "/v2/albums/396698918/relationships/items":
		switch q.Get("page[cursor]") {
		case "3nI1Esi":
			write(w, 200, f.page2)
		case "3nI1F0y":
			write(w, 200, f.page3)
		default:
			write(w, 400, []byte(`{"errors":[{"status":"400","code":"INVALID_CURSOR"}]}`))
		}
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
