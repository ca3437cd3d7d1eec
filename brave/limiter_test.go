package brave

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

type stubLimiter struct {
	waits  atomic.Int32
	refuse time.Duration
}

type refusal time.Duration

func (r refusal) Error() string             { return "limited" }
func (r refusal) RetryAfter() time.Duration { return time.Duration(r) }

func (l *stubLimiter) Wait(context.Context) error {
	l.waits.Add(1)
	if l.refuse > 0 {
		return refusal(l.refuse)
	}
	return nil
}

func TestLimiter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lim      *stubLimiter
		requests int
	}{
		{"a granted request goes out", &stubLimiter{}, 1},
		{"a refused one does not, and is RATE_LIMITED", &stubLimiter{refuse: 2 * time.Second}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tooltest.NewServer(t, tooltest.Reply{Status: 200, Header: jsonHeader, Body: fixture(t, "web_search_what_is_semantic_kernel.json")})
			c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL), WithLimiter(tc.lim))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Search(context.Background(), &SearchParams{Query: "semantic kernel"})
			if tc.lim.waits.Load() != 1 {
				t.Fatalf("limiter asked %d times", tc.lim.waits.Load())
			}
			if got := len(srv.Requests()); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			if tc.requests == 1 && err != nil {
				t.Fatal(err)
			}
			if tc.requests == 0 {
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeRateLimited || e.StatusCode != http.StatusTooManyRequests || e.RetryAfter != 2*time.Second || e.QuotaExceeded() {
					t.Fatalf("refused: %#v", err)
				}
			}
		})
	}
}
