package ckan

import (
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// fixture returns a recorded response from testdata, with JSONC comments
// stripped so that it parses as JSON.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.JSONFixture(t, "ckan", name)
}
