package searxng_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/searxng"
)

// A search of a SearXNG instance, which has no default address: WithBaseURL
// names it. A local server stands in for the instance with a body
// CONSTRUCTED from SearXNG's documented JSON format (testdata/SOURCES.md).
func Example() {
	body, err := os.ReadFile("testdata/constructed_search_general.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	if _, err := searxng.NewClient(nil); err != nil {
		fmt.Println("without a base URL:", err == searxng.ErrNoBaseURL)
	}
	c, err := searxng.NewClient(srv.Client(), searxng.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	r, err := c.Search(context.Background(), &searxng.SearchParams{Query: "semantic kernel"})
	if err != nil {
		panic(err)
	}
	for _, res := range r.Results[:2] {
		fmt.Println(res.URL)
	}
	// Output:
	// without a base URL: true
	// https://learn.microsoft.com/en-us/semantic-kernel/overview/
	// https://github.com/microsoft/semantic-kernel
}
