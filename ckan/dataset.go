package ckan

import (
	"context"
	"net/url"
)

// PackageShow returns one dataset by name or id (package_show).
func (c *Client) PackageShow(ctx context.Context, id string) (*Package, *Response, error) {
	var pkg Package
	resp, err := c.Get(ctx, "package_show", url.Values{"id": {id}}, &pkg)
	if err != nil {
		return nil, nil, err
	}
	return &pkg, resp, nil
}
