package ckan

import (
	"context"
	"net/url"
)

// TagListOptions are the arguments of tag_list.
type TagListOptions struct {
	Query        string // only tags whose name contains this (case-insensitive on CKAN)
	VocabularyID string // a vocabulary's tags instead of the free tags
}

// TagList returns tag names (tag_list). CKAN's tag_list never returns usage
// counts, even with all_fields: count tags with a package_search facet on
// "tags" instead (see [Client.PackageSearch]).
func (c *Client) TagList(ctx context.Context, opts *TagListOptions) ([]string, *Response, error) {
	v := url.Values{}
	if opts != nil && opts.Query != "" {
		v.Set("query", opts.Query)
	}
	if opts != nil && opts.VocabularyID != "" {
		v.Set("vocabulary_id", opts.VocabularyID)
	}
	var names []string
	resp, err := c.Get(ctx, "tag_list", v, &names)
	return names, resp, err
}
