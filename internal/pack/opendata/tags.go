package opendata

import (
	"context"
	"fmt"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// tagCountChunk is how many tags one counting call filters on, keeping
// the query string well under common URL length limits.
const tagCountChunk = 40

// ListTagsInput is the input of listTags.
type ListTagsInput struct {
	Query     string `json:"query,omitempty" jsonschema:"Only tags containing this text, e.g. \"health\" or \"בריאות\"" schema:"maxLength=100"`
	AllFields bool   `json:"allFields,omitempty" jsonschema:"Return each tag with its usage count (the number of public datasets that have it). Without query, the most used tags come first."`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many tags to return" schema:"minimum=1,maximum=1000,default=100"`
	Offset    int    `json:"offset,omitempty" jsonschema:"How many tags to skip, for paging" schema:"minimum=0,maximum=100000,default=0"`
	Portal    string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// TagCount is a tag and the number of datasets that use it.
type TagCount struct {
	Name      string `json:"name"`
	Count     int    `json:"count" jsonschema:"How many public datasets have this tag"`
	PortalURL string `json:"portalUrl,omitempty" jsonschema:"The portal's page of the datasets with this tag"`
}

// ListTagsOutput is the output of listTags.
type ListTagsOutput struct {
	Names        []string   `json:"names" jsonschema:"Tag names; pass them to searchDatasets tags"`
	Tags         []TagCount `json:"tags,omitempty" jsonschema:"The tags with usage counts (with allFields)"`
	Count        int        `json:"count" jsonschema:"How many tags this page holds"`
	Total        *int       `json:"total,omitempty" jsonschema:"How many tags match in all, when known"`
	Limit        int        `json:"limit"`
	Offset       int        `json:"offset"`
	APIURL       string     `json:"apiUrl" jsonschema:"The CKAN API call that listed the tags"`
	CountsAPIURL string     `json:"countsApiUrl,omitempty" jsonschema:"The package_search call that counted them (the first, when several were needed)"`
	query        string
}

// Summary counts the tags.
func (o ListTagsOutput) Summary() string {
	s := fmt.Sprintf("%d tags", o.Count)
	if o.query != "" {
		s += fmt.Sprintf(" matching %q", o.query)
	}
	if o.Total != nil {
		s += fmt.Sprintf(" (of %d)", *o.Total)
	}
	if len(o.Tags) > 0 {
		s += ": " + listTitles(o.Tags, func(t TagCount) string { return fmt.Sprintf("%s (%d)", t.Name, t.Count) }, 8)
	} else if len(o.Names) > 0 {
		s += ": " + listTitles(o.Names, func(n string) string { return n }, 8)
	}
	more := o.Total != nil && o.Offset+o.Count < *o.Total || o.Total == nil && o.Count >= o.Limit && o.Limit > 0
	return s + morePhrase("offset", o.Offset+o.Count, more)
}

func listTagsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:        "listTags",
		Title:       "List dataset tags (CKAN)",
		Description: "List the tags (keywords) of an open-data portal (default: data.gov.il).",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listTags))
}

func (p *pack) listTags(ctx context.Context, in ListTagsInput) (ListTagsOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListTagsOutput{}, err
	}
	out := ListTagsOutput{Names: []string{}, Limit: in.Limit, Offset: in.Offset, query: in.Query}

	if in.AllFields && in.Query == "" {
		// The most used tags: one facet query, already ordered by count.
		res, resp, err := c.PackageSearch(ctx, &ckan.PackageSearchOptions{
			FacetFields: []string{"tags"}, FacetLimit: in.Offset + in.Limit})
		if err != nil {
			return ListTagsOutput{}, toolError(err)
		}
		items := res.FacetCounts("tags")
		items = items[min(in.Offset, len(items)):]
		items = items[:min(in.Limit, len(items))]
		out.Tags = make([]TagCount, 0, len(items))
		for _, it := range items {
			out.Names = append(out.Names, it.Name)
			out.Tags = append(out.Tags, TagCount{Name: it.Name, Count: it.Count, PortalURL: pagesOf(c).Tag(it.Name)})
		}
		out.Count, out.APIURL = len(items), resp.URL
		return out, nil
	}

	// Tags are written without niqqud; tag_list matches substrings.
	names, resp, err := c.TagList(ctx, &ckan.TagListOptions{Query: ckan.StripNiqqud(in.Query)})
	if err != nil {
		return ListTagsOutput{}, toolError(err)
	}
	total := len(names)
	names = names[min(in.Offset, len(names)):]
	names = names[:min(in.Limit, len(names))]
	out.Names = append(out.Names, names...)
	out.Count, out.Total, out.APIURL = len(names), &total, resp.URL
	if !in.AllFields {
		return out, nil
	}

	// Count this page's tags: facet over the datasets that have any of them.
	counts := make(map[string]int, len(names))
	for start := 0; start < len(names); start += tagCountChunk {
		chunk := names[start:min(start+tagCountChunk, len(names))]
		var fq ckan.FilterQuery
		fq.Any("tags", chunk...)
		res, resp, err := c.PackageSearch(ctx, &ckan.PackageSearchOptions{
			FilterQuery: fq.String(), FacetFields: []string{"tags"}, FacetLimit: -1})
		if err != nil {
			return ListTagsOutput{}, toolError(err)
		}
		if out.CountsAPIURL == "" {
			out.CountsAPIURL = resp.URL
		}
		for _, it := range res.FacetCounts("tags") {
			counts[it.Name] = it.Count
		}
	}
	out.Tags = make([]TagCount, 0, len(names))
	for _, n := range names {
		out.Tags = append(out.Tags, TagCount{Name: n, Count: counts[n], PortalURL: pagesOf(c).Tag(n)})
	}
	return out, nil
}
