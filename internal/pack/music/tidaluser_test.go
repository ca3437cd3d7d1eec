package music

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// userService is a music service over db whose TIDAL is tooltest's user
// fake, logged in (the login file in a temporary directory) unless noLogin.
func userService(t *testing.T, db *sqlstore.DB, noLogin bool) (*Service, *tooltest.TIDALUser, *tool.Registry) {
	t.Helper()
	f := tooltest.NewTIDALUser(t, "app-id")
	cfg := tidal.Config{ClientID: "app-id", BaseURL: f.Srv.URL, AuthURL: f.Srv.URL, HTTPClient: f.Srv.Client()}
	tc, err := tidal.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc := New(db, testEmbedder(t), tc)
	svc.tidalCfg = cfg
	svc.user = TidalUserConfig{TokenFile: filepath.Join(t.TempDir(), "tidal-login.json"), RedirectURL: DefaultRedirectURL}
	if !noLogin {
		a, err := svc.UserAuth()
		if err != nil {
			t.Fatal(err)
		}
		l, err := a.Start()
		if err != nil {
			t.Fatal(err)
		}
		tok, err := l.Complete(context.Background(), f.Authorize(t, l.URL))
		if err != nil {
			t.Fatal(err)
		}
		if err := tidal.SaveUserToken(svc.user.TokenFile, tok); err != nil {
			t.Fatal(err)
		}
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0), tool.WithSecrets("user-access-1", "user-refresh-1"))
	if err := reg.Register(Tools(svc)...); err != nil {
		t.Fatal(err)
	}
	return svc, f, reg
}

func TestSavePlaylistToTidalInBatchesThroughA429(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		_, f, reg := userService(t, db, false)
		cat := tooltest.LoadTIDALCatalog(t)
		// 120 items: batches of 50, 50 and 20; the second batch is answered
		// 429 once, then accepted.
		var items []store.PlaylistItem
		var want []string
		for i := range 120 {
			id := cat.Tracks[i%len(cat.Tracks)]["id"].(string)
			items = append(items, store.PlaylistItem{TidalID: id, Title: fmt.Sprint("t", i), Artist: "a"})
			want = append(want, id)
		}
		items = append(items, store.PlaylistItem{TidalID: "1", Title: "gone", Artist: "x"}) // TIDAL skips it
		p, err := db.CreatePlaylist(context.Background(), store.Playlist{Title: "Long drive", Items: items})
		if err != nil {
			t.Fatal(err)
		}
		f.SetThrottle(2)
		res := reg.Call(context.Background(), "savePlaylistToTidal", json.RawMessage(`{"playlistId":"`+p.ID+`"}`))
		if !res.OK() {
			t.Fatalf("save: %s", res.JSON)
		}
		var out SavePlaylistOutput
		if err := json.Unmarshal(res.JSON, &out); err != nil {
			t.Fatal(err)
		}
		if out.Batches != 3 || out.Retries != 1 || out.Added != 120 || out.Skipped["1"] != "NOT_FOUND" || out.TidalPlaylistID == "" ||
			out.URL != "https://tidal.com/browse/playlist/"+out.TidalPlaylistID {
			t.Errorf("output %s", res.JSON)
		}
		ps := f.Playlists()
		if len(ps) != 1 || ps[0].Name != "Long drive" || !slices.Equal(ps[0].Items, want) {
			t.Fatalf("TIDAL holds %d playlists; items in order: %v", len(ps), len(ps) == 1 && slices.Equal(ps[0].Items, want))
		}
		adds := 0
		for _, l := range f.Log() {
			if strings.HasSuffix(l, "/relationships/items") {
				adds++
			}
		}
		if adds != 4 {
			t.Errorf("%d add requests, want 4 (3 batches, one retried)", adds)
		}
		stored, _ := db.GetPlaylist(context.Background(), p.ID)
		if stored.TidalPlaylistID != out.TidalPlaylistID {
			t.Errorf("stored tidal id %q", stored.TidalPlaylistID)
		}
		// Saving again sends nothing.
		res = reg.Call(context.Background(), "savePlaylistToTidal", json.RawMessage(`{"playlistId":"`+p.ID+`"}`))
		if !res.OK() || !strings.Contains(res.Summary, "already on Tidal") || len(f.Playlists()) != 1 {
			t.Errorf("second save: %s", res.JSON)
		}
		if strings.Contains(string(res.JSON), "user-access") {
			t.Errorf("a token in the result: %s", res.JSON)
		}
	})
}

func TestSavePlaylistToTidalFailures(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		_, f, reg := userService(t, db, true)
		p, err := db.CreatePlaylist(context.Background(), store.Playlist{Title: "x", Items: []store.PlaylistItem{{TidalID: "396698919"}}})
		if err != nil {
			t.Fatal(err)
		}
		res := reg.Call(context.Background(), "savePlaylistToTidal", json.RawMessage(`{"playlistId":"`+p.ID+`"}`))
		if res.OK() || res.Err.Code != tool.CodeAuthMissing || !strings.Contains(res.Err.Message, "toolport tidal login") {
			t.Errorf("not logged in: %s", res.JSON)
		}
		res = reg.Call(context.Background(), "savePlaylistToTidal", json.RawMessage(`{"playlistId":"nope"}`))
		if res.OK() || res.Err.Code != tool.CodeNotFound {
			t.Errorf("unknown playlist: %s", res.JSON)
		}
		if len(f.Playlists()) != 0 {
			t.Error("a playlist was made")
		}
	})
}

func TestSavePlaylistRateLimitedThroughout(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		_, f, reg := userService(t, db, false)
		p, err := db.CreatePlaylist(context.Background(), store.Playlist{Title: "x", Items: []store.PlaylistItem{{TidalID: "396698919"}}})
		if err != nil {
			t.Fatal(err)
		}
		f.SetThrottle(1, 2, 3, 4, 5, 6, 7, 8)
		res := reg.Call(context.Background(), "savePlaylistToTidal", json.RawMessage(`{"playlistId":"`+p.ID+`"}`))
		if res.OK() || res.Err.Code != tool.CodeRateLimit || !res.Err.Retryable || !strings.Contains(res.Err.Message, "saving again resumes") {
			t.Errorf("429 on every try: %s", res.JSON)
		}
		// The registry's retry replayed the creation: one playlist on TIDAL.
		if len(f.Playlists()) != 1 {
			t.Errorf("%d playlists made", len(f.Playlists()))
		}
	})
}

func TestSyncLibraryPagesFavorites(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *sqlstore.DB) {
		svc, f, _ := userService(t, db, false)
		cat := tooltest.LoadTIDALCatalog(t)
		var favs []string
		for _, tr := range cat.Tracks {
			favs = append(favs, tr["id"].(string))
		}
		f.SetFavorites(favs, []string{tooltest.TIDALAlbumID}, 20)
		if _, err := db.AddTracks(context.Background(), []store.Track{{TidalID: favs[0], Title: "old title", Artist: "x"}}); err != nil {
			t.Fatal(err)
		}
		st, err := svc.SyncLibrary(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st != (SyncStats{Tracks: 46, TracksAdded: 45, TracksUpdated: 1, Albums: 1, AlbumsAdded: 1}) {
			t.Errorf("stats %+v", st)
		}
		page, err := db.ListTracks(context.Background(), store.ListOptions{Limit: 100})
		if err != nil || page.Total != 46 {
			t.Fatalf("library %d tracks, %v", page.Total, err)
		}
		tr, err := db.GetTrack(context.Background(), favs[0])
		if err != nil || tr.Title != "4M" || tr.Artist == "" || tr.Album != "PRODUCTION DOSSIER" || tr.ISRC != "AUNMG2400011" || tr.ArtworkURL == "" {
			t.Errorf("synced track %+v %v", tr, err)
		}
		albums, _ := db.ListAlbums(context.Background(), store.ListOptions{})
		if albums.Total != 1 || albums.Albums[0].Artist == "" || albums.Albums[0].TrackCount != 46 {
			t.Errorf("albums %+v", albums)
		}
		pages := 0
		for _, l := range f.Log() {
			if l == "GET /v2/userCollectionTracks/me/relationships/items" {
				pages++
			}
		}
		if pages != 3 {
			t.Errorf("%d collection pages read, want 3", pages)
		}
		// Again: nothing new.
		st, err = svc.SyncLibrary(context.Background())
		if err != nil || st.TracksAdded != 0 || st.TracksUpdated != 46 || st.AlbumsUpdated != 1 {
			t.Errorf("second sync %+v %v", st, err)
		}
	})
}

func TestSavedLoginTokensAreSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tidal-login.json")
	if err := tidal.SaveUserToken(path, &tidal.UserToken{AccessToken: "access-tok-123", RefreshToken: "refresh-tok-456"}); err != nil {
		t.Fatal(err)
	}
	c, err := config.New(func(k string) string { return map[string]string{"TIDAL_TOKEN_FILE": path}[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	u := TidalUserConfigFromEnv(c)
	if u.TokenFile != path || u.RedirectURL != DefaultRedirectURL {
		t.Errorf("config %+v", u)
	}
	secrets := c.Secrets()
	if !slices.Contains(secrets, "access-tok-123") || !slices.Contains(secrets, "refresh-tok-456") {
		t.Errorf("secrets %d, want both tokens", len(secrets))
	}
	// A registry built from them scrubs a token an upstream echoed.
	reg := tool.NewRegistry(tool.WithSecrets(secrets...))
	echo := tool.Must(tool.New(tool.Spec{Name: "echo", Description: "echoes"}, func(ctx context.Context, in struct {
		S string `json:"s"`
	}) (echoOut, error) {
		return echoOut{S: in.S}, nil
	}))
	if err := reg.Register(echo); err != nil {
		t.Fatal(err)
	}
	res := reg.Call(context.Background(), "echo", json.RawMessage(`{"s":"token access-tok-123"}`))
	if strings.Contains(string(res.JSON), "access-tok-123") {
		t.Errorf("token in the result: %s", res.JSON)
	}
}

type echoOut struct {
	S string `json:"s"`
}

func (echoOut) Summary() string { return "echoed" }

// TestToolAvailability: the TIDAL tools are available only with what their
// calls need, the app's credentials or a user's login; the index's never
// need TIDAL.
func TestToolAvailability(t *testing.T) {
	const (
		noApp   = "TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET are not set"
		noLogin = "no one is logged in to TIDAL ('toolport tidal login')"
	)
	tests := []struct {
		name   string
		tidal  tidal.Config
		login  bool
		badURL bool
		want   map[string]string // tool → its Unavailable(); missing: ""
	}{
		{"nothing", tidal.Config{}, false, false, map[string]string{"tidalSearch": noApp, "albumTracks": noApp,
			"suggestPlaylist": noApp + ", and " + noLogin, "savePlaylistToTidal": "TIDAL_CLIENT_ID is not set"}},
		{"the app", tidal.Config{ClientID: "id", ClientSecret: "secret"}, false, false, map[string]string{"savePlaylistToTidal": noLogin}},
		{"the app and a login", tidal.Config{ClientID: "id", ClientSecret: "secret"}, true, false, nil},
		{"a public app and a login", tidal.Config{ClientID: "id"}, true, false, map[string]string{"tidalSearch": noApp, "albumTracks": noApp}},
		{"a bad base URL", tidal.Config{ClientID: "id", ClientSecret: "secret", BaseURL: "openapi.tidal.com"}, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "tidal-login.json")
			if tt.login {
				if err := tidal.SaveUserToken(file, &tidal.UserToken{AccessToken: "a", RefreshToken: "r"}); err != nil {
					t.Fatal(err)
				}
			}
			svc := Open(Config{Tidal: tt.tidal, TidalUser: TidalUserConfig{TokenFile: file}},
				func(context.Context) (Store, error) { return nil, fmt.Errorf("no store in this test") })
			for _, tl := range Tools(svc) {
				got, want := tl.Unavailable(), tt.want[tl.Name()]
				if tt.badURL && tl.Name() != "semanticSearch" && tl.Name() != "batchMetadata" {
					if got == "" {
						t.Errorf("%s is available with a bad TIDAL base URL", tl.Name())
					}
					continue
				}
				if got != want {
					t.Errorf("%s: Unavailable() = %q, want %q", tl.Name(), got, want)
				}
			}
		})
	}
}
