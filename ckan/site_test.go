package ckan

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

func testClient(t *testing.T, actions map[string]http.HandlerFunc) (*Client, *tooltest.Server) {
	t.Helper()
	srv := tooltest.NewCKANServer(t, actions)
	c, err := NewClient(srv.URL, WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func TestIsUnknownAction(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		want   bool
	}{
		// CONSTRUCTED from the text CKAN's API view answers an unknown action
		// with (a bare JSON string, HTTP 400), as quoted from
		// dados.sc.gov.br in a public note; "Requisição incorreta" is the
		// localized "Bad request".
		{"400 bare string, English", 400, "application/json", `"Bad request - Action name not known: resource_search"`, true},
		{"400 bare string, localized", 400, "application/json;charset=utf-8", `"Requisição incorreta - Action name not known: datastore_search"`, true},
		{"400 envelope naming the action", 400, "application/json", `{"success":false,"error":{"message":"Bad request - Action name not known: x"}}`, true},
		{"404 HTML from a proxy", 404, "text/html", `<h1>Not Found</h1>`, true},
		{"404 CKAN Not Found Error is ambiguous", 404, "application/json", `{"success":false,"error":{"__type":"Not Found Error","message":"Not found"}}`, false},
		{"400 Validation Error", 400, "application/json", `{"success":false,"error":{"__type":"Validation Error","id":["Missing value"]}}`, false},
		{"500", 500, "text/html", `oops`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := testClient(t, map[string]http.HandlerFunc{"status_show": tooltest.Respond(tt.status, tt.ctype, []byte(tt.body))})
			_, _, err := c.StatusShow(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			if got := IsUnknownAction(err); got != tt.want {
				t.Errorf("IsUnknownAction(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
	if IsUnknownAction(errors.New("x")) || IsUnknownAction(nil) {
		t.Error("a non-CKAN error counts as an unknown action")
	}
}

// The bare-string answer keeps CKAN's words in the error.
func TestBareStringErrorMessage(t *testing.T) {
	c, _ := testClient(t, map[string]http.HandlerFunc{"status_show": tooltest.Respond(400, "application/json",
		[]byte(`"Bad request - Action name not known: status_show"`))})
	_, _, err := c.StatusShow(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Message != "Bad request - Action name not known: status_show" || e.StatusCode != 400 {
		t.Fatalf("err = %#v", err)
	}
}

// package_list against demo.ckan.org's recorded answer.
func TestPackageList(t *testing.T) {
	c, srv := testClient(t, map[string]http.HandlerFunc{
		"package_list": tooltest.Respond(200, "application/json", fixture(t, "demo.ckan.org/package_list.json")),
	})
	names, _, err := c.PackageList(context.Background(), 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 || names[2] != "2016-regione-asia-est-oceania-classi-di-eta" {
		t.Errorf("names = %v", names)
	}
	if q := srv.Last(t).Query; q.Get("limit") != "3" || q.Get("offset") != "6" {
		t.Errorf("query = %v", q)
	}
}

func TestRequestShapes(t *testing.T) {
	ok := func(result string) http.HandlerFunc {
		return tooltest.Respond(200, "application/json", []byte(`{"success":true,"result":`+result+`}`))
	}
	c, srv := testClient(t, map[string]http.HandlerFunc{
		"resource_search":              ok(`{"count":0,"results":[]}`),
		"datastore_search":             ok(`{"fields":[{"id":"_id","type":"int"}],"records":[],"total":7}`),
		"organization_show":            ok(`{"name":"o","package_count":3}`),
		"package_activity_list":        ok(`[]`),
		"scheming_dataset_schema_show": ok(`{"dataset_type":"dataset"}`),
	})
	ctx := context.Background()

	if _, _, err := c.ResourceSearch(ctx, &ResourceSearchOptions{Query: []string{"name:תקציב", "format:csv"}, Limit: 5, Offset: 10}); err != nil {
		t.Fatal(err)
	}
	if q := srv.Last(t).Query; !slices.Equal(q["query"], []string{"name:תקציב", "format:csv"}) || q.Get("limit") != "5" || q.Get("offset") != "10" {
		t.Errorf("resource_search query = %v", q)
	}

	res, _, err := c.DatastoreInfo(ctx, "r1")
	if err != nil || res.Total != 7 || len(res.Fields) != 1 {
		t.Fatalf("DatastoreInfo = %+v, %v", res, err)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &body); err != nil || body["limit"] != float64(0) || body["resource_id"] != "r1" {
		t.Errorf("datastore_search body = %s (limit 0 must be sent, not omitted)", srv.Last(t).Body)
	}

	for _, include := range []bool{true, false} {
		o, _, err := c.OrganizationShow(ctx, "o", include)
		if err != nil || o.PackageCount != 3 {
			t.Fatalf("OrganizationShow = %+v, %v", o, err)
		}
		if got, want := srv.Last(t).Query.Get("include_datasets"), map[bool]string{true: "true", false: "false"}[include]; got != want {
			t.Errorf("include_datasets = %q, want %q", got, want)
		}
	}

	if _, _, err := c.PackageActivityList(ctx, "d", 20, 40); err != nil {
		t.Fatal(err)
	}
	if q := srv.Last(t).Query; q.Get("id") != "d" || q.Get("limit") != "20" || q.Get("offset") != "40" {
		t.Errorf("package_activity_list query = %v", q)
	}

	if _, _, err := c.DatasetSchemaShow(ctx, "dataset"); err != nil {
		t.Fatal(err)
	}
	if q := srv.Last(t).Query; q.Get("type") != "dataset" {
		t.Errorf("scheming query = %v", q)
	}
}
