package reccobeats

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

func addFixtures(f *testing.F) {
	tooltest.Seed(f, "reccobeats", "*.json", `{"content":null}`,
		"\xef\xbb\xbf{\"content\":[{\"href\":\"https://open.spotify.com/track/4Ub8UsjWuewQrPhuepfVpd\"}]}")
}

// FuzzDecodeAudioFeaturesList: any body yields rows or a *ParseError, and
// BySpotifyID never holds more entries than rows.
func FuzzDecodeAudioFeaturesList(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeAudioFeaturesList, func(t *testing.T, rows []AudioFeatures) {
		if rows == nil {
			t.Fatal("nil rows without an error")
		}
		if m := BySpotifyID(rows); len(m) > len(rows) {
			t.Fatal("BySpotifyID grew")
		}
	})
}

// FuzzDecodeAudioFeatures: any body yields features with an id or a
// *ParseError.
func FuzzDecodeAudioFeatures(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeAudioFeatures, func(t *testing.T, a *AudioFeatures) {
		if a.ID == "" {
			t.Fatal("features without an id")
		}
		if id := a.SpotifyID(); id != "" && !IsSpotifyID(id) {
			t.Fatalf("SpotifyID = %q", id)
		}
	})
}

// FuzzDecodeTracks: any body yields tracks or a *ParseError.
func FuzzDecodeTracks(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeTracks, func(t *testing.T, ts []Track) {
		for _, tr := range ts {
			if d := tr.Duration(); d < 0 || d > 24*time.Hour {
				t.Fatalf("Duration = %v", d)
			}
			tr.Countries()
			NormalizeISRC(tr.ISRC)
		}
	})
}

// FuzzDecodeTrackPage: any body yields a page with a non-nil Content or a
// *ParseError.
func FuzzDecodeTrackPage(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeTrackPage, func(t *testing.T, p *TrackPage) {
		if p.Content == nil {
			t.Fatal("nil content without an error")
		}
	})
}

// FuzzCheckResponse: any error body and Retry-After yield a bounded *Error.
func FuzzCheckResponse(f *testing.F) {
	addFixtures(f)
	f.Add([]byte(`{"message":7,"error":"Not Found"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		line, _, _ := bytes.Cut(body, []byte("\n"))
		h := http.Header{"Retry-After": {string(line)}}
		for _, status := range []int{400, 403, 404, 429, 503} {
			err := CheckResponse(&http.Response{StatusCode: status, Header: h}, body, time.Unix(0, 0))
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != status {
				t.Fatalf("err = %v", err)
			}
			if len(e.Message) > maxDetail+len("…") || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
				t.Fatalf("unbounded error: %+v", e)
			}
			_ = e.Error()
		}
	})
}
