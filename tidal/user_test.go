package tidal

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

const userClientID = "public-client-id"

func newUserAuth(t *testing.T, f *tooltest.TIDALUser) *UserAuth {
	t.Helper()
	a, err := NewUserAuth(UserAuthConfig{ClientID: userClientID, LoginURL: "https://login.tidal.com/authorize",
		AuthURL: f.Srv.URL, RedirectURL: "http://127.0.0.1:8765/callback", HTTPClient: f.Srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func login(t *testing.T, f *tooltest.TIDALUser, a *UserAuth) *UserToken {
	t.Helper()
	l, err := a.Start()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := l.Complete(context.Background(), f.Authorize(t, l.URL))
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return tok
}

func TestUserLoginExchangesTheCodeWithPKCE(t *testing.T) {
	f := tooltest.NewTIDALUser(t, userClientID)
	a := newUserAuth(t, f)
	l, err := a.Start()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(l.URL)
	if u.Host != "login.tidal.com" || !strings.Contains(u.Query().Get("scope"), "playlists.write") ||
		u.Query().Get("redirect_uri") != "http://127.0.0.1:8765/callback" {
		t.Errorf("authorization URL %s", l.URL)
	}
	tok, err := l.Complete(context.Background(), f.Authorize(t, l.URL))
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "user-access-1" || tok.RefreshToken != "user-refresh-1" || tok.UserID != "192837465" ||
		time.Until(tok.Expiry) < 50*time.Minute {
		t.Errorf("token %+v", tok)
	}
}

func TestUserLoginRefusals(t *testing.T) {
	f := tooltest.NewTIDALUser(t, userClientID)
	a := newUserAuth(t, f)
	cases := map[string]func(q url.Values, l *Login) (*Login, url.Values){
		"state of another login": func(q url.Values, l *Login) (*Login, url.Values) {
			q.Set("state", "forged")
			return l, q
		},
		"user declined": func(q url.Values, l *Login) (*Login, url.Values) {
			return l, url.Values{"state": q["state"], "error": {"access_denied"}, "error_description": {"The user said no"}}
		},
		"no code": func(q url.Values, l *Login) (*Login, url.Values) {
			q.Del("code")
			return l, q
		},
		// Another login's verifier: the token endpoint's PKCE check refuses it.
		"wrong PKCE verifier": func(q url.Values, l *Login) (*Login, url.Values) {
			other, _ := a.Start()
			other.state = l.state
			return other, q
		},
		// A code works once.
		"code used twice": func(q url.Values, l *Login) (*Login, url.Values) {
			if _, err := l.Complete(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			return l, q
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			l, _ := a.Start()
			l, q := tamper(f.Authorize(t, l.URL), l)
			tok, err := l.Complete(context.Background(), q)
			if tok != nil || !errors.Is(err, ErrAuthInvalid) {
				t.Fatalf("got %+v, %v; want ErrAuthInvalid", tok, err)
			}
			if strings.Contains(err.Error(), "user-") || strings.Contains(err.Error(), "code-") {
				t.Errorf("the error carries a token or code: %v", err)
			}
		})
	}
}

func TestNewUserAuthChecksRedirect(t *testing.T) {
	for _, redirect := range []string{"", "https://127.0.0.1:8765/cb", "http://example.com:8765/cb", "http://127.0.0.1/cb"} {
		if _, err := NewUserAuth(UserAuthConfig{ClientID: "x", RedirectURL: redirect}); !errors.Is(err, ErrConfig) {
			t.Errorf("%q: %v, want ErrConfig", redirect, err)
		}
	}
	if _, err := NewUserAuth(UserAuthConfig{RedirectURL: "http://localhost:1/cb"}); !errors.Is(err, ErrAuthMissing) {
		t.Errorf("no client id: %v", err)
	}
}

func TestUserTokenRefreshAndPersistence(t *testing.T) {
	f := tooltest.NewTIDALUser(t, userClientID)
	a := newUserAuth(t, f)
	tok := login(t, f, a)
	path := filepath.Join(t.TempDir(), "conf", "tidal-login.json")
	if err := SaveUserToken(path, tok); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v %v", st.Mode(), err)
	}
	loaded, err := LoadUserToken(path)
	if err != nil || loaded.RefreshToken != "user-refresh-1" {
		t.Fatalf("load %+v %v", loaded, err)
	}

	now := time.Now()
	var saves []string
	src := a.TokenSource(loaded, func(t *UserToken) error {
		saves = append(saves, t.AccessToken)
		return SaveUserToken(path, t)
	})
	src.now = func() time.Time { return now }
	got, err := src.Token(context.Background())
	if err != nil || got.AccessToken != "user-access-1" || len(saves) != 0 {
		t.Fatalf("fresh token: %+v %v (saves %v)", got, err, saves)
	}
	now = now.Add(2 * time.Hour) // expired
	got, err = src.Token(context.Background())
	if err != nil || got.AccessToken != "user-access-2" || got.RefreshToken != "user-refresh-1" || got.UserID != "192837465" {
		t.Fatalf("refreshed: %+v %v", got, err)
	}
	if !slices.Equal(saves, []string{"user-access-2"}) {
		t.Errorf("saves %v", saves)
	}
	if back, _ := LoadUserToken(path); back.AccessToken != "user-access-2" || back.RefreshToken != "user-refresh-1" {
		t.Errorf("file after refresh: %+v", back)
	}

	// A refresh token TIDAL no longer knows: log in again.
	src = a.TokenSource(&UserToken{AccessToken: "old", RefreshToken: "revoked", Expiry: time.Now().Add(-time.Hour)}, nil)
	if _, err := src.Token(context.Background()); !errors.Is(err, ErrAuthInvalid) || !strings.Contains(err.Error(), "tidal login") {
		t.Errorf("revoked refresh token: %v", err)
	}
	if _, err := LoadUserToken(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, ErrNoLogin) {
		t.Errorf("missing file: %v", err)
	}
}

func userClient(t *testing.T, f *tooltest.TIDALUser) *Client {
	t.Helper()
	a := newUserAuth(t, f)
	c, err := NewClient(Config{BaseURL: f.Srv.URL, HTTPClient: f.Srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c.WithUser(a.TokenSource(login(t, f, a), nil))
}

func TestCreatePlaylistAndAddItems(t *testing.T) {
	f := tooltest.NewTIDALUser(t, userClientID)
	c := userClient(t, f)
	ctx := context.Background()
	id, err := c.CreatePlaylist(ctx, "Rainy day", "from toolport", PlaylistUnlisted, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.CreatePlaylist(ctx, "Rainy day", "from toolport", PlaylistUnlisted, "key-1")
	if err != nil || again != id {
		t.Errorf("the same idempotency key made %q, want %q (%v)", again, id, err)
	}
	res, err := c.AddPlaylistItems(ctx, id, []string{"396698919", "1", "396698920"}, "key-1-0")
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped["1"] != "NOT_FOUND" || len(res.Skipped) != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	ps := f.Playlists()
	if len(ps) != 1 || ps[0].Name != "Rainy day" || ps[0].AccessType != "UNLISTED" || !slices.Equal(ps[0].Items, []string{"396698919", "396698920"}) {
		t.Errorf("playlists %+v", ps)
	}
	too := make([]string, PlaylistBatch+1)
	for i := range too {
		too[i] = "396698919"
	}
	if _, err := c.AddPlaylistItems(ctx, id, too, ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("51 items: %v", err)
	}

	f.SetThrottle(2) // the second add request the server sees
	_, err = c.AddPlaylistItems(ctx, id, []string{"396698921"}, "key-1-1")
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrRateLimited) || !te.Temporary() {
		t.Errorf("429: %v", err)
	}

	// Without a login the user calls say how to log in.
	plain, _ := NewClient(Config{ClientID: "a", ClientSecret: "b", BaseURL: f.Srv.URL})
	if _, err := plain.CreatePlaylist(ctx, "x", "", "", ""); !errors.Is(err, ErrAuthMissing) || !strings.Contains(err.Error(), "tidal login") {
		t.Errorf("no login: %v", err)
	}
}

func TestFavoritesArePaged(t *testing.T) {
	f := tooltest.NewTIDALUser(t, userClientID)
	cat := tooltest.LoadTIDALCatalog(t)
	var favorites []string
	for _, tr := range cat.Tracks {
		favorites = append(favorites, tr["id"].(string))
	}
	f.SetFavorites(favorites, []string{tooltest.TIDALAlbumID}, 20)
	c := userClient(t, f)
	var pages []int
	var ids []string
	err := c.FavoriteTracks(context.Background(), func(ts []Track) error {
		pages = append(pages, len(ts))
		for _, tr := range ts {
			if tr.Title == "" || tr.ISRC == "" {
				t.Errorf("track without attributes: %+v", tr)
			}
			ids = append(ids, tr.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pages, []int{20, 20, 6}) || !slices.Equal(ids, favorites) {
		t.Errorf("pages %v, %d ids", pages, len(ids))
	}
	var albums []Album
	if err := c.FavoriteAlbums(context.Background(), func(as []Album) error { albums = append(albums, as...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(albums) != 1 || albums[0].Title == "" {
		t.Errorf("albums %+v", albums)
	}
	full, err := c.AlbumsByID(context.Background(), []string{tooltest.TIDALAlbumID, "1"})
	if err != nil || len(full) != 1 || full[0].ArtistName() == "" || full[0].ArtworkURL == "" {
		t.Errorf("AlbumsByID %+v %v", full, err)
	}
	// The API refusing the access token makes the client refresh once.
	f.Expire()
	if err := c.FavoriteAlbums(context.Background(), func([]Album) error { return nil }); err != nil {
		t.Errorf("after the token was revoked: %v", err)
	}
}
