package httpclient_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/httpclient/httpclienttest"
)

// ok answers at once; httpclienttest.Overlap holds each burst's calls until
// all are in, so that they overlap.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, `{"ok":true}`)
})

func get(hc *http.Client, url string) func() error {
	return func() error {
		res, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
}

// A burst of concurrent calls through each of the package's clients opens
// about one connection per concurrent caller, and reuses them after.
func TestClientsKeepConnectionsForConcurrentCalls(t *testing.T) {
	for name, hc := range map[string]*http.Client{
		"NewClient":        httpclient.NewClient(10 * time.Second),
		"NoRedirects(nil)": httpclient.NoRedirects(nil),
		"NewTransport":     {Transport: httpclient.NewTransport()},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httpclienttest.NewServer(t, httpclienttest.Overlap(16, ok))
			httpclienttest.CheckReuse(t, srv, 16, 10, 4, get(hc, srv.URL))
			httpclienttest.CheckReuse(t, srv, 16, 5, 0, get(hc, srv.URL)) // the second burst opens none
		})
	}
}

func TestSizePoolChangesOnlyPoolSizes(t *testing.T) {
	tr := &http.Transport{TLSHandshakeTimeout: 3 * time.Second, MaxResponseHeaderBytes: 1234}
	httpclient.SizePool(tr)
	if tr.MaxIdleConnsPerHost != httpclient.MaxIdleConnsPerHost || tr.MaxIdleConns != httpclient.MaxIdleConns ||
		tr.IdleConnTimeout != httpclient.IdleConnTimeout {
		t.Errorf("pool = %d/%d/%v", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.IdleConnTimeout)
	}
	if tr.TLSHandshakeTimeout != 3*time.Second || tr.MaxResponseHeaderBytes != 1234 {
		t.Error("SizePool changed settings other than the pool's")
	}
}
