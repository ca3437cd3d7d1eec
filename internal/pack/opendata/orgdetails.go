package opendata

import (
	"cmp"
	"context"
	"fmt"

	"github.com/toolport/toolport/tool"
)

// GetOrganizationDetailsInput is the input of getOrganizationDetails.
type GetOrganizationDetailsInput struct {
	ID              string `json:"id" jsonschema:"The organization's name (as listOrganizations returns it) or its UUID" schema:"minLength=1,maxLength=200"`
	IncludeDatasets bool   `json:"includeDatasets,omitempty" jsonschema:"Also list the organization's datasets (at most datasetsLimit of them)"`
	DatasetsLimit   int    `json:"datasetsLimit,omitempty" jsonschema:"How many of its datasets to return with includeDatasets (1-100); use searchDatasets with organization to page through all" schema:"minimum=1,maximum=100,default=20"`
	Portal          string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// GetOrganizationDetailsOutput is an organization with its dataset count.
type GetOrganizationDetailsOutput struct {
	ID                string            `json:"id"`
	Name              string            `json:"name"`
	Title             string            `json:"title"`
	DisplayName       string            `json:"display_name"`
	Description       string            `json:"description"`
	ImageURL          string            `json:"image_url,omitempty"`
	Created           string            `json:"created,omitempty"`
	State             string            `json:"state,omitempty"`
	PackageCount      int               `json:"package_count" jsonschema:"How many public datasets it publishes"`
	Extras            map[string]string `json:"extras,omitempty"`
	Datasets          []DatasetSummary  `json:"datasets,omitempty" jsonschema:"Its datasets (with includeDatasets), at most datasetsLimit"`
	DatasetsTruncated bool              `json:"datasetsTruncated,omitempty" jsonschema:"Whether it has more datasets than were returned; page with searchDatasets organization"`
	PortalURL         string            `json:"portalUrl" jsonschema:"The organization's page on the portal, for people"`
	APIURL            string            `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary names the organization and counts its datasets.
func (o GetOrganizationDetailsOutput) Summary() string {
	s := fmt.Sprintf("%q: %d datasets", o.DisplayName, o.PackageCount)
	if len(o.Datasets) > 0 {
		s += fmt.Sprintf(", first %d: ", len(o.Datasets)) + listTitles(o.Datasets, func(d DatasetSummary) string { return cmp.Or(d.Title, d.Name) }, 3)
	}
	if o.DatasetsTruncated {
		s += fmt.Sprintf("; all with searchDatasets organization=%q", o.Name)
	}
	return s
}

func getOrganizationDetailsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getOrganizationDetails",
		Title: "Get publisher details (CKAN)",
		Description: "Get one organization (ministry, agency, municipality) of an open-data portal (default: data.gov.il) by name or id: " +
			"title, description, number of datasets, and optionally its first datasets.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getOrganizationDetails))
}

func (p *pack) getOrganizationDetails(ctx context.Context, in GetOrganizationDetailsInput) (GetOrganizationDetailsOutput, error) {
	id, err := trimID("id", in.ID)
	if err != nil {
		return GetOrganizationDetailsOutput{}, err
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return GetOrganizationDetailsOutput{}, err
	}
	o, resp, err := c.OrganizationShow(ctx, id, in.IncludeDatasets)
	if err != nil {
		return GetOrganizationDetailsOutput{}, toolError(err)
	}
	out := GetOrganizationDetailsOutput{
		ID: o.ID, Name: o.Name, Title: o.Title, DisplayName: cmp.Or(o.DisplayName, o.Title, o.Name),
		Description: o.Description, ImageURL: cmp.Or(o.ImageDisplay, o.ImageURL), Created: o.Created, State: o.State,
		PackageCount: o.PackageCount, APIURL: resp.URL,
	}
	out.PortalURL = pagesOf(c).Organization(o.Name)
	if len(o.Extras) > 0 {
		out.Extras = make(map[string]string, len(o.Extras))
		for _, e := range o.Extras {
			out.Extras[e.Key] = string(e.Value)
		}
	}
	if in.IncludeDatasets {
		n := min(len(o.Packages), in.DatasetsLimit)
		out.Datasets = make([]DatasetSummary, 0, n)
		for i := range n {
			out.Datasets = append(out.Datasets, summarize(c, &o.Packages[i]))
		}
		out.DatasetsTruncated = len(o.Packages) > n || o.PackageCount > n
	}
	return out, nil
}
