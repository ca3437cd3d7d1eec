package ckan

import (
	"slices"
	"testing"
)

// Portals that send only the older {field: {value: count}} facets still
// give counts.
func TestFacetCountsOlderForm(t *testing.T) {
	r := &PackageSearchResult{Facets: map[string]map[string]int{"tags": {"b": 1, "a": 1, "c": 7}}}
	got := r.FacetCounts("tags")
	want := []FacetItem{{"c", "c", 7}, {"a", "a", 1}, {"b", "b", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("FacetCounts = %v, want %v", got, want)
	}
}
