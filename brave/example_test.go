package brave_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/brave"
)

// A web search, then the typed error of a rate-limited one. A local server
// stands in for Brave, replaying recorded answers (testdata/SOURCES.md).
func Example() {
	found, err := os.ReadFile("testdata/web_search_what_is_semantic_kernel.json")
	if err != nil {
		panic(err)
	}
	limited, err := os.ReadFile("testdata/error_429_rate_limited.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("q") != "What is Semantic Kernel" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write(limited)
			return
		}
		w.Write(found)
	}))
	defer srv.Close()

	c, err := brave.NewClient(srv.Client(), "your-api-key", brave.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	r, err := c.Search(ctx, &brave.SearchParams{Query: "What is Semantic Kernel", Count: 2})
	if err != nil {
		panic(err)
	}
	for _, w := range r.Results()[:2] {
		fmt.Println(w.Title)
	}

	_, err = c.Search(ctx, &brave.SearchParams{Query: "one search too many"})
	var e *brave.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Code, "retry after", e.RetryAfter)
	}
	// Output:
	// Introduction to Semantic Kernel | Microsoft Learn
	// Understanding the kernel in Semantic Kernel | Microsoft Learn
	// 429 RATE_LIMITED retry after 1s
}
