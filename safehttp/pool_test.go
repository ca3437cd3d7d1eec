package safehttp

import (
	"io"
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/httpclient/httpclienttest"
)

// Concurrent fetches of one host reuse their connections, through Get and
// through HTTPClient: the transport keeps as many idle as were busy.
func TestBurstReusesConnections(t *testing.T) {
	// Each burst's 16 calls are all in the handler at once before any is
	// answered, so the client needs 16 connections and must keep them.
	srv := httpclienttest.NewServer(t, httpclienttest.Overlap(16, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})))
	c := NewClient(Options{Policy: Policy{AllowPrivate: true}})
	httpclienttest.CheckReuse(t, srv, 16, 10, 4, func() error {
		_, err := c.Get(t.Context(), srv.URL, nil)
		return err
	})
	hc := c.HTTPClient()
	httpclienttest.CheckReuse(t, srv, 16, 5, 4, func() error {
		res, err := hc.Get(srv.URL)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return err
	})
}
