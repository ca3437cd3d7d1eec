package opendata

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// maxFilters bounds the filters of one datastore query.
const maxFilters = 20

// QueryDatastoreInput is the input of queryDatastore.
type QueryDatastoreInput struct {
	ResourceID string         `json:"resourceId" jsonschema:"The resource's id, from getDatasetDetails (only resources with datastore_active true can be queried)" schema:"minLength=1,maxLength=200"`
	Q          string         `json:"q,omitempty" jsonschema:"Full-text search across all columns, any language" schema:"maxLength=1000"`
	Filters    map[string]any `json:"filters,omitempty" jsonschema:"Exact-match filters: column name → value, or → list of values (any of). E.g. {\"city\": \"חיפה\", \"year\": [2022, 2023]}"`
	Fields     []string       `json:"fields,omitempty" jsonschema:"Only return these columns" schema:"maxItems=100"`
	Sort       string         `json:"sort,omitempty" jsonschema:"Sort order, \"column asc|desc\" comma-separated; column names may contain spaces" schema:"maxLength=500"`
	Limit      int            `json:"limit,omitempty" jsonschema:"How many rows to return (1-1000)" schema:"minimum=1,maximum=1000,default=100"`
	Offset     int            `json:"offset,omitempty" jsonschema:"How many rows to skip, for paging" schema:"minimum=0,maximum=100000000,default=0"`
	Portal     string         `json:"portal,omitempty" jsonschema:"Another CKAN portal to query instead of the default (data.gov.il), as its root or API URL" schema:"maxLength=500"`
}

// QueryDatastoreOutput is the output of queryDatastore.
type QueryDatastoreOutput struct {
	ResourceID string                `json:"resourceId"`
	Fields     []ckan.DatastoreField `json:"fields" jsonschema:"The columns with their types, in table order"`
	Records    []map[string]any      `json:"records" jsonschema:"The rows, each a column → value object"`
	Total      int                   `json:"total" jsonschema:"How many rows match in all; page with offset"`
	Estimated  bool                  `json:"totalWasEstimated,omitempty" jsonschema:"Whether total is an estimate (very large tables)"`
	Limit      int                   `json:"limit"`
	Offset     int                   `json:"offset"`
	APIURL     string                `json:"apiUrl" jsonschema:"The datastore_search endpoint called with POST"`
	APIBody    string                `json:"apiBody" jsonschema:"The JSON body posted to apiUrl"`
}

// Summary counts the rows.
func (o QueryDatastoreOutput) Summary() string {
	return fmt.Sprintf("%d of %d rows", len(o.Records), o.Total)
}

func queryDatastoreTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "queryDatastore",
		Title: "Query dataset rows (CKAN datastore)",
		Description: "Read the rows of a tabular resource (CSV/XLSX loaded into the portal's datastore; datastore_active true in getDatasetDetails). " +
			"Full-text search with q, exact-match filters per column, choose columns, sort, page with limit/offset. " +
			"Returns the columns with their types, the rows, and the total row count.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.queryDatastore))
}

func (p *pack) queryDatastore(ctx context.Context, in QueryDatastoreInput) (QueryDatastoreOutput, error) {
	req := &ckan.DatastoreSearchRequest{ResourceID: strings.TrimSpace(in.ResourceID), Q: in.Q, Fields: in.Fields,
		Limit: in.Limit, Offset: in.Offset, IncludeTotal: true}
	if req.ResourceID == "" {
		return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "resourceId: must not be blank")
	}
	if err := checkFilters(in.Filters); err != nil {
		return QueryDatastoreOutput{}, err
	}
	req.Filters = in.Filters
	if strings.TrimSpace(in.Sort) != "" {
		s, err := ckan.ParseDatastoreSort(in.Sort)
		if err != nil {
			return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "sort: %v", err)
		}
		req.Sort = s
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return QueryDatastoreOutput{}, err
	}
	res, resp, err := c.DatastoreSearch(ctx, req)
	if err != nil {
		return QueryDatastoreOutput{}, toolError(err)
	}
	body, _ := json.Marshal(req) // it was just marshalled to be sent
	out := QueryDatastoreOutput{
		ResourceID: req.ResourceID, Fields: nonNil(res.Fields), Records: make([]map[string]any, 0, len(res.Records)),
		Total: res.Total, Estimated: res.TotalWasEstimated, Limit: in.Limit, Offset: in.Offset,
		APIURL: resp.URL, APIBody: string(body),
	}
	for i, raw := range res.Records {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil || rec == nil {
			return QueryDatastoreOutput{}, &tool.Error{Code: tool.CodeParse,
				Message: fmt.Sprintf("datastore_search: record %d is not a JSON object", i), Err: err}
		}
		out.Records = append(out.Records, rec)
	}
	return out, nil
}

// checkFilters admits column → scalar or column → list of scalars, which
// is what datastore_search accepts.
func checkFilters(filters map[string]any) error {
	if len(filters) > maxFilters {
		return tool.Errorf(tool.CodeValidation, "filters: at most %d columns, got %d", maxFilters, len(filters))
	}
	names := make([]string, 0, len(filters))
	for k := range filters {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if strings.TrimSpace(k) == "" {
			return tool.Errorf(tool.CodeValidation, "filters: a column name must not be blank")
		}
		v := filters[k]
		if list, ok := v.([]any); ok {
			if len(list) == 0 || len(list) > 100 {
				return tool.Errorf(tool.CodeValidation, "filters.%s: a list must have 1 to 100 values, got %d", k, len(list))
			}
			for i, item := range list {
				if !isScalar(item) {
					return tool.Errorf(tool.CodeValidation, "filters.%s[%d]: must be a string, number or boolean", k, i)
				}
			}
			continue
		}
		if !isScalar(v) {
			return tool.Errorf(tool.CodeValidation, "filters.%s: must be a string, number, boolean or a list of them", k)
		}
	}
	return nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, float64, json.Number:
		return true
	}
	return false
}
