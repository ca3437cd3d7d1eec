package lrclib

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

func addFixtures(f *testing.F) {
	tooltest.Seed(f, "lrclib", "*.json", "\xef\xbb\xbf[]", `{"id":1,"duration":1e308,"plainLyrics":null}`)
}

// FuzzDecodeRecord: any body yields a record with an id or a *ParseError.
func FuzzDecodeRecord(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeRecord, func(t *testing.T, r *Record) {
		if r.ID <= 0 {
			t.Fatalf("record without id: %+v", r)
		}
		if l := r.Length(); l < 0 || l > MaxDuration {
			t.Fatalf("Length = %v", l)
		}
		MatchDuration([]Record{*r}, r.Length())
	})
}

// FuzzDecodeRecords: any body yields a non-nil slice or a *ParseError.
func FuzzDecodeRecords(f *testing.F) {
	addFixtures(f)
	tooltest.FuzzDecode[*ParseError](f, DecodeRecords, func(t *testing.T, rs []Record) {
		if rs == nil {
			t.Fatal("nil slice without an error")
		}
		if got := MatchDuration(rs, 233*time.Second); len(got) > len(rs) {
			t.Fatal("MatchDuration grew the slice")
		}
	})
}

// FuzzCheckResponse: any error body and Retry-After yield a bounded *Error.
func FuzzCheckResponse(f *testing.F) {
	addFixtures(f)
	f.Add([]byte("Failed to deserialize query string: missing field `track_name`"))
	f.Fuzz(func(t *testing.T, body []byte) {
		line, _, _ := bytes.Cut(body, []byte("\n"))
		h := http.Header{"Retry-After": {string(line)}}
		for _, status := range []int{400, 404, 429, 500} {
			err := CheckResponse(&http.Response{StatusCode: status, Header: h}, body, time.Unix(0, 0))
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != status {
				t.Fatalf("err = %v", err)
			}
			if len(e.Message) > maxDetail+len("…") || len(e.Name) > 100+len("…") || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
				t.Fatalf("unbounded error: %+v", e)
			}
			if errors.Is(err, ErrNotFound) != (status == 404) {
				t.Fatalf("ErrNotFound for %d", status)
			}
			_ = e.Error()
		}
	})
}
