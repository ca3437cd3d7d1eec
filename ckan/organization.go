package ckan

import (
	"context"
	"net/url"
)

// OrganizationDetail is organization_show's result: the organization, its
// dataset count and, when asked for, its datasets.
type OrganizationDetail struct {
	Group
	Packages []Package `json:"packages"`
	Extras   []Extra   `json:"extras"`
}

// OrganizationShow returns one organization by name or id
// (organization_show). includeDatasets asks for its datasets too; CKAN
// returns at most ckan.search.rows_max (1000 by default) of them.
func (c *Client) OrganizationShow(ctx context.Context, id string, includeDatasets bool) (*OrganizationDetail, *Response, error) {
	v := url.Values{"id": {id}}
	if includeDatasets {
		v.Set("include_datasets", "true")
	} else {
		// CKAN's default differs across versions; say it.
		v.Set("include_datasets", "false")
	}
	var o OrganizationDetail
	resp, err := c.Get(ctx, "organization_show", v, &o)
	if err != nil {
		return nil, nil, err
	}
	return &o, resp, nil
}
