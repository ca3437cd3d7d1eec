package opendata

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/tool"
)

// maxFilters bounds the filters of one datastore query.
const maxFilters = 20

// QueryDatastoreInput is the input of queryDatastore.
type QueryDatastoreInput struct {
	ResourceID   string         `json:"resourceId,omitempty" jsonschema:"The resource's id, from getDatasetDetails (only resources with datastore_active true can be queried); required unless sql is given" schema:"maxLength=200"`
	Q            string         `json:"q,omitempty" jsonschema:"Full-text search across all columns, any language" schema:"maxLength=1000"`
	PartialMatch bool           `json:"partialMatch,omitempty" jsonschema:"Match each word of q as a word's start (\"חינ\" finds \"חינוך\"); all must match. Hebrew words of 3+ letters also match with or without the prefixes ו ה ב ל מ ש. Punctuation and niqqud are ignored."`
	Filters      map[string]any `json:"filters,omitempty" jsonschema:"Exact-match filters: column name → value, or → list of values (any of). E.g. {\"city\": \"חיפה\", \"year\": [2022, 2023]}"`
	Fields       []string       `json:"fields,omitempty" jsonschema:"Only return these columns" schema:"maxItems=100"`
	Distinct     bool           `json:"distinct,omitempty" jsonschema:"Return only distinct rows (of the chosen fields), e.g. the distinct values of one column"`
	Sort         string         `json:"sort,omitempty" jsonschema:"Sort order, \"column asc|desc\" comma-separated; column names may contain spaces" schema:"maxLength=500"`
	Limit        int            `json:"limit,omitempty" jsonschema:"How many rows to return; 0 returns only the columns and the total. With sql, caps the query's rows (put a LIMIT in it)" schema:"minimum=0,maximum=1000,default=100"`
	Offset       int            `json:"offset,omitempty" jsonschema:"How many rows to skip, for paging (not with sql: use OFFSET in the query)" schema:"minimum=0,maximum=100000000,default=0"`
	SQL          string         `json:"sql,omitempty" jsonschema:"Instead of the above: one read-only PostgreSQL SELECT over datastore tables, each named by its resource id in double quotes, e.g. SELECT \"city\", count(*) FROM \"5c78e9fa-…\" GROUP BY 1 LIMIT 50. Only where the portal enables datastore_search_sql; otherwise the error is UNSUPPORTED." schema:"maxLength=8000"`
	Portal       string         `json:"portal,omitempty" jsonschema:"A CKAN portal's root or API URL, instead of data.gov.il" schema:"maxLength=500"`
}

// QueryDatastoreOutput is the output of queryDatastore.
type QueryDatastoreOutput struct {
	ResourceID string                `json:"resourceId,omitempty"`
	SQL        string                `json:"sql,omitempty" jsonschema:"The SQL query run, when sql was given"`
	Fields     []ckan.DatastoreField `json:"fields" jsonschema:"The columns with their types, in table order"`
	Records    []map[string]any      `json:"records" jsonschema:"The rows, each a column → value object"`
	Total      int                   `json:"total" jsonschema:"How many rows match in all; page with offset. With sql: how many rows the portal returned"`
	Estimated  bool                  `json:"totalWasEstimated,omitempty" jsonschema:"Whether total is an estimate (very large tables)"`
	Truncated  bool                  `json:"truncated,omitempty" jsonschema:"With sql: more rows came back than limit (or than the portal's own cap) and were left out"`
	Limit      int                   `json:"limit"`
	Offset     int                   `json:"offset"`
	APIURL     string                `json:"apiUrl" jsonschema:"The datastore_search (or datastore_search_sql) endpoint called with POST"`
	APIBody    string                `json:"apiBody" jsonschema:"The JSON body posted to apiUrl"`
}

// Summary counts the rows.
func (o QueryDatastoreOutput) Summary() string {
	s := fmt.Sprintf("%d of %d rows", len(o.Records), o.Total)
	if o.Estimated {
		s = fmt.Sprintf("%d of about %d rows", len(o.Records), o.Total)
	}
	if len(o.Fields) > 0 {
		s += fmt.Sprintf(", %d columns: ", len(o.Fields)) + listTitles(o.Fields, func(f ckan.DatastoreField) string { return f.ID }, 6)
	}
	if o.Truncated {
		s += "; more rows were left out (raise LIMIT or page with OFFSET)"
	} else if o.SQL == "" {
		s += morePhrase("offset", o.Offset+len(o.Records), len(o.Records) > 0 && o.Offset+len(o.Records) < o.Total)
	}
	return s
}

func queryDatastoreTool(p *pack) *tool.Tool {
	return tool.Must(tool.New(tool.Spec{
		Name:  "queryDatastore",
		Title: "Query dataset rows (CKAN datastore)",
		Description: "Read the rows of a tabular resource (CSV/XLSX loaded into the portal's datastore; datastore_active true in getDatasetDetails). " +
			"Returns the columns with their types, the rows, and the total row count.",
		Pack:        Pack,
		Annotations: annotations(),
	}, p.queryDatastore))
}

func (p *pack) queryDatastore(ctx context.Context, in QueryDatastoreInput) (QueryDatastoreOutput, error) {
	if strings.TrimSpace(in.SQL) != "" {
		return p.queryDatastoreSQL(ctx, in)
	}
	req := &ckan.DatastoreSearchRequest{ResourceID: strings.TrimSpace(in.ResourceID), Q: in.Q, Fields: in.Fields,
		Distinct: in.Distinct, Limit: in.Limit, Offset: in.Offset, IncludeTotal: true}
	if req.ResourceID == "" {
		return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "resourceId: required (or give sql)")
	}
	if in.PartialMatch {
		tsq, err := prefixTSQuery(in.Q)
		if err != nil {
			return QueryDatastoreOutput{}, err
		}
		plain := false
		req.Q, req.Plain = tsq, &plain
	}
	for i, f := range in.Fields {
		if strings.TrimSpace(f) == "" {
			return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "fields[%d]: a column name must not be blank", i)
		}
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
		ResourceID: req.ResourceID, Fields: nonNil(res.Fields), Total: res.Total, Estimated: res.TotalWasEstimated,
		Limit: in.Limit, Offset: in.Offset, APIURL: resp.URL, APIBody: string(body),
	}
	if out.Records, err = decodeRecords("datastore_search", res.Records); err != nil {
		return QueryDatastoreOutput{}, err
	}
	return out, nil
}

// queryDatastoreSQL runs in.SQL through datastore_search_sql once it has
// been checked to be a single read-only SELECT.
func (p *pack) queryDatastoreSQL(ctx context.Context, in QueryDatastoreInput) (QueryDatastoreOutput, error) {
	switch {
	case strings.TrimSpace(in.ResourceID) != "" || in.Q != "" || in.PartialMatch || len(in.Filters) > 0 ||
		len(in.Fields) > 0 || in.Distinct || in.Sort != "":
		return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation,
			"sql: give either sql or resourceId with q, filters, fields, distinct and sort, not both")
	case in.Offset != 0:
		return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "offset: not with sql; put OFFSET in the query")
	}
	sql, err := checkSelectSQL(in.SQL)
	if err != nil {
		return QueryDatastoreOutput{}, tool.Errorf(tool.CodeValidation, "sql: %v", err)
	}
	c, err := p.client(in.Portal)
	if err != nil {
		return QueryDatastoreOutput{}, err
	}
	res, resp, err := c.DatastoreSearchSQL(ctx, sql)
	if err != nil {
		if sqlSearchUnavailable(err) {
			te := toolError(err).(*tool.Error)
			te.Code, te.Retryable = tool.CodeUnsupported, false
			te.Message = "this portal does not allow SQL queries (" + te.Message + "); use resourceId with q, filters, fields, distinct and sort instead"
			return QueryDatastoreOutput{}, te
		}
		return QueryDatastoreOutput{}, toolError(err)
	}
	body, _ := json.Marshal(map[string]string{"sql": sql})
	out := QueryDatastoreOutput{SQL: sql, Fields: nonNil(res.Fields), Total: len(res.Records), Truncated: res.RecordsTruncated,
		Limit: in.Limit, APIURL: resp.URL, APIBody: string(body)}
	recs := res.Records
	if len(recs) > in.Limit {
		recs, out.Truncated = recs[:in.Limit], true
	}
	if out.Records, err = decodeRecords("datastore_search_sql", recs); err != nil {
		return QueryDatastoreOutput{}, err
	}
	return out, nil
}

// sqlSearchUnavailable reports whether a portal refused datastore_search_sql
// as such: unknown or routed nowhere (CKAN 2.10+ registers it only with
// ckan.datastore.sqlsearch.enabled), closed to anonymous callers, or not found.
func sqlSearchUnavailable(err error) bool {
	if ckan.IsUnknownAction(err) {
		return true
	}
	var ce *ckan.Error
	return errors.As(err, &ce) && (ce.Type == ckan.TypeAuthorization || ce.Type == ckan.TypeNotFound)
}

// decodeRecords decodes datastore rows, keeping numbers exact.
func decodeRecords(action string, raws []json.RawMessage) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(raws))
	for i, raw := range raws {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil || rec == nil {
			return nil, &tool.Error{Code: tool.CodeParse,
				Message: fmt.Sprintf("%s: record %d is not a JSON object", action, i), Err: err}
		}
		out = append(out, rec)
	}
	return out, nil
}

// maxPrefixTerms bounds the words of a partialMatch query.
const maxPrefixTerms = 32

// prefixTSQuery turns free text into a PostgreSQL tsquery that matches rows
// holding every word as a prefix: "תל-אביב יפו" → "תל:* & אביב:* & יפו:*".
// Only letters, digits and combining marks (Hebrew points) survive, so no
// tsquery operator ( & | ! ( ) : * ' \ < > ) from the input reaches the
// portal: a word cannot change the query's shape. A Hebrew word becomes
// the OR of its prefixed and unprefixed forms (ckan.HebrewPrefixForms),
// "(תחבורה:* | התחבורה:* | …)", written here from letters only as well.
func prefixTSQuery(q string) (string, error) {
	words := strings.FieldsFunc(ckan.StripNiqqud(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	if len(words) == 0 {
		return "", tool.Errorf(tool.CodeValidation, "q: partialMatch needs at least one word of letters or digits")
	}
	if len(words) > maxPrefixTerms {
		return "", tool.Errorf(tool.CodeValidation, "q: partialMatch takes at most %d words, got %d", maxPrefixTerms, len(words))
	}
	// The forms of many words would make a query of hundreds of terms.
	perWord := 0
	if len(words) <= 6 {
		perWord = 12
	}
	for i, w := range words {
		forms := ckan.HebrewPrefixForms(w, perWord)
		if len(forms) < 2 {
			words[i] = w + ":*"
			continue
		}
		for j, f := range forms {
			forms[j] = f + ":*"
		}
		words[i] = "(" + strings.Join(forms, " | ") + ")"
	}
	return strings.Join(words, " & "), nil
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
