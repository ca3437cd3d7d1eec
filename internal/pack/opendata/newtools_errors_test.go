package opendata

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// newTools are the tools added for data-israel's agent, each with the action
// it calls first and arguments that reach the portal.
var newTools = []struct {
	tool, action, args string
	// notFound is the code of a "Not Found Error" from the action: the
	// schema tool reads it as a portal without the schema.
	notFound tool.Code
}{
	{"getResourceDetails", "resource_show", `{"id":"r1"}`, tool.CodeNotFound},
	{"searchResources", "resource_search", `{"query":"x"}`, tool.CodeNotFound},
	{"getOrganizationDetails", "organization_show", `{"id":"o"}`, tool.CodeNotFound},
	{"getDatasetActivity", "package_activity_list", `{"id":"d"}`, tool.CodeNotFound},
	{"getOrganizationActivity", "organization_activity_list", `{"id":"o"}`, tool.CodeNotFound},
	{"getDatasetSchema", "scheming_dataset_schema_show", `{}`, tool.CodeUnsupported},
	{"listAllDatasets", "package_list", `{}`, tool.CodeNotFound},
	{"listLicenses", "license_list", `{}`, tool.CodeNotFound},
	{"getStatus", "status_show", `{}`, tool.CodeNotFound},
}

// Every new tool maps the portal's failures like the first six do, names
// the action, and keeps Hebrew messages as they came.
func TestNewToolsUpstreamErrors(t *testing.T) {
	const html = "text/html; charset=utf-8"
	const js = "application/json"
	cases := []struct {
		name      string
		handler   http.HandlerFunc
		code      tool.Code // "" means the tool's notFound code
		retryable bool
		message   string
	}{
		{"404 with data.gov.il's Hebrew Not Found",
			tooltest.Respond(404, js, tooltest.JSONFixture(t, "ckan", "data.gov.il/error_not_found_resource_he.json")),
			"", false, "Not Found Error: לא נמצא: Resource was not found."},
		{"200 success false Validation Error",
			tooltest.Respond(200, js, tooltest.JSONFixture(t, "ckan", "data.gov.il/error_validation_filters.json")),
			tool.CodeValidation, false, "Validation Error: filters: Cannot parse JSON"},
		{"500 HTML", tooltest.Respond(500, html, []byte("<h1>Internal Server Error</h1>")),
			tool.CodeHTTP, false, "HTTP 500 Internal Server Error"},
		{"503 is retried", tooltest.Respond(503, html, []byte("<h1>down</h1>")),
			tool.CodeHTTP, true, "HTTP 503 Service Unavailable"},
		{"200 HTML", tooltest.Respond(200, html, []byte("<!doctype html><title>Maintenance</title>")),
			tool.CodeParse, false, "response is text/html, not JSON"},
		{"200 truncated JSON", tooltest.Respond(200, js, []byte(`{"success": true, "result": [{"id": "a`)),
			tool.CodeParse, false, "not valid JSON"},
		{"200 success with a result of the wrong type", tooltest.Respond(200, js, []byte(`{"success":true,"result":"nope"}`)),
			tool.CodeParse, false, "unexpected result structure"},
		{"200 JSON that is not a CKAN response", tooltest.Respond(200, js, []byte(`{"results":[]}`)),
			tool.CodeParse, false, `no "success" field`},
	}
	for _, nt := range newTools {
		for _, tc := range cases {
			if nt.tool == "searchResources" && tc.code == "" {
				continue // a Not Found resource_search falls back: TestSearchResourcesFallback
			}
			t.Run(nt.tool+"/"+tc.name, func(t *testing.T) {
				srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{nt.action: tc.handler})
				res, env := call(t, serverRegistry(t, srv), nt.tool, nt.args)
				code := tc.code
				if code == "" {
					code = nt.notFound
				}
				e := mustFail(t, res, code)
				if !strings.Contains(e.Message, nt.action) || !strings.Contains(e.Message, tc.message) {
					t.Errorf("message = %q, want it to name %s and contain %q", e.Message, nt.action, tc.message)
				}
				if e.Retryable != tc.retryable || env["success"] != false {
					t.Errorf("retryable = %v, want %v; envelope %s", e.Retryable, tc.retryable, res.JSON)
				}
			})
		}
	}
}

// Each new tool is registered, and reports the API call it made.
func TestNewToolsAreRegisteredAndValidate(t *testing.T) {
	reg := newRegistry(t, Config{BaseURL: "http://127.0.0.1:1"})
	for _, nt := range newTools {
		if _, ok := reg.Lookup(nt.tool); !ok {
			t.Errorf("%s is not registered", nt.tool)
		}
	}
	bad := []struct{ tool, args, want string }{
		{"getResourceDetails", `{"id":"   "}`, "id: must not be blank"},
		{"getResourceDetails", `{}`, "id"},
		{"searchResources", `{}`, "give at least one of query, datasetId and format"},
		{"searchResources", `{"query":"x","limit":101}`, "limit"},
		{"searchResources", `{"query":"secret:x"}`, `field "secret" is not one of`},
		{"searchResources", `{"query":"name:"}`, "needs a term"},
		{"getOrganizationDetails", `{"id":"o","datasetsLimit":0}`, "datasetsLimit"},
		{"getDatasetActivity", `{"id":"d","limit":101}`, "limit"},
		{"getOrganizationActivity", `{"id":"d","offset":-1}`, "offset"},
		{"getDatasetSchema", `{"type":""}`, "type"},
		{"listAllDatasets", `{"limit":1001}`, "limit"},
		{"listLicenses", `{"portal":"ftp://x"}`, "portal"},
		{"getStatus", `{"extra":1}`, "extra"},
	}
	for _, b := range bad {
		res, _ := call(t, reg, b.tool, b.args)
		code := tool.CodeValidation
		if strings.Contains(b.args, "ftp://") {
			code = tool.CodeInvalidURL
		}
		if e := mustFail(t, res, code); !strings.Contains(e.Message, b.want) && !strings.Contains(string(res.JSON), b.want) {
			t.Errorf("%s %s: %s, want it to mention %q", b.tool, b.args, e.Message, b.want)
		}
	}
}
