package ckan

import (
	"net/http"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// fixture returns a recorded response from testdata, with JSONC comments
// stripped so that it parses as JSON.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.JSONFixture(t, "ckan", name)
}

// searchFixture serves demo.ckan.org's recorded package_search answer.
func searchFixture(t *testing.T) http.HandlerFunc {
	return tooltest.Respond(http.StatusOK, "application/json;charset=utf-8", fixture(t, "demo.ckan.org/package_search_rows3_facets.json"))
}
