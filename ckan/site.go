package ckan

import (
	"context"
	"net/url"
	"strconv"
)

// Status is status_show's result: what a portal says about itself.
type Status struct {
	CKANVersion     string   `json:"ckan_version"`
	SiteTitle       string   `json:"site_title"`
	SiteURL         string   `json:"site_url"`
	SiteDescription string   `json:"site_description"`
	LocaleDefault   string   `json:"locale_default"`
	Extensions      []string `json:"extensions"` // the plugins the portal loads, e.g. "datastore", "scheming_datasets"
}

// StatusShow returns the portal's version, title and extensions (status_show).
func (c *Client) StatusShow(ctx context.Context) (*Status, *Response, error) {
	var s Status
	resp, err := c.Get(ctx, "status_show", nil, &s)
	if err != nil {
		return nil, nil, err
	}
	return &s, resp, nil
}

// License is one licence a portal offers for datasets (license_list).
// Portals differ in which fields they fill; the booleans may come as
// strings.
type License struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	URL            string   `json:"url"`
	Status         string   `json:"status"`
	Family         string   `json:"family"`
	ODConformance  string   `json:"od_conformance"`  // Open Definition: "approved", "not reviewed", "rejected"
	OSDConformance string   `json:"osd_conformance"` // Open Source Definition
	DomainContent  FlexBool `json:"domain_content"`
	DomainData     FlexBool `json:"domain_data"`
	DomainSoftware FlexBool `json:"domain_software"`
	IsGeneric      FlexBool `json:"is_generic"`
}

// LicenseList returns the licences datasets may carry (license_list).
func (c *Client) LicenseList(ctx context.Context) ([]License, *Response, error) {
	var ls []License
	resp, err := c.Get(ctx, "license_list", nil, &ls)
	return ls, resp, err
}

// PackageList returns dataset names in name order (package_list). CKAN
// reports no total: a short page is the only sign of the end.
func (c *Client) PackageList(ctx context.Context, limit, offset int) ([]string, *Response, error) {
	v := url.Values{}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	var names []string
	resp, err := c.Get(ctx, "package_list", v, &names)
	return names, resp, err
}
