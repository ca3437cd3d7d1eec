package opendata

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// GetResourceDetailsInput is the input of getResourceDetails.
type GetResourceDetailsInput struct {
	ID     string `json:"id" jsonschema:"The resource's id (UUID), as getDatasetDetails returns it" schema:"minLength=1,maxLength=200"`
	Portal string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// DatastoreTable describes the table of a resource loaded into the datastore.
type DatastoreTable struct {
	Fields    []ckan.DatastoreField `json:"fields" jsonschema:"The columns with their types, in table order; use them in queryDatastore filters, fields and sort"`
	Total     int                   `json:"total" jsonschema:"How many rows the table has"`
	Estimated bool                  `json:"totalWasEstimated,omitempty"`
	APIURL    string                `json:"apiUrl" jsonschema:"The datastore_search endpoint called with POST"`
	APIBody   string                `json:"apiBody" jsonschema:"The JSON body posted to apiUrl"`
}

// GetResourceDetailsOutput is one resource's metadata and, when its rows are
// in the datastore, its columns.
type GetResourceDetailsOutput struct {
	ResourceInfo
	Datastore      *DatastoreTable `json:"datastore,omitempty" jsonschema:"The datastore table's columns and row count, when datastore_active"`
	DatastoreError string          `json:"datastoreError,omitempty" jsonschema:"Why the columns could not be read, when datastore_active but datastore_search failed"`
	APIURL         string          `json:"apiUrl" jsonschema:"The CKAN API call that produced this result"`
}

// Summary names the resource.
func (o GetResourceDetailsOutput) Summary() string {
	s := fmt.Sprintf("%q (%s", o.Name, cmp.Or(o.Format, "format unknown"))
	if o.Size != nil {
		s += ", " + humanBytes(*o.Size)
	}
	s += ")"
	if o.DatastoreActive && o.Datastore == nil {
		s += ", in the datastore but its columns could not be read"
	}
	if o.Datastore != nil {
		s += fmt.Sprintf(": %d columns, %d rows", len(o.Datastore.Fields), o.Datastore.Total)
	}
	return s
}

func getResourceDetailsTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "getResourceDetails",
		Title: "Get resource details (CKAN)",
		Description: "Get one resource (file or API of a dataset) by id: name, format, size, download URL, dates, MIME type and dataset id; " +
			"when its rows are in the datastore (datastore_active), also its columns with their types and its row count, for queryDatastore.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.getResourceDetails))
}

func (p *pack) getResourceDetails(ctx context.Context, in GetResourceDetailsInput) (GetResourceDetailsOutput, error) {
	id, err := trimID("id", in.ID)
	if err != nil {
		return GetResourceDetailsOutput{}, err
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return GetResourceDetailsOutput{}, err
	}
	r, resp, err := c.ResourceShow(ctx, id)
	if err != nil {
		return GetResourceDetailsOutput{}, toolError(err)
	}
	out := GetResourceDetailsOutput{ResourceInfo: resourceInfo(pagesOf(c), r), APIURL: resp.URL}
	if !out.DatastoreActive {
		return out, nil
	}
	ds, dsResp, err := c.DatastoreInfo(ctx, r.ID)
	switch {
	case err != nil && ctx.Err() != nil:
		return GetResourceDetailsOutput{}, toolError(err)
	case err != nil:
		// The metadata is still worth having; say why the columns are missing.
		out.DatastoreError = toolError(err).(*tool.Error).Message
	default:
		body, _ := json.Marshal(&ckan.DatastoreSearchRequest{ResourceID: r.ID, Limit: 0, IncludeTotal: true})
		out.Datastore = &DatastoreTable{Fields: nonNil(ds.Fields), Total: ds.Total, Estimated: ds.TotalWasEstimated,
			APIURL: dsResp.URL, APIBody: string(body)}
	}
	return out, nil
}

// resourceInfo keeps what an agent needs of a resource. Its page is under
// its dataset, named by id where resource_show gives no name.
func resourceInfo(pages portalPages, r *ckan.Resource) ResourceInfo {
	return ResourceInfo{
		ID: r.ID, PackageID: r.PackageID, Name: r.Name, Description: r.Description, URL: r.URL, Format: r.Format,
		Mimetype: r.Mimetype, Size: r.Size.Ptr(), DatastoreActive: bool(r.DatastoreActive), Created: r.Created,
		LastModified: r.LastModified, PortalURL: pages.Resource("", r.PackageID, r.ID),
	}
}

// resourceSearchFields are the resource fields searchResources accepts in
// "field:term" queries; each is a column resource_search can match and one
// the package_search fallback can match locally.
var resourceSearchFields = []string{"name", "description", "format", "url", "mimetype", "id", "package_id"}

// SearchResourcesInput is the input of searchResources.
type SearchResourcesInput struct {
	Query      string `json:"query,omitempty" jsonschema:"Text to find in resource names, or one field:term pair (fields: name, description, format, url, mimetype, id, package_id), e.g. \"תקציב\" or \"description:budget\". Terms match as case-insensitive substrings." schema:"maxLength=200"`
	DatasetID  string `json:"datasetId,omitempty" jsonschema:"Only resources of this dataset (its UUID id, as searchDatasets returns it)" schema:"maxLength=200"`
	Format     string `json:"format,omitempty" jsonschema:"Only resources of this format, e.g. CSV, JSON, XLSX" schema:"maxLength=50"`
	Limit      int    `json:"limit,omitempty" jsonschema:"How many resources to return" schema:"minimum=1,maximum=100,default=20"`
	Offset     int    `json:"offset,omitempty" jsonschema:"How many resources to skip, for paging" schema:"minimum=0,maximum=10000,default=0"`
	Portal     string `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
	ExactQuery bool   `json:"exactQuery,omitempty" jsonschema:"Match only the term as written. By default a Hebrew word without niqqud is also matched without its prefixes and plural ending when it finds fewer than limit resources."`
}

// SearchResourcesOutput is the output of searchResources.
type SearchResourcesOutput struct {
	Resources   []ResourceInfo `json:"resources"`
	Count       int            `json:"count" jsonschema:"How many resources match in all (with source package_search: among the datasets scanned)"`
	Limit       int            `json:"limit"`
	Offset      int            `json:"offset"`
	Source      string         `json:"source" jsonschema:"resource_search, or package_search when the portal does not offer resource_search and the resources of matching datasets were searched instead"`
	Note        string         `json:"note,omitempty"`
	HebrewForms []string       `json:"hebrewForms,omitempty" jsonschema:"The broader forms of the Hebrew term also searched, because the term as written found fewer than limit"`
	APIURL      string         `json:"apiUrl" jsonschema:"The CKAN API call that produced this result (the first, when broader forms were searched too)"`
}

// Summary counts the resources and names the source.
func (o SearchResourcesOutput) Summary() string {
	s := fmt.Sprintf("%d of %d resources (via %s)", len(o.Resources), o.Count, o.Source)
	if len(o.Resources) > 0 {
		s += ": " + listTitles(o.Resources, func(r ResourceInfo) string {
			return strings.TrimSpace(cmp.Or(r.Name, r.ID) + " " + r.Format)
		}, 5)
	}
	return s + morePhrase("offset", o.Offset+len(o.Resources), len(o.Resources) > 0 && o.Offset+len(o.Resources) < o.Count)
}

// fallbackDatasets bounds how many datasets the package_search fallback
// scans for resources.
const fallbackDatasets = 100

func searchResourcesTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "searchResources",
		Title: "Search resources (CKAN)",
		Description: "Search the resources (files and APIs) of all datasets on an open-data portal (default: data.gov.il) by name or " +
			"field:term, optionally only one dataset's or one format's. Where the portal disables resource_search, the resources of " +
			"matching datasets are searched instead and source says package_search.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.searchResources))
}

// resourceTerm is one field:term condition.
type resourceTerm struct{ field, term string }

func (t resourceTerm) String() string { return t.field + ":" + t.term }

// match applies the term as resource_search does: a case-insensitive substring.
func (t resourceTerm) match(r *ckan.Resource) bool {
	var v string
	switch t.field {
	case "name":
		v = r.Name
	case "description":
		v = r.Description
	case "format":
		v = r.Format
	case "url":
		v = r.URL
	case "mimetype":
		v = r.Mimetype
	case "id":
		v = r.ID
	case "package_id":
		v = r.PackageID
	}
	return strings.Contains(strings.ToLower(v), strings.ToLower(t.term))
}

// resourceTerms turns the input into field:term conditions.
func resourceTerms(in SearchResourcesInput) ([]resourceTerm, error) {
	var terms []resourceTerm
	if q := strings.TrimSpace(in.Query); q != "" {
		t := resourceTerm{"name", q}
		if f, term, ok := strings.Cut(q, ":"); ok && !strings.ContainsAny(f, " \t") && f != "" {
			if !isResourceSearchField(f) {
				return nil, tool.Errorf(tool.CodeValidation, "query: field %q is not one of %s", f, strings.Join(resourceSearchFields, ", "))
			}
			t = resourceTerm{f, strings.TrimSpace(term)}
			if t.term == "" {
				return nil, tool.Errorf(tool.CodeValidation, "query: %s: needs a term after the colon", f)
			}
		}
		terms = append(terms, t)
	}
	if id := strings.TrimSpace(in.DatasetID); id != "" {
		terms = append(terms, resourceTerm{"package_id", id})
	}
	if f := strings.TrimSpace(in.Format); f != "" {
		terms = append(terms, resourceTerm{"format", f})
	}
	if len(terms) == 0 {
		return nil, tool.Errorf(tool.CodeValidation, "give at least one of query, datasetId and format")
	}
	return terms, nil
}

func isResourceSearchField(f string) bool {
	for _, x := range resourceSearchFields {
		if f == x {
			return true
		}
	}
	return false
}

func (p *pack) searchResources(ctx context.Context, in SearchResourcesInput) (SearchResourcesOutput, error) {
	terms, err := resourceTerms(in)
	if err != nil {
		return SearchResourcesOutput{}, err
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return SearchResourcesOutput{}, err
	}
	// A text term is matched as a substring; niqqud never is in names.
	var forms []string
	if t := &terms[0]; strings.TrimSpace(in.Query) != "" && (t.field == "name" || t.field == "description") {
		t.term = ckan.StripNiqqud(t.term)
		if !in.ExactQuery {
			forms = ckan.HebrewSubstringForms(t.term)
		}
	}
	query := func(first string) *ckan.ResourceSearchOptions {
		opts := &ckan.ResourceSearchOptions{Limit: in.Limit, Offset: in.Offset}
		for i, t := range terms {
			if i == 0 && first != "" {
				t.term = first
			}
			opts.Query = append(opts.Query, t.String())
		}
		return opts
	}
	res, resp, err := c.ResourceSearch(ctx, query(""))
	if err != nil {
		if !resourceSearchUnavailable(err) {
			return SearchResourcesOutput{}, toolError(err)
		}
		return p.searchResourcesFallback(ctx, c, in, terms, forms)
	}
	pages := pagesOf(c)
	out := SearchResourcesOutput{Resources: make([]ResourceInfo, 0, min(len(res.Results), in.Limit)), Count: res.Count,
		Limit: in.Limit, Offset: in.Offset, Source: "resource_search", APIURL: resp.URL}
	for i := range res.Results[:min(len(res.Results), in.Limit)] {
		out.Resources = append(out.Resources, resourceInfo(pages, &res.Results[i]))
	}
	if len(forms) == 0 || in.Offset > 0 || len(out.Resources) >= in.Limit {
		return out, nil
	}
	// Too few: ask for the broader forms, and add what they find after.
	// Only on the first page, which is the same whatever comes after it.
	complete, largest := res.Count <= len(res.Results), res.Count
	for _, f := range forms {
		more, _, err := c.ResourceSearch(ctx, query(f))
		if err != nil {
			if ctx.Err() != nil {
				return SearchResourcesOutput{}, toolError(err)
			}
			out.Note = "a search for the broader form " + strconv.Quote(f) + " failed: " + toolError(err).(*tool.Error).Message
			break
		}
		out.HebrewForms = append(out.HebrewForms, f)
		complete, largest = complete && more.Count <= len(more.Results), max(largest, more.Count)
		for i := range more.Results {
			r := &more.Results[i]
			if len(out.Resources) < in.Limit && !slices.ContainsFunc(out.Resources, func(x ResourceInfo) bool { return x.ID == r.ID }) {
				out.Resources = append(out.Resources, resourceInfo(pages, r))
			}
		}
		if len(out.Resources) >= in.Limit {
			complete = false
			break
		}
	}
	out.Count = len(out.Resources)
	if !complete {
		out.Count = max(largest, out.Count)
		out.Note = strings.TrimPrefix(out.Note+"; count is a lower bound: the matches of the term's broader Hebrew forms were merged", "; ")
	}
	return out, nil
}

// resourceSearchUnavailable reports whether the portal refuses
// resource_search as such: unknown, routed nowhere, or closed to anonymous
// callers (as some portals configure it).
func resourceSearchUnavailable(err error) bool {
	if ckan.IsUnknownAction(err) {
		return true
	}
	var ce *ckan.Error
	return errors.As(err, &ce) && (ce.Type == ckan.TypeNotFound || ce.Type == ckan.TypeAuthorization)
}

// searchResourcesFallback finds the datasets that may hold matching
// resources with package_search, and matches their resources locally.
func (p *pack) searchResourcesFallback(ctx context.Context, c *ckan.Client, in SearchResourcesInput, terms []resourceTerm,
	forms []string) (SearchResourcesOutput, error) {
	opts := &ckan.PackageSearchOptions{Rows: fallbackDatasets}
	var fq ckan.FilterQuery
	var clauses []string
	for i, t := range terms {
		// Solr matches whole words: a Hebrew word's whole-word forms.
		alts := []string{t.term}
		if i == 0 && len(forms) > 0 {
			alts = ckan.HebrewVariants(t.term, 16)
		}
		switch t.field {
		case "name":
			clauses = append(clauses, solrAny("res_name", alts))
		case "description":
			clauses = append(clauses, solrAny("res_description", alts))
		case "format":
			fq.Any("res_format", t.term, strings.ToUpper(t.term), strings.ToLower(t.term))
		case "package_id":
			fq.All("id", t.term)
		}
	}
	opts.Query = strings.Join(clauses, " AND ")
	opts.FilterQuery = fq.String()
	res, resp, err := c.PackageSearch(ctx, opts)
	if err != nil {
		return SearchResourcesOutput{}, toolError(err)
	}
	var found []ResourceInfo
	pages := pagesOf(c)
	for i := range res.Results {
		pkg := &res.Results[i]
		for j := range pkg.Resources {
			r := &pkg.Resources[j]
			if r.PackageID == "" {
				r.PackageID = pkg.ID
			}
			ok := true
			for i, t := range terms {
				m := t.match(r)
				if i == 0 {
					for _, f := range forms {
						m = m || resourceTerm{t.field, f}.match(r)
					}
				}
				ok = ok && m
			}
			if ok {
				info := resourceInfo(pages, r)
				info.PortalURL = pages.Resource(orgName(pkg), cmp.Or(pkg.Name, pkg.ID), r.ID)
				found = append(found, info)
			}
		}
	}
	out := SearchResourcesOutput{Count: len(found), Limit: in.Limit, Offset: in.Offset, Source: "package_search", APIURL: resp.URL,
		Resources: nonNil(found[min(in.Offset, len(found)):min(in.Offset+in.Limit, len(found))])}
	out.Note = fmt.Sprintf("this portal does not offer resource_search; searched the resources of %d of the %d matching datasets",
		len(res.Results), res.Count)
	if res.Count > len(res.Results) {
		out.Note += ", so count is a lower bound"
	}
	return out, nil
}

// orgName is the name of a dataset's organization, or "".
func orgName(pkg *ckan.Package) string {
	if pkg.Organization == nil {
		return ""
	}
	return pkg.Organization.Name
}

// solrAny is field:"a", or field:("a" OR "b" …).
func solrAny(field string, values []string) string {
	if len(values) == 1 {
		return field + ":" + ckan.SolrQuote(values[0])
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = ckan.SolrQuote(v)
	}
	return field + ":(" + strings.Join(quoted, " OR ") + ")"
}
