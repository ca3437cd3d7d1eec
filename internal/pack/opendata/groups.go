package opendata

import (
	"cmp"
	"context"
	"fmt"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// ListGroupsInput is the input of listGroups.
type ListGroupsInput struct {
	AllFields bool   `json:"allFields,omitempty" jsonschema:"Return each group's display_name, description and package_count, not just its name"`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many groups to return" schema:"minimum=1,maximum=1000,default=100"`
	Offset    int    `json:"offset,omitempty" jsonschema:"How many groups to skip, for paging" schema:"minimum=0,maximum=100000,default=0"`
	Query     string `json:"query,omitempty" jsonschema:"Only groups whose name or title contains this" schema:"maxLength=200"`
	Sort      string `json:"sort,omitempty" jsonschema:"Sort order (the portal's default is title asc)" schema:"enum=name asc|name desc|title asc|title desc|package_count asc|package_count desc"`
	Portal    string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// GroupInfo is a group or organization with its details.
type GroupInfo struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	DisplayName  string `json:"display_name"`
	Description  string `json:"description"`
	PackageCount int    `json:"package_count" jsonschema:"How many public datasets it holds"`
	ImageURL     string `json:"image_url,omitempty"`
	PortalURL    string `json:"portalUrl,omitempty" jsonschema:"Its page on the portal"`
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
	return groupSummary("groups", o.Names, o.Groups, o.Limit, o.Offset)
}

func listGroupsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:        "listGroups",
		Title:       "List dataset groups (CKAN)",
		Description: "List the groups (themes, categories) of an open-data portal (default: data.gov.il).",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listGroups))
}

func (p *pack) listGroups(ctx context.Context, in ListGroupsInput) (ListGroupsOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListGroupsOutput{}, err
	}
	page, err := listGroupish(ctx, c, "group_list", in.AllFields, &ckan.ListOptions{Query: in.Query, Sort: in.Sort, Limit: in.Limit, Offset: in.Offset})
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
func listGroupish(ctx context.Context, c *ckan.Client, action string, allFields bool, opts *ckan.ListOptions) (groupPage, error) {
	out := groupPage{Names: []string{}, Limit: opts.Limit, Offset: opts.Offset,
		APIURL: c.ActionURL(action, opts.Params(allFields))}
	fetchOpts := func(limit, offset int) *ckan.ListOptions {
		return &ckan.ListOptions{Query: opts.Query, Sort: opts.Sort, Limit: limit, Offset: offset}
	}
	if !allFields {
		names, calls, err := ckan.Pages(ctx, opts.Limit, opts.Offset, ckan.NamesPageSize, func(s string) string { return s },
			func(ctx context.Context, limit, offset int) ([]string, error) {
				var names []string
				_, err := c.Get(ctx, action, fetchOpts(limit, offset).Params(false), &names)
				return names, err
			})
		if err != nil {
			return groupPage{}, toolError(err)
		}
		out.Names, out.Count, out.Pages = names, len(names), calls
		return out, nil
	}
	groups, calls, err := ckan.Pages(ctx, opts.Limit, opts.Offset, ckan.AllFieldsPageSize, func(g ckan.Group) string { return cmp.Or(g.ID, g.Name) },
		func(ctx context.Context, limit, offset int) ([]ckan.Group, error) {
			var gs []ckan.Group
			_, err := c.Get(ctx, action, fetchOpts(limit, offset).Params(true), &gs)
			return gs, err
		})
	if err != nil {
		return groupPage{}, toolError(err)
	}
	out.Groups = make([]GroupInfo, 0, len(groups))
	pages := pagesOf(c)
	page := pages.Group
	if action == "organization_list" {
		page = pages.Organization
	}
	for _, g := range groups {
		out.Names = append(out.Names, g.Name)
		out.Groups = append(out.Groups, GroupInfo{
			ID: g.ID, Name: g.Name, DisplayName: cmp.Or(g.DisplayName, g.Title, g.Name),
			Description: g.Description, PackageCount: g.PackageCount, ImageURL: cmp.Or(g.ImageDisplay, g.ImageURL),
			PortalURL: page(g.Name),
		})
	}
	out.Count, out.Pages = len(groups), calls
	return out, nil
}

// groupSummary names the first groups or organizations of a page, with
// their dataset counts when known, and says how to page on.
func groupSummary(what string, names []string, groups []GroupInfo, limit, offset int) string {
	s := fmt.Sprintf("%d %s", len(names), what)
	if offset > 0 {
		s += fmt.Sprintf(" from offset %d", offset)
	}
	if len(groups) > 0 {
		s += ": " + listTitles(groups, func(g GroupInfo) string {
			return fmt.Sprintf("%s (%s)", g.DisplayName, plural(g.PackageCount, "dataset"))
		}, 5)
	} else if len(names) > 0 {
		s += ": " + listTitles(names, func(n string) string { return n }, 5)
	}
	return s + morePhrase("offset", offset+len(names), len(names) >= limit && limit > 0)
}
