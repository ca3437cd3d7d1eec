package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/tooltest"
)

const (
	tidalTestClientID     = "cli-client-id"
	tidalTestClientSecret = "cli-client-secret"
	tidalArtwork640       = "https://resources.tidal.com/images/8edd18d0/7b24/40b1/ba19/758ef4f54bae/640x640.jpg"
)

// tidalTracksServer is a local TIDAL stand-in on 127.0.0.1: the token
// endpoint, and GET /v2/tracks?filter[id]=… answered with a CONSTRUCTED
// body built from the tidal package's recorded album (tooltest's TIDAL
// catalog): the track resources asked for (their albums relationship given
// data pointing at the recorded album), the album, its artists and cover.
type tidalTracksServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []string // filter[id] values of each /v2/tracks request, joined by ","
	includes []string
}

func newTidalTracksServer(t *testing.T) *tidalTracksServer {
	t.Helper()
	cat := tooltest.LoadTIDALCatalog(t)
	included := append([]any{cat.SearchAlbum()}, cat.Artists...)
	included = append(included, cat.Artworks...)
	tracks := map[string]map[string]any{}
	for _, r := range cat.Tracks {
		tracks[r["id"].(string)] = cat.SearchTrack(r)
	}
	f := &tidalTracksServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.api+json")
		switch {
		case r.URL.Path == "/v1/oauth2/token":
			if id, secret, ok := r.BasicAuth(); !ok || id != tidalTestClientID || secret != tidalTestClientSecret {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":"invalid_client"}`)
				return
			}
			fmt.Fprint(w, `{"access_token":"cli-token","token_type":"Bearer","expires_in":3600}`)
		case r.URL.Path == "/v2/tracks" && r.Header.Get("Authorization") == "Bearer cli-token":
			q := r.URL.Query()
			f.mu.Lock()
			f.requests = append(f.requests, strings.Join(q["filter[id]"], ","))
			f.includes = append(f.includes, q.Get("include"))
			f.mu.Unlock()
			data := []any{}
			for _, id := range q["filter[id]"] {
				if tr, ok := tracks[id]; ok {
					data = append(data, tr)
				}
			}
			for _, isrc := range q["filter[isrc]"] { // suggestPlaylist's lookups
				for _, tr := range tracks {
					if tr["attributes"].(map[string]any)["isrc"] == isrc {
						data = append(data, tr)
					}
				}
			}
			body := map[string]any{"data": data, "links": map[string]any{"self": "/tracks"}}
			if len(data) > 0 {
				body["included"] = included
			}
			_ = json.NewEncoder(w).Encode(body)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[{"status":"404","code":"NOT_FOUND"}]}`)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *tidalTracksServer) env(dbPath string) map[string]string {
	return map[string]string{"TOOLPORT_DATABASE_URL": dbPath, "TIDAL_CLIENT_ID": tidalTestClientID,
		"TIDAL_CLIENT_SECRET": tidalTestClientSecret, "TIDAL_API_BASE_URL": f.srv.URL, "TIDAL_AUTH_URL": f.srv.URL}
}

// libraryTracks lists the library as `library list --json` prints it.
func libraryTracks(t *testing.T, env map[string]string) map[string]store.Track {
	t.Helper()
	code, out, errOut := runMusic(t, env, "", "library", "list", "--json")
	if code != cli.ExitOK {
		t.Fatalf("library list: %d %s", code, errOut)
	}
	got := map[string]store.Track{}
	for line := range strings.Lines(out) {
		var tr store.Track
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("library list --json line %q: %v", line, err)
		}
		tr.AddedAt = tr.AddedAt.UTC()
		got[tr.TidalID] = tr
	}
	return got
}

func TestLibraryAddFetchesTracksFromTidal(t *testing.T) {
	f := newTidalTracksServer(t)
	env := f.env(filepath.Join(t.TempDir(), "toolport.db"))

	code, out, errOut := runMusic(t, env, "", "library", "add", "396698919", "396698920", "1", "396698919")
	if code != cli.ExitFailure {
		t.Errorf("exit %d, want %d: one id is unknown to TIDAL", code, cli.ExitFailure)
	}
	for _, want := range []string{"396698919: 4M — Air Max '97 (PRODUCTION DOSSIER)", "2 tracks added, 0 already in the library"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout %q lacks %q", out, want)
		}
	}
	if !strings.Contains(errOut, "TIDAL has no track 1 (not added)") {
		t.Errorf("stderr %q does not name the unknown id", errOut)
	}
	f.mu.Lock()
	reqs, incs := slices.Clone(f.requests), slices.Clone(f.includes)
	f.mu.Unlock()
	if !slices.Equal(reqs, []string{"396698919,396698920,1"}) || incs[0] != "albums,albums.coverArt,artists" {
		t.Errorf("TIDAL requests %v with include %v; want one batch of the 3 distinct ids with albums, cover art and artists", reqs, incs)
	}

	lib := libraryTracks(t, env)
	want := store.Track{TidalID: "396698919", ISRC: "AUNMG2400011", Title: "4M", Artist: "Air Max '97",
		Album: "PRODUCTION DOSSIER", AlbumID: "396698918", Duration: 180, ArtworkURL: tidalArtwork640}
	got := lib["396698919"]
	got.AddedAt = want.AddedAt
	if got != want {
		t.Errorf("stored track\n got %+v\nwant %+v", got, want)
	}
	if len(lib) != 2 || lib["396698920"].ISRC != "AUNMG2400012" {
		t.Errorf("library holds %+v, want tracks 396698919 and 396698920 with their ISRCs", lib)
	}

	// Flags that are set win over TIDAL's metadata; the rest still comes
	// from TIDAL.
	code, out, errOut = runMusic(t, env, "", "library", "add", "--title", "Four in the Morning", "396698921")
	if code != cli.ExitOK || !strings.Contains(out, "1 tracks added") {
		t.Fatalf("add with --title: %d %q %q", code, out, errOut)
	}
	if tr := libraryTracks(t, env)["396698921"]; tr.Title != "Four in the Morning" || tr.Artist != "Air Max '97" || tr.ISRC == "" || tr.ArtworkURL == "" {
		t.Errorf("add with --title stored %+v", tr)
	}
}

func TestLibraryAddWithoutTidal(t *testing.T) {
	f := newTidalTracksServer(t)
	// Each case gets a database of its own.
	noTidal := func(db string) map[string]string { return map[string]string{"TOOLPORT_DATABASE_URL": db} }
	badCreds := func(db string) map[string]string {
		env := f.env(db)
		env["TIDAL_CLIENT_SECRET"] = "wrong"
		return env
	}
	badURL := func(db string) map[string]string {
		return map[string]string{"TOOLPORT_DATABASE_URL": db, "TIDAL_CLIENT_ID": "x", "TIDAL_CLIENT_SECRET": "y",
			"TIDAL_API_BASE_URL": "ftp://example"}
	}

	tests := []struct {
		name      string
		env       func(db string) map[string]string
		args      []string
		code      int
		stdout    string
		stderr    []string
		libraryN  int
		notStderr string
	}{
		{name: "ids alone: says which flags are needed", env: noTidal, args: []string{"396698919"}, code: cli.ExitUsage,
			stderr: []string{"TIDAL is not configured", "TIDAL_CLIENT_ID", "--title and --artist are needed"}},
		{name: "a title is not enough", env: noTidal, args: []string{"--title", "4M", "396698919"}, code: cli.ExitUsage,
			stderr: []string{"--title and --artist are needed"}},
		{name: "the flag path still works", env: noTidal, args: []string{"--title", "4M", "--artist", "Air Max '97", "396698919", "396698920"},
			code: cli.ExitOK, stdout: "2 tracks added", libraryN: 2},
		{name: "refused credentials: nothing added", env: badCreds, args: []string{"396698919"}, code: cli.ExitFailure,
			stderr: []string{"TIDAL:"}, notStderr: "wrong"},
		{name: "a malformed TIDAL URL is named", env: badURL, args: []string{"396698919"}, code: cli.ExitUsage,
			stderr: []string{"TIDAL_API_BASE_URL", "--title and --artist are needed"}},
		{name: "not a track id", env: noTidal, args: []string{"--title", "x", "--artist", "y", "12/34"}, code: cli.ExitUsage,
			stderr: []string{"is not a Tidal track id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env(filepath.Join(t.TempDir(), "toolport.db"))
			code, out, errOut := runMusic(t, env, "", append([]string{"library", "add"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.stdout) {
				t.Errorf("exit %d, stdout %q; want %d and %q (stderr %q)", code, out, tt.code, tt.stdout, errOut)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if tt.notStderr != "" && strings.Contains(errOut, tt.notStderr) {
				t.Errorf("stderr %q leaks %q", errOut, tt.notStderr)
			}
			if n := len(libraryTracks(t, env)); n != tt.libraryN {
				t.Errorf("library holds %d tracks, want %d", n, tt.libraryN)
			}
		})
	}
}
