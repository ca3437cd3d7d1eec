package brave

import (
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/httpclient/httpclienttest"
)

// With no client of its own, a Client keeps its connections across a burst
// of concurrent searches.
func TestDefaultClientReusesConnections(t *testing.T) {
	srv := httpclienttest.NewServer(t, httpclienttest.Overlap(16, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"search","web":{"results":[]}}`)
	})))
	c, err := NewClient(nil, testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	httpclienttest.CheckReuse(t, srv, 16, 10, 4, func() error {
		_, err := c.Search(t.Context(), &SearchParams{Query: "go"})
		return err
	})
}
