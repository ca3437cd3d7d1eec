package opendata

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// activities is a CONSTRUCTED package_activity_list result in the shape
// CKAN documents (newest first; data holds the object after the change).
func activities(n int) []any {
	out := []any{}
	for i := range n {
		out = append(out, map[string]any{
			"id": "act-" + string(rune('a'+i)), "timestamp": "2024-03-0" + string(rune('1'+i)) + "T10:00:00.000000",
			"user_id": "u1", "object_id": "d-uuid", "activity_type": "changed package",
			"data": map[string]any{"package": map[string]any{"name": "budget", "title": "תקציב המדינה"},
				"group": map[string]any{"name": "mof", "title": "משרד האוצר"}},
		})
	}
	return out
}

func TestGetDatasetActivity(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_activity_list": okJSON(t, activities(3))})
	res, env := call(t, serverRegistry(t, srv), "getDatasetActivity", `{"id":"budget","limit":3,"offset":6}`)
	var out ActivityOutput
	mustOK(t, res, &out)
	if q := srv.Last(t).Query; q.Get("id") != "budget" || q.Get("limit") != "3" || q.Get("offset") != "6" {
		t.Errorf("query = %v", q)
	}
	a := out.Activities[0]
	if out.Count != 3 || !out.HasMore || a.ActivityType != "changed package" || a.ObjectTitle != "תקציב המדינה" ||
		a.ObjectName != "budget" || a.Timestamp != "2024-03-01T10:00:00.000000" || a.ObjectID != "d-uuid" {
		t.Errorf("output = %+v", out)
	}
	if out.APIURL != srv.URL+"/api/3/action/package_activity_list?id=budget&limit=3&offset=6" {
		t.Errorf("apiUrl = %s", out.APIURL)
	}
	if out.PortalURL != srv.URL+"/dataset/budget" {
		t.Errorf("portalUrl = %s", out.PortalURL)
	}
	if env["summary"] != `3 activities from offset 6; latest: changed package "תקציב המדינה" at 2024-03-01T10:00:00.000000; more with offset=9` {
		t.Errorf("summary = %v", env["summary"])
	}

	// A portal that ignores limit is cut to it.
	res, _ = call(t, serverRegistry(t, srv), "getDatasetActivity", `{"id":"budget","limit":2}`)
	mustOK(t, res, &out)
	if out.Count != 2 || len(out.Activities) != 2 {
		t.Errorf("limit not enforced: %+v", out)
	}
}

func TestGetOrganizationActivityReadsTheGroup(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"organization_activity_list": okJSON(t, activities(1))})
	res, _ := call(t, serverRegistry(t, srv), "getOrganizationActivity", `{"id":"mof"}`)
	var out ActivityOutput
	mustOK(t, res, &out)
	if out.Count != 1 || out.HasMore || out.Activities[0].ObjectTitle != "משרד האוצר" || srv.Last(t).Query.Get("limit") != "20" {
		t.Errorf("output = %+v, query %v", out, srv.Last(t).Query)
	}
}

// CKAN 2.10 moved the activity actions to a plugin: without it the portal
// does not know them, which is UNSUPPORTED; a missing dataset stays
// NOT_FOUND.
func TestActivityNotSupported(t *testing.T) {
	dataset := tooltest.Respond(200, "application/json", tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_show_17be64bb-da74-4195-9bb8-565c39846af2.json"))
	org := okJSON(t, map[string]any{"name": "mof", "package_count": 1})
	tests := []struct {
		name, tool string
		actions    map[string]http.HandlerFunc
		code       tool.Code
		calls      []string
	}{
		{"400 Action name not known", "getDatasetActivity", map[string]http.HandlerFunc{
			"package_activity_list": tooltest.Respond(400, "application/json", []byte(`"Bad request - Action name not known: package_activity_list"`)),
		}, tool.CodeUnsupported, []string{"package_activity_list"}},
		{"404 HTML: no such path on the portal", "getOrganizationActivity", map[string]http.HandlerFunc{
			"organization_activity_list": tooltest.Respond(404, "text/html", []byte("<h1>Not Found</h1>")),
		}, tool.CodeUnsupported, []string{"organization_activity_list"}},
		{"Not Found Error for a dataset that exists", "getDatasetActivity", map[string]http.HandlerFunc{"package_show": dataset},
			tool.CodeUnsupported, []string{"package_activity_list", "package_show"}},
		{"Not Found Error for an organization that exists", "getOrganizationActivity", map[string]http.HandlerFunc{"organization_show": org},
			tool.CodeUnsupported, []string{"organization_activity_list", "organization_show"}},
		{"Not Found Error for a dataset that does not exist", "getDatasetActivity", map[string]http.HandlerFunc{},
			tool.CodeNotFound, []string{"package_activity_list", "package_show"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, tt.actions)
			res, _ := call(t, serverRegistry(t, srv), tt.tool, `{"id":"x"}`)
			e := mustFail(t, res, tt.code)
			if tt.code == tool.CodeUnsupported && (!strings.Contains(e.Message, "activity plugin") || e.Retryable) {
				t.Errorf("error = %+v", e)
			}
			var calls []string
			for _, r := range srv.Requests() {
				calls = append(calls, tooltest.CKANAction(r))
			}
			if strings.Join(calls, ",") != strings.Join(tt.calls, ",") {
				t.Errorf("calls = %v, want %v", calls, tt.calls)
			}
		})
	}
}
