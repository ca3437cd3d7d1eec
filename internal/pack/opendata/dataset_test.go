package opendata

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestGetDatasetDetails(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"package_show": tooltest.Respond(200, "application/json", tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_show_17be64bb-da74-4195-9bb8-565c39846af2.json")),
	})
	res, _ := call(t, serverRegistry(t, srv), "getDatasetDetails", `{"id":"2016-regione-asia-est-oceania-classi-di-eta"}`)
	var out GetDatasetDetailsOutput
	mustOK(t, res, &out)

	if got := srv.Last(t).Query.Get("id"); got != "2016-regione-asia-est-oceania-classi-di-eta" {
		t.Errorf("id sent = %q", got)
	}
	if out.ID != "17be64bb-da74-4195-9bb8-565c39846af2" || out.Title != "2016 Regione Asia Est Oceania * Classi di età" {
		t.Errorf("id/title = %q %q", out.ID, out.Title)
	}
	if len(out.Resources) != 1 {
		t.Fatalf("%d resources, want 1", len(out.Resources))
	}
	r := out.Resources[0]
	if r.ID != "a5cd573b-5565-48f1-9b2d-8726004cb020" || r.Format != "CSV" || !r.DatastoreActive || r.Size != nil ||
		r.Description != "dati per classi di età..." ||
		r.URL != "https://demo.ckan.org/dataset/17be64bb-da74-4195-9bb8-565c39846af2/resource/a5cd573b-5565-48f1-9b2d-8726004cb020/download/20161231_rase.csv" {
		t.Errorf("resource = %+v", r)
	}
	if out.Organization == nil || out.Organization.Name != "sdb" || out.Organization.Title != "SDB" {
		t.Errorf("organization = %+v", out.Organization)
	}
	if strings.Join(out.Tags, ",") != "2016,RASE,età" {
		t.Errorf("tags = %v", out.Tags)
	}
	if out.License != (License{ID: "cc-by", Title: "Creative Commons Attribution", URL: "http://www.opendefinition.org/licenses/cc-by"}) {
		t.Errorf("license = %+v", out.License)
	}
	if len(out.Extras) != 1 || out.Extras["Anno"] != "2016" {
		t.Errorf("extras = %v", out.Extras)
	}
	if want := srv.URL + "/api/3/action/package_show?id=2016-regione-asia-est-oceania-classi-di-eta"; out.APIURL != want {
		t.Errorf("apiUrl = %s, want %s", out.APIURL, want)
	}
	if out.Groups == nil || len(out.Groups) != 0 {
		t.Errorf("groups = %#v, want []", out.Groups)
	}
	// Links to the portal's pages, for people and the chat page's cards.
	for got, want := range map[string]string{
		out.PortalURL:              srv.URL + "/dataset/2016-regione-asia-est-oceania-classi-di-eta",
		out.DatasetURL:             srv.URL + "/dataset/2016-regione-asia-est-oceania-classi-di-eta",
		out.Organization.PortalURL: srv.URL + "/organization/sdb",
		r.PortalURL:                srv.URL + "/dataset/2016-regione-asia-est-oceania-classi-di-eta/resource/a5cd573b-5565-48f1-9b2d-8726004cb020",
	} {
		if got != want {
			t.Errorf("portal link %q, want %q", got, want)
		}
	}
}

// Portals disagree on types: sizes as strings, datastore_active as a string,
// extras that are not strings. None of that may fail the call.
func TestGetDatasetDetailsLenientFields(t *testing.T) {
	pkg := map[string]any{
		"id": "x1", "name": "x", "title": "כותרת", "organization": nil, "private": false,
		"tags": []any{}, "groups": []any{map[string]any{"name": "transport", "display_name": "תחבורה"}},
		"extras": []any{
			map[string]any{"key": "spatial", "value": map[string]any{"type": "Point"}},
			map[string]any{"key": "issued", "value": nil},
			map[string]any{"key": "n", "value": 3},
		},
		"resources": []any{
			map[string]any{"id": "r1", "size": "12345", "datastore_active": "True", "format": "CSV"},
			map[string]any{"id": "r2", "size": 99, "datastore_active": nil},
			map[string]any{"id": "r3", "size": "", "datastore_active": false},
			map[string]any{"id": "r4", "size": "about 3 MB"},
		},
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_show": okJSON(t, pkg)})
	res, _ := call(t, serverRegistry(t, srv), "getDatasetDetails", `{"id":"x"}`)
	var out GetDatasetDetailsOutput
	mustOK(t, res, &out)
	sizes := []string{}
	for _, r := range out.Resources {
		b, _ := json.Marshal(r.Size)
		sizes = append(sizes, string(b)+"/"+map[bool]string{true: "ds", false: "-"}[r.DatastoreActive])
	}
	if got := strings.Join(sizes, " "); got != "12345/ds 99/- null/- null/-" {
		t.Errorf("sizes/datastore = %s", got)
	}
	if out.Extras["spatial"] != `{"type":"Point"}` || out.Extras["issued"] != "" || out.Extras["n"] != "3" {
		t.Errorf("extras = %v", out.Extras)
	}
	if out.Organization != nil || len(out.Groups) != 1 || out.Groups[0].Title != "תחבורה" {
		t.Errorf("organization %v groups %v", out.Organization, out.Groups)
	}
}

func TestGetDatasetDetailsNotFound(t *testing.T) {
	body := `{"help": "https://data.gov.il/api/3/action/help_show?name=package_show", "success": false, "error": {"message": "לא נמצא", "__type": "Not Found Error"}}`
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_show": tooltest.Respond(404, "application/json;charset=utf-8", []byte(body))})
	res, env := call(t, serverRegistry(t, srv), "getDatasetDetails", `{"id":"no-such-dataset"}`)
	e := mustFail(t, res, tool.CodeNotFound)
	if e.Message != "package_show: Not Found Error: לא נמצא" || e.Retryable || e.Status != 404 {
		t.Errorf("error = %+v", e)
	}
	if env["success"] != false || env["error_code"] != "NOT_FOUND" || env["error"] != "package_show: Not Found Error: לא נמצא" {
		t.Errorf("envelope = %s", res.JSON)
	}
}

// A dataset with many resources and a long description is paged and cut
// with counts and a way on, never silently.
func TestGetDatasetDetailsPagesResources(t *testing.T) {
	// CONSTRUCTED: package_show's documented shape; data.gov.il publishes
	// monthly files as one resource each, so 120 is ordinary.
	var resources []any
	for i := range 120 {
		f := "CSV"
		if i%2 == 1 {
			f = "XLSX"
		}
		resources = append(resources, map[string]any{"id": fmt.Sprintf("r%03d", i), "name": fmt.Sprintf("חודש %d", i), "format": f})
	}
	notes := strings.Repeat("תיאור ארוך. ", 400) // 4800 characters
	pkg := map[string]any{"id": "p1", "name": "monthly", "title": "נתונים חודשיים", "notes": notes, "resources": resources,
		"organization": map[string]any{"name": "cbs", "title": "הלשכה המרכזית לסטטיסטיקה"}}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_show": okJSON(t, pkg)})
	reg := serverRegistry(t, srv)

	res, env := call(t, reg, "getDatasetDetails", `{"id":"monthly"}`)
	var out GetDatasetDetailsOutput
	mustOK(t, res, &out)
	if len(out.Resources) != 50 || out.Resources[0].ID != "r000" || out.ResourceCount != 120 ||
		strings.Join(out.Formats, ",") != "CSV,XLSX" {
		t.Errorf("%d resources from %s, count %d, formats %v", len(out.Resources), out.Resources[0].ID, out.ResourceCount, out.Formats)
	}
	if !out.NotesTruncated || out.NotesLength != 4800 || utf8.RuneCountInString(out.Notes) != maxNotes+1 || !strings.HasSuffix(out.Notes, "…") {
		t.Errorf("notes: truncated %v, length %d, %d characters", out.NotesTruncated, out.NotesLength, utf8.RuneCountInString(out.Notes))
	}
	want := `"נתונים חודשיים" by הלשכה המרכזית לסטטיסטיקה: 120 resources (CSV, XLSX); resources 1-50 of 120 listed; more with resourcesOffset=50; description cut at 3000 of 4800 characters (fullNotes for all)`
	if env["summary"] != want {
		t.Errorf("summary = %v\n want %s", env["summary"], want)
	}

	res, _ = call(t, reg, "getDatasetDetails", `{"id":"monthly","resourcesOffset":100,"resourcesLimit":50,"fullNotes":true}`)
	out = GetDatasetDetailsOutput{}
	mustOK(t, res, &out)
	if len(out.Resources) != 20 || out.Resources[0].ID != "r100" || out.Notes != notes || out.NotesTruncated ||
		out.Note != "resources 101-120 of 120 listed" {
		t.Errorf("second page: %d resources, note %q, notes cut %v", len(out.Resources), out.Note, out.NotesTruncated)
	}
	if out.Resources[0].PortalURL != srv.URL+"/dataset/monthly/resource/r100" {
		t.Errorf("resource portalUrl = %s", out.Resources[0].PortalURL)
	}
}
