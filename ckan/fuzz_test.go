package ckan

import (
	"errors"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// FuzzDecodeResponse feeds arbitrary status codes, content types and bodies
// to the response decoder, for every result type the client decodes.
// Nothing may panic; a success needs a 2xx status and "success": true; every
// failure is a *Error or *DecodeError with a message.
func FuzzDecodeResponse(f *testing.F) {
	for _, raw := range tooltest.Fixtures(f, "ckan", "*/*.json*") {
		f.Add(200, "application/json", raw)
		f.Add(404, "application/json", raw)
	}
	f.Add(200, "text/html", []byte("<html>"))
	f.Add(200, "application/json", []byte(`{"success":true,"result":{"count":"x"}}`))
	f.Add(200, "application/json", []byte(`{"success":false,"error":{"__type":"Validation Error","a":[1,{"b":null}]}}`))
	f.Add(503, "", []byte(""))
	f.Add(200, "application/json", []byte("\xEF\xBB\xBF{\"success\":true,\"result\":[]}"))

	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		h := http.Header{"Content-Type": {contentType}}
		targets := []any{new(PackageSearchResult), new(Package), new([]Group), new([]string), new(DatastoreSearchResult)}
		for _, target := range targets {
			err := decodeResponse("a", status, h, body, target)
			if err == nil {
				if status < 200 || status > 299 {
					t.Fatalf("status %d decoded as success", status)
				}
				continue
			}
			var ce *Error
			var de *DecodeError
			if !errors.As(err, &ce) && !errors.As(err, &de) {
				t.Fatalf("error %T %v is neither *Error nor *DecodeError", err, err)
			}
			if err.Error() == "" {
				t.Fatalf("%T has an empty message", err)
			}
		}
		// The facet helper must hold whatever was decoded.
		var r PackageSearchResult
		if decodeResponse("a", 200, h, body, &r) == nil {
			_ = r.FacetCounts("tags")
		}
	})
}

// FuzzParseSort checks the sort grammar: no panic, and whatever it accepts
// is a fixed point (parsing its own output gives the same string).
func FuzzParseSort(f *testing.F) {
	for _, s := range []string{"name asc", "score desc, metadata_modified desc", "a", "שם desc", "a asc,,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (string, error){ParseSort, ParseDatastoreSort} {
			out, err := parse(s)
			if err != nil {
				continue
			}
			again, err := parse(out)
			if err != nil || again != out {
				t.Fatalf("parse(%q) = %q, but parse(%q) = %q, %v", s, out, out, again, err)
			}
		}
	})
}
