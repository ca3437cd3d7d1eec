package tidal

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/tooltest"
)

const artwork640 = "https://resources.tidal.com/images/8edd18d0/7b24/40b1/ba19/758ef4f54bae/640x640.jpg"

// kindError asserts err is an *Error of kind (errors.Is) whose message
// leaks no secret, and returns it.
func kindError(t *testing.T, err error, kind error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *tidal.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %q (kind %v) is not %v", e.Message, e.Kind, kind)
	}
	if strings.Contains(e.Error(), testClientSecret) || strings.Contains(e.Error(), "access-token-") {
		t.Fatalf("error message leaks a secret: %q", e.Error())
	}
	return e
}

func TestRootURL(t *testing.T) {
	tests := []struct{ raw, path, want string }{
		{"", apiPath, DefaultBaseURL},
		{"http://127.0.0.1:8081", apiPath, "http://127.0.0.1:8081/v2"},
		{"http://127.0.0.1:8081/", apiPath, "http://127.0.0.1:8081/v2"},
		{"https://proxy.example/tidal/v2/", apiPath, "https://proxy.example/tidal/v2"},
		{"http://127.0.0.1:8081", tokenPath, "http://127.0.0.1:8081/v1/oauth2/token"},
	}
	for _, tt := range tests {
		def := DefaultBaseURL
		u, err := rootURL(tt.raw, def, tt.path)
		if err != nil || u.String() != tt.want {
			t.Errorf("rootURL(%q) = %v, %v; want %s", tt.raw, u, err, tt.want)
		}
	}
	for _, bad := range []string{"ftp://x", "127.0.0.1:80", "http://", "http://user:pw@host", "://"} {
		if _, err := NewClient(Config{BaseURL: bad}); err == nil {
			t.Errorf("NewClient(BaseURL %q) succeeded", bad)
		} else {
			kindError(t, err, ErrConfig)
		}
	}
}

func TestAuthMissing(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client(func(cfg *Config) { cfg.ClientSecret = "" })
	_, err := c.Search(context.Background(), "radiohead", SearchAll, 10)
	te := kindError(t, err, ErrAuthMissing)
	for _, want := range []string{"TIDAL_CLIENT_ID", "TIDAL_CLIENT_SECRET", "tidal.client_id", "tidal.client_secret"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message %q does not mention %s", te.Message, want)
		}
	}
	if te.Temporary() {
		t.Errorf("want a non-temporary error, got %+v", te)
	}
	if n := f.tokenCalls.Load() + f.apiCalls.Load(); n != 0 {
		t.Errorf("%d requests sent without credentials", n)
	}
}

func checkAirMaxTrack(t *testing.T, tr Track) {
	t.Helper()
	if tr.ID != "396698919" || tr.Title != "4M" || tr.ISRC != "AUNMG2400011" || tr.Duration != 3*time.Minute {
		t.Errorf("track = %+v", tr)
	}
	if tr.ArtistName() != "Air Max '97" || len(tr.Artists) != 1 || tr.Artists[0].ID != "5664171" {
		t.Errorf("artists = %+v", tr.Artists)
	}
	if tr.Album == nil || tr.Album.ID != "396698918" || tr.Album.Title != "PRODUCTION DOSSIER" || tr.ArtworkURL() != artwork640 {
		t.Errorf("album = %+v", tr.Album)
	}
}

func checkAirMaxAlbum(t *testing.T, a Album) {
	t.Helper()
	want := Album{ID: "396698918", Title: "PRODUCTION DOSSIER", Type: "ALBUM", BarcodeID: "5056688837945", ReleaseDate: "2024-11-22",
		NumberOfItems: 46, NumberOfVolumes: 1, Duration: 2*time.Hour + 16*time.Second, ArtworkURL: artwork640}
	if a.ID != want.ID || a.Title != want.Title || a.Type != want.Type || a.BarcodeID != want.BarcodeID || a.ReleaseDate != want.ReleaseDate ||
		a.NumberOfItems != want.NumberOfItems || a.NumberOfVolumes != want.NumberOfVolumes || a.Duration != want.Duration || a.ArtworkURL != want.ArtworkURL {
		t.Errorf("album = %+v\nwant    %+v", a, want)
	}
	if a.ArtistName() != "Air Max '97" || len(a.Artwork) != 7 || a.Artwork[0].Width != 1280 {
		t.Errorf("album artists %+v, %d artworks", a.Artists, len(a.Artwork))
	}
}

func TestSearchShapes(t *testing.T) {
	tests := []struct {
		name       string
		legacy     bool // Config.LegacySearch
		legacyOnly bool // the server only knows the legacy form
		wantPaths  []string
	}{
		{"current form, data array", false, false, []string{"/v2/searchResults"}},
		{"legacy form, data object", true, false, []string{"/v2/searchResults/production dossier"}},
		{"fallback to legacy on 404", false, true, []string{"/v2/searchResults", "/v2/searchResults/production dossier"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTidal(t)
			f.legacyOnly = tt.legacyOnly
			c := f.client(func(cfg *Config) { cfg.LegacySearch = tt.legacy })
			res, err := c.Search(context.Background(), "  production dossier ", SearchAll, 10)
			must(t, err)
			if res.Query != "production dossier" || len(res.Tracks) != 10 || len(res.Albums) != 1 {
				t.Fatalf("got query %q, %d tracks, %d albums", res.Query, len(res.Tracks), len(res.Albums))
			}
			checkAirMaxTrack(t, res.Tracks[0])
			checkAirMaxAlbum(t, res.Albums[0])
			var paths []string
			for _, u := range f.apiRequests() {
				paths = append(paths, u.Path)
				q := u.Query()
				if q.Get("countryCode") != "US" || q.Get("include") != "tracks.artists,tracks.albums.coverArt,albums.artists,albums.coverArt" {
					t.Errorf("request %s: countryCode/include wrong", u)
				}
				if u.Path == "/v2/searchResults" && q.Get("filter[query]") != "production dossier" {
					t.Errorf("request %s: filter[query] = %q", u, q.Get("filter[query]"))
				}
			}
			if !slices.Equal(paths, tt.wantPaths) {
				t.Errorf("paths = %q, want %q", paths, tt.wantPaths)
			}
		})
	}
}

func TestSearchLegacyEscapesQuery(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client(func(cfg *Config) { cfg.LegacySearch = true })
	_, err := c.Search(context.Background(), "AC/DC?&x", SearchTracks, 5)
	must(t, err)
	reqs := f.apiRequests()
	if len(reqs) != 1 || reqs[0].EscapedPath() != "/v2/searchResults/AC%2FDC%3F&x" {
		t.Fatalf("requests = %v", reqs)
	}
}

func TestSearchTypesAndLimits(t *testing.T) {
	tests := []struct {
		name                  string
		types                 SearchTypes
		limit                 int
		wantTracks, wantAlbum int
		wantInclude           string
		wantRequests          int
	}{
		{"albums only", SearchAlbums, 5, 0, 1, "albums.artists,albums.coverArt", 1},
		{"tracks only", SearchTracks, 5, 5, 0, "tracks.artists,tracks.albums.coverArt", 1},
		{"zero means both, default limit 20", 0, 0, 20, 1, "tracks.artists,tracks.albums.coverArt,albums.artists,albums.coverArt", 1},
		{"limit beyond one page follows next", SearchTracks, 25, 25, 0, "tracks.artists,tracks.albums.coverArt", 2},
		{"limit beyond all hits stops at the last page", SearchTracks, 100, 46, 0, "tracks.artists,tracks.albums.coverArt", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTidal(t)
			res, err := f.client().Search(context.Background(), "production dossier", tt.types, tt.limit)
			must(t, err)
			if len(res.Tracks) != tt.wantTracks || len(res.Albums) != tt.wantAlbum {
				t.Errorf("got %d tracks, %d albums; want %d, %d", len(res.Tracks), len(res.Albums), tt.wantTracks, tt.wantAlbum)
			}
			reqs := f.apiRequests()
			if len(reqs) != tt.wantRequests {
				t.Fatalf("%d requests, want %d: %v", len(reqs), tt.wantRequests, reqs)
			}
			if got := reqs[0].Query().Get("include"); got != tt.wantInclude {
				t.Errorf("include = %q, want %q", got, tt.wantInclude)
			}
			for i, u := range reqs[1:] {
				q := u.Query()
				if q.Get("include") != trackPageInclude || q.Get("page[cursor]") != []string{"p2", "p3"}[i] {
					t.Errorf("page request %s: include or cursor wrong", u)
				}
			}
			for i, tr := range res.Tracks {
				if tr.Title == "" || tr.Album == nil || tr.ArtworkURL() == "" || tr.TrackNumber != 0 && tr.TrackNumber != i+1 {
					t.Errorf("track %d unresolved: %+v", i, tr)
				}
			}
		})
	}
}

func TestSearchNoHitsAndValidation(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	res, err := c.Search(context.Background(), "nothing matches", SearchAll, 10)
	must(t, err)
	if res.Tracks == nil || res.Albums == nil || len(res.Tracks)+len(res.Albums) != 0 {
		t.Errorf("want empty non-nil slices, got %+v", res)
	}
	_, err = c.Search(context.Background(), " \t", SearchAll, 10)
	kindError(t, err, ErrInvalidInput)

	long := strings.Repeat("é", MaxQueryLen+10)
	res, err = c.Search(context.Background(), long, SearchAll, 1)
	must(t, err)
	if got := len([]rune(res.Query)); got != MaxQueryLen {
		t.Errorf("query cut to %d characters, want %d", got, MaxQueryLen)
	}
}

func TestAlbum(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	a, err := c.Album(context.Background(), "396698918")
	must(t, err)
	checkAirMaxAlbum(t, *a)
	if q := f.apiRequests()[0].Query(); q.Get("filter[id]") != "396698918" || q.Get("include") != "artists,coverArt" {
		t.Errorf("request query = %v", q)
	}

	single, err := c.Album(context.Background(), "381265361")
	must(t, err)
	if single.NumberOfItems != 1 || len(single.Artists) != 2 || single.ArtistName() == "" {
		t.Errorf("single = %+v", single)
	}

	_, err = c.Album(context.Background(), "999")
	kindError(t, err, ErrNotFound)
	for _, bad := range []string{"", "1 OR 1", "../albums", strings.Repeat("9", 65)} {
		_, err = c.Album(context.Background(), bad)
		kindError(t, err, ErrInvalidInput)
	}
}

func TestAlbumTracksFollowsCursorPages(t *testing.T) {
	f := newFakeTidal(t)
	type key struct{}
	var mu sync.Mutex
	var progress []Progress
	c := f.client(func(cfg *Config) {
		cfg.Progress = func(ctx context.Context, p Progress) {
			if ctx.Value(key{}) != "call" {
				t.Errorf("progress reported without the call's context")
			}
			mu.Lock()
			progress = append(progress, p)
			mu.Unlock()
		}
	})
	ctx := context.WithValue(context.Background(), key{}, "call")
	album, tracks, err := c.AlbumWithTracks(ctx, "396698918")
	must(t, err)
	if album.Title != "PRODUCTION DOSSIER" || len(tracks) != 46 {
		t.Fatalf("album %q with %d tracks, want 46", album.Title, len(tracks))
	}
	for i, tr := range tracks {
		if tr.TrackNumber != i+1 || tr.VolumeNumber != 1 || tr.Title == "" || tr.ISRC == "" || tr.Duration <= 0 {
			t.Errorf("track %d = %+v", i+1, tr)
		}
		if tr.ArtistName() != "Air Max '97" || tr.Album == nil || tr.Album.Title != "PRODUCTION DOSSIER" || tr.ArtworkURL() != artwork640 {
			t.Errorf("track %d not enriched: artists %+v album %+v", i+1, tr.Artists, tr.Album)
		}
	}
	checkAirMaxTrack(t, tracks[0])
	if last := tracks[45]; last.ID != "396698966" || last.Title != "XTYPE" || last.ISRC != "AUNMG2400056" || last.Duration != 2*time.Minute+15*time.Second {
		t.Errorf("last track = %+v", last)
	}

	reqs := f.apiRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3: %v", len(reqs), reqs)
	}
	if q := reqs[0].Query(); reqs[0].Path != "/v2/albums" || q.Get("include") != "artists,coverArt,items.artists" {
		t.Errorf("first request %s", reqs[0])
	}
	for i, cursor := range []string{"3nI1Esi", "3nI1F0y"} {
		u := reqs[i+1]
		q := u.Query()
		if u.Path != "/v2/albums/396698918/relationships/items" || q.Get("page[cursor]") != cursor || q.Get("include") != "items.artists" || q.Get("countryCode") != "US" {
			t.Errorf("page request %d = %s; want cursor %s with include re-added", i+2, u, cursor)
		}
	}
	if len(progress) != 3 || progress[2].Done != 46 || progress[2].Total != 46 || progress[0].Done != 20 {
		t.Errorf("progress = %+v", progress)
	}
}

func TestAlbumTracksStopsOnCursorLoop(t *testing.T) {
	f := newFakeTidal(t)
	page := `{"data":[{"id":"1","type":"tracks"}],"links":{"next":"/albums/396698918/relationships/items?page%5Bcursor%5D=again"}}`
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/relationships/items") {
			writeJSON(w, 200, page)
			return true
		}
		return false
	}
	tracks, err := f.client().AlbumTracks(context.Background(), "396698918")
	must(t, err)
	// 20 from the album, 1 from the 3nI1Esi page, 1 from the first "again"
	// page; the repeated link is not followed again.
	if len(tracks) != 22 || f.apiCalls.Load() != 3 {
		t.Errorf("%d tracks in %d calls, want 22 in 3", len(tracks), f.apiCalls.Load())
	}
}

func TestNextLinkMustStayOnTheAPI(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	for _, next := range []string{"https://evil.example/v2/albums", "//evil.example/albums", "albums/1", f.srv.URL + "/other/albums"} {
		_, err := c.getNext(context.Background(), next, "items")
		kindError(t, err, ErrMalformed)
	}
	if n := f.apiCalls.Load(); n != 0 {
		t.Errorf("%d requests sent for foreign links", n)
	}
	// An absolute link under the API root is fine.
	_, err := c.getNext(context.Background(), f.srv.URL+"/v2/albums/396698918/relationships/items?page%5Bcursor%5D=3nI1F0y", "items.artists")
	must(t, err)
}

func TestTracksByISRC(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	var isrcs []string
	for n := 11; n <= 56; n += 2 { // 23 known ISRCs
		isrcs = append(isrcs, "AUNMG24000"+strconv.Itoa(n))
	}
	isrcs = append(isrcs, "USXXX9999999", "aunmg24-000-11", " AU NMG 24 000 13 ", "GBAYE0000000", "") // misses, duplicates in other forms (hyphens, spaces), an empty one
	tracks, err := c.TracksByISRC(context.Background(), isrcs)
	must(t, err)
	var got []string
	for _, tr := range tracks {
		got = append(got, tr.ISRC)
		if tr.Title == "" || tr.ArtistName() != "Air Max '97" || tr.Album == nil || tr.ArtworkURL() != artwork640 {
			t.Errorf("track %s not resolved: %+v", tr.ISRC, tr)
		}
	}
	if !slices.Equal(got, isrcs[:23]) {
		t.Errorf("found %v\nwant  %v", got, isrcs[:23])
	}
	reqs := f.apiRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (chunks of %d)", len(reqs), lookupChunk)
	}
	if n0, n1 := len(reqs[0].Query()["filter[isrc]"]), len(reqs[1].Query()["filter[isrc]"]); n0 != 20 || n1 != 5 {
		t.Errorf("chunk sizes %d, %d; want 20, 5 (25 distinct ISRCs)", n0, n1)
	}
	if inc := reqs[0].Query().Get("include"); !strings.Contains(inc, "albums") || !strings.Contains(inc, "artists") {
		t.Errorf("include = %q", inc)
	}

	none, err := c.TracksByISRC(context.Background(), []string{"USXXX9999999"})
	must(t, err)
	if none == nil || len(none) != 0 {
		t.Errorf("all misses: got %v, want an empty slice", none)
	}
	if empty, err := c.TracksByISRC(context.Background(), nil); err != nil || len(empty) != 0 || f.apiCalls.Load() != 3 {
		t.Errorf("no ISRCs: %v, %v, %d calls", empty, err, f.apiCalls.Load())
	}
}

func TestUnauthorizedRefreshesOnceAndRetries(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	_, err := c.Album(context.Background(), "396698918")
	must(t, err)
	f.revokeAll() // the token dies server-side before its expiry
	_, err = c.Album(context.Background(), "396698918")
	must(t, err)
	if tc, ac := f.tokenCalls.Load(), f.apiCalls.Load(); tc != 2 || ac != 3 {
		t.Errorf("token calls %d (want 2), API calls %d (want 3: ok, 401, retry)", tc, ac)
	}
}

func TestUnauthorizedTwiceIsAuthInvalid(t *testing.T) {
	f := newFakeTidal(t)
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		writeJSON(w, 401, `{"errors":[{"status":"401","code":"UNAUTHORIZED","detail":"token rejected"}]}`)
		return true
	}
	_, err := f.client().Album(context.Background(), "396698918")
	te := kindError(t, err, ErrAuthInvalid)
	if te.Temporary() || te.StatusCode != 401 {
		t.Errorf("error = %+v", te)
	}
	if tc, ac := f.tokenCalls.Load(), f.apiCalls.Load(); tc != 2 || ac != 2 {
		t.Errorf("token calls %d, API calls %d; want 2 and 2 (one refresh, one retry)", tc, ac)
	}
}

func TestTokenEndpointRejectsCredentials(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client(func(cfg *Config) { cfg.ClientID = "wrong" })
	_, err := c.Album(context.Background(), "396698918")
	te := kindError(t, err, ErrAuthInvalid)
	if !strings.Contains(te.Message, "TIDAL_CLIENT_ID") || !strings.Contains(te.Message, "invalid_client") || te.Temporary() {
		t.Errorf("error = %+v", te)
	}
	if f.apiCalls.Load() != 0 {
		t.Errorf("API called without a token")
	}
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	tests := []struct {
		name      string
		expiresIn int
		advance   time.Duration
		wantCalls int32
	}{
		{"fresh token reused", 3600, 30 * time.Minute, 1},
		{"just before the early margin", 3600, 3600*time.Second - refreshEarly - time.Second, 1},
		{"inside the early margin", 3600, 3600*time.Second - refreshEarly + time.Second, 2},
		{"short-lived token: half its life", 60, 31 * time.Second, 2},
		{"short-lived token still fresh", 60, 29 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTidal(t)
			f.expiresIn = tt.expiresIn
			c := f.client()
			clock := tooltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			c.now = clock.Now
			_, err := c.Album(context.Background(), "396698918")
			must(t, err)
			clock.Advance(tt.advance)
			_, err = c.Album(context.Background(), "396698918")
			must(t, err)
			if got := f.tokenCalls.Load(); got != tt.wantCalls {
				t.Errorf("token requests = %d, want %d", got, tt.wantCalls)
			}
			if f.apiCalls.Load() != 2 {
				t.Errorf("API calls = %d, want 2 (no 401 round trip)", f.apiCalls.Load())
			}
		})
	}
}

func TestConcurrentCallersShareOneRefresh(t *testing.T) {
	f := newFakeTidal(t)
	gate := make(chan struct{})
	f.tokenGate = gate
	c := f.client()
	const callers = 50
	joined := make(chan struct{}, callers)
	c.tokens.(*tokenSource).joined = func() {
		select {
		case joined <- struct{}{}:
		default: // a second refresh: the count below fails the test
		}
	}
	var done sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		done.Go(func() {
			_, err := c.Album(context.Background(), "396698918")
			errs <- err
		})
	}
	<-f.tokenSeen // the one token request is held open
	// Every other caller queues behind it before it is let go.
	for range callers - 1 {
		<-joined
	}
	close(gate)
	done.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	if got := f.tokenCalls.Load(); got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
	if got := f.apiCalls.Load(); got != callers {
		t.Errorf("API calls = %d, want %d", got, callers)
	}
}

func TestCallerGivingUpDoesNotSpoilTheSharedRefresh(t *testing.T) {
	f := newFakeTidal(t)
	gate := make(chan struct{})
	f.tokenGate = gate
	c := f.client()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Album(ctx, "396698918")
		errc <- err
	}()
	<-f.tokenSeen // the caller's refresh is held open
	cancel()
	kindError(t, <-errc, context.Canceled)
	close(gate)
	_, err := c.Album(context.Background(), "396698918")
	must(t, err)
	if got := f.tokenCalls.Load(); got != 1 {
		t.Errorf("token requests = %d, want 1 (the first fetch completed for later callers)", got)
	}
}

func TestUpstreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		header    map[string]string
		kind      error
		retryable bool
		inMessage string
	}{
		{"429 without Retry-After", 429, `{"errors":[{"status":"429","detail":"Rate limit exceeded"}]}`,
			map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Burst-Capacity": "10", "X-Ratelimit-Replenish-Rate": "4"},
			ErrRateLimited, true, "Rate limit exceeded"},
		{"503", 503, `{"errors":[{"status":"503","detail":"Service unavailable"}]}`, nil, ErrStatus, true, "HTTP 503"},
		{"502 with an HTML body", 502, `<html>bad gateway</html>`, nil, ErrStatus, true, "HTTP 502"},
		{"500 is not retried", 500, `{"errors":[{"status":"500"}]}`, nil, ErrStatus, false, "HTTP 500"},
		{"recorded 404", 404, string(readTestdata(t, "error_404_artist_not_found.json")), nil, ErrNotFound, false, "Artist of a given 'id' 38420776 not found"},
		{"403", 403, `{"errors":[{"status":"403","code":"FORBIDDEN"}]}`, nil, ErrAuthInvalid, false, "FORBIDDEN"},
		{"400 names the parameter", 400, `{"errors":[{"status":"400","code":"VALUE_REGEX_MISMATCH","detail":"bad country","source":{"parameter":"countryCode"}}]}`, nil, ErrStatus, false, "parameter countryCode"},
		{"malformed: HTML with 200", 200, `<!doctype html><p>hello`, nil, ErrMalformed, false, ""},
		{"malformed: truncated JSON", 200, `{"data":[{"id":"1","type":"albums"`, nil, ErrMalformed, false, ""},
		{"malformed: data is a string", 200, `{"data":"oops"}`, nil, ErrMalformed, false, ""},
		{"malformed: attributes of the wrong type", 200, `{"data":[{"id":"396698918","type":"albums","attributes":{"title":7}}]}`, nil, ErrMalformed, false, ""},
		{"malformed: empty body", 200, ``, nil, ErrMalformed, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeTidal(t)
			f.hook = func(w http.ResponseWriter, r *http.Request) bool {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, tt.status, tt.body)
				return true
			}
			_, err := f.client().Album(context.Background(), "396698918")
			te := kindError(t, err, tt.kind)
			if te.StatusCode != tt.status && tt.status != 200 {
				t.Errorf("StatusCode = %d, want %d", te.StatusCode, tt.status)
			}
			if te.Temporary() != tt.retryable || !strings.Contains(te.Message, tt.inMessage) {
				t.Errorf("error = %+v", te)
			}
			if f.apiCalls.Load() != 1 {
				t.Errorf("API calls = %d: the client must not retry itself", f.apiCalls.Load())
			}
			if tt.status == 429 && te.RetryAfter != 250*time.Millisecond {
				t.Errorf("RetryAfter = %v, want 250ms from x-ratelimit-replenish-rate 4", te.RetryAfter)
			}
		})
	}
}

func TestOversizedBody(t *testing.T) {
	f := newFakeTidal(t)
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(200)
		chunk := []byte(strings.Repeat(" ", 1<<20))
		for range maxBody>>20 + 2 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return true
	}
	_, err := f.client().Album(context.Background(), "396698918")
	kindError(t, err, ErrMalformed)
}

func TestNetworkError(t *testing.T) {
	f := newFakeTidal(t)
	c := f.client()
	f.srv.Close()
	_, err := c.Album(context.Background(), "396698918")
	te := kindError(t, err, ErrNetwork)
	if !te.Temporary() {
		t.Errorf("network error not retryable: %+v", te)
	}
}

// TIDAL's error object is kept in fields, clipped, for callers to branch on.
func TestErrorKeepsTIDALErrorObject(t *testing.T) {
	f := newFakeTidal(t)
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		writeJSON(w, 400, `{"errors":[{"status":"400","code":"VALUE_REGEX_MISMATCH","detail":"`+strings.Repeat("é", 400)+
			`","source":{"parameter":"countryCode"},"meta":{"category":"INVALID_REQUEST_BODY"}}]}`)
		return true
	}
	_, err := f.client().Album(context.Background(), "396698918")
	e := kindError(t, err, ErrStatus)
	if e.StatusCode != 400 || e.Code != "VALUE_REGEX_MISMATCH" || e.Parameter != "countryCode" ||
		e.Category != "INVALID_REQUEST_BODY" || e.Auth || e.Temporary() {
		t.Errorf("error = %+v", e)
	}
	if len(e.Detail) > maxErrorDetail+len("…") || !utf8.ValidString(e.Detail) || !utf8.ValidString(e.Message) {
		t.Errorf("detail not clipped to valid UTF-8: %d bytes", len(e.Detail))
	}
	for _, kind := range []error{ErrNotFound, ErrAuthInvalid, ErrRateLimited, ErrMalformed, ErrNetwork} {
		if errors.Is(err, kind) {
			t.Errorf("a 400 also matches %v", kind)
		}
	}
}

// A redirect is not followed: it would carry the bearer token (or, from
// the token endpoint, the client secret) to whatever host it names.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var leaked atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(true)
	}))
	defer elsewhere.Close()
	f := newFakeTidal(t)
	f.hook = func(w http.ResponseWriter, r *http.Request) bool {
		http.Redirect(w, r, elsewhere.URL+"/v2/albums", http.StatusTemporaryRedirect)
		return true
	}
	_, err := f.client().Album(context.Background(), "396698918")
	if e := kindError(t, err, ErrStatus); e.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("error = %+v", e)
	}
	if leaked.Load() {
		t.Error("the redirect was followed")
	}
}
