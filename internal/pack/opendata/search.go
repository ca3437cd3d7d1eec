package opendata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/tool"
)

// facetFields are the fields searchDatasets can count.
const facetFields = "organization, groups, tags, res_format, license_id"

func isFacetField(f string) bool {
	switch f {
	case "organization", "groups", "tags", "res_format", "license_id":
		return true
	}
	return false
}

// SearchDatasetsInput is the input of searchDatasets.
type SearchDatasetsInput struct {
	Query        string   `json:"query,omitempty" jsonschema:"Free-text search in any language (Hebrew works as is), e.g. \"תחבורה\" or \"transportation\"; Solr syntax such as title:bus is allowed. Empty matches every dataset." schema:"maxLength=1000"`
	Rows         int      `json:"rows,omitempty" jsonschema:"How many datasets to return" schema:"minimum=1,maximum=1000,default=10"`
	Start        int      `json:"start,omitempty" jsonschema:"Offset of the first dataset, for paging: 0, then rows, then 2*rows..." schema:"minimum=0,maximum=1000000,default=0"`
	Sort         string   `json:"sort,omitempty" jsonschema:"Sort order, \"field asc|desc\" comma-separated, e.g. \"metadata_modified desc\", \"name asc\", \"score desc, metadata_modified desc\"" schema:"maxLength=200"`
	Organization string   `json:"organization,omitempty" jsonschema:"Only datasets of this organization (its name, as listOrganizations returns it)" schema:"maxLength=200"`
	Tags         []string `json:"tags,omitempty" jsonschema:"Only datasets that have all of these tags" schema:"maxItems=20"`
	Formats      []string `json:"formats,omitempty" jsonschema:"Only datasets with a resource in any of these formats, e.g. CSV, JSON, XLSX" schema:"maxItems=20"`
	Groups       []string `json:"groups,omitempty" jsonschema:"Only datasets in all of these groups (names, as listGroups returns them)" schema:"maxItems=20"`
	Facets       []string `json:"facets,omitempty" jsonschema:"Also count the matching datasets by these fields: organization, groups, tags, res_format, license_id" schema:"maxItems=5"`
	FacetLimit   int      `json:"facetLimit,omitempty" jsonschema:"How many values to count per facet" schema:"minimum=1,maximum=1000,default=20"`
	Portal       string   `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il (e.g. https://demo.ckan.org)" schema:"maxLength=500"`
	ExactQuery   bool     `json:"exactQuery,omitempty" jsonschema:"Send the query as written. By default Hebrew words also match their other forms (prefixes ו ה ב ל מ ש כ, niqqud, final letters, singular and plural)."`
}

// SearchDatasetsOutput is the output of searchDatasets.
type SearchDatasetsOutput struct {
	Datasets []DatasetSummary            `json:"datasets" jsonschema:"The matching datasets, in the requested order"`
	Total    int                         `json:"total" jsonschema:"How many datasets match in all; page with start"`
	Start    int                         `json:"start" jsonschema:"Offset of the first dataset returned"`
	Rows     int                         `json:"rows" jsonschema:"The page size asked for"`
	Sort     string                      `json:"sort,omitempty" jsonschema:"The sort the portal applied"`
	Facets   map[string][]ckan.FacetItem `json:"facets,omitempty" jsonschema:"Counts per facet field, most frequent first"`
	// HebrewForms lists, per Hebrew word, the first forms the search also
	// matched; the full query is in apiUrl.
	HebrewForms map[string][]string `json:"hebrewForms,omitempty" jsonschema:"The Hebrew words of the query and the first of the other forms also searched (the full Solr query is in apiUrl); set exactQuery to search only the words as written"`
	APIURL      string              `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
	query       string
}

// DatasetSummary is one search hit.
type DatasetSummary struct {
	ID               string   `json:"id"`
	Name             string   `json:"name" jsonschema:"The dataset's URL name; pass it (or id) to getDatasetDetails"`
	Title            string   `json:"title"`
	Description      string   `json:"description,omitempty" jsonschema:"The dataset's description, cut after 300 characters with … (getDatasetDetails has all of it)"`
	Organization     *OrgRef  `json:"organization"`
	Tags             []string `json:"tags"`
	Formats          []string `json:"formats" jsonschema:"The distinct formats of its resources"`
	NumResources     int      `json:"num_resources"`
	MetadataModified string   `json:"metadata_modified" jsonschema:"When the dataset was last modified (ISO 8601, portal time)"`
	DatasetURL       string   `json:"datasetUrl" jsonschema:"The dataset's page on the portal (the same as portalUrl; kept for existing clients)"`
	PortalURL        string   `json:"portalUrl" jsonschema:"The dataset's page on the portal, for people"`
}

// OrgRef names the organization that publishes a dataset.
type OrgRef struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	PortalURL string `json:"portalUrl,omitempty" jsonschema:"The organization's page on the portal"`
}

// Summary says how many datasets were found, which, and how to page.
func (o SearchDatasetsOutput) Summary() string {
	s := fmt.Sprintf("%d of %d datasets", len(o.Datasets), o.Total)
	if o.query != "" {
		s += fmt.Sprintf(" for %q", o.query)
	}
	if len(o.HebrewForms) > 0 {
		s += " (Hebrew word forms included)"
	}
	if len(o.Datasets) > 0 {
		s += ": " + listTitles(o.Datasets, func(d DatasetSummary) string { return cmp.Or(d.Title, d.Name) }, 3)
	}
	if next := o.Start + len(o.Datasets); len(o.Datasets) > 0 && next < o.Total {
		s += fmt.Sprintf("; more with start=%d", next)
	}
	return s
}

// maxDescription bounds the description of a search hit.
const maxDescription = 300

func searchDatasetsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "searchDatasets",
		Title: "Search open datasets (CKAN)",
		Description: "Search the datasets of an open-data portal (default: data.gov.il, Israel's national portal; any CKAN portal via portal). " +
			"Returns each dataset's id, name, title, organization, tags and resource formats, the total match count, and the API URL called.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.searchDatasets))
}

func (p *pack) searchDatasets(ctx context.Context, in SearchDatasetsInput) (SearchDatasetsOutput, error) {
	opts := &ckan.PackageSearchOptions{Query: strings.TrimSpace(in.Query), Rows: in.Rows, Start: in.Start}
	if strings.TrimSpace(in.Sort) != "" {
		s, err := ckan.ParseSort(in.Sort)
		if err != nil {
			return SearchDatasetsOutput{}, tool.Errorf(tool.CodeValidation, "sort: %v", err)
		}
		opts.Sort = s
	}
	for i, f := range in.Facets {
		if !isFacetField(f) {
			return SearchDatasetsOutput{}, tool.Errorf(tool.CodeValidation, "facets[%d]: must be one of %s, got %q",
				i, facetFields, f)
		}
	}
	if len(in.Facets) > 0 {
		opts.FacetFields, opts.FacetLimit = slices.Compact(slices.Clone(in.Facets)), in.FacetLimit
	}
	var fq ckan.FilterQuery
	fq.All("organization", in.Organization)
	fq.All("tags", in.Tags...)
	fq.Any("res_format", in.Formats...)
	fq.All("groups", in.Groups...)
	opts.FilterQuery = fq.String()

	c, err := p.client(in.Portal)
	if err != nil {
		return SearchDatasetsOutput{}, err
	}
	asTyped := opts.Query
	var forms map[string][]string
	if hq, ok := ckan.RewriteHebrewQuery(asTyped); ok && !in.ExactQuery {
		opts.Query, forms = hq.Query, hq.Variants
	}
	res, resp, err := c.PackageSearch(ctx, opts)
	if err != nil && forms != nil && isSearchQueryError(err) {
		// A portal whose Solr refuses the rewritten query (a customised
		// schema without a text field, say) still answers the query as typed.
		opts.Query, forms = asTyped, nil
		res, resp, err = c.PackageSearch(ctx, opts)
	}
	if err != nil {
		return SearchDatasetsOutput{}, toolError(err)
	}
	out := SearchDatasetsOutput{
		Datasets: make([]DatasetSummary, 0, len(res.Results)),
		Total:    res.Count, Start: in.Start, Rows: in.Rows, Sort: res.Sort,
		APIURL: resp.URL, query: asTyped, HebrewForms: shortForms(forms),
	}
	for _, pkg := range res.Results {
		out.Datasets = append(out.Datasets, summarize(c, &pkg))
	}
	if len(opts.FacetFields) > 0 {
		out.Facets = map[string][]ckan.FacetItem{}
		for _, f := range opts.FacetFields {
			out.Facets[f] = nonNil(res.FacetCounts(f))
		}
	}
	return out, nil
}

// summarize keeps what an agent needs to pick a dataset.
func summarize(c *ckan.Client, pkg *ckan.Package) DatasetSummary {
	d := DatasetSummary{
		ID: pkg.ID, Name: pkg.Name, Title: pkg.Title,
		Description:      httpclient.ClipRunes(strings.TrimSpace(pkg.Notes), maxDescription),
		Tags:             make([]string, 0, len(pkg.Tags)),
		Formats:          formatsOf(pkg.Resources),
		NumResources:     max(pkg.NumResources, len(pkg.Resources)),
		MetadataModified: pkg.MetadataModified,
	}
	pages := pagesOf(c)
	var org string
	if pkg.Organization != nil {
		org = pkg.Organization.Name
		d.Organization = &OrgRef{Name: org, Title: pkg.Organization.Title, PortalURL: pages.Organization(org)}
	}
	d.PortalURL = pages.Dataset(org, pkg.Name)
	d.DatasetURL = d.PortalURL
	for _, t := range pkg.Tags {
		d.Tags = append(d.Tags, t.Name)
	}
	return d
}

// isSearchQueryError reports whether the portal refused a query as such.
func isSearchQueryError(err error) bool {
	var ce *ckan.Error
	return errors.As(err, &ce) && (ce.Type == ckan.TypeSearchQuery || ce.Type == ckan.TypeSearch ||
		ce.Type == ckan.TypeValidation || ce.StatusCode == http.StatusBadRequest)
}

// shownForms is how many forms per word hebrewForms shows.
const shownForms = 6

// shortForms keeps the first forms of each word, besides the word itself.
func shortForms(forms map[string][]string) map[string][]string {
	if len(forms) == 0 {
		return nil
	}
	out := make(map[string][]string, len(forms))
	for w, vs := range forms {
		if len(vs) > 0 && vs[0] == w {
			vs = vs[1:]
		}
		out[w] = slices.Clone(vs[:min(len(vs), shownForms)])
		if len(vs) > shownForms {
			out[w] = append(out[w], fmt.Sprintf("(+%d more)", len(vs)-shownForms))
		}
	}
	return out
}
