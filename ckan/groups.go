package ckan

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/toolport/toolport/tool"
)

// ListOptions are the arguments of group_list and organization_list.
type ListOptions struct {
	Query  string // only groups whose name or title contains this
	Sort   string // "name", "title" or "package_count", optionally with " asc"/" desc"
	Limit  int    // 0 is the portal's default
	Offset int
}

func (o *ListOptions) params(allFields bool) url.Values {
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
	resp, err := c.Get(ctx, "group_list", opts.params(false), &names)
	return names, resp, err
}

// GroupListAll returns groups with their details and dataset counts
// (group_list with all_fields). Portals cap such a page, at 25 by default,
// whatever the limit: see [Pages].
func (c *Client) GroupListAll(ctx context.Context, opts *ListOptions) ([]Group, *Response, error) {
	var groups []Group
	resp, err := c.Get(ctx, "group_list", opts.params(true), &groups)
	return groups, resp, err
}

// OrganizationList returns organization names (organization_list).
func (c *Client) OrganizationList(ctx context.Context, opts *ListOptions) ([]string, *Response, error) {
	var names []string
	resp, err := c.Get(ctx, "organization_list", opts.params(false), &names)
	return names, resp, err
}

// OrganizationListAll returns organizations with details and dataset counts
// (organization_list with all_fields); capped like [Client.GroupListAll].
func (c *Client) OrganizationListAll(ctx context.Context, opts *ListOptions) ([]Organization, *Response, error) {
	var orgs []Organization
	resp, err := c.Get(ctx, "organization_list", opts.params(true), &orgs)
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

// ListGroupsInput is the input of listGroups.
type ListGroupsInput struct {
	AllFields bool   `json:"allFields,omitempty" jsonschema:"Return each group's display_name, description and package_count, not just its name"`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many groups to return (1-1000)" schema:"minimum=1,maximum=1000,default=100"`
	Offset    int    `json:"offset,omitempty" jsonschema:"How many groups to skip, for paging" schema:"minimum=0,maximum=100000,default=0"`
	Query     string `json:"query,omitempty" jsonschema:"Only groups whose name or title contains this" schema:"maxLength=200"`
	Sort      string `json:"sort,omitempty" jsonschema:"Sort order (the portal's default is title asc)" schema:"enum=name asc|name desc|title asc|title desc|package_count asc|package_count desc"`
	Portal    string `json:"portal,omitempty" jsonschema:"Another CKAN portal to query instead of the default (data.gov.il), as its root or API URL" schema:"maxLength=500"`
}

// GroupInfo is a group or organization with its details.
type GroupInfo struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	DisplayName  string `json:"display_name"`
	Description  string `json:"description"`
	PackageCount int    `json:"package_count" jsonschema:"How many public datasets it holds"`
	ImageURL     string `json:"image_url,omitempty"`
}

// ListGroupsOutput is the output of listGroups.
type ListGroupsOutput struct {
	Names  []string    `json:"names" jsonschema:"Group names, in the portal's order; pass one to searchDatasets groups"`
	Groups []GroupInfo `json:"groups,omitempty" jsonschema:"The groups with their details (with allFields)"`
	Count  int         `json:"count" jsonschema:"How many groups this page holds"`
	Limit  int         `json:"limit"`
	Offset int         `json:"offset"`
	Pages  int         `json:"pages" jsonschema:"How many API calls were needed (the portal serves at most 25 detailed groups per call)"`
	APIURL string      `json:"apiUrl" jsonschema:"The CKAN API call for this page (with limit and offset as asked)"`
}

// Summary counts the groups.
func (o ListGroupsOutput) Summary() string {
	return fmt.Sprintf("%d groups (offset %d)", o.Count, o.Offset)
}

func listGroupsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "listGroups",
		Title: "List dataset groups (CKAN)",
		Description: "List the groups (themes, categories) of an open-data portal (default: data.gov.il). " +
			"With allFields, each group has display_name, description and package_count (its number of datasets). " +
			"Page with limit/offset.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listGroups))
}

func (p *pack) listGroups(ctx context.Context, in ListGroupsInput) (ListGroupsOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListGroupsOutput{}, err
	}
	page, err := listGroupish(ctx, c, "group_list", in.AllFields, &ListOptions{Query: in.Query, Sort: in.Sort, Limit: in.Limit, Offset: in.Offset})
	if err != nil {
		return ListGroupsOutput{}, err
	}
	return ListGroupsOutput(page), nil
}

// groupPage is the shared shape of listGroups and listOrganizations.
type groupPage struct {
	Names  []string
	Groups []GroupInfo
	Count  int
	Limit  int
	Offset int
	Pages  int
	APIURL string
}

// listGroupish lists groups or organizations (action group_list or
// organization_list), paging as the portal requires.
func listGroupish(ctx context.Context, c *Client, action string, allFields bool, opts *ListOptions) (groupPage, error) {
	out := groupPage{Names: []string{}, Limit: opts.Limit, Offset: opts.Offset,
		APIURL: c.ActionURL(action, opts.params(allFields))}
	fetchOpts := func(limit, offset int) *ListOptions {
		return &ListOptions{Query: opts.Query, Sort: opts.Sort, Limit: limit, Offset: offset}
	}
	if !allFields {
		names, calls, err := Pages(ctx, opts.Limit, opts.Offset, NamesPageSize, func(s string) string { return s },
			func(ctx context.Context, limit, offset int) ([]string, error) {
				var names []string
				_, err := c.Get(ctx, action, fetchOpts(limit, offset).params(false), &names)
				return names, err
			})
		if err != nil {
			return groupPage{}, toolError(err)
		}
		out.Names, out.Count, out.Pages = names, len(names), calls
		return out, nil
	}
	groups, calls, err := Pages(ctx, opts.Limit, opts.Offset, AllFieldsPageSize, func(g Group) string { return cmp.Or(g.ID, g.Name) },
		func(ctx context.Context, limit, offset int) ([]Group, error) {
			var gs []Group
			_, err := c.Get(ctx, action, fetchOpts(limit, offset).params(true), &gs)
			return gs, err
		})
	if err != nil {
		return groupPage{}, toolError(err)
	}
	out.Groups = make([]GroupInfo, 0, len(groups))
	for _, g := range groups {
		out.Names = append(out.Names, g.Name)
		out.Groups = append(out.Groups, GroupInfo{
			ID: g.ID, Name: g.Name, DisplayName: cmp.Or(g.DisplayName, g.Title, g.Name),
			Description: g.Description, PackageCount: g.PackageCount, ImageURL: cmp.Or(g.ImageDisplay, g.ImageURL),
		})
	}
	out.Count, out.Pages = len(groups), calls
	return out, nil
}
