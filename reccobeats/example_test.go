package reccobeats_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/reccobeats"
)

// From a track known by ISRC and title to its audio features: find the
// ReccoBeats track, then ask for its features and join them on the Spotify
// id. A local server stands in for ReccoBeats, replaying the recorded
// search page; the features answer is CONSTRUCTED from that page's row
// (its ids and ISRC) and the field set of a recorded features row.
func Example() {
	search, err := os.ReadFile("testdata/track_search_sonata_gig_simulator.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/track/search":
			w.Write(search)
		case "/v1/audio-features":
			fmt.Fprint(w, `{"content":[{"id":"958388ae-a64f-4121-b429-dbb6763e53fb","href":"https://open.spotify.com/track/3ikefITlAvSEikptamghsg","isrc":"JPZ242419956","acousticness":0.9,"danceability":0.5,"energy":0.2,"instrumentalness":0.9,"key":5,"liveness":0.1,"loudness":-18.2,"mode":1,"speechiness":0.04,"tempo":84.0,"valence":0.3}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	c, err := reccobeats.NewClient(srv.Client(), reccobeats.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tracks, err := c.FindByISRC(ctx, "JPZ242419956", "The Sonata")
	if err != nil {
		panic(err) // errors.Is(err, reccobeats.ErrNotFound) when the catalogue lacks it
	}
	id := tracks[0].SpotifyID()
	rows, err := c.AudioFeatures(ctx, []string{id})
	if err != nil {
		panic(err)
	}
	f, ok := reccobeats.BySpotifyID(rows)[id]
	fmt.Println(tracks[0].TrackTitle, id, ok, f.Tempo, f.Key, f.Mode)
	// Output: The Sonata 3ikefITlAvSEikptamghsg true 84 5 1
}
