package ckan

import (
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// The recorded all_fields tag_list shows why counts come from a facet:
// its tags have no count.
func TestTagListAllFieldsHasNoCounts(t *testing.T) {
	var tags []map[string]any
	if err := json.Unmarshal(tooltest.CKANResult(t, "dati-ustat.mur.gov.it/tag_list_all_fields.jsonc"), &tags); err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		for _, k := range []string{"count", "package_count"} {
			if _, ok := tag[k]; ok {
				t.Errorf("tag %v has %s", tag, k)
			}
		}
	}
}
