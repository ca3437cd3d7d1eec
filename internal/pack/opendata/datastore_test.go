package opendata

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func datastoreResult() map[string]any {
	return map[string]any{
		"resource_id": "5c78e9fa-c2e2-4771-93ff-7f400a12f7ba",
		"fields": []any{
			map[string]any{"id": "_id", "type": "int"},
			map[string]any{"id": "שם ישוב", "type": "text"},
			map[string]any{"id": "סמל ישוב", "type": "numeric"},
		},
		"records": []any{
			json.RawMessage(`{"_id": 1, "שם ישוב": "חיפה", "סמל ישוב": 4000}`),
			json.RawMessage(`{"_id": 12345678901234567890, "שם ישוב": "עכו", "סמל ישוב": 7600.5}`),
		},
		"total": 1234, "limit": 2,
	}
}

func TestQueryDatastore(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search": okJSON(t, datastoreResult())})
	args := `{"resourceId":"5c78e9fa-c2e2-4771-93ff-7f400a12f7ba","q":"חיפה","filters":{"שם ישוב":["חיפה","עכו"],"active":true},` +
		`"fields":["_id","שם ישוב"],"sort":"סמל ישוב DESC, _id","limit":2,"offset":4}`
	res, env := call(t, serverRegistry(t, srv), "queryDatastore", args)
	var out QueryDatastoreOutput
	mustOK(t, res, &out)

	req := srv.Last(t)
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || req.URL.RawQuery != "" {
		t.Errorf("request %s %q query %q; want a JSON POST with no query string", req.Method, req.Header.Get("Content-Type"), req.URL.RawQuery)
	}
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	wantBody := `{"fields":["_id","שם ישוב"],"filters":{"active":true,"שם ישוב":["חיפה","עכו"]},"include_total":true,"limit":2,"offset":4,` +
		`"q":"חיפה","resource_id":"5c78e9fa-c2e2-4771-93ff-7f400a12f7ba","sort":"סמל ישוב desc, _id"}`
	if got, _ := json.Marshal(body); string(got) != wantBody {
		t.Errorf("body = %s\nwant   %s", got, wantBody)
	}
	if strings.Contains(strings.ToLower(string(req.Body)), "sql") || tooltest.CKANAction(req) != "datastore_search" {
		t.Errorf("called %s with %s", tooltest.CKANAction(req), req.Body)
	}

	if out.Total != 1234 || len(out.Records) != 2 || len(out.Fields) != 3 || out.Fields[1] != (ckan.DatastoreField{ID: "שם ישוב", Type: "text"}) {
		t.Errorf("output = %+v", out)
	}
	// Numbers keep their precision end to end.
	for _, s := range []string{`"_id":12345678901234567890`, `"סמל ישוב":7600.5`, `"שם ישוב":"עכו"`} {
		if !strings.Contains(string(res.JSON), s) {
			t.Errorf("result lacks %s: %s", s, res.JSON)
		}
	}
	if out.APIURL != srv.URL+"/api/3/action/datastore_search" || !strings.Contains(out.APIBody, `"resource_id":"5c78e9fa`) {
		t.Errorf("apiUrl %s apiBody %s", out.APIURL, out.APIBody)
	}
	if env["summary"] != "2 of 1234 rows" {
		t.Errorf("summary = %v", env["summary"])
	}
}

func TestQueryDatastoreErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		code    tool.Code
		message string
	}{
		{"unknown resource, Hebrew message", tooltest.Respond(404, "application/json", tooltest.JSONFixture(t, "ckan", "data.gov.il/error_not_found_resource_he.json")),
			tool.CodeNotFound, "datastore_search: Not Found Error: לא נמצא: Resource was not found."},
		{"malformed filters", tooltest.Respond(409, "application/json", tooltest.JSONFixture(t, "ckan", "data.gov.il/error_validation_filters.json")),
			tool.CodeValidation, "datastore_search: Validation Error: filters: Cannot parse JSON"},
		{"records that are not objects", okJSON(t, map[string]any{"fields": []any{}, "records": []any{[]any{1, 2}}, "total": 1}),
			tool.CodeParse, "datastore_search: record 0 is not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search": tt.handler})
			res, _ := call(t, serverRegistry(t, srv), "queryDatastore", `{"resourceId":"nope"}`)
			if e := mustFail(t, res, tt.code); e.Message != tt.message {
				t.Errorf("message = %q, want %q", e.Message, tt.message)
			}
		})
	}
}
