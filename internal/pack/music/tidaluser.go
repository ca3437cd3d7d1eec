package music

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// DefaultRedirectURL is the loopback address `toolport tidal login` listens
// on for TIDAL's redirect; register it for the app in TIDAL's dashboard.
const DefaultRedirectURL = "http://127.0.0.1:8765/callback"

// TidalUserConfig is how the user's TIDAL login is made and kept.
type TidalUserConfig struct {
	// TokenFile holds the login (mode 0600).
	TokenFile   string
	RedirectURL string
	LoginURL    string
}

// TidalUserConfigFromEnv reads TIDAL_TOKEN_FILE (default
// $XDG_CONFIG_HOME/toolport/tidal-login.json, else
// ~/.config/toolport/tidal-login.json), TIDAL_REDIRECT_URI and
// TIDAL_LOGIN_URL. A saved login's tokens are registered as secrets, so that
// they are scrubbed from every result, log line and span.
func TidalUserConfigFromEnv(c *config.Config) TidalUserConfig {
	u := TidalUserConfig{
		TokenFile:   c.Default("TIDAL_TOKEN_FILE", defaultTokenFile(c)),
		RedirectURL: c.Default("TIDAL_REDIRECT_URI", DefaultRedirectURL),
		LoginURL:    c.Default("TIDAL_LOGIN_URL", tidal.DefaultLoginURL),
	}
	if u.TokenFile != "" {
		if tok, err := tidal.LoadUserToken(u.TokenFile); err == nil {
			c.AddSecret(tok.Secrets()...)
		}
	}
	return u
}

func defaultTokenFile(c *config.Config) string {
	if dir := c.Env("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolport", "tidal-login.json")
	}
	if home := c.Env("HOME"); home != "" {
		return filepath.Join(home, ".config", "toolport", "tidal-login.json")
	}
	return ""
}

// UserAuth returns TIDAL's user authorization for the configured app.
func (s *Service) UserAuth() (*tidal.UserAuth, error) {
	a, err := tidal.NewUserAuth(tidal.UserAuthConfig{
		ClientID: s.tidalCfg.ClientID, ClientSecret: s.tidalCfg.ClientSecret, LoginURL: s.user.LoginURL,
		AuthURL: s.tidalCfg.AuthURL, RedirectURL: s.user.RedirectURL, HTTPClient: s.tidalCfg.HTTPClient,
	})
	return a, tidalError(err)
}

// TidalUserConfig returns where the login is kept and how it is made.
func (s *Service) TidalUserConfig() TidalUserConfig { return s.user }

// tidalUser returns a TIDAL client acting as the logged-in user, whose
// refreshed tokens are written back to the token file.
func (s *Service) tidalUser() (*tidal.Client, error) {
	tc, err := s.tidalClient()
	if err != nil {
		return nil, err
	}
	if s.user.TokenFile == "" {
		return nil, tool.Errorf(tool.CodeConfig, "no place for the TIDAL login: set TIDAL_TOKEN_FILE or HOME")
	}
	tok, err := tidal.LoadUserToken(s.user.TokenFile)
	if errors.Is(err, tidal.ErrNoLogin) {
		return nil, &tool.Error{Code: tool.CodeAuthMissing, Err: err,
			Message: "not logged in to TIDAL: the user must run 'toolport tidal login' once (it opens TIDAL's login page)"}
	}
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeConfig, Message: "the TIDAL login cannot be read; run 'toolport tidal login' again", Err: err}
	}
	auth, err := s.UserAuth()
	if err != nil {
		return nil, err
	}
	path := s.user.TokenFile
	return tc.WithUser(auth.TokenSource(tok, func(t *tidal.UserToken) error { return tidal.SaveUserToken(path, t) })), nil
}

// catalogClient is the client for catalogue reads: the app's
// (client credentials) when it is configured, else the logged-in user's, so
// that an app registered as a public client works once the user logged in.
func (s *Service) catalogClient() (*tidal.Client, error) {
	tc, err := s.tidalClient()
	if err != nil || tc.Configured() {
		return tc, err
	}
	if uc, err := s.tidalUser(); err == nil {
		return uc, nil
	}
	return tc, nil // reports the missing credentials
}

// ---- savePlaylistToTidal

// SavePlaylistInput is the input of savePlaylistToTidal.
type SavePlaylistInput struct {
	PlaylistID string `json:"playlistId" jsonschema:"The playlistId suggestPlaylist returned" schema:"minLength=1,maxLength=64"`
	Public     bool   `json:"public,omitempty" jsonschema:"Make the playlist public on Tidal (default: unlisted)"`
}

// SavePlaylistOutput is the output of savePlaylistToTidal.
type SavePlaylistOutput struct {
	PlaylistID      string `json:"playlistId"`
	TidalPlaylistID string `json:"tidalPlaylistId"`
	URL             string `json:"url" jsonschema:"The playlist on Tidal"`
	Title           string `json:"title"`
	Added           int    `json:"added" jsonschema:"Tracks added"`
	// Skipped are tracks TIDAL left out, by Tidal id, with its reason.
	Skipped      map[string]string `json:"skipped,omitempty"`
	Batches      int               `json:"batches" jsonschema:"Add requests made (at most 50 tracks each)"`
	Retries      int               `json:"retries,omitempty" jsonschema:"Batches retried after a rate limit"`
	AlreadySaved bool              `json:"alreadySaved,omitempty" jsonschema:"The playlist had been saved before; nothing was sent"`
}

// Summary is "Saved 'Rainy day' to Tidal: 12 tracks in 1 batch".
func (o SavePlaylistOutput) Summary() string {
	if o.AlreadySaved {
		return fmt.Sprintf("%s is already on Tidal", quote(o.Title))
	}
	s := fmt.Sprintf("Saved %s to Tidal: %s in %s", quote(o.Title), plural(o.Added, "track", "tracks"), plural(o.Batches, "batch", "batches"))
	if len(o.Skipped) > 0 {
		s += fmt.Sprintf(" (%d skipped)", len(o.Skipped))
	}
	return s
}

// Bounds of the retries of one batch after a 429.
const (
	maxBatchAttempts = 4
	maxRateWait      = 15 * time.Second
)

// TidalPlaylistURL is a TIDAL playlist's web address.
func TidalPlaylistURL(id string) string { return "https://tidal.com/browse/playlist/" + id }

func (s *Service) savePlaylistToTidal(ctx context.Context, in SavePlaylistInput) (SavePlaylistOutput, error) {
	var tm timings
	defer func() { tm.record(ctx) }()
	db, err := s.Store(ctx)
	if err != nil {
		return SavePlaylistOutput{}, err
	}
	p, err := db.GetPlaylist(ctx, strings.TrimSpace(in.PlaylistID))
	if errors.Is(err, store.ErrNotFound) {
		return SavePlaylistOutput{}, &tool.Error{Code: tool.CodeNotFound, Message: "no playlist " + quote(in.PlaylistID) + ": use the playlistId suggestPlaylist returned"}
	}
	if err != nil {
		return SavePlaylistOutput{}, storeError("reading the playlist", err)
	}
	out := SavePlaylistOutput{PlaylistID: p.ID, Title: p.Title}
	if p.TidalPlaylistID != "" {
		out.TidalPlaylistID, out.URL, out.AlreadySaved = p.TidalPlaylistID, TidalPlaylistURL(p.TidalPlaylistID), true
		return out, nil
	}
	if len(p.Items) == 0 {
		return SavePlaylistOutput{}, &tool.Error{Code: tool.CodeValidation, Message: "the playlist has no tracks to save"}
	}
	uc, err := s.tidalUser()
	if err != nil {
		return SavePlaylistOutput{}, err
	}
	start := time.Now()
	defer func() { tm.tidal = time.Since(start) }()
	access := tidal.PlaylistUnlisted
	if in.Public {
		access = tidal.PlaylistPublic
	}
	// Idempotency keys derived from the stored playlist make a retried
	// save (the registry's retry, or the user's) replay what TIDAL already
	// did instead of making a second playlist or adding tracks twice.
	key := "toolport-" + p.ID
	id, err := uc.CreatePlaylist(ctx, p.Title, p.Description, access, key)
	if err != nil {
		return SavePlaylistOutput{}, tidalError(err)
	}
	out.TidalPlaylistID, out.URL = id, TidalPlaylistURL(id)
	for b, start := 0, 0; start < len(p.Items); b, start = b+1, start+tidal.PlaylistBatch {
		chunk := p.Items[start:min(start+tidal.PlaylistBatch, len(p.Items))]
		ids := make([]string, len(chunk))
		for i, it := range chunk {
			ids[i] = it.TidalID
		}
		res, retries, err := addBatch(ctx, uc, id, ids, fmt.Sprintf("%s-%s-%d", key, id, b))
		out.Retries += retries
		if err != nil {
			te := *tool.Classify(tidalError(err)) // a copy: the message is amended
			te.Message = fmt.Sprintf("the playlist was created on Tidal (%s) but adding tracks %d-%d failed: %s; saving again resumes",
				out.URL, start+1, start+len(chunk), te.Message)
			return SavePlaylistOutput{}, &te
		}
		out.Batches++
		out.Added += len(chunk) - len(res.Skipped)
		for k, v := range res.Skipped {
			if out.Skipped == nil {
				out.Skipped = map[string]string{}
			}
			out.Skipped[k] = v
		}
		tool.ReportProgress(ctx, tool.Progress{Done: float64(start + len(chunk)), Total: float64(len(p.Items)), Message: "adding tracks to Tidal"})
	}
	if err := db.SetPlaylistTidalID(ctx, p.ID, id); err != nil {
		return SavePlaylistOutput{}, storeError("recording the Tidal playlist", err)
	}
	return out, nil
}

// addBatch adds one batch, waiting out rate limits (TIDAL's 429 carries no
// Retry-After; the client's bucket says when a token is back) a few times.
func addBatch(ctx context.Context, uc *tidal.Client, playlistID string, ids []string, key string) (tidal.AddedItems, int, error) {
	for attempt := 1; ; attempt++ {
		res, err := uc.AddPlaylistItems(ctx, playlistID, ids, key)
		var te *tidal.Error
		if err == nil || !errors.As(err, &te) || !errors.Is(err, tidal.ErrRateLimited) || attempt == maxBatchAttempts {
			return res, attempt - 1, err
		}
		wait := max(te.RetryAfter, 100*time.Millisecond)
		if wait > maxRateWait {
			return res, attempt - 1, err
		}
		select {
		case <-ctx.Done():
			return res, attempt - 1, err
		case <-time.After(wait):
		}
	}
}

// ---- library sync

// SyncStats says what [Service.SyncLibrary] did.
type SyncStats struct {
	Tracks        int `json:"tracks"` // favourite tracks read
	TracksAdded   int `json:"tracksAdded"`
	TracksUpdated int `json:"tracksUpdated"`
	Albums        int `json:"albums"`
	AlbumsAdded   int `json:"albumsAdded"`
	AlbumsUpdated int `json:"albumsUpdated"`
}

// SyncLibrary imports the logged-in user's TIDAL favourite tracks and albums
// into the library, page by page (each page one store transaction), with
// artists, album and cover looked up in batches. Tracks and albums already
// there get their metadata refreshed and keep when they were added.
func (s *Service) SyncLibrary(ctx context.Context) (SyncStats, error) {
	var st SyncStats
	db, err := s.Store(ctx)
	if err != nil {
		return st, err
	}
	uc, err := s.tidalUser()
	if err != nil {
		return st, err
	}
	err = uc.FavoriteTracks(ctx, func(page []tidal.Track) error {
		ids := make([]string, len(page))
		for i, t := range page {
			ids[i] = t.ID
		}
		full, err := uc.TracksByID(ctx, ids)
		if err != nil {
			return err
		}
		byID := make(map[string]tidal.Track, len(full))
		for _, t := range full {
			byID[t.ID] = t
		}
		tracks := make([]store.Track, 0, len(page))
		for _, t := range page {
			if f, ok := byID[t.ID]; ok {
				t = f
			}
			tracks = append(tracks, libraryTrack(t))
		}
		n, err := db.AddTracks(ctx, tracks)
		if err != nil {
			return storeError("saving the library", err)
		}
		st.Tracks += len(tracks)
		st.TracksAdded += n
		st.TracksUpdated += len(tracks) - n
		return nil
	})
	if err != nil {
		return st, tidalError(err)
	}
	err = uc.FavoriteAlbums(ctx, func(page []tidal.Album) error {
		ids := make([]string, len(page))
		for i, a := range page {
			ids[i] = a.ID
		}
		full, err := uc.AlbumsByID(ctx, ids)
		if err != nil {
			return err
		}
		byID := make(map[string]tidal.Album, len(full))
		for _, a := range full {
			byID[a.ID] = a
		}
		albums := make([]store.Album, 0, len(page))
		for _, a := range page {
			if f, ok := byID[a.ID]; ok {
				a = f
			}
			albums = append(albums, store.Album{TidalID: a.ID, Title: a.Title, Artist: a.ArtistName(),
				ReleaseDate: a.ReleaseDate, ArtworkURL: a.ArtworkURL, TrackCount: a.NumberOfItems})
		}
		n, err := db.AddAlbums(ctx, albums)
		if err != nil {
			return storeError("saving the library", err)
		}
		st.Albums += len(albums)
		st.AlbumsAdded += n
		st.AlbumsUpdated += len(albums) - n
		return nil
	})
	if err != nil {
		return st, tidalError(err)
	}
	return st, nil
}

func libraryTrack(t tidal.Track) store.Track {
	r := trackResult(t)
	st := store.Track{TidalID: t.ID, ISRC: strings.ToUpper(t.ISRC), Title: r.Title, Artist: r.Artist, Album: r.Album,
		Duration: r.Duration, ArtworkURL: r.ArtworkURL}
	if t.Album != nil {
		st.AlbumID = t.Album.ID
	}
	if _, err := NormalizeISRC(st.ISRC); err != nil {
		st.ISRC = "" // the library keeps only valid ISRCs
	}
	return st
}
