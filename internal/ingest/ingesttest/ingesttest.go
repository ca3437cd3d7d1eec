// Package ingesttest runs local LRCLIB and ReccoBeats servers for tests and
// benchmarks of the index build: they replay the recordings kept in
// lrclib/testdata and reccobeats/testdata, answer CONSTRUCTED bodies (built
// from those recordings' shapes) for tracks no recording covers, count
// every request, can add a latency to each answer, and can be told to fail
// the next requests to a path (429 with Retry-After, 5xx, a stall, a
// malformed body).
package ingesttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/tooltest"
)

// Fault is how one request is answered instead of normally.
type Fault struct {
	Status     int    // HTTP status (200 with Body: a malformed success)
	RetryAfter string // Retry-After header value
	Body       string
	Stall      time.Duration // wait this long before answering (a timeout)
	// A Stall with neither Status nor Body answers normally after the
	// stall: a slow request, not a wrong one.
}

// Upstreams are the local LRCLIB and ReccoBeats servers.
type Upstreams struct {
	LRCLIB     *httptest.Server
	ReccoBeats *httptest.Server

	latency time.Duration

	mu       sync.Mutex
	calls    map[string]int     // "lrclib /api/get" → requests
	faults   map[string][]Fault // same keys → next answers
	inFlight map[string]int     // "lrclib" or "reccobeats" → requests being answered
	maxIn    map[string]int     // the most at once
	batches  [][]string         // the ids of each /v1/audio-features request, in arrival order
	omit     map[string]bool    // ISRCs whose features rows are left out

	getFound, notFound, searchFound []byte
	sonata                          []byte
	sonataRows                      []map[string]any
	featureRow                      map[string]any
}

// The recorded track the LRCLIB recordings are about.
const (
	RecordedTitle  = "I Want to Live"
	RecordedArtist = "Borislav Slavov"
	RecordedAlbum  = "Baldur's Gate 3 (Original Game Soundtrack)"
)

// New starts both servers; each answer waits latency first.
func New(t testing.TB, latency time.Duration) *Upstreams {
	t.Helper()
	u := &Upstreams{latency: latency, calls: map[string]int{}, faults: map[string][]Fault{}, inFlight: map[string]int{}, maxIn: map[string]int{},
		omit:        map[string]bool{},
		getFound:    tooltest.Fixture(t, "lrclib", "get_found_i_want_to_live.json"),
		notFound:    tooltest.Fixture(t, "lrclib", "error_404_track_not_found.json"),
		searchFound: tooltest.Fixture(t, "lrclib", "search_track_artist_i_want_to_live.json"),
		sonata:      tooltest.Fixture(t, "reccobeats", "track_search_sonata_gig_simulator.json"),
	}
	var page struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(u.sonata, &page); err != nil {
		t.Fatal(err)
	}
	u.sonataRows = page.Content
	var af struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(tooltest.Fixture(t, "reccobeats", "observed_audio_features_one_row_spotibye_doc.json"), &af); err != nil || len(af.Content) != 1 {
		t.Fatalf("audio features fixture: %v", err)
	}
	u.featureRow = af.Content[0]
	u.LRCLIB = httptest.NewServer(u.counted("lrclib", u.lrclib))
	u.ReccoBeats = httptest.NewServer(u.counted("reccobeats", u.reccobeats))
	t.Cleanup(u.LRCLIB.Close)
	t.Cleanup(u.ReccoBeats.Close)
	return u
}

// Env is the environment that points toolport at these servers.
func (u *Upstreams) Env() map[string]string {
	return map[string]string{"LRCLIB_BASE_URL": u.LRCLIB.URL, "RECCOBEATS_BASE_URL": u.ReccoBeats.URL}
}

// Keys of [Upstreams.Calls] and [Upstreams.Fail].
const (
	LRCLIBGet          = "lrclib /api/get"
	LRCLIBSearch       = "lrclib /api/search"
	ReccoSearch        = "reccobeats /v1/track/search"
	ReccoAudioFeatures = "reccobeats /v1/audio-features"
)

// Calls returns the requests received at key.
func (u *Upstreams) Calls(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[key]
}

// Total returns every request received.
func (u *Upstreams) Total() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, v := range u.calls {
		n += v
	}
	return n
}

// MaxInFlight returns the most requests upstream ("lrclib" or
// "reccobeats") was answering at once.
func (u *Upstreams) MaxInFlight(upstream string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.maxIn[upstream]
}

func (u *Upstreams) counted(name string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.inFlight[name]++
		u.maxIn[name] = max(u.maxIn[name], u.inFlight[name])
		u.mu.Unlock()
		defer func() {
			u.mu.Lock()
			u.inFlight[name]--
			u.mu.Unlock()
		}()
		h(w, r)
	})
}

// Fail makes the next requests to key get faults, in order.
func (u *Upstreams) Fail(key string, faults ...Fault) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.faults[key] = append(u.faults[key], faults...)
}

// FeatureBatches returns the ids of each /v1/audio-features request, in
// the order they arrived (a request answered with a fault included).
func (u *Upstreams) FeatureBatches() [][]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([][]string, len(u.batches))
	for i, b := range u.batches {
		out[i] = append([]string(nil), b...)
	}
	return out
}

// OmitFeatures makes /v1/audio-features leave out the rows of the tracks
// with these ISRCs, as ReccoBeats does for tracks it has no features for.
func (u *Upstreams) OmitFeatures(isrcs ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, i := range isrcs {
		u.omit[i] = true
	}
}

// ISRCOfID returns the ISRC of the track with Spotify id id that the
// server knows (a recorded sonata row or a synthetic track), or "".
func (u *Upstreams) ISRCOfID(id string) string {
	_, isrc, _ := u.known(id)
	return isrc
}

// begin counts a request and returns the fault to answer with, if any.
func (u *Upstreams) begin(w http.ResponseWriter, r *http.Request, key string) bool {
	u.mu.Lock()
	u.calls[key]++
	if key == ReccoAudioFeatures {
		u.batches = append(u.batches, strings.Split(r.URL.Query().Get("ids"), ","))
	}
	var f *Fault
	if q := u.faults[key]; len(q) > 0 {
		f, u.faults[key] = &q[0], q[1:]
	}
	u.mu.Unlock()
	if u.latency > 0 {
		select {
		case <-time.After(u.latency):
		case <-r.Context().Done():
			return true
		}
	}
	if f == nil {
		return false
	}
	if f.Stall > 0 {
		select {
		case <-time.After(f.Stall):
		case <-r.Context().Done():
			return true
		}
		if f.Status == 0 && f.Body == "" {
			return false
		}
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(max(f.Status, 200))
	w.Write([]byte(f.Body))
	return true
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// lrclib answers /api/get and /api/search. The recorded track gets its
// recorded answers; a synthetic track whose number is even gets a
// CONSTRUCTED record (the recorded one, renamed); anything else gets the
// recorded 404, and an empty search (CONSTRUCTED: "[]").
func (u *Upstreams) lrclib(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch r.URL.Path {
	case "/api/get":
		if u.begin(w, r, LRCLIBGet) {
			return
		}
		title, artist := q.Get("track_name"), q.Get("artist_name")
		if title == RecordedTitle && artist == RecordedArtist {
			writeJSON(w, 200, u.getFound)
			return
		}
		if n, ok := Synthetic(title); ok && n%2 == 0 {
			var rec map[string]any
			_ = json.Unmarshal(u.getFound, &rec)
			rec["id"], rec["name"], rec["trackName"], rec["artistName"] = 9_000_000+n, title, title, artist
			rec["albumName"], rec["duration"] = q.Get("album_name"), float64(SyntheticDuration)
			b, _ := json.Marshal(rec)
			writeJSON(w, 200, b)
			return
		}
		writeJSON(w, 404, u.notFound)
	case "/api/search":
		if u.begin(w, r, LRCLIBSearch) {
			return
		}
		if q.Get("artist_name") == RecordedArtist {
			writeJSON(w, 200, u.searchFound)
			return
		}
		writeJSON(w, 200, []byte("[]"))
	default:
		writeJSON(w, 404, u.notFound)
	}
}

// reccobeats answers /v1/track/search and /v1/audio-features. A search for
// a "Sonata" gets the recorded page; a synthetic track gets a CONSTRUCTED
// page of one row (the recorded first row, renamed, with the track's ISRC
// and a Spotify id made from its number); anything else an empty page
// (CONSTRUCTED). Audio features are CONSTRUCTED for every id asked that the
// server knows, from the recorded row's values with the id, href and ISRC
// replaced, in reverse order (joining must go by href); an answer of several
// rows is CONSTRUCTED as a whole (the recordings hold one-row answers).
func (u *Upstreams) reccobeats(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch r.URL.Path {
	case "/v1/track/search":
		if u.begin(w, r, ReccoSearch) {
			return
		}
		text := q.Get("searchText")
		if strings.Contains(text, "Sonata") {
			writeJSON(w, 200, u.sonata)
			return
		}
		if n, ok := Synthetic(text); ok {
			row := map[string]any{}
			for k, v := range u.sonataRows[0] {
				row[k] = v
			}
			row["id"], row["trackTitle"], row["isrc"] = syntheticUUID(n), text, SyntheticISRC(n)
			row["href"], row["durationMs"] = "https://open.spotify.com/track/"+syntheticSpotify(n), SyntheticDuration*1000
			b, _ := json.Marshal(map[string]any{"content": []any{row}, "page": 0, "size": 25, "totalElements": 1, "totalPages": 1})
			writeJSON(w, 200, b)
			return
		}
		writeJSON(w, 200, []byte(`{"content":[],"page":0,"size":25,"totalElements":0,"totalPages":0}`))
	case "/v1/audio-features":
		if u.begin(w, r, ReccoAudioFeatures) {
			return
		}
		var rows []map[string]any
		for id := range strings.SplitSeq(q.Get("ids"), ",") {
			uuid, isrc, ok := u.known(id)
			u.mu.Lock()
			omitted := u.omit[isrc]
			u.mu.Unlock()
			if !ok || omitted {
				continue // unknown ids are left out, as ReccoBeats does
			}
			row := map[string]any{}
			for k, v := range u.featureRow {
				row[k] = v
			}
			row["id"], row["href"], row["isrc"] = uuid, "https://open.spotify.com/track/"+id, isrc
			rows = append([]map[string]any{row}, rows...)
		}
		if rows == nil {
			rows = []map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"content": rows})
		writeJSON(w, 200, b)
	default:
		writeJSON(w, 404, []byte(`{"message":"not found"}`))
	}
}

// known finds a Spotify id among the recorded sonata rows and the synthetic
// tracks.
func (u *Upstreams) known(spotifyID string) (uuid, isrc string, ok bool) {
	for _, row := range u.sonataRows {
		if href, _ := row["href"].(string); strings.HasSuffix(href, "/"+spotifyID) {
			return row["id"].(string), row["isrc"].(string), true
		}
	}
	var n int
	if _, err := fmt.Sscanf(spotifyID, "%022d", &n); err == nil && syntheticSpotify(n) == spotifyID {
		return syntheticUUID(n), SyntheticISRC(n), true
	}
	return "", "", false
}

// Synthetic tracks: CONSTRUCTED library entries for runs larger than the
// recordings ("Synthetic Track 7" by "Synthetic Artist", ISRC QZTST2600007).
const SyntheticDuration = 200

// SyntheticTrack returns synthetic track n.
func SyntheticTrack(n int) store.Track {
	return store.Track{ISRC: SyntheticISRC(n), Title: fmt.Sprintf("Synthetic Track %d", n), Artist: "Synthetic Artist",
		Album: "Synthetic Album", Duration: SyntheticDuration}
}

// SyntheticISRC is the ISRC of synthetic track n.
func SyntheticISRC(n int) string { return fmt.Sprintf("QZTST26%05d", n) }

// Synthetic reports whether title is a synthetic track's, and its number.
func Synthetic(title string) (int, bool) {
	var n int
	if _, err := fmt.Sscanf(title, "Synthetic Track %d", &n); err != nil || fmt.Sprintf("Synthetic Track %d", n) != title {
		return 0, false
	}
	return n, true
}

func syntheticSpotify(n int) string { return fmt.Sprintf("%022d", n) }
func syntheticUUID(n int) string    { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// Library is the recorded-answer library: the track the LRCLIB recordings
// are about (lyrics), its instrumental version (LRCLIB's search holds an
// instrumental record at its duration), and two tracks of the recorded
// ReccoBeats search page (audio features, no lyrics). The ISRCs of the
// first two are CONSTRUCTED (the recordings have none); the others are the
// recording's.
func Library() []store.Track {
	return []store.Track{
		{ISRC: "QZES72300001", Title: RecordedTitle, Artist: RecordedArtist, Album: RecordedAlbum, Duration: 233},
		{ISRC: "QZES72300002", Title: "I Want to Live - Instrumental Version", Artist: RecordedArtist, Album: "Baldur's Gate 3", Duration: 282},
		{ISRC: "JPY772509123", Title: "Quiet Sonata", Artist: "Moon Mood Jazz", Duration: 157.028},
		{ISRC: "JPZ242453714", Title: "Smooth Sonata", Artist: "Rush Hour Orchestra", Duration: 74.533},
	}
}
