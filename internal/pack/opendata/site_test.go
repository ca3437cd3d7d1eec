package opendata

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestGetStatus(t *testing.T) {
	// CONSTRUCTED: status_show's documented result shape (the fields CKAN
	// 2.9's status_show returns), with a Hebrew title.
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"status_show": okJSON(t, map[string]any{
		"site_title": "האתר הלאומי לנתונים פתוחים", "site_description": "", "site_url": "https://data.gov.il",
		"ckan_version": "2.9.11", "locale_default": "he", "error_emails_to": nil,
		"extensions": []any{"datastore", "scheming_datasets", "activity"},
	})})
	res, env := call(t, serverRegistry(t, srv), "getStatus", `{}`)
	var out GetStatusOutput
	mustOK(t, res, &out)
	if out.CKANVersion != "2.9.11" || out.SiteTitle != "האתר הלאומי לנתונים פתוחים" || out.SiteURL != "https://data.gov.il" ||
		!slices.Equal(out.Extensions, []string{"datastore", "scheming_datasets", "activity"}) || out.LocaleDefault != "he" {
		t.Errorf("output = %+v", out)
	}
	if out.PortalURL != srv.URL {
		t.Errorf("portalUrl = %s", out.PortalURL)
	}
	if out.APIURL != srv.URL+"/api/3/action/status_show" {
		t.Errorf("apiUrl = %s", out.APIURL)
	}
	if env["summary"] != "האתר הלאומי לנתונים פתוחים: CKAN 2.9.11, 3 extensions" {
		t.Errorf("summary = %v", env["summary"])
	}

	// A portal that lists no extensions still gives a list.
	srv = tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"status_show": okJSON(t, map[string]any{"ckan_version": "2.10.1"})})
	res, _ = call(t, serverRegistry(t, srv), "getStatus", `{}`)
	if !strings.Contains(string(res.JSON), `"extensions":[]`) {
		t.Errorf("output = %s", res.JSON)
	}
}

func TestListLicenses(t *testing.T) {
	// CONSTRUCTED: two entries of CKAN's default licence list in
	// license_list's documented shape; the second has booleans as strings
	// and no conformance, as older portals send.
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"license_list": okJSON(t, []any{
		map[string]any{"id": "cc-by", "title": "Creative Commons Attribution", "url": "http://www.opendefinition.org/licenses/cc-by",
			"status": "active", "od_conformance": "approved", "osd_conformance": "not reviewed", "family": "",
			"domain_content": true, "domain_data": false, "domain_software": false, "maintainer": "", "is_generic": false},
		map[string]any{"id": "other-at", "title": "אחר (ייחוס)", "domain_data": "True", "is_generic": "True"},
	})})
	res, env := call(t, serverRegistry(t, srv), "listLicenses", `{}`)
	var out ListLicensesOutput
	mustOK(t, res, &out)
	want := []LicenseInfo{
		{ID: "cc-by", Title: "Creative Commons Attribution", URL: "http://www.opendefinition.org/licenses/cc-by", Status: "active",
			ODConformance: "approved", OSDConformance: "not reviewed", DomainContent: true},
		{ID: "other-at", Title: "אחר (ייחוס)", DomainData: true},
	}
	if !slices.Equal(out.Licenses, want) || out.Count != 2 || out.APIURL != srv.URL+"/api/3/action/license_list" {
		t.Errorf("output = %+v", out)
	}
	if env["summary"] != "2 licences" {
		t.Errorf("summary = %v", env["summary"])
	}
}

func TestListAllDatasets(t *testing.T) {
	// demo.ckan.org's recorded package_list (three names).
	recorded := tooltest.Respond(200, "application/json", tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_list.json"))
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_list": recorded})
	reg := serverRegistry(t, srv)

	res, env := call(t, reg, "listAllDatasets", `{"limit":3,"offset":3}`)
	var out ListAllDatasetsOutput
	mustOK(t, res, &out)
	if q := srv.Last(t).Query; q.Get("limit") != "3" || q.Get("offset") != "3" {
		t.Errorf("query = %v", q)
	}
	if out.Count != 3 || out.Names[0] != "100-validated-species-of-plants" || !out.HasMore || out.Total != nil ||
		!strings.Contains(out.Note, "no total") || out.APIURL != srv.URL+"/api/3/action/package_list?limit=3&offset=3" {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(string(res.JSON), `"total":null`) || !strings.HasPrefix(env["summary"].(string), `3 dataset names from offset 3 (the portal gives no total): "100-validated-species-of-plants", `) || !strings.HasSuffix(env["summary"].(string), "; more with offset=6") {
		t.Errorf("result %s summary %v", res.JSON, env["summary"])
	}

	// A short page means the end; a portal that ignores limit is cut to it.
	res, _ = call(t, reg, "listAllDatasets", `{"limit":10}`)
	mustOK(t, res, &out)
	if out.HasMore || out.Count != 3 {
		t.Errorf("short page: %+v", out)
	}
	res, _ = call(t, reg, "listAllDatasets", `{"limit":2}`)
	mustOK(t, res, &out)
	if !out.HasMore || out.Count != 2 || len(out.Names) != 2 {
		t.Errorf("portal ignoring limit: %+v", out)
	}
}

func TestGetOrganizationDetails(t *testing.T) {
	pkgs := tooltest.CKANResult(t, "demo.ckan.org/package_search_rows3_facets.json")
	var search struct{ Results []json.RawMessage }
	if err := json.Unmarshal(pkgs, &search); err != nil {
		t.Fatal(err)
	}
	// CONSTRUCTED: organization_show's documented shape; its packages are
	// the three datasets recorded from demo.ckan.org's package_search.
	org := map[string]any{
		"id": "b1d3b1a5-0000-4000-8000-000000000001", "name": "ministry-of-health", "title": "משרד הבריאות",
		"display_name": "משרד הבריאות", "description": "נתונים של משרד הבריאות", "image_url": "", "image_display_url": "https://data.gov.il/x.png",
		"created": "2016-05-03T09:18:41.123456", "state": "active", "type": "organization", "is_organization": true,
		"package_count": 57, "extras": []any{map[string]any{"key": "phone", "value": "*5400"}},
		"packages": search.Results,
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"organization_show": okJSON(t, org)})
	reg := serverRegistry(t, srv)

	res, env := call(t, reg, "getOrganizationDetails", `{"id":"ministry-of-health","includeDatasets":true,"datasetsLimit":2}`)
	var out GetOrganizationDetailsOutput
	mustOK(t, res, &out)
	if q := srv.Last(t).Query; q.Get("id") != "ministry-of-health" || q.Get("include_datasets") != "true" {
		t.Errorf("query = %v", q)
	}
	if out.Name != "ministry-of-health" || out.DisplayName != "משרד הבריאות" || out.PackageCount != 57 ||
		out.ImageURL != "https://data.gov.il/x.png" || out.Extras["phone"] != "*5400" ||
		out.PortalURL != srv.URL+"/organization/ministry-of-health" {
		t.Errorf("output = %+v", out)
	}
	if len(out.Datasets) != 2 || out.Datasets[0].Name != "100-validated-species-of-plants" || !out.DatasetsTruncated {
		t.Errorf("datasets = %+v truncated %v", out.Datasets, out.DatasetsTruncated)
	}
	if out.APIURL != srv.URL+"/api/3/action/organization_show?id=ministry-of-health&include_datasets=true" {
		t.Errorf("apiUrl = %s", out.APIURL)
	}
	if env["summary"] != `"משרד הבריאות": 57 datasets, first 2: "100 Validated Species of Plants", "規管海外物業銷售"; all with searchDatasets organization="ministry-of-health"` {
		t.Errorf("summary = %v", env["summary"])
	}

	res, _ = call(t, reg, "getOrganizationDetails", `{"id":"ministry-of-health"}`)
	out = GetOrganizationDetailsOutput{}
	mustOK(t, res, &out)
	if srv.Last(t).Query.Get("include_datasets") != "false" || out.Datasets != nil {
		t.Errorf("without includeDatasets: query %v, datasets %v", srv.Last(t).Query, out.Datasets)
	}
}

func TestGetDatasetSchema(t *testing.T) {
	// CONSTRUCTED: scheming_dataset_schema_show's documented shape
	// (ckanext-scheming), with a multilingual label and a select field.
	schema := map[string]any{
		"scheming_version": 2, "dataset_type": "dataset", "about": "A reimplementation of the default CKAN dataset schema",
		"dataset_fields": []any{
			map[string]any{"field_name": "title", "label": "Title", "preset": "title", "required": true},
			map[string]any{"field_name": "frequency", "label": map[string]any{"en": "Frequency", "he": "תדירות"},
				"preset": "select", "choices": []any{map[string]any{"value": "daily", "label": "יומי"}, map[string]any{"value": 7, "label": "weekly"}}},
		},
		"resource_fields": []any{map[string]any{"field_name": "url", "label": "URL", "preset": "resource_url_upload"}},
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"scheming_dataset_schema_show": okJSON(t, schema)})
	res, env := call(t, serverRegistry(t, srv), "getDatasetSchema", `{}`)
	var out GetDatasetSchemaOutput
	mustOK(t, res, &out)
	if q := srv.Last(t).Query; q.Get("type") != "dataset" {
		t.Errorf("query = %v", q)
	}
	if len(out.DatasetFields) != 2 || len(out.ResourceFields) != 1 || !out.DatasetFields[0].Required ||
		out.DatasetFields[1].Preset != "select" || len(out.DatasetFields[1].Choices) != 2 ||
		out.DatasetFields[1].Choices[1].Value != "7" || out.Truncated {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(string(res.JSON), `"label":{"en":"Frequency","he":"תדירות"}`) {
		t.Errorf("multilingual label lost: %s", res.JSON)
	}
	if out.APIURL != srv.URL+"/api/3/action/scheming_dataset_schema_show?type=dataset" {
		t.Errorf("apiUrl = %s", out.APIURL)
	}
	if env["summary"] != `schema "dataset": 2 dataset fields, 1 resource fields` {
		t.Errorf("summary = %v", env["summary"])
	}
}

// A portal without ckanext-scheming does not know the action: CKAN answers
// 400 with a bare string (CONSTRUCTED from CKAN's wording).
func TestGetDatasetSchemaWithoutScheming(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"400 Action name not known": tooltest.Respond(400, "application/json", []byte(`"Bad request - Action name not known: scheming_dataset_schema_show"`)),
		"404 from a proxy":          tooltest.Respond(404, "text/html", []byte("<h1>Not Found</h1>")),
		"404 Not Found Error":       nil, // the test server's answer to an action it does not serve
	} {
		t.Run(name, func(t *testing.T) {
			actions := map[string]http.HandlerFunc{}
			if h != nil {
				actions["scheming_dataset_schema_show"] = h
			}
			srv := tooltest.NewCKANServer(t, actions)
			res, _ := call(t, serverRegistry(t, srv), "getDatasetSchema", `{}`)
			e := mustFail(t, res, tool.CodeUnsupported)
			if !strings.HasPrefix(e.Message, "this portal does not offer") || !strings.Contains(e.Message, "ckanext-scheming") || e.Retryable {
				t.Errorf("error = %+v", e)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d calls; an unsupported action is not retried", len(srv.Requests()))
			}
		})
	}
}
