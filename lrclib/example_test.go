package lrclib_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/toolport/toolport/lrclib"
)

// Looking lyrics up by signature, where a miss is an ordinary outcome. A
// local server stands in for LRCLIB, replaying the recorded answers.
func Example() {
	found, err := os.ReadFile("testdata/get_found_i_want_to_live.json")
	if err != nil {
		panic(err)
	}
	missing, err := os.ReadFile("testdata/error_404_track_not_found.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("track_name") != "I Want to Live" {
			w.WriteHeader(http.StatusNotFound)
			w.Write(missing)
			return
		}
		w.Write(found)
	}))
	defer srv.Close()

	c, err := lrclib.NewClient(srv.Client(), lrclib.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	for _, title := range []string{"I Want to Live", "this song does not exist"} {
		r, err := c.Get(context.Background(), &lrclib.GetParams{
			TrackName: title, ArtistName: "Borislav Slavov", Duration: 233 * time.Second,
		})
		switch {
		case errors.Is(err, lrclib.ErrNotFound):
			fmt.Println(title + ": no lyrics in LRCLIB")
		case err != nil:
			fmt.Println("failed:", err)
		case r.Instrumental:
			fmt.Println(title + ": instrumental")
		default:
			fmt.Println(title+": record", r.ID, "synced:", r.SyncedLyrics != "")
		}
	}
	// Output:
	// I Want to Live: record 3396226 synced: true
	// this song does not exist: no lyrics in LRCLIB
}
