package ckan

import (
	"context"
	"encoding/json"
)

// DatastoreSearchRequest is the body of datastore_search. It is sent as
// JSON with POST: filters are structured, and no SQL is ever built.
type DatastoreSearchRequest struct {
	ResourceID string `json:"resource_id"`
	Q          string `json:"q,omitempty"` // full-text search over all columns
	// Plain false makes CKAN read Q as a PostgreSQL tsquery ("word:*" for
	// a prefix); nil leaves CKAN's default, plain text.
	Plain        *bool          `json:"plain,omitempty"`
	Distinct     bool           `json:"distinct,omitempty"` // only distinct rows of the chosen fields
	Filters      map[string]any `json:"filters,omitempty"`  // column → value, or list of values (any of)
	Fields       []string       `json:"fields,omitempty"`   // columns to return; all when empty
	Sort         string         `json:"sort,omitempty"`     // "column asc, column2 desc"
	Limit        int            `json:"limit"`              // 0: columns and total, no records
	Offset       int            `json:"offset,omitempty"`
	IncludeTotal bool           `json:"include_total"`
}

// DatastoreSearchResult is datastore_search's result. Records are kept raw
// so that numbers keep their precision.
type DatastoreSearchResult struct {
	ResourceID        string            `json:"resource_id"`
	Fields            []DatastoreField  `json:"fields"`
	Records           []json.RawMessage `json:"records"`
	Total             int               `json:"total"`
	TotalWasEstimated bool              `json:"total_was_estimated"`
}

// DatastoreField is a column of a datastore table.
type DatastoreField struct {
	ID   string `json:"id"`
	Type string `json:"type" jsonschema:"The column's type: text, numeric, int, float, timestamp, date, bool, json…"`
}

// DatastoreSearch queries the rows of a resource loaded into the datastore.
func (c *Client) DatastoreSearch(ctx context.Context, req *DatastoreSearchRequest) (*DatastoreSearchResult, *Response, error) {
	var res DatastoreSearchResult
	resp, err := c.Post(ctx, "datastore_search", req, &res)
	if err != nil {
		return nil, nil, err
	}
	return &res, resp, nil
}

// DatastoreSearchSQLResult is datastore_search_sql's result.
type DatastoreSearchSQLResult struct {
	Fields  []DatastoreField  `json:"fields"`
	Records []json.RawMessage `json:"records"`
	// RecordsTruncated is set when the portal cut the rows at its
	// ckan.datastore.search.rows_max.
	RecordsTruncated bool `json:"records_truncated"`
}

// DatastoreSearchSQL runs a SQL SELECT over datastore tables (named by
// resource id in double quotes). Portals must enable it
// (ckan.datastore.sqlsearch.enabled); one that does not answers as for an
// unknown action or with an Authorization Error. The client sends sql as
// given: checking it is the caller's business.
func (c *Client) DatastoreSearchSQL(ctx context.Context, sql string) (*DatastoreSearchSQLResult, *Response, error) {
	var res DatastoreSearchSQLResult
	resp, err := c.Post(ctx, "datastore_search_sql", map[string]string{"sql": sql}, &res)
	if err != nil {
		return nil, nil, err
	}
	return &res, resp, nil
}
