package ingest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/ingest"
	"github.com/toolport/toolport/internal/store/storetest"
)

// No Musixmatch answer was ever recorded: every body here is CONSTRUCTED
// from the documented envelope {"message":{"header":{"status_code",
// "execute_time"},"body":{"lyrics":{"lyrics_id","lyrics_body",…}}}}.
const mxKey = "mx-secret-key-123"

func mxBody(status int, lyrics string) string {
	if status != 200 {
		return `{"message":{"header":{"status_code":` + itoa(status) + `,"execute_time":0.01},"body":[]}}`
	}
	return `{"message":{"header":{"status_code":200,"execute_time":0.02},"body":{"lyrics":{"lyrics_id":1,"lyrics_body":` +
		quote(lyrics) + `,"lyrics_language":"en","explicit":0,"lyrics_copyright":"Lyrics powered by www.musixmatch.com."}}}}`
}

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string { return strconv.Quote(s) }

func TestMusixmatchLyrics(t *testing.T) {
	tests := []struct {
		name    string
		status  int // HTTP status
		body    string
		want    string
		partial bool
		err     error // errors.Is
		errText string
	}{
		{name: "free tier: notice cut", status: 200,
			body: mxBody(200, "First line\nSecond line\n...\n\n******* This Lyrics is NOT for Commercial use *******\n(1409623456789)"),
			want: "First line\nSecond line\n...", partial: true},
		{name: "full lyrics", status: 200, body: mxBody(200, "All of it"), want: "All of it"},
		{name: "not found inside a 200", status: 200, body: mxBody(404, ""), err: ingest.ErrMusixmatchNotFound},
		{name: "key refused inside a 200", status: 200, body: mxBody(401, ""), errText: "API key was refused"},
		{name: "HTTP 503", status: 503, body: "busy", errText: "status 503"},
		{name: "malformed", status: 200, body: `{"message":`, errText: "malformed response"},
		{name: "empty lyrics", status: 200, body: mxBody(200, "  "), err: ingest.ErrMusixmatchNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/ws/1.1/track.lyrics.get" || r.URL.Query().Get("track_isrc") != "JPY772509123" || r.URL.Query().Get("apikey") != mxKey {
					t.Errorf("request: %s", r.URL)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			mx, err := ingest.NewMusixmatch(nil, srv.URL, mxKey)
			if err != nil {
				t.Fatal(err)
			}
			got, partial, err := mx.LyricsByISRC(context.Background(), "JPY772509123")
			switch {
			case tt.err != nil && !errors.Is(err, tt.err), tt.errText != "" && (err == nil || !strings.Contains(err.Error(), tt.errText)):
				t.Fatalf("err = %v, want %v / %q", err, tt.err, tt.errText)
			case tt.err == nil && tt.errText == "" && (err != nil || got != tt.want || partial != tt.partial):
				t.Fatalf("got %q partial %v, %v; want %q partial %v", got, partial, err, tt.want, tt.partial)
			}
			if err != nil && strings.Contains(err.Error(), mxKey) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestMusixmatchErrorsNeverShowTheKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // connection refused
	mx, _ := ingest.NewMusixmatch(nil, url, mxKey)
	_, _, err := mx.LyricsByISRC(context.Background(), "JPY772509123")
	if err == nil || strings.Contains(err.Error(), mxKey) || strings.Contains(err.Error(), "apikey") {
		t.Fatalf("err = %v", err)
	}
}

// TestBuildAsksMusixmatchForLRCLIBMisses: with a key, LRCLIB's misses go to
// Musixmatch (a transient 503 retried), and configuring the key makes the
// misses of earlier builds stale.
func TestBuildAsksMusixmatchForLRCLIBMisses(t *testing.T) {
	h := newHarness(t, storetest.SQLite, nil)
	h.build(t, ingest.Request{ISRCs: []string{"JPY772509123"}})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		w.Write([]byte(mxBody(200, "Quiet words\n******* This Lyrics is NOT for Commercial use *******")))
	}))
	defer srv.Close()
	mx, err := ingest.NewMusixmatch(nil, srv.URL, mxKey)
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Musixmatch = mx
	h.cfg.Retry = ingest.Retry{BaseDelay: time.Millisecond, DisableJitter: true}
	rep := h.build(t, ingest.Request{ISRCs: []string{"JPY772509123"}})
	if rep.Indexed != 1 || rep.NoLyrics != 0 || rep.Calls[ingest.UpstreamMusixmatch] != 2 || calls.Load() != 2 {
		t.Fatalf("report: %+v (musixmatch requests %d)", rep, calls.Load())
	}
	recs, _ := h.db.GetIndex(context.Background(), []string{"JPY772509123"})
	if len(recs) != 1 || recs[0].Lyrics != "Quiet words" {
		t.Errorf("record: %+v", recs)
	}
}
