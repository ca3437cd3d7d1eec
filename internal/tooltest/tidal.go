package tooltest

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TIDALAlbumID is the album recorded in tidal/testdata: 46 tracks over three
// items pages, of which the first and last are recorded.
const TIDALAlbumID = "396698918"

// TIDALCatalog is the recorded TIDAL album taken apart, so that fake TIDAL
// servers can build CONSTRUCTED answers (search, ISRC and track lookups)
// from recorded resources in the shapes the tidal package documents.
type TIDALCatalog struct {
	AlbumBody []byte // album_396698918.json, byte for byte
	Page2Body []byte // the items page no recording has; CONSTRUCTED (see below)
	Page3Body []byte // album_396698918_items_page3.json, byte for byte

	Album    map[string]any   // the album resource (data[0] of the recording)
	Artworks []any            // included artworks
	Artists  []any            // included artists, deduplicated
	Tracks   []map[string]any // all 46 tracks in album order, with their artists linkage
	ByISRC   map[string]map[string]any
}

// LoadTIDALCatalog reads the recorded album and its last items page from
// the tidal package's testdata and constructs the middle page.
func LoadTIDALCatalog(t testing.TB) *TIDALCatalog {
	t.Helper()
	c := &TIDALCatalog{AlbumBody: Fixture(t, "tidal", "album_396698918.json"),
		Page3Body: Fixture(t, "tidal", "album_396698918_items_page3.json"), ByISRC: map[string]map[string]any{}}
	var album, page3 struct {
		Data     json.RawMessage  `json:"data"`
		Included []map[string]any `json:"included"`
	}
	mustDecode(t, c.AlbumBody, &album)
	mustDecode(t, c.Page3Body, &page3)
	var data []map[string]any
	mustDecode(t, album.Data, &data)
	c.Album = data[0]
	seen := map[string]bool{}
	for _, r := range album.Included {
		switch r["type"] {
		case "artworks":
			c.Artworks = append(c.Artworks, r)
		case "artists":
			if id, _ := r["id"].(string); !seen[id] {
				seen[id] = true
				c.Artists = append(c.Artists, r)
			}
		case "tracks":
			c.Tracks = append(c.Tracks, r)
		}
	}
	if len(c.Tracks) == 0 {
		t.Fatal("tooltest: the recorded album includes no tracks")
	}
	c.Page2Body = constructedMiddlePage(t, c.Tracks[0], c.Artists)
	var page2 struct {
		Included []map[string]any `json:"included"`
	}
	mustDecode(t, c.Page2Body, &page2)
	for _, r := range append(page2.Included, page3.Included...) {
		if r["type"] == "tracks" {
			c.Tracks = append(c.Tracks, r)
		}
	}
	for _, tr := range c.Tracks {
		c.ByISRC[tr["attributes"].(map[string]any)["isrc"].(string)] = tr
	}
	if len(c.Tracks) != 46 {
		t.Fatalf("tooltest: TIDAL catalog has %d tracks, want 46", len(c.Tracks))
	}
	return c
}

// constructedMiddlePage builds the missing items page (cursor 3nI1Esi,
// tracks 21–40, next → 3nI1F0y) in the shape of the recorded last page.
// CONSTRUCTED: ids 396698939… and ISRCs AUNMG2400031… follow the recorded
// numbering; every other attribute is the first recorded track's.
func constructedMiddlePage(t testing.TB, template map[string]any, artists []any) []byte {
	t.Helper()
	tmpl, err := json.Marshal(template)
	if err != nil {
		t.Fatal(err)
	}
	var ids []any
	included := append([]any(nil), artists...)
	for n := 21; n <= 40; n++ {
		id := fmt.Sprint(396698918 + n)
		ids = append(ids, map[string]any{"id": id, "type": "tracks", "meta": map[string]any{"trackNumber": n, "volumeNumber": 1}})
		tr := map[string]any{}
		mustDecode(t, tmpl, &tr)
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
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// SearchTrack is a recorded track linked to its artists and the album, as
// include=tracks.artists,tracks.albums.coverArt returns it.
func (c *TIDALCatalog) SearchTrack(tr map[string]any) map[string]any {
	return TIDALSearchTrack(tr, TIDALAlbumID)
}

// SearchAlbum is the album as a search or track lookup includes it: its
// attributes with the artists and coverArt relationships.
func (c *TIDALCatalog) SearchAlbum() map[string]any {
	return TIDALSearchAlbum(c.Album)
}

// TIDALSearchTrack links a recorded track resource to its artists and to
// the album albumID.
func TIDALSearchTrack(tr map[string]any, albumID string) map[string]any {
	return map[string]any{"id": tr["id"], "type": "tracks", "attributes": tr["attributes"], "relationships": map[string]any{
		"artists": tr["relationships"].(map[string]any)["artists"],
		"albums":  map[string]any{"data": []any{map[string]any{"id": albumID, "type": "albums"}}},
	}}
}

// TIDALSearchAlbum reduces a recorded album resource to what a search
// includes: attributes, artists and coverArt.
func TIDALSearchAlbum(a map[string]any) map[string]any {
	rels := a["relationships"].(map[string]any)
	return map[string]any{"id": a["id"], "type": "albums", "attributes": a["attributes"],
		"relationships": map[string]any{"artists": rels["artists"], "coverArt": rels["coverArt"]}}
}

func mustDecode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("tooltest: %v", err)
	}
}
