package ckan_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/toolport/toolport/ckan"
)

// A dataset search on a portal, then the typed error of a missing resource
// (which CKAN reports in the body). A local server stands in for the
// portals, replaying answers recorded from demo.ckan.org and data.gov.il
// (testdata/README.md).
func Example() {
	search, err := os.ReadFile("testdata/demo.ckan.org/package_search_rows3_facets.json")
	if err != nil {
		panic(err)
	}
	missing, err := os.ReadFile("testdata/data.gov.il/error_not_found_resource_he.json")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		switch r.URL.Path {
		case "/api/3/action/package_search":
			w.Write(search)
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write(missing)
		}
	}))
	defer srv.Close()

	c, err := ckan.NewClient(srv.URL, ckan.WithHTTPClient(srv.Client()))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	r, _, err := c.PackageSearch(ctx, &ckan.PackageSearchOptions{Rows: 3})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Count, "datasets; the first:", r.Results[0].Name)

	_, _, err = c.ResourceShow(ctx, "no-such-resource")
	var e *ckan.Error
	if errors.As(err, &e) {
		fmt.Println(e.Action, e.StatusCode, e.Type)
	}
	// Output:
	// 3 datasets; the first: 100-validated-species-of-plants
	// resource_show 404 Not Found Error
}
