package opendata

import (
	"encoding/json"
	"net/http"
	"regexp"
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
	if env["summary"] != `2 of 1234 rows, 3 columns: "_id", "שם ישוב", "סמל ישוב"; more with offset=6` {
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

// postedBody decodes the JSON body of the server's last request.
func postedBody(t *testing.T, srv *tooltest.Server) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return body
}

func TestQueryDatastorePartialMatchDistinctAndColumnsOnly(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search": okJSON(t, datastoreResult())})
	reg := serverRegistry(t, srv)

	// Prefix terms are built from words only: operators in q cannot reach the tsquery.
	res, _ := call(t, reg, "queryDatastore", `{"resourceId":"r1","q":"תל-אביב  יפו & !(x:*|'y') ב\\","partialMatch":true,"fields":["שם ישוב"],"distinct":true}`)
	var out QueryDatastoreOutput
	mustOK(t, res, &out)
	body := postedBody(t, srv)
	// Hebrew words of three letters or more also match with prefixes.
	wantQ := "תל:* & (אביב:* | האביב:* | ואביב:* | באביב:* | לאביב:* | מאביב:* | שאביב:* | והאביב:* | מהאביב:* | ובאביב:* | ולאביב:*)" +
		" & (יפו:* | היפו:* | ויפו:* | ביפו:* | ליפו:* | מיפו:* | שיפו:* | והיפו:* | מהיפו:* | וביפו:* | וליפו:*) & x:* & y:* & ב:*"
	if body["q"] != wantQ || body["plain"] != false || body["distinct"] != true ||
		body["fields"].([]any)[0] != "שם ישוב" {
		t.Errorf("body = %s", srv.Last(t).Body)
	}
	if !strings.Contains(out.APIBody, `"plain":false`) {
		t.Errorf("apiBody = %s", out.APIBody)
	}

	// Without partialMatch q is sent as plain text, and plain is left to CKAN.
	res, _ = call(t, reg, "queryDatastore", `{"resourceId":"r1","q":"חיפה:*"}`)
	mustOK(t, res, &out)
	if body := postedBody(t, srv); body["q"] != "חיפה:*" || body["plain"] != nil || body["distinct"] != nil {
		t.Errorf("body = %s", srv.Last(t).Body)
	}

	// limit 0: the columns with their types and the total, no records.
	srv = tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search": okJSON(t, map[string]any{
		"fields": []any{map[string]any{"id": "_id", "type": "int"}, map[string]any{"id": "שנה", "type": "numeric"}}, "records": []any{}, "total": 77})})
	res, _ = call(t, serverRegistry(t, srv), "queryDatastore", `{"resourceId":"r1","limit":0}`)
	out = QueryDatastoreOutput{}
	mustOK(t, res, &out)
	if body := postedBody(t, srv); body["limit"] != float64(0) {
		t.Errorf("body = %s", srv.Last(t).Body)
	}
	if len(out.Fields) != 2 || out.Fields[1].Type != "numeric" || out.Records == nil || len(out.Records) != 0 || out.Total != 77 {
		t.Errorf("output = %+v", out)
	}
}

func TestQueryDatastoreInputErrors(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{})
	reg := serverRegistry(t, srv)
	for _, tt := range []struct{ args, message string }{
		{`{"resourceId":"r","q":"&!()","partialMatch":true}`, "q: partialMatch needs at least one word"},
		{`{"resourceId":"r","q":"` + strings.Repeat("a ", 33) + `","partialMatch":true}`, "q: partialMatch takes at most 32 words"},
		{`{"resourceId":"r","fields":[" "]}`, "fields[0]: a column name must not be blank"},
		{`{"resourceId":"r","limit":-1}`, "limit"},
		{`{"sql":"SELECT 1","resourceId":"r"}`, "sql: give either sql or resourceId"},
		{`{"sql":"SELECT 1","offset":5}`, "offset: not with sql"},
		{`{"sql":"SELECT 1; DROP TABLE t"}`, "sql: must be a single statement"},
		{`{"sql":"UPDATE t SET a = 1"}`, "sql: must be a single SELECT"},
		{`{}`, "resourceId: required"},
	} {
		res, _ := call(t, reg, "queryDatastore", tt.args)
		if e := mustFail(t, res, tool.CodeValidation); !strings.HasPrefix(e.Message, tt.message) {
			t.Errorf("%s: message = %q, want prefix %q", tt.args, e.Message, tt.message)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the portal", n)
	}
}

// CONSTRUCTED: datastore_search_sql's documented result (records, fields).
func TestQueryDatastoreSQL(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"datastore_search_sql": okJSON(t, map[string]any{
		"fields": []any{map[string]any{"id": "עיר", "type": "text"}, map[string]any{"id": "n", "type": "int8"}},
		"records": []any{
			json.RawMessage(`{"עיר": "חיפה", "n": 12345678901234567890}`), json.RawMessage(`{"עיר": "עכו", "n": 3}`),
			json.RawMessage(`{"עיר": "צפת", "n": 1}`),
		},
	})})
	sql := `SELECT "עיר", count(*) AS n FROM "5c78e9fa" WHERE "עיר" <> 'x; y' GROUP BY 1 ORDER BY 2 DESC;`
	args, _ := json.Marshal(map[string]any{"sql": sql, "limit": 2})
	res, env := call(t, serverRegistry(t, srv), "queryDatastore", string(args))
	var out QueryDatastoreOutput
	mustOK(t, res, &out)
	want := strings.TrimSuffix(sql, ";")
	if req := srv.Last(t); tooltest.CKANAction(req) != "datastore_search_sql" || req.Method != http.MethodPost {
		t.Fatalf("request = %s %s", req.Method, req.URL)
	}
	if body := postedBody(t, srv); len(body) != 1 || body["sql"] != want {
		t.Errorf("body = %s", srv.Last(t).Body)
	}
	if out.SQL != want || len(out.Records) != 2 || !out.Truncated || out.Total != 3 || len(out.Fields) != 2 || out.Records[0]["עיר"] != "חיפה" ||
		out.APIURL != srv.URL+"/api/3/action/datastore_search_sql" || !strings.Contains(out.APIBody, `"sql":"SELECT`) {
		t.Errorf("output = %+v", out)
	}
	if !strings.Contains(string(res.JSON), `"n":12345678901234567890`) || env["summary"] != `2 of 3 rows, 2 columns: "עיר", "n"; more rows were left out (raise LIMIT or page with OFFSET)` {
		t.Errorf("result = %s", res.JSON)
	}
}

// A portal that does not offer datastore_search_sql gets UNSUPPORTED with
// its own words; a bad query is the agent's to fix.
func TestQueryDatastoreSQLErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		code    tool.Code
		message string
	}{
		{"unknown action", tooltest.Respond(400, "application/json", []byte(`"Bad request - Action name not known: datastore_search_sql"`)),
			tool.CodeUnsupported, "this portal does not allow SQL queries (datastore_search_sql: HTTP 400 Bad Request: Bad request - Action name not known: datastore_search_sql)"},
		{"not authorized", tooltest.Respond(403, "application/json",
			[]byte(`{"success":false,"error":{"__type":"Authorization Error","message":"Access denied: לא מורשה"}}`)),
			tool.CodeUnsupported, "this portal does not allow SQL queries (datastore_search_sql: Authorization Error: Access denied: לא מורשה)"},
		{"not found", nil, tool.CodeUnsupported, "this portal does not allow SQL queries (datastore_search_sql: Not Found Error: Not found)"},
		{"bad SQL", tooltest.Respond(409, "application/json",
			[]byte(`{"success":false,"error":{"__type":"Validation Error","query":["column \"x\" does not exist"]}}`)),
			tool.CodeValidation, `datastore_search_sql: Validation Error: query: column "x" does not exist`},
		{"server error", tooltest.Respond(502, "text/html", []byte("<html>bad gateway</html>")), tool.CodeHTTP, "datastore_search_sql: HTTP 502 Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			actions := map[string]http.HandlerFunc{}
			if tt.handler != nil {
				actions["datastore_search_sql"] = tt.handler
			}
			srv := tooltest.NewCKANServer(t, actions)
			res, _ := call(t, serverRegistry(t, srv), "queryDatastore", `{"sql":"SELECT x FROM \"r\""}`)
			e := mustFail(t, res, tt.code)
			if !strings.HasPrefix(e.Message, tt.message) {
				t.Errorf("message = %q, want prefix %q", e.Message, tt.message)
			}
			if tt.code == tool.CodeUnsupported && (e.Retryable || !strings.Contains(e.Message, "use resourceId with q, filters")) {
				t.Errorf("error = %+v", e)
			}
		})
	}
}

// tsqueryShape is what prefixTSQuery may write: terms of letters, digits
// and marks with ":*", OR-ed in parentheses, AND-ed.
var tsqueryShape = regexp.MustCompile(`^(?:[\p{L}\p{N}\p{M}]+:\*|\((?:[\p{L}\p{N}\p{M}]+:\*)(?: \| [\p{L}\p{N}\p{M}]+:\*)*\))(?: & (?:[\p{L}\p{N}\p{M}]+:\*|\((?:[\p{L}\p{N}\p{M}]+:\*)(?: \| [\p{L}\p{N}\p{M}]+:\*)*\)))*$`)

// FuzzPrefixTSQuery: whatever q holds, the tsquery sent has only that
// shape (no operator of the input's own), or q is refused as invalid.
func FuzzPrefixTSQuery(f *testing.F) {
	for _, s := range []string{"תל-אביב  יפו & !(x:*|'y') ב\\", "תַּחְבּוּרָה ציבורית", "a:*|b", "מוסך", "((", "\u05b0\u05b0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := prefixTSQuery(q)
		if err != nil {
			if te, ok := err.(*tool.Error); !ok || te.Code != tool.CodeValidation {
				t.Fatalf("error %v", err)
			}
			return
		}
		if !tsqueryShape.MatchString(got) {
			t.Fatalf("prefixTSQuery(%q) = %q", q, got)
		}
	})
}
