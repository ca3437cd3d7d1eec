package opendata

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// recordedResource returns the resource recorded inside demo.ckan.org's
// package_show answer: resource_show returns the same object.
func recordedResource(t *testing.T) map[string]any {
	t.Helper()
	var pkg struct{ Resources []map[string]any }
	if err := json.Unmarshal(tooltest.CKANResult(t, "demo.ckan.org/package_show_17be64bb-da74-4195-9bb8-565c39846af2.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	return pkg.Resources[0]
}

func TestGetResourceDetails(t *testing.T) {
	// The envelope is CONSTRUCTED around the recorded resource; the
	// datastore answer is CONSTRUCTED in datastore_search's documented
	// shape (limit 0: columns and total, no records).
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"resource_show": okJSON(t, recordedResource(t)),
		"datastore_search": okJSON(t, map[string]any{"resource_id": "a5cd573b-5565-48f1-9b2d-8726004cb020", "records": []any{},
			"fields": []any{map[string]any{"id": "_id", "type": "int"}, map[string]any{"id": "שנה", "type": "numeric"}}, "total": 42}),
	})
	res, env := call(t, serverRegistry(t, srv), "getResourceDetails", `{"id":"a5cd573b-5565-48f1-9b2d-8726004cb020"}`)
	var out GetResourceDetailsOutput
	mustOK(t, res, &out)
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Query.Get("id") != "a5cd573b-5565-48f1-9b2d-8726004cb020" || tooltest.CKANAction(reqs[1]) != "datastore_search" {
		t.Fatalf("requests = %v", reqs)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil || body["limit"] != float64(0) || body["resource_id"] != "a5cd573b-5565-48f1-9b2d-8726004cb020" {
		t.Errorf("datastore_search body = %s", reqs[1].Body)
	}
	if out.ID != "a5cd573b-5565-48f1-9b2d-8726004cb020" || out.PackageID != "17be64bb-da74-4195-9bb8-565c39846af2" ||
		out.Format != "CSV" || !out.DatastoreActive || out.Name != "20161231_RASE.csv" ||
		!strings.HasSuffix(out.URL, "/download/20161231_rase.csv") {
		t.Errorf("resource = %+v", out.ResourceInfo)
	}
	if out.Datastore == nil || out.Datastore.Total != 42 || len(out.Datastore.Fields) != 2 || out.Datastore.Fields[1].ID != "שנה" ||
		out.Datastore.APIURL != srv.URL+"/api/3/action/datastore_search" || !strings.Contains(out.Datastore.APIBody, `"limit":0`) {
		t.Errorf("datastore = %+v", out.Datastore)
	}
	if out.APIURL != srv.URL+"/api/3/action/resource_show?id=a5cd573b-5565-48f1-9b2d-8726004cb020" {
		t.Errorf("apiUrl = %s", out.APIURL)
	}
	if env["summary"] != `"20161231_RASE.csv" (CSV): 2 columns, 42 rows` {
		t.Errorf("summary = %v", env["summary"])
	}
}

// A resource outside the datastore costs one call; a datastore that fails
// leaves the metadata and says why.
func TestGetResourceDetailsWithoutColumns(t *testing.T) {
	r := recordedResource(t)
	r["datastore_active"] = false
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"resource_show": okJSON(t, r)})
	res, _ := call(t, serverRegistry(t, srv), "getResourceDetails", `{"id":"a5cd573b"}`)
	var out GetResourceDetailsOutput
	mustOK(t, res, &out)
	if len(srv.Requests()) != 1 || out.Datastore != nil || out.DatastoreError != "" {
		t.Errorf("%d calls, output %+v", len(srv.Requests()), out)
	}

	srv = tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"resource_show":    okJSON(t, recordedResource(t)),
		"datastore_search": tooltest.Respond(404, "application/json", tooltest.JSONFixture(t, "ckan", "data.gov.il/error_not_found_resource_he.json")),
	})
	res, _ = call(t, serverRegistry(t, srv), "getResourceDetails", `{"id":"a5cd573b"}`)
	out = GetResourceDetailsOutput{}
	mustOK(t, res, &out)
	if out.Datastore != nil || out.DatastoreError != "datastore_search: Not Found Error: לא נמצא: Resource was not found." || out.Name == "" {
		t.Errorf("output = %+v", out)
	}
}

// CONSTRUCTED: resource_search's documented result ({count, results}).
func TestSearchResources(t *testing.T) {
	r := recordedResource(t)
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"resource_search": okJSON(t, map[string]any{"count": 31, "results": []any{r, r, r}})})
	reg := serverRegistry(t, srv)
	res, env := call(t, reg, "searchResources", `{"query":"תקציב","datasetId":"17be64bb","format":"csv","limit":2,"offset":4}`)
	var out SearchResourcesOutput
	mustOK(t, res, &out)
	q := srv.Last(t).Query
	if strings.Join(q["query"], "|") != "name:תקציב|package_id:17be64bb|format:csv" || q.Get("limit") != "2" || q.Get("offset") != "4" {
		t.Errorf("query = %v", q)
	}
	if out.Source != "resource_search" || out.Count != 31 || len(out.Resources) != 2 || out.Resources[0].PackageID != "17be64bb-da74-4195-9bb8-565c39846af2" ||
		out.Note != "" || !strings.HasPrefix(out.APIURL, srv.URL+"/api/3/action/resource_search?") {
		t.Errorf("output = %+v", out)
	}
	if env["summary"] != `2 of 31 resources (via resource_search): "20161231_RASE.csv CSV", "20161231_RASE.csv CSV"; more with offset=6` {
		t.Errorf("summary = %v", env["summary"])
	}

	call(t, reg, "searchResources", `{"query":"description:budget"}`)
	if got := srv.Last(t).Query["query"]; strings.Join(got, "|") != "description:budget" {
		t.Errorf("field:term query sent as %v", got)
	}
}

// Where resource_search is unknown, disabled or closed, the resources of
// datasets found by package_search (demo.ckan.org's recording) are
// searched instead, and the result says so.
func TestSearchResourcesFallback(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"400 Action name not known": tooltest.Respond(400, "application/json", []byte(`"Bad request - Action name not known: resource_search"`)),
		"403 Authorization Error": tooltest.Respond(403, "application/json",
			[]byte(`{"success":false,"error":{"__type":"Authorization Error","message":"Access denied"}}`)),
		"404 Not Found Error": nil, // the test server's answer to an action it does not serve
	} {
		t.Run(name, func(t *testing.T) {
			actions := map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)}
			if h != nil {
				actions["resource_search"] = h
			}
			srv := tooltest.NewCKANServer(t, actions)
			res, _ := call(t, serverRegistry(t, srv), "searchResources", `{"format":"CSV","limit":1,"offset":1}`)
			var out SearchResourcesOutput
			mustOK(t, res, &out)
			reqs := srv.Requests()
			if len(reqs) != 2 || tooltest.CKANAction(reqs[1]) != "package_search" {
				t.Fatalf("requests = %v", reqs)
			}
			if fq := reqs[1].Query.Get("fq"); !strings.Contains(fq, `res_format:`) || !strings.Contains(fq, `"CSV"`) {
				t.Errorf("fallback fq = %q", fq)
			}
			// Two of the three recorded datasets hold a CSV; offset 1 gives the second.
			if out.Source != "package_search" || out.Count != 2 || len(out.Resources) != 1 ||
				out.Resources[0].ID != "a5cd573b-5565-48f1-9b2d-8726004cb020" ||
				!strings.Contains(out.Note, "does not offer resource_search") ||
				!strings.HasPrefix(out.APIURL, srv.URL+"/api/3/action/package_search?") {
				t.Errorf("output = %+v", out)
			}
		})
	}
}

func TestSearchResourcesFallbackMatchesNames(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	res, _ := call(t, serverRegistry(t, srv), "searchResources", `{"query":"species"}`)
	var out SearchResourcesOutput
	mustOK(t, res, &out)
	if q := srv.Last(t).Query.Get("q"); q != `res_name:"species"` {
		t.Errorf("q = %q", q)
	}
	if out.Count != 1 || out.Resources[0].Name != "validated_100_species.csv" {
		t.Errorf("output = %+v", out)
	}
}

// Other failures of resource_search are reported, not papered over.
func TestSearchResourcesDoesNotFallBackOnOtherErrors(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"resource_search": tooltest.Respond(409, "application/json", []byte(`{"success":false,"error":{"__type":"Validation Error","query":["Field \"x\" not recognised in resource_search."]}}`)),
		"package_search":  tooltest.CKANPackageSearch(t),
	})
	res, _ := call(t, serverRegistry(t, srv), "searchResources", `{"query":"x"}`)
	mustFail(t, res, tool.CodeValidation)
	if len(srv.Requests()) != 1 {
		t.Errorf("%d calls, want 1", len(srv.Requests()))
	}
}
