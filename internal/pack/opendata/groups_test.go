package opendata

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// groupPortal serves group_list (or organization_list) over n groups like
// CKAN does: limit and offset honoured, all_fields pages capped at 25,
// name lists capped at 1000.
func groupPortal(t *testing.T, n int, isOrg bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		all := q.Get("all_fields") == "true"
		limit, offset := n, 0
		if v := q.Get("limit"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		if v := q.Get("offset"); v != "" {
			offset, _ = strconv.Atoi(v)
		}
		if all {
			limit = min(limit, 25)
		}
		limit = min(limit, 1000)
		names, groups := []any{}, []any{}
		for i := offset; i < min(offset+limit, n); i++ {
			name := fmt.Sprintf("group-%02d", i)
			names = append(names, name)
			groups = append(groups, map[string]any{
				"id": fmt.Sprintf("id-%02d", i), "name": name, "title": fmt.Sprintf("קבוצה %d", i),
				"display_name": fmt.Sprintf("קבוצה %d", i), "description": "d", "package_count": i,
				"is_organization": isOrg, "type": map[bool]string{true: "organization", false: "group"}[isOrg],
			})
		}
		if all {
			okJSON(t, groups)(w, r)
		} else {
			okJSON(t, names)(w, r)
		}
	}
}

func TestListGroupsNames(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"group_list": groupPortal(t, 30, false)})
	res, env := call(t, serverRegistry(t, srv), "listGroups", `{}`)
	var out ListGroupsOutput
	mustOK(t, res, &out)
	if out.Count != 30 || len(out.Names) != 30 || out.Names[0] != "group-00" || out.Groups != nil {
		t.Errorf("count %d, names %v, groups %v", out.Count, out.Names, out.Groups)
	}
	first := srv.Requests()[0]
	if tooltest.CKANAction(first) != "group_list" || first.Query.Get("all_fields") != "" || first.Query.Get("limit") != "100" {
		t.Errorf("first call %s?%s", tooltest.CKANAction(first), first.URL.RawQuery)
	}
	if want := srv.URL + "/api/3/action/group_list?limit=100"; out.APIURL != want {
		t.Errorf("apiUrl = %s, want %s", out.APIURL, want)
	}
	if env["summary"] != `30 groups: "group-00", "group-01", "group-02", "group-03", "group-04" and 25 more` {
		t.Errorf("summary = %v", env["summary"])
	}
}

func TestListGroupsAllFieldsFixture(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"group_list": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("offset") != "" { // the fixture is the whole list
				okJSON(t, []any{})(w, r)
				return
			}
			tooltest.Respond(200, "application/json", tooltest.JSONFixture(t, "ckan", "ckan-2.8-local/group_list_all_fields.json"))(w, r)
		},
	})
	res, _ := call(t, serverRegistry(t, srv), "listGroups", `{"allFields":true}`)
	var out ListGroupsOutput
	mustOK(t, res, &out)
	want := []GroupInfo{{
		ID: "29a82d2f-11c5-48e2-884b-0f34d936bedd", Name: "test-group", DisplayName: "Economic Data",
		Description: "A collection of economic indicators available on DataHub.", PackageCount: 2,
		ImageURL:  "https://datahub.io/static/img/awesome-data/economic-data.png",
		PortalURL: srv.URL + "/group/test-group",
	}}
	if !slices.Equal(out.Groups, want) || !slices.Equal(out.Names, []string{"test-group"}) {
		t.Errorf("groups = %+v", out.Groups)
	}
	if q := srv.Requests()[0].Query; q.Get("all_fields") != "true" || q.Get("limit") != "25" {
		t.Errorf("first call asked %v", q)
	}
}

// The spec's paging scenario, and paging past the portal's 25-per-call cap.
func TestListGroupsPagingPastTheCap(t *testing.T) {
	tests := []struct {
		args                 string
		wantFirst, wantCount int
		wantCalls            [][2]int // limit, offset of each call
	}{
		{`{"allFields":true,"limit":20,"offset":10}`, 10, 20, [][2]int{{20, 10}}},
		{`{"allFields":true,"limit":30,"offset":10}`, 10, 30, [][2]int{{25, 10}, {5, 35}}},
		{`{"allFields":true,"limit":100}`, 0, 60, [][2]int{{25, 0}, {25, 25}, {25, 50}, {25, 60}}},
		{`{"allFields":true,"limit":5,"offset":58}`, 58, 2, [][2]int{{5, 58}, {3, 60}}},
		{`{"allFields":true,"offset":500}`, 0, 0, [][2]int{{25, 500}}},
		{`{"limit":20,"offset":10}`, 10, 20, [][2]int{{20, 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"group_list": groupPortal(t, 60, false)})
			res, _ := call(t, serverRegistry(t, srv), "listGroups", tt.args)
			var out ListGroupsOutput
			mustOK(t, res, &out)
			if out.Count != tt.wantCount || len(out.Names) != tt.wantCount {
				t.Fatalf("count %d (%d names), want %d", out.Count, len(out.Names), tt.wantCount)
			}
			for i, name := range out.Names {
				if want := fmt.Sprintf("group-%02d", tt.wantFirst+i); name != want {
					t.Fatalf("names[%d] = %s, want %s", i, name, want)
				}
			}
			var calls [][2]int
			for _, c := range srv.Requests() {
				l, _ := strconv.Atoi(c.Query.Get("limit"))
				o, _ := strconv.Atoi(c.Query.Get("offset"))
				calls = append(calls, [2]int{l, o})
			}
			if !slices.Equal(calls, tt.wantCalls) || out.Pages != len(tt.wantCalls) {
				t.Errorf("calls (limit, offset) = %v, pages %d; want %v", calls, out.Pages, tt.wantCalls)
			}
		})
	}
}

// A portal that ignores offset must not make the tool loop or repeat groups.
func TestListGroupsPortalIgnoringOffset(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"group_list": func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		q.Del("offset")
		r.URL.RawQuery = q.Encode()
		groupPortal(t, 60, false)(w, r)
	}})
	res, _ := call(t, serverRegistry(t, srv), "listGroups", `{"allFields":true,"limit":100}`)
	var out ListGroupsOutput
	mustOK(t, res, &out)
	if out.Count != 25 || len(srv.Requests()) != 2 {
		t.Errorf("count %d after %d calls; want the 25 distinct groups after 2 calls", out.Count, len(srv.Requests()))
	}
}

func TestListOrganizations(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"organization_list": groupPortal(t, 3, true)})
	res, env := call(t, serverRegistry(t, srv), "listOrganizations", `{"sort":"package_count desc"}`)
	var out ListOrganizationsOutput
	mustOK(t, res, &out)
	q := srv.Requests()[0].Query
	if q.Get("all_fields") != "true" || q.Get("sort") != "package_count desc" {
		t.Errorf("query = %v", q)
	}
	if out.Count != 3 || len(out.Organizations) != 3 || out.Organizations[2].PackageCount != 2 ||
		out.Organizations[2].DisplayName != "קבוצה 2" {
		raw, _ := json.Marshal(out)
		t.Errorf("output = %s", raw)
	}
	if env["summary"] != `3 organizations: "קבוצה 0 (0 datasets)", "קבוצה 1 (1 dataset)", "קבוצה 2 (2 datasets)"` {
		t.Errorf("summary %v", env["summary"])
	}

	res, _ = call(t, serverRegistry(t, srv), "listOrganizations", `{"allFields":false}`)
	var names ListOrganizationsOutput
	mustOK(t, res, &names)
	if names.Organizations != nil || len(names.Names) != 3 {
		t.Errorf("names-only output = %+v", names)
	}
}
