package webuitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/webui"
)

// playlistAPI is the fake chat API with one stored conversation whose
// assistant message holds a suggestPlaylist call and its result, and the
// playlist endpoints the card uses: GET /api/playlists/{id}, its export,
// and POST /api/tools/savePlaylistToTidal.
type playlistAPI struct {
	*fakeAPI
	mu       sync.Mutex
	saved    bool
	requests []string // "METHOD path?query auth=yes|no"
}

const playlistID = "7a1e64f2-5b0e-4c53-9d0e-8f7d6d2b9c11"

func (p *playlistAPI) record(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	auth := "no"
	if r.Header.Get("Authorization") == "Bearer "+p.token {
		auth = "yes"
	}
	p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI()+" auth="+auth)
}

func (p *playlistAPI) server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", p.info)
	mux.HandleFunc("GET /api/conversations", p.list)
	mux.HandleFunc("GET /api/conversations/{id}", p.get)
	mux.HandleFunc("POST /api/conversations", p.create)
	mux.HandleFunc("GET /api/tools", p.listTools)
	mux.HandleFunc("GET /api/playlists/{id}", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		p.mu.Lock()
		defer p.mu.Unlock()
		tid := ""
		if p.saved {
			tid = "550e8400-e29b-41d4-a716-446655440000"
		}
		writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "title": "Rainy <b>day</b>", "tidalPlaylistId": tid, "items": []any{}})
	})
	mux.HandleFunc("GET /api/playlists/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		w.Header().Set("Content-Type", "audio/x-mpegurl; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="Rainy-day.m3u8"`)
		fmt.Fprint(w, "#EXTM3U\n#EXTINF:245,The Escapes - x\nhttps://tidal.com/browse/track/1\n")
	})
	mux.HandleFunc("POST /api/tools/savePlaylistToTidal", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		var in struct {
			PlaylistID string `json:"playlistId"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.PlaylistID != playlistID {
			writeJSON(w, 200, map[string]any{"success": false, "error": "no such playlist", "error_code": "NOT_FOUND"})
			return
		}
		p.mu.Lock()
		p.saved = true
		p.mu.Unlock()
		writeJSON(w, 200, map[string]any{"success": true, "summary": "Saved 'Rainy day' to Tidal: 3 tracks in 1 batch", "durationMs": 420,
			"playlistId": playlistID, "tidalPlaylistId": "550e8400-e29b-41d4-a716-446655440000",
			"url": "https://tidal.com/browse/playlist/550e8400-e29b-41d4-a716-446655440000", "added": 3, "batches": 1})
	})
	mux.Handle("/", webui.Handler())
	srv := httptest.NewServer(webui.SecurityHeaders(p.auth(mux)))
	t.Cleanup(srv.Close)
	return srv
}

// newPlaylistAPI stores the conversation: the user's request, then the
// agent's text, its suggestPlaylist call and the result.
func newPlaylistAPI(token, artBase string) (*playlistAPI, string) {
	f := newFakeAPI(token, true, artBase)
	p := &playlistAPI{fakeAPI: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.newConv("A rainy day playlist")
	track := func(n int, title, artist, reasoning string, dur int, inLib bool) map[string]any {
		t := f.track(n, title, artist, "Album "+fmt.Sprint(n), dur, 0, inLib, true)
		delete(t, "score")
		t["tidalId"] = fmt.Sprint(1000 + n)
		t["reasoning"] = reasoning
		return t
	}
	result := map[string]any{
		"success": true, "summary": "Playlist 'Rainy day': 3 tracks, 14 min (1 not found on TIDAL)", "durationMs": 731,
		"playlistId": playlistID, "title": "Rainy <b>day</b>", "trackCount": 3, "totalDuration": 850,
		"exportUrl": "/api/playlists/" + playlistID + "/export",
		"tracks": []any{
			track(1, XSSTitle, "The Escapes", "Soft <script>alert(1)</script> rain on the window", 245, true),
			track(2, "Someone Like You", "Adele", "Quiet longing for a grey afternoon", 285, false),
			track(3, "Everybody Hurts", "R.E.M.", "", 320, false),
		},
		"unresolved": []any{map[string]any{"isrc": "USRC17607839", "title": "Lost Song", "artist": "Nobody", "reason": "TIDAL has no track with this ISRC"}},
	}
	c.Messages = append(c.Messages,
		&fakeMessage{ID: "msg-u", Role: "user", CreatedAt: c.CreatedAt, Content: []map[string]any{{"type": "text", "text": "Make me a rainy day playlist"}}},
		&fakeMessage{ID: "msg-a", Role: "assistant", CreatedAt: c.CreatedAt, Content: []map[string]any{
			{"type": "text", "text": "Here is a playlist for a rainy day."},
			{"type": "tool_use", "id": "toolu_pl", "name": "suggestPlaylist", "input": map[string]any{"title": "Rainy day", "tracks": []any{}}},
			{"type": "tool_result", "tool_use_id": "toolu_pl", "content": result},
		}})
	return p, c.ID
}

// TestPlaylistCard renders a stored suggestPlaylist result as the playlist
// card (artwork grid, tracks with expandable reasoning, total time), exports
// it, saves it to Tidal, and checks that the card survives a reload and then
// shows the playlist as saved.
func TestPlaylistCard(t *testing.T) {
	art := ArtServer(t)
	api, convID := newPlaylistAPI("s3cret-token", art.URL)
	srv := api.server(t)
	b := NewBrowser(t, fakeOptions())
	defer b.CheckNoProblems(t)
	to := 30 * time.Second
	card := `document.querySelector('.tool-card[data-tool="suggestPlaylist"]')`
	open := chromedp.Evaluate[chromedp.Void](card + `.querySelector('.tool-head').click()`)
	b.Do(t, to, chromedp.Navigate(srv.URL+"/?c="+convID+"#token=s3cret-token"), waitReady(),
		WaitFor(card+` != null`), open, WaitFor(card+`.querySelector('.playlist-card') != null`),
		// The stylesheet the card links is applied.
		WaitFor(`getComputedStyle(`+card+`.querySelector('.pl-grid')).display === 'grid'`))

	type view struct {
		Label, Title, Total, Sub string
		Covers, Rows             int
		Titles                   []string
		WhyOpen                  bool
		Why, Unresolved          string
		Scripts                  int
		SaveText                 string
	}
	read := func() view {
		return Eval[view](t, b, to, `(() => { const c = `+card+`; const pl = c.querySelector('.playlist-card');
			return {Label: c.querySelector('.tool-name').textContent, Title: pl.querySelector('.pl-title').textContent,
				Total: pl.querySelector('.pl-total').textContent, Sub: pl.querySelector('.pl-sub').textContent,
				Covers: pl.querySelectorAll('.pl-grid > *').length, Rows: pl.querySelectorAll('.pl-track').length,
				Titles: [...pl.querySelectorAll('.pl-track .track-title')].map(e => e.textContent),
				WhyOpen: pl.querySelector('.pl-why').open, Why: pl.querySelector('.pl-why p').textContent,
				Unresolved: pl.querySelector('.pl-unresolved summary').textContent,
				Scripts: document.querySelectorAll('.playlist-card script, .playlist-card b').length,
				SaveText: pl.querySelector('.pl-save').textContent}; })()`)
	}
	v := read()
	if v.Label != "Playlist" || v.Title != "Rainy <b>day</b>" || v.Total != "14 min" || v.Sub != "3 tracks · 14 min" || v.Covers != 1 || v.Rows != 3 ||
		!slices.Equal(v.Titles, []string{XSSTitle, "Someone Like You", "Everybody Hurts"}) || v.WhyOpen ||
		v.Why != "Soft <script>alert(1)</script> rain on the window" || v.Unresolved != "1 not found on Tidal" || v.Scripts != 0 || v.SaveText != "Save to Tidal" {
		t.Errorf("card: %+v", v)
	}
	// Only tracks with reasoning have the disclosure; it opens on click.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](card+`.querySelector('.pl-why summary').click()`), WaitFor(card+`.querySelector('.pl-why').open`))
	if n := Eval[int](t, b, to, card+`.querySelectorAll('.pl-why').length`); n != 2 {
		t.Errorf("%d reasoning disclosures, want 2", n)
	}

	// Export: the download is fetched with the token.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](card+`.querySelector('.pl-export[data-format="m3u8"]').click()`),
		WaitFor(card+`.querySelector('.pl-status').textContent === 'Exported as M3U8.'`))
	// Save to Tidal.
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](card+`.querySelector('.pl-save').click()`),
		WaitFor(card+`.querySelector('.pl-save').textContent === 'Saved to Tidal'`))
	status := Eval[struct{ Text, Href string }](t, b, to, `(() => { const s = `+card+`.querySelector('.pl-status');
		return {Text: s.textContent, Href: s.querySelector('a')?.href || ''}; })()`)
	if !strings.HasPrefix(status.Text, "Saved to your Tidal account.") || status.Href != "https://tidal.com/browse/playlist/550e8400-e29b-41d4-a716-446655440000" {
		t.Errorf("after saving: %+v", status)
	}

	// Reload: the card is drawn again from the stored result, and shows
	// the playlist as saved.
	b.Do(t, to, chromedp.Reload(), waitReady(), WaitFor(card+` != null`), open,
		WaitFor(card+`.querySelector('.pl-save')?.textContent === 'Saved to Tidal'`))
	if again := read(); again.Title != v.Title || again.Rows != 3 || again.Total != "14 min" {
		t.Errorf("after reload: %+v", again)
	}

	api.mu.Lock()
	reqs := slices.Clone(api.requests)
	api.mu.Unlock()
	want := []string{
		"GET /api/playlists/" + playlistID + "/export?format=m3u8 auth=yes",
		"POST /api/tools/savePlaylistToTidal auth=yes",
	}
	for _, w := range want {
		if !slices.Contains(reqs, w) {
			t.Errorf("the server did not see %q; it saw %q", w, reqs)
		}
	}
}
