package ckan

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
)

// Activity is one entry of an activity stream: a dataset or organization
// created, changed or deleted. Data holds the object as it was after the
// change (e.g. {"package": {...}}); it is kept raw because its shape
// depends on the activity type.
type Activity struct {
	ID           string          `json:"id"`
	Timestamp    string          `json:"timestamp"`
	ActivityType string          `json:"activity_type"` // e.g. "new package", "changed package"
	UserID       string          `json:"user_id"`
	ObjectID     string          `json:"object_id"`
	Data         json.RawMessage `json:"data"`
}

// ActivityListParams are the query parameters of package_activity_list
// and organization_activity_list.
func ActivityListParams(id string, limit, offset int) url.Values {
	v := url.Values{"id": {id}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return v
}

// PackageActivityList returns a dataset's activity stream, newest first
// (package_activity_list). Since CKAN 2.10 the action belongs to the
// "activity" plugin; a portal without it does not know the action (see
// [IsUnknownAction]).
func (c *Client) PackageActivityList(ctx context.Context, id string, limit, offset int) ([]Activity, *Response, error) {
	var a []Activity
	resp, err := c.Get(ctx, "package_activity_list", ActivityListParams(id, limit, offset), &a)
	return a, resp, err
}

// OrganizationActivityList returns an organization's activity stream,
// newest first (organization_activity_list); see [Client.PackageActivityList].
func (c *Client) OrganizationActivityList(ctx context.Context, id string, limit, offset int) ([]Activity, *Response, error) {
	var a []Activity
	resp, err := c.Get(ctx, "organization_activity_list", ActivityListParams(id, limit, offset), &a)
	return a, resp, err
}
