package opendata

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// PortalInput is the input of tools that take nothing but the portal.
type PortalInput struct {
	Portal string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// unsupported is the error for an action the portal does not offer: the
// request is fine, the portal cannot serve it, and retrying cannot help.
func unsupported(err error, what string) *tool.Error {
	var ce *ckan.Error
	detail := ""
	if errors.As(err, &ce) {
		detail = " (" + ce.Action + ": " + ce.Describe() + ")"
	}
	var status int
	if ce != nil {
		status = ce.StatusCode
	}
	return &tool.Error{Code: tool.CodeUnsupported, Status: status, Err: err,
		Message: "this portal does not offer " + what + detail}
}

// GetStatusOutput is the output of getStatus.
type GetStatusOutput struct {
	CKANVersion     string   `json:"ckan_version" jsonschema:"The CKAN version the portal runs, e.g. 2.9.5"`
	SiteTitle       string   `json:"site_title"`
	SiteURL         string   `json:"site_url"`
	SiteDescription string   `json:"site_description,omitempty"`
	LocaleDefault   string   `json:"locale_default,omitempty"`
	Extensions      []string `json:"extensions" jsonschema:"The plugins the portal loads: datastore means queryDatastore works, scheming_datasets means getDatasetSchema works, activity means the activity tools work"`
	PortalURL       string   `json:"portalUrl" jsonschema:"The portal's home page"`
	APIURL          string   `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary names the portal and its version.
func (o GetStatusOutput) Summary() string {
	return fmt.Sprintf("%s: CKAN %s, %d extensions", o.SiteTitle, o.CKANVersion, len(o.Extensions))
}

func getStatusTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getStatus",
		Title: "Portal status (CKAN)",
		Description: "Get what an open-data portal (default: data.gov.il) says about itself: its CKAN version, title, URL and " +
			"the extensions it runs (which tell whether the datastore, dataset schemas and activity streams are available).",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getStatus))
}

func (p *pack) getStatus(ctx context.Context, in PortalInput) (GetStatusOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return GetStatusOutput{}, err
	}
	s, resp, err := c.StatusShow(ctx)
	if err != nil {
		return GetStatusOutput{}, toolError(err)
	}
	return GetStatusOutput{CKANVersion: s.CKANVersion, SiteTitle: s.SiteTitle, SiteURL: s.SiteURL,
		SiteDescription: s.SiteDescription, LocaleDefault: s.LocaleDefault,
		Extensions: nonNil(s.Extensions), PortalURL: c.SiteURL(), APIURL: resp.URL}, nil
}

// LicenseInfo is one licence a portal offers.
type LicenseInfo struct {
	ID             string `json:"id" jsonschema:"The licence id, as datasets carry it in license_id"`
	Title          string `json:"title"`
	URL            string `json:"url,omitempty"`
	Status         string `json:"status,omitempty"`
	ODConformance  string `json:"od_conformance,omitempty" jsonschema:"Whether the Open Definition approves it: approved, not reviewed, rejected"`
	OSDConformance string `json:"osd_conformance,omitempty"`
	DomainData     bool   `json:"domain_data" jsonschema:"Whether it is meant for data"`
	DomainContent  bool   `json:"domain_content"`
	DomainSoftware bool   `json:"domain_software"`
}

// ListLicensesOutput is the output of listLicenses.
type ListLicensesOutput struct {
	Licenses []LicenseInfo `json:"licenses"`
	Count    int           `json:"count"`
	APIURL   string        `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary counts the licences.
func (o ListLicensesOutput) Summary() string { return fmt.Sprintf("%d licences", o.Count) }

// maxLicenses bounds a licence list; CKAN ships about 15.
const maxLicenses = 1000

func listLicensesTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:        "listLicenses",
		Title:       "List licences (CKAN)",
		Description: "List the licences datasets on an open-data portal (default: data.gov.il) may carry, with their ids, titles, URLs and Open Definition conformance.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listLicenses))
}

func (p *pack) listLicenses(ctx context.Context, in PortalInput) (ListLicensesOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListLicensesOutput{}, err
	}
	ls, resp, err := c.LicenseList(ctx)
	if err != nil {
		return ListLicensesOutput{}, toolError(err)
	}
	out := ListLicensesOutput{Licenses: make([]LicenseInfo, 0, min(len(ls), maxLicenses)), APIURL: resp.URL}
	for _, l := range ls[:min(len(ls), maxLicenses)] {
		out.Licenses = append(out.Licenses, LicenseInfo{ID: l.ID, Title: l.Title, URL: l.URL, Status: l.Status,
			ODConformance: l.ODConformance, OSDConformance: l.OSDConformance, DomainData: bool(l.DomainData),
			DomainContent: bool(l.DomainContent), DomainSoftware: bool(l.DomainSoftware)})
	}
	out.Count = len(out.Licenses)
	return out, nil
}

// ListAllDatasetsInput is the input of listAllDatasets.
type ListAllDatasetsInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"How many dataset names to return" schema:"minimum=1,maximum=1000,default=100"`
	Offset int    `json:"offset,omitempty" jsonschema:"How many names to skip, for paging" schema:"minimum=0,maximum=1000000,default=0"`
	Portal string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// ListAllDatasetsOutput is the output of listAllDatasets.
type ListAllDatasetsOutput struct {
	Names   []string `json:"names" jsonschema:"Dataset names in name order; pass one to getDatasetDetails"`
	Count   int      `json:"count" jsonschema:"How many names this page holds"`
	Limit   int      `json:"limit"`
	Offset  int      `json:"offset"`
	Total   *int     `json:"total" jsonschema:"Always null: package_list does not report how many datasets there are (searchDatasets with rows 1 gives the count)"`
	HasMore bool     `json:"hasMore" jsonschema:"Whether the page was full, so that more names may follow at offset+count"`
	Note    string   `json:"note"`
	APIURL  string   `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary counts the names.
func (o ListAllDatasetsOutput) Summary() string {
	s := fmt.Sprintf("%d dataset names from offset %d (the portal gives no total)", o.Count, o.Offset)
	if len(o.Names) > 0 {
		s += ": " + listTitles(o.Names, func(n string) string { return n }, 5)
	}
	return s + morePhrase("offset", o.Offset+o.Count, o.HasMore)
}

func listAllDatasetsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "listAllDatasets",
		Title: "List all dataset names (CKAN)",
		Description: "List the names of every public dataset on an open-data portal (default: data.gov.il), in name order, a page at a time " +
			"with limit/offset. The portal does not say how many there are; a full page means more may follow.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.listAllDatasets))
}

func (p *pack) listAllDatasets(ctx context.Context, in ListAllDatasetsInput) (ListAllDatasetsOutput, error) {
	c, err := p.client(in.Portal)
	if err != nil {
		return ListAllDatasetsOutput{}, err
	}
	names, resp, err := c.PackageList(ctx, in.Limit, in.Offset)
	if err != nil {
		return ListAllDatasetsOutput{}, toolError(err)
	}
	// A portal that ignores limit (CKAN before 2.2) would send every name.
	full := len(names) >= in.Limit
	names = names[:min(len(names), in.Limit)]
	return ListAllDatasetsOutput{Names: nonNil(names), Count: len(names), Limit: in.Limit, Offset: in.Offset,
		HasMore: full, APIURL: resp.URL,
		Note: "package_list reports no total; use searchDatasets (its total) to count datasets"}, nil
}

// trimID checks a required id argument.
func trimID(name, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", tool.Errorf(tool.CodeValidation, "%s: must not be blank", name)
	}
	return v, nil
}
