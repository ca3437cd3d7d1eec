package ckan

import (
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/httpclient/httpclienttest"
)

// The default client keeps its connections across a burst of concurrent
// calls to the portal (http.DefaultClient kept 2 and reopened the rest).
func TestDefaultClientReusesConnections(t *testing.T) {
	srv := httpclienttest.NewServer(t, httpclienttest.Overlap(16, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"result":{"ckan_version":"2.10.4","site_title":"Test"}}`)
	})))
	c, err := NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	httpclienttest.CheckReuse(t, srv, 16, 10, 4, func() error {
		_, _, err := c.StatusShow(t.Context())
		return err
	})
}
