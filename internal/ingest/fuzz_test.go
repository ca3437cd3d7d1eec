package ingest

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/lrclib"
)

// FuzzLyricsFromSearch: whatever LRCLIB's search answers, the record picked
// has lyrics (or is instrumental) and is within ±2 s of the duration asked,
// and the plain text made from its synced lyrics has no timing tags left.
func FuzzLyricsFromSearch(f *testing.F) {
	for _, b := range tooltest.Fixtures(f, "lrclib", "search_*.json") {
		f.Add(b, "I Want to Live", 233.0)
	}
	f.Add([]byte(`[{"id":1,"trackName":"x","duration":10,"syncedLyrics":"[00:01.00][00:02.00] a\n[xx] b"}]`), "x", 10.0)
	f.Fuzz(func(t *testing.T, body []byte, title string, secs float64) {
		rs, err := lrclib.DecodeRecords(body)
		if err != nil {
			return
		}
		d := time.Duration(0)
		if secs > 0 && secs < 86400 {
			d = time.Duration(secs * float64(time.Second))
		}
		r := pickRecord(rs, title, d)
		if r == nil {
			return
		}
		if !r.HasLyrics() && !r.Instrumental {
			t.Fatalf("picked a record without lyrics: %+v", r)
		}
		if d > 0 {
			if diff := r.Length() - d; diff > lrclib.DurationTolerance || diff < -lrclib.DurationTolerance {
				t.Fatalf("picked %s for %s", r.Length(), d)
			}
		}
		plain := stripLRC(r.SyncedLyrics)
		if utf8.ValidString(r.SyncedLyrics) && !utf8.ValidString(plain) {
			t.Fatalf("stripLRC broke UTF-8: %q", plain)
		}
		for _, line := range strings.Split(plain, "\n") {
			if lrcTag.MatchString(line) {
				t.Fatalf("a timing tag is left: %q", line)
			}
		}
		if c := textclip.Prefix(plain, 7); len(c) > 7 || (utf8.ValidString(plain) && !utf8.ValidString(c)) {
			t.Fatalf("clipUTF8: %q", c)
		}
	})
}

// FuzzParseMusixmatchLyrics: any body gives lyrics without the free tier's
// notice, ErrMusixmatchNotFound, or a typed error; never a panic.
func FuzzParseMusixmatchLyrics(f *testing.F) {
	f.Add([]byte(`{"message":{"header":{"status_code":200},"body":{"lyrics":{"lyrics_body":"a\n******* This Lyrics is NOT for Commercial use *******\n(1)"}}}}`))
	f.Add([]byte(`{"message":{"header":{"status_code":404},"body":[]}}`))
	f.Add([]byte(`{"message":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		text, _, err := ParseMusixmatchLyrics(body)
		if err != nil {
			return
		}
		if text == "" || strings.Contains(text, musixmatchNotice) || len(text) > maxLyricsBytes {
			t.Fatalf("lyrics %q", text)
		}
	})
}
