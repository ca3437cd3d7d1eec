package tidal

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUserCallFailures: what the user-side calls make of malformed bodies,
// 5xx answers, a refused token and hostile pagination links. Every body is
// CONSTRUCTED.
func TestUserCallFailures(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		body      string
		call      func(c *Client) error
		kind      error
		temporary bool
	}{
		{"create answered with HTML", 200, "<html>oops</html>",
			func(c *Client) error { _, err := c.CreatePlaylist(context.Background(), "x", "", "", ""); return err }, ErrMalformed, false},
		{"create answered without an id", 201, `{"data":{"type":"playlists"},"links":{"self":"/playlists"}}`,
			func(c *Client) error { _, err := c.CreatePlaylist(context.Background(), "x", "", "", ""); return err }, ErrMalformed, false},
		{"create 500", 500, `{"errors":[{"status":"500","code":"INTERNAL"}]}`,
			func(c *Client) error { _, err := c.CreatePlaylist(context.Background(), "x", "", "", ""); return err }, ErrStatus, false},
		{"add 503", 503, `{"errors":[{"status":"503","code":"UNAVAILABLE"}]}`,
			func(c *Client) error {
				_, err := c.AddPlaylistItems(context.Background(), "p1", []string{"1"}, "")
				return err
			}, ErrStatus, true},
		{"add 422 (idempotency key reused with another payload)", 422, `{"errors":[{"status":"422","code":"IDEMPOTENCY_KEY_MISMATCH"}]}`,
			func(c *Client) error {
				_, err := c.AddPlaylistItems(context.Background(), "p1", []string{"1"}, "k")
				return err
			}, ErrStatus, false},
		{"collection page truncated", 200, `{"data":[{"id":"1","type":"tracks"`,
			func(c *Client) error {
				return c.FavoriteTracks(context.Background(), func([]Track) error { return nil })
			}, ErrMalformed, false},
		{"next link leaves the API", 200, `{"data":[{"id":"1","type":"tracks"}],"links":{"self":"/x","next":"https://evil.example/steal?page%5Bcursor%5D=2"}}`,
			func(c *Client) error {
				return c.FavoriteTracks(context.Background(), func([]Track) error { return nil })
			}, ErrMalformed, false},
		{"token refused twice", 401, `{"errors":[{"status":"401","code":"UNAUTHORIZED"}]}`,
			func(c *Client) error {
				return c.FavoriteAlbums(context.Background(), func([]Album) error { return nil })
			}, ErrAuthInvalid, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/vnd.api+json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, err := NewClient(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			// No refresh token: after a 401 the login is reported expired.
			uc := c.WithUser(&UserTokenSource{tok: &UserToken{AccessToken: "secret-access"}, now: time.Now})
			err = tc.call(uc)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) || e.Temporary() != tc.temporary {
				t.Fatalf("err = %v (%T), want kind %v, temporary %v", err, err, tc.kind, tc.temporary)
			}
			if strings.Contains(err.Error(), "secret-access") {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
}
