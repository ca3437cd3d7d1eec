package opendata

import (
	"net/url"
	"strings"

	"github.com/toolport/toolport/ckan"
)

// portalPages builds links to a portal's human pages (the portalUrl of
// every result), from the portal's root URL. Stock CKAN serves
// /dataset/{name}, /dataset/{name}/resource/{id}, /organization/{name},
// /group/{name} and /dataset/?tags={tag}; data.gov.il's own front end
// serves /he/datasets/{organization}/{dataset}[/{resource id}],
// /he/organizations/{name} and /he/datasets?tags={tag}, and still answers
// the stock paths, which are used where the organization is not known.
type portalPages struct {
	site      string // the portal's root, no trailing slash
	dataGovIL bool
}

func pagesOf(c *ckan.Client) portalPages {
	site := c.SiteURL()
	u, err := url.Parse(site)
	if err != nil {
		return portalPages{site: site}
	}
	h := strings.ToLower(u.Hostname())
	return portalPages{site: site, dataGovIL: h == "data.gov.il" || h == "www.data.gov.il"}
}

// Dataset is a dataset's page; org is its organization's name, if known.
func (p portalPages) Dataset(org, name string) string {
	switch {
	case name == "":
		return ""
	case p.dataGovIL && org != "":
		return p.site + "/he/datasets/" + url.PathEscape(org) + "/" + url.PathEscape(name)
	}
	return p.site + "/dataset/" + url.PathEscape(name)
}

// Resource is a resource's page within its dataset (name or id); "" when
// the dataset is not known, as a resource has no page of its own.
func (p portalPages) Resource(org, dataset, id string) string {
	switch {
	case dataset == "" || id == "":
		return ""
	case p.dataGovIL && org != "":
		return p.Dataset(org, dataset) + "/" + url.PathEscape(id)
	}
	return p.site + "/dataset/" + url.PathEscape(dataset) + "/resource/" + url.PathEscape(id)
}

// Organization is a publisher's page.
func (p portalPages) Organization(name string) string {
	switch {
	case name == "":
		return ""
	case p.dataGovIL:
		return p.site + "/he/organizations/" + url.PathEscape(name)
	}
	return p.site + "/organization/" + url.PathEscape(name)
}

// Group is a group's page.
func (p portalPages) Group(name string) string {
	if name == "" {
		return ""
	}
	return p.site + "/group/" + url.PathEscape(name)
}

// Tag is the portal's dataset search for one tag.
func (p portalPages) Tag(name string) string {
	if name == "" {
		return ""
	}
	q := url.Values{"tags": {name}}.Encode()
	if p.dataGovIL {
		return p.site + "/he/datasets?" + q
	}
	return p.site + "/dataset/?" + q
}
