package ckan

import (
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// PackageSearchOptions are the arguments of package_search.
type PackageSearchOptions struct {
	Query       string   // Solr q; "" matches every dataset
	FilterQuery string   // Solr fq, e.g. built with FilterQuery
	Rows        int      // datasets to return; 0 returns only the count and facets
	Start       int      // offset of the first dataset
	Sort        string   // e.g. "metadata_modified desc"; "" is the portal's default
	FacetFields []string // fields to count values of, e.g. "tags", "res_format"
	FacetLimit  int      // values per facet; 0 is the portal's default (50), -1 unlimited
}

// Params encodes the options as package_search query parameters.
func (o *PackageSearchOptions) Params() url.Values {
	v := url.Values{}
	if o.Query != "" {
		v.Set("q", o.Query)
	}
	if o.FilterQuery != "" {
		v.Set("fq", o.FilterQuery)
	}
	v.Set("rows", strconv.Itoa(o.Rows))
	if o.Start > 0 {
		v.Set("start", strconv.Itoa(o.Start))
	}
	if o.Sort != "" {
		v.Set("sort", o.Sort)
	}
	if len(o.FacetFields) > 0 {
		raw, _ := json.Marshal(o.FacetFields) // a []string always encodes
		v.Set("facet.field", string(raw))
		if o.FacetLimit != 0 {
			v.Set("facet.limit", strconv.Itoa(o.FacetLimit))
		}
	}
	return v
}

// PackageSearchResult is package_search's result.
type PackageSearchResult struct {
	Count   int       `json:"count"`
	Sort    string    `json:"sort"`
	Results []Package `json:"results"`
	// SearchFacets holds the facet counts by field.
	SearchFacets map[string]SearchFacet `json:"search_facets"`
	// Facets is the older {field: {value: count}} form, which some portals
	// send alone.
	Facets map[string]map[string]int `json:"facets"`
}

// SearchFacet is the counts of one facet field.
type SearchFacet struct {
	Title string      `json:"title"`
	Items []FacetItem `json:"items"`
}

// FacetItem is one value of a facet and the number of datasets that have it.
type FacetItem struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Count       int    `json:"count"`
}

// FacetCounts returns the counts of field, most frequent first, from
// search_facets or else the older facets form.
func (r *PackageSearchResult) FacetCounts(field string) []FacetItem {
	var items []FacetItem
	if f, ok := r.SearchFacets[field]; ok {
		items = slices.Clone(f.Items)
	} else {
		for name, n := range r.Facets[field] {
			items = append(items, FacetItem{Name: name, DisplayName: name, Count: n})
		}
	}
	slices.SortFunc(items, func(a, b FacetItem) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return items
}

// PackageSearch searches datasets (package_search).
func (c *Client) PackageSearch(ctx context.Context, opts *PackageSearchOptions) (*PackageSearchResult, *Response, error) {
	var res PackageSearchResult
	resp, err := c.Get(ctx, "package_search", opts.Params(), &res)
	if err != nil {
		return nil, nil, err
	}
	return &res, resp, nil
}
