package google_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/google"
)

// A search of a Programmable Search Engine. A local server stands in for the
// Custom Search JSON API, replaying a recorded answer (testdata/SOURCES.md).
func Example() {
	found, err := os.ReadFile("testdata/cse_what_is_semantic_kernel.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(found)
	}))
	defer srv.Close()

	c, err := google.NewClient(srv.Client(), "your-api-key", google.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	r, err := c.Search(context.Background(), &google.SearchParams{Query: "What is Semantic Kernel", EngineID: "your-cx", Num: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("about", r.SearchInformation.TotalResults, "results")
	for _, it := range r.Items[:2] {
		fmt.Println(it.Link)
	}
	// Output:
	// about 16200000 results
	// https://learn.microsoft.com/en-us/semantic-kernel/overview/
	// https://github.com/microsoft/semantic-kernel
}
