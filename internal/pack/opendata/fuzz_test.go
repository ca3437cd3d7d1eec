package opendata

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// fixedTransport answers every request with one status, content type and
// body, without a network.
type fixedTransport struct {
	status      int
	contentType string
	body        []byte
}

func (f fixedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: f.status, Header: http.Header{"Content-Type": {f.contentType}},
		Body: io.NopCloser(bytes.NewReader(f.body)), Request: r}, nil
}

// FuzzToolError serves arbitrary answers to the client and maps what it
// returns: every failure the client reports becomes a tool error with a
// code other than INTERNAL and a message.
func FuzzToolError(f *testing.F) {
	for _, raw := range tooltest.Fixtures(f, "ckan", "*/*.json*") {
		f.Add(200, "application/json", raw)
		f.Add(404, "application/json", raw)
	}
	f.Add(200, "text/html", []byte("<html>"))
	f.Add(429, "text/plain", []byte("slow down"))
	f.Add(200, "application/json", []byte(`{"success":false,"error":{"__type":"Validation Error","a":[1,{"b":null}]}}`))
	f.Add(503, "", []byte(""))

	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		if status < 100 || status > 999 {
			return // net/http never delivers such a status
		}
		c, err := ckan.NewClient("http://portal.test", ckan.WithHTTPClient(&http.Client{
			Transport: fixedTransport{status, contentType, body}}))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.PackageSearch(context.Background(), &ckan.PackageSearchOptions{Rows: 1})
		if err == nil {
			return
		}
		var te *tool.Error
		if !errors.As(toolError(err), &te) || te.Code == tool.CodeInternal || te.Message == "" {
			t.Fatalf("toolError(%v) = %+v", err, te)
		}
	})
}
