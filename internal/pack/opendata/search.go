package opendata

import (
	"context"
	"fmt"
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
	Rows         int      `json:"rows,omitempty" jsonschema:"How many datasets to return (1-1000)" schema:"minimum=1,maximum=1000,default=10"`
	Start        int      `json:"start,omitempty" jsonschema:"Offset of the first dataset, for paging: 0, then rows, then 2*rows..." schema:"minimum=0,maximum=1000000,default=0"`
	Sort         string   `json:"sort,omitempty" jsonschema:"Sort order, \"field asc|desc\" comma-separated, e.g. \"metadata_modified desc\", \"name asc\", \"score desc, metadata_modified desc\"" schema:"maxLength=200"`
	Organization string   `json:"organization,omitempty" jsonschema:"Only datasets of this organization (its name, as listOrganizations returns it)" schema:"maxLength=200"`
	Tags         []string `json:"tags,omitempty" jsonschema:"Only datasets that have all of these tags" schema:"maxItems=20"`
	Formats      []string `json:"formats,omitempty" jsonschema:"Only datasets with a resource in any of these formats, e.g. CSV, JSON, XLSX" schema:"maxItems=20"`
	Groups       []string `json:"groups,omitempty" jsonschema:"Only datasets in all of these groups (names, as listGroups returns them)" schema:"maxItems=20"`
	Facets       []string `json:"facets,omitempty" jsonschema:"Also count the matching datasets by these fields: organization, groups, tags, res_format, license_id" schema:"maxItems=5"`
	FacetLimit   int      `json:"facetLimit,omitempty" jsonschema:"How many values to count per facet (1-1000)" schema:"minimum=1,maximum=1000,default=20"`
	Portal       string   `json:"portal,omitempty" jsonschema:"Another CKAN portal to query instead of the default (data.gov.il), as its root or API URL, e.g. https://demo.ckan.org" schema:"maxLength=500"`
}

// SearchDatasetsOutput is the output of searchDatasets.
type SearchDatasetsOutput struct {
	Datasets []DatasetSummary            `json:"datasets" jsonschema:"The matching datasets, in the requested order"`
	Total    int                         `json:"total" jsonschema:"How many datasets match in all; page with start"`
	Start    int                         `json:"start" jsonschema:"Offset of the first dataset returned"`
	Rows     int                         `json:"rows" jsonschema:"The page size asked for"`
	Sort     string                      `json:"sort,omitempty" jsonschema:"The sort the portal applied"`
	Facets   map[string][]ckan.FacetItem `json:"facets,omitempty" jsonschema:"Counts per facet field, most frequent first"`
	APIURL   string                      `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
	query    string
}

// DatasetSummary is one search hit.
type DatasetSummary struct {
	ID               string   `json:"id"`
	Name             string   `json:"name" jsonschema:"The dataset's URL name; pass it (or id) to getDatasetDetails"`
	Title            string   `json:"title"`
	Description      string   `json:"description,omitempty" jsonschema:"The start of the dataset's description"`
	Organization     *OrgRef  `json:"organization"`
	Tags             []string `json:"tags"`
	Formats          []string `json:"formats" jsonschema:"The distinct formats of its resources"`
	NumResources     int      `json:"num_resources"`
	MetadataModified string   `json:"metadata_modified" jsonschema:"When the dataset was last modified (ISO 8601, portal time)"`
	DatasetURL       string   `json:"datasetUrl" jsonschema:"The dataset's page on the portal"`
}

// OrgRef names the organization that publishes a dataset.
type OrgRef struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// Summary says how many datasets were found.
func (o SearchDatasetsOutput) Summary() string {
	s := fmt.Sprintf("%d of %d datasets", len(o.Datasets), o.Total)
	if o.query != "" {
		s += fmt.Sprintf(" for %q", o.query)
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
			"Filter by organization, tags, resource formats and groups; sort; page with rows/start; optionally count datasets per facet. " +
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
	res, resp, err := c.PackageSearch(ctx, opts)
	if err != nil {
		return SearchDatasetsOutput{}, toolError(err)
	}
	out := SearchDatasetsOutput{
		Datasets: make([]DatasetSummary, 0, len(res.Results)),
		Total:    res.Count, Start: in.Start, Rows: in.Rows, Sort: res.Sort,
		APIURL: resp.URL, query: opts.Query,
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
		Formats:          []string{},
		NumResources:     max(pkg.NumResources, len(pkg.Resources)),
		MetadataModified: pkg.MetadataModified,
		DatasetURL:       datasetURL(c, pkg.Name),
	}
	if pkg.Organization != nil {
		d.Organization = &OrgRef{Name: pkg.Organization.Name, Title: pkg.Organization.Title}
	}
	for _, t := range pkg.Tags {
		d.Tags = append(d.Tags, t.Name)
	}
	for _, r := range pkg.Resources {
		f := strings.TrimSpace(r.Format)
		if f != "" && !slices.ContainsFunc(d.Formats, func(g string) bool { return strings.EqualFold(f, g) }) {
			d.Formats = append(d.Formats, f)
		}
	}
	return d
}
