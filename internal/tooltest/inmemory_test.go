package tooltest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The in-memory client reaches the server's handler from inside a synctest
// bubble: the request is recorded as a socket would have delivered it, the
// reply comes back whole, and a handler that waits for its caller stops
// when the caller's deadline passes on the fake clock.
func TestInMemoryClient(t *testing.T) {
	s := NewServer(t, Sequence(
		Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: []byte("slow down")},
		Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
	))
	synctest.Test(t, func(t *testing.T) {
		c := s.InMemoryClient()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/a?y=%D7%90", strings.NewReader(`{"k":"v"}`))
		req.Header.Set("X-Test", "yes")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || string(body) != "slow down" {
			t.Fatalf("reply: %d %v %q", resp.StatusCode, resp.Header, body)
		}
		last := s.Last(t)
		if last.Method != http.MethodPost || last.URL.Path != "/a" || last.Query.Get("y") != "א" ||
			string(last.Body) != `{"k":"v"}` || last.Header.Get("X-Test") != "yes" {
			t.Errorf("recorded %+v", last)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/hang", nil)
		if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a hung handler: %v, want the caller's deadline", err)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Errorf("gave up after %v, want the minute of the deadline (fake clock)", waited)
		}
	})
}
