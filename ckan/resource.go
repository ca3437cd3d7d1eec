package ckan

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
)

// ResourceShow returns one resource by id (resource_show).
func (c *Client) ResourceShow(ctx context.Context, id string) (*Resource, *Response, error) {
	var r Resource
	resp, err := c.Get(ctx, "resource_show", url.Values{"id": {id}}, &r)
	if err != nil {
		return nil, nil, err
	}
	return &r, resp, nil
}

// DatastoreInfo returns a datastore table's columns with their types and
// its row count, without rows (datastore_search with limit 0).
func (c *Client) DatastoreInfo(ctx context.Context, resourceID string) (*DatastoreSearchResult, *Response, error) {
	return c.DatastoreSearch(ctx, &DatastoreSearchRequest{ResourceID: resourceID, Limit: 0, IncludeTotal: true})
}

// ResourceSearchOptions are the arguments of resource_search.
type ResourceSearchOptions struct {
	// Query holds "field:term" pairs, e.g. "name:budget", "format:csv";
	// a resource must match all of them. CKAN matches a term as a
	// case-insensitive substring of the field.
	Query   []string
	OrderBy string // a resource field; "" is the portal's order
	Limit   int
	Offset  int
}

// Params encodes the options as resource_search query parameters; each
// term is its own "query" parameter, which CKAN reads as a list.
func (o *ResourceSearchOptions) Params() url.Values {
	v := url.Values{}
	for _, q := range o.Query {
		v.Add("query", q)
	}
	if o.OrderBy != "" {
		v.Set("order_by", o.OrderBy)
	}
	if o.Limit > 0 {
		v.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		v.Set("offset", strconv.Itoa(o.Offset))
	}
	return v
}

// ResourceSearchResult is resource_search's result.
type ResourceSearchResult struct {
	Count   int        `json:"count"`
	Results []Resource `json:"results"`
}

// ResourceSearch searches resources across datasets (resource_search).
// Some portals disable it (see [IsUnknownAction]); package_search over
// res_name / res_format is the fallback.
func (c *Client) ResourceSearch(ctx context.Context, opts *ResourceSearchOptions) (*ResourceSearchResult, *Response, error) {
	var res ResourceSearchResult
	resp, err := c.Get(ctx, "resource_search", opts.Params(), &res)
	if err != nil {
		return nil, nil, err
	}
	return &res, resp, nil
}

// DatasetSchema is ckanext-scheming's description of a dataset type
// (scheming_dataset_schema_show). Labels and help texts may be strings or
// objects keyed by language, so they are kept raw.
type DatasetSchema struct {
	SchemingVersion json.RawMessage `json:"scheming_version"`
	DatasetType     string          `json:"dataset_type"`
	About           json.RawMessage `json:"about"`
	AboutURL        string          `json:"about_url"`
	DatasetFields   []SchemaField   `json:"dataset_fields"`
	ResourceFields  []SchemaField   `json:"resource_fields"`
}

// SchemaField is one field of a scheming schema.
type SchemaField struct {
	FieldName string          `json:"field_name"`
	Label     json.RawMessage `json:"label"`
	Preset    string          `json:"preset"`
	Required  FlexBool        `json:"required"`
	HelpText  json.RawMessage `json:"help_text"`
	Choices   []SchemaChoice  `json:"choices"`
}

// SchemaChoice is one allowed value of a select field.
type SchemaChoice struct {
	Value FlexString      `json:"value"`
	Label json.RawMessage `json:"label"`
}

// DatasetSchemaShow returns the scheming schema of a dataset type, usually
// "dataset" (scheming_dataset_schema_show). Portals without
// ckanext-scheming do not know the action (see [IsUnknownAction]).
func (c *Client) DatasetSchemaShow(ctx context.Context, datasetType string) (*DatasetSchema, *Response, error) {
	var s DatasetSchema
	resp, err := c.Get(ctx, "scheming_dataset_schema_show", url.Values{"type": {datasetType}}, &s)
	if err != nil {
		return nil, nil, err
	}
	return &s, resp, nil
}
