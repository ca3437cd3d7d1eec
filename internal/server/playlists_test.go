package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

func TestPlaylistEndpoints(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "toolport.db")
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := newEnv(t, envOptions{token: "tok-123456", dsn: dsn, config: func(c *server.Config) { c.Playlists = db }})
	p, err := db.CreatePlaylist(context.Background(), store.Playlist{Title: "Rainy day", Items: []store.PlaylistItem{
		{TidalID: "251380837", Title: "Hunter", Artist: "Björk", Duration: 255, Reasoning: "icy"},
	}})
	if err != nil {
		t.Fatal(err)
	}

	get := func(path string, token bool) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.url+path, nil)
		if token {
			req.Header.Set("Authorization", "Bearer tok-123456")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}

	res, body := get("/api/playlists/"+p.ID+"/export?format=m3u8", true)
	if res.StatusCode != 200 || !strings.HasPrefix(string(body), "#EXTM3U\n") ||
		!strings.Contains(string(body), "#EXTINF:255,Björk - Hunter\nhttps://tidal.com/browse/track/251380837\n") {
		t.Errorf("m3u8: %d %s", res.StatusCode, body)
	}
	if ct, cd := res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"); ct != "audio/x-mpegurl; charset=utf-8" ||
		cd != `attachment; filename="Rainy-day.m3u8"` {
		t.Errorf("headers: %q %q", ct, cd)
	}
	res, body = get("/api/playlists/"+p.ID+"/export", true)
	if res.StatusCode != 200 || !strings.HasPrefix(string(body), "#EXTM3U") {
		t.Errorf("default format: %d %s", res.StatusCode, body)
	}
	res, body = get("/api/playlists/"+p.ID+"/export?format=json", true)
	var exported struct {
		Title           string
		DurationSeconds float64
		Items           []struct{ Reasoning, URL string }
	}
	if res.StatusCode != 200 || json.Unmarshal(body, &exported) != nil || exported.DurationSeconds != 255 ||
		len(exported.Items) != 1 || exported.Items[0].Reasoning != "icy" {
		t.Errorf("json: %d %s", res.StatusCode, body)
	}
	res, body = get("/api/playlists/"+p.ID, true)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"title":"Rainy day"`) {
		t.Errorf("get: %d %s", res.StatusCode, body)
	}
	res, body = get("/api/playlists?limit=5", true)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"total":1`) {
		t.Errorf("list: %d %s", res.StatusCode, body)
	}

	for path, want := range map[string]int{
		"/api/playlists/" + p.ID + "/export?format=xspf": 400,
		"/api/playlists/nope/export":                     404,
		"/api/playlists/nope":                            404,
		"/api/playlists?limit=-1":                        400,
		"/api/playlists?limit=x":                         400,
	} {
		if res, body := get(path, true); res.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", path, res.StatusCode, body, want)
		}
	}
	if res, _ := get("/api/playlists/"+p.ID+"/export", false); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", res.StatusCode)
	}
}

func TestPlaylistEndpointsWithoutStore(t *testing.T) {
	e := newEnv(t, envOptions{})
	if code, body := e.do(t, "GET", "/api/playlists/x/export", ""); code != 404 {
		t.Errorf("%d %s", code, body)
	}
}
