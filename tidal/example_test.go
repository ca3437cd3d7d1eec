package tidal_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/tidal"
)

// Fetching an album from the catalogue. The client gets its own token with
// the client credentials; one local server stands in for both TIDAL hosts:
// the token endpoint answers a body CONSTRUCTED from TIDAL's documented
// OAuth 2 response, the API the recorded album (testdata/SOURCES.md).
func Example() {
	album, err := os.ReadFile("testdata/album_381265361.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/oauth2/token" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"example-token","token_type":"Bearer","expires_in":86400,"scope":""}`)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.api+json")
		w.Write(album)
	}))
	defer srv.Close()

	c, err := tidal.NewClient(tidal.Config{
		ClientID: "your-client-id", ClientSecret: "your-client-secret",
		BaseURL: srv.URL, AuthURL: srv.URL, HTTPClient: srv.Client(),
	})
	if err != nil {
		panic(err)
	}
	a, err := c.Album(context.Background(), "381265361")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s (%s, %s) by %s and %s\n", a.Title, a.Type, a.ReleaseDate, a.Artists[0].Name, a.Artists[1].Name)
	// Output:
	// Die With A Smile (SINGLE, 2024-08-16) by Lady Gaga and Bruno Mars
}
