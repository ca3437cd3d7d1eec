package ckan

import (
	"context"
	"net/url"
	"strconv"
)

// ListOptions are the arguments of group_list and organization_list.
type ListOptions struct {
	Query  string // only groups whose name or title contains this
	Sort   string // "name", "title" or "package_count", optionally with " asc"/" desc"
	Limit  int    // 0 is the portal's default
	Offset int
}

// Params encodes the options as group_list or organization_list query
// parameters; allFields asks for details and dataset counts.
func (o *ListOptions) Params(allFields bool) url.Values {
	v := url.Values{}
	if o == nil {
		o = &ListOptions{}
	}
	if o.Query != "" {
		v.Set("q", o.Query)
	}
	if o.Sort != "" {
		v.Set("sort", o.Sort)
	}
	if o.Limit > 0 {
		v.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		v.Set("offset", strconv.Itoa(o.Offset))
	}
	if allFields {
		v.Set("all_fields", "true")
	}
	return v
}

// GroupList returns group names (group_list).
func (c *Client) GroupList(ctx context.Context, opts *ListOptions) ([]string, *Response, error) {
	var names []string
	resp, err := c.Get(ctx, "group_list", opts.Params(false), &names)
	return names, resp, err
}

// GroupListAll returns groups with their details and dataset counts
// (group_list with all_fields). Portals cap such a page, at 25 by default,
// whatever the limit: see [Pages].
func (c *Client) GroupListAll(ctx context.Context, opts *ListOptions) ([]Group, *Response, error) {
	var groups []Group
	resp, err := c.Get(ctx, "group_list", opts.Params(true), &groups)
	return groups, resp, err
}

// OrganizationList returns organization names (organization_list).
func (c *Client) OrganizationList(ctx context.Context, opts *ListOptions) ([]string, *Response, error) {
	var names []string
	resp, err := c.Get(ctx, "organization_list", opts.Params(false), &names)
	return names, resp, err
}

// OrganizationListAll returns organizations with details and dataset counts
// (organization_list with all_fields); capped like [Client.GroupListAll].
func (c *Client) OrganizationListAll(ctx context.Context, opts *ListOptions) ([]Organization, *Response, error) {
	var orgs []Organization
	resp, err := c.Get(ctx, "organization_list", opts.Params(true), &orgs)
	return orgs, resp, err
}

// Page sizes used by [Pages]: what CKAN serves at most per call
// (ckan.group_and_organization_list_all_fields_max and
// ckan.group_and_organization_list_max).
const (
	AllFieldsPageSize = 25
	NamesPageSize     = 1000
)

// maxPages bounds the calls one listing makes.
const maxPages = 100

// Pages collects exactly limit items starting at offset from an action
// that serves at most pageSize per call, whatever limit it is asked for.
// It stops at an empty page, and when a page starts with an item already
// seen (a portal that ignores offset). It returns the items and the number
// of calls made.
func Pages[T any](ctx context.Context, limit, offset, pageSize int, key func(T) string,
	fetch func(ctx context.Context, limit, offset int) ([]T, error)) ([]T, int, error) {
	out := make([]T, 0, min(limit, 1024))
	seen := map[string]bool{}
	calls := 0
	for len(out) < limit && calls < maxPages {
		n := min(pageSize, limit-len(out))
		page, err := fetch(ctx, n, offset)
		calls++
		if err != nil {
			return nil, calls, err
		}
		if len(page) == 0 || seen[key(page[0])] {
			break
		}
		if len(page) > n { // a portal that ignores limit
			page = page[:n]
		}
		for _, item := range page {
			seen[key(item)] = true
		}
		out = append(out, page...)
		offset += len(page)
	}
	return out, calls, nil
}
