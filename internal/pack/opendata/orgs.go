package opendata

import (
	"context"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// ListOrganizationsInput is the input of listOrganizations.
type ListOrganizationsInput struct {
	AllFields bool   `json:"allFields,omitempty" jsonschema:"Return each publisher's display_name, description and package_count (default true); false returns names only" schema:"default=true"`
	Limit     int    `json:"limit,omitempty" jsonschema:"How many organizations to return" schema:"minimum=1,maximum=1000,default=100"`
	Offset    int    `json:"offset,omitempty" jsonschema:"How many organizations to skip, for paging" schema:"minimum=0,maximum=100000,default=0"`
	Query     string `json:"query,omitempty" jsonschema:"Only organizations whose name or title contains this" schema:"maxLength=200"`
	Sort      string `json:"sort,omitempty" jsonschema:"Sort order, e.g. package_count desc for the biggest publishers first (the portal's default is title asc)" schema:"enum=name asc|name desc|title asc|title desc|package_count asc|package_count desc"`
	Portal    string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// ListOrganizationsOutput is the output of listOrganizations.
type ListOrganizationsOutput struct {
	Names         []string    `json:"names" jsonschema:"Organization names; pass one to searchDatasets organization"`
	Organizations []GroupInfo `json:"organizations,omitempty" jsonschema:"The publishers with their details and dataset counts (with allFields)"`
	Count         int         `json:"count" jsonschema:"How many organizations this page holds"`
	Limit         int         `json:"limit"`
	Offset        int         `json:"offset"`
	Pages         int         `json:"pages" jsonschema:"How many API calls were needed (the portal serves at most 25 detailed organizations per call)"`
	APIURL        string      `json:"apiUrl" jsonschema:"The CKAN API call for this page (with limit and offset as asked)"`
}

// Summary counts the organizations.
func (o ListOrganizationsOutput) Summary() string {
	return groupSummary("organizations", o.Names, o.Organizations, o.Limit, o.Offset)
}

func listOrganizationsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "listOrganizations",
		Title: "List publishers (CKAN)",
		Description: "List the organizations (ministries, agencies, municipalities) that publish datasets on an open-data portal " +
			"(default: data.gov.il), with their number of datasets.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listOrganizations))
}

func (p *pack) listOrganizations(ctx context.Context, in ListOrganizationsInput) (ListOrganizationsOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListOrganizationsOutput{}, err
	}
	page, err := listGroupish(ctx, c, "organization_list", in.AllFields, &ckan.ListOptions{Query: in.Query, Sort: in.Sort, Limit: in.Limit, Offset: in.Offset})
	if err != nil {
		return ListOrganizationsOutput{}, err
	}
	return ListOrganizationsOutput{Names: page.Names, Organizations: page.Groups, Count: page.Count,
		Limit: page.Limit, Offset: page.Offset, Pages: page.Pages, APIURL: page.APIURL}, nil
}
