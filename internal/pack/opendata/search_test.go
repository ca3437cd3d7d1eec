package opendata

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestSearchDatasetsKeyword(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	res, env := call(t, serverRegistry(t, srv), "searchDatasets", `{"query":"transportation"}`)

	var out SearchDatasetsOutput
	mustOK(t, res, &out)
	req := srv.Last(t)
	if req.Method != http.MethodGet || tooltest.CKANAction(req) != "package_search" {
		t.Errorf("called %s %s, want GET package_search", req.Method, tooltest.CKANAction(req))
	}
	if got := req.Query["q"]; !slices.Equal(got, []string{"transportation"}) {
		t.Errorf("q = %q, want transportation", got)
	}
	if got := req.Query["rows"]; !slices.Equal(got, []string{"10"}) {
		t.Errorf("rows = %q, want the default 10", got)
	}
	if _, ok := req.Query["fq"]; ok {
		t.Errorf("fq sent without filters: %q", req.Query["fq"])
	}
	if out.Total != 3 || len(out.Datasets) != 3 {
		t.Fatalf("total %d, %d datasets; want 3 and 3", out.Total, len(out.Datasets))
	}
	want := DatasetSummary{
		ID: "17be64bb-da74-4195-9bb8-565c39846af2", Name: "2016-regione-asia-est-oceania-classi-di-eta",
		Title:        "2016 Regione Asia Est Oceania * Classi di età",
		Description:  "Dati demografici al 31.12.2016 della Regione Asia Est Oceania per classi di età",
		Organization: &OrgRef{Name: "sdb", Title: "SDB", PortalURL: srv.URL + "/organization/sdb"},
		Tags:         []string{"2016", "RASE", "età"}, Formats: []string{"CSV"}, NumResources: 1,
		MetadataModified: "2017-07-05T19:29:07.136124",
		DatasetURL:       srv.URL + "/dataset/2016-regione-asia-est-oceania-classi-di-eta",
		PortalURL:        srv.URL + "/dataset/2016-regione-asia-est-oceania-classi-di-eta",
	}
	got := out.Datasets[2]
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("third dataset:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	if out.Datasets[0].Organization != nil {
		t.Errorf("first dataset has no organization upstream, got %+v", out.Datasets[0].Organization)
	}
	if wantURL := srv.URL + "/api/3/action/package_search?q=transportation&rows=10"; out.APIURL != wantURL {
		t.Errorf("apiUrl = %s, want %s", out.APIURL, wantURL)
	}
	if env["success"] != true || env["summary"] != `3 of 3 datasets for "transportation": "100 Validated Species of Plants", "規管海外物業銷售", "2016 Regione Asia Est Oceania * Classi di età"` {
		t.Errorf("envelope success=%v summary=%v", env["success"], env["summary"])
	}
	if _, ok := env["durationMs"]; !ok {
		t.Error("envelope has no durationMs")
	}
	if !strings.Contains(req.Header.Get("User-Agent"), "Toolport") || !strings.HasPrefix(req.Header.Get("User-Agent"), "Mozilla/5.0") {
		t.Errorf("User-Agent = %q, want a browser-like one naming Toolport", req.Header.Get("User-Agent"))
	}
}

// The issue's end-to-end check: what `toolport call searchDatasets
// '{"query":"תחבורה","exactQuery":true}'` runs, against a local portal, with
// the Hebrew query reaching the portal byte for byte and Hebrew results
// coming back untouched.
func TestSearchDatasetsHebrewEndToEnd(t *testing.T) {
	const query = "תחבורה"
	result := map[string]any{
		"count": 1, "sort": "score desc, metadata_modified desc",
		"results": []any{map[string]any{
			"id": "b1c2", "name": "public-transport-lines", "title": "קווי תחבורה ציבורית",
			"notes": "נתוני קווי אוטובוס", "metadata_modified": "2026-10-01T08:00:00.000000", "num_resources": 1,
			"organization": map[string]any{"name": "ministry_of_transport", "title": "משרד התחבורה"},
			"tags":         []any{map[string]any{"name": "תחבורה"}},
			"resources":    []any{map[string]any{"format": "CSV", "url": "https://data.gov.il/x.csv"}},
		}},
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": okJSON(t, result)})
	reg := serverRegistry(t, srv)

	res := reg.Call(context.Background(), "searchDatasets", json.RawMessage(`{"query":"תחבורה","exactQuery":true}`))
	if !res.OK() {
		t.Fatalf("call failed: %s", res.JSON)
	}
	req := srv.Last(t)
	if got := req.Query["q"]; len(got) != 1 || got[0] != query {
		t.Errorf("server received q=%q, want %q", got, query)
	}
	if want := "q=%D7%AA%D7%97%D7%91%D7%95%D7%A8%D7%94"; !strings.Contains(req.URL.RawQuery, want) {
		t.Errorf("raw query %q does not carry the UTF-8 bytes %s", req.URL.RawQuery, want)
	}
	for _, s := range []string{"קווי תחבורה ציבורית", "משרד התחבורה", `"tags":["תחבורה"]`, `"summary":"1 of 1 datasets for \"תחבורה\": \"קווי תחבורה ציבורית\""`} {
		if !strings.Contains(string(res.JSON), s) {
			t.Errorf("result JSON lacks %s:\n%s", s, res.JSON)
		}
	}
}

func TestSearchDatasetsPaginationAndSort(t *testing.T) {
	tests := []struct {
		args      string
		wantQuery map[string]string
	}{
		{`{"query":"x","rows":10,"start":0}`, map[string]string{"rows": "10", "start": ""}},
		{`{"query":"x","rows":2,"start":4}`, map[string]string{"rows": "2", "start": "4"}},
		{`{"rows":1000}`, map[string]string{"rows": "1000", "q": ""}},
		{`{"sort":"metadata_modified desc"}`, map[string]string{"sort": "metadata_modified desc"}},
		{`{"sort":"  score DESC ,metadata_modified   asc"}`, map[string]string{"sort": "score desc, metadata_modified asc"}},
		{`{"sort":"extras_issued.date asc"}`, map[string]string{"sort": "extras_issued.date asc"}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
			res, _ := call(t, serverRegistry(t, srv), "searchDatasets", tt.args)
			var out SearchDatasetsOutput
			mustOK(t, res, &out)
			q := srv.Last(t).Query
			for k, want := range tt.wantQuery {
				if got := strings.Join(q[k], ","); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if out.Sort != "name asc" { // what the fixture says the portal applied
				t.Errorf("sort reported %q", out.Sort)
			}
		})
	}
}

func TestSearchDatasetsRejectsBadSort(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	reg := serverRegistry(t, srv)
	for _, sort := range []string{
		"metadata_modified",    // no direction
		"name up",              // not asc/desc
		"name asc; drop",       // junk
		"name asc,,title desc", // empty clause
		"name asc desc",        // two directions
		"1name asc",            // not a field name
		"a asc, b asc, c asc, d asc, e asc, f asc", // too many clauses
	} {
		args, _ := json.Marshal(map[string]string{"sort": sort})
		res, _ := call(t, reg, "searchDatasets", string(args))
		e := mustFail(t, res, tool.CodeValidation)
		if !strings.HasPrefix(e.Message, "sort: ") {
			t.Errorf("sort %q: message %q does not name the field", sort, e.Message)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("invalid sorts reached the portal %d times", n)
	}
}

func TestSearchDatasetsFilterQuery(t *testing.T) {
	tests := []struct {
		name, args, wantFQ string
	}{
		{"organization", `{"organization":"ministry_of_health"}`, `organization:"ministry_of_health"`},
		{"all tags, any format, all groups",
			`{"tags":["a b","בריאות"],"formats":["CSV","JSON"],"groups":["transport"]}`,
			`tags:"a b" AND tags:"בריאות" AND res_format:("CSV" OR "JSON") AND groups:"transport"`},
		{"quotes and backslashes are escaped",
			`{"organization":"x\" OR *:* OR \"y","tags":["back\\slash"]}`,
			`organization:"x\" OR *:* OR \"y" AND tags:"back\\slash"`},
		{"blank values are dropped", `{"tags":[" ",""],"formats":["csv"]}`, `res_format:"csv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
			res, _ := call(t, serverRegistry(t, srv), "searchDatasets", tt.args)
			var out SearchDatasetsOutput
			mustOK(t, res, &out)
			if got := srv.Last(t).Query["fq"]; len(got) != 1 || got[0] != tt.wantFQ {
				t.Errorf("fq = %q\nwant %q", got, tt.wantFQ)
			}
		})
	}
}

func TestSearchDatasetsFacets(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	reg := serverRegistry(t, srv)
	res, _ := call(t, reg, "searchDatasets", `{"facets":["res_format","organization","groups"],"facetLimit":5}`)
	var out SearchDatasetsOutput
	mustOK(t, res, &out)
	q := srv.Last(t).Query
	if got := q.Get("facet.field"); got != `["res_format","organization","groups"]` {
		t.Errorf("facet.field = %s", got)
	}
	if got := q.Get("facet.limit"); got != "5" {
		t.Errorf("facet.limit = %s", got)
	}
	want := map[string][]ckan.FacetItem{
		"res_format":   {{Name: "CSV", DisplayName: "CSV", Count: 2}, {Name: "PDF", DisplayName: "PDF", Count: 1}},
		"organization": {{Name: "sdb", DisplayName: "SDB", Count: 1}},
		"groups":       {},
	}
	gotJSON, _ := json.Marshal(out.Facets)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("facets = %s\nwant %s", gotJSON, wantJSON)
	}

	res, _ = call(t, reg, "searchDatasets", `{"facets":["tags","nope"]}`)
	if e := mustFail(t, res, tool.CodeValidation); !strings.HasPrefix(e.Message, `facets[1]: must be one of`) {
		t.Errorf("message %q", e.Message)
	}
}

func TestInputValidationMessages(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	reg := serverRegistry(t, srv)
	tests := []struct {
		tool, args string
		code       tool.Code
		message    string
	}{
		{"searchDatasets", `{"rows":"ten"}`, tool.CodeValidation, `rows: expected integer, got string "ten"`},
		{"searchDatasets", `{"rows":10000}`, tool.CodeValidation, `rows: must be <= 1000, got 10000`},
		{"searchDatasets", `{"rows":0}`, tool.CodeValidation, `rows: must be >= 1, got 0`},
		{"searchDatasets", `{"rows":2.5}`, tool.CodeValidation, `rows: expected integer, got number 2.5`},
		{"searchDatasets", `{"start":-1}`, tool.CodeValidation, `start: must be >= 0, got -1`},
		{"searchDatasets", `{"tags":"health"}`, tool.CodeValidation, `tags: expected array, got string "health"`},
		{"searchDatasets", `{"q":"x"}`, tool.CodeValidation, `q: unknown field`},
		{"searchDatasets", `{"facetLimit":1001}`, tool.CodeValidation, `facetLimit: must be <= 1000, got 1001`},
		{"searchDatasets", `{"portal":"ftp://example.org"}`, tool.CodeInvalidURL, `portal: invalid portal URL: scheme must be http or https, got "ftp"`},
		{"searchDatasets", `{"portal":"https://user:pw@example.org"}`, tool.CodeInvalidURL, `portal: invalid portal URL: credentials in the URL are not allowed`},
		{"searchDatasets", `{"portal":"http://127.0.0.1:9/"}`, tool.CodeBlocked, `portal: a portal at the non-public address 127.0.0.1 is not allowed`},
		{"searchDatasets", `{"portal":"http://localhost/"}`, tool.CodeBlocked, `portal: a portal on localhost is not allowed`},
		{"getDatasetDetails", `{}`, tool.CodeValidation, `id: required`},
		{"getDatasetDetails", `{"id":""}`, tool.CodeValidation, `id: must be at least 1 characters, got 0`},
		{"getDatasetDetails", `{"id":"   "}`, tool.CodeValidation, `id: must not be blank`},
		{"listGroups", `{"limit":1001}`, tool.CodeValidation, `limit: must be <= 1000, got 1001`},
		{"listGroups", `{"sort":"size"}`, tool.CodeValidation, `sort: must be one of "name asc", "name desc", "title asc", "title desc", "package_count asc", "package_count desc", got "size"`},
		{"listTags", `{"allFields":"yes"}`, tool.CodeValidation, `allFields: expected boolean, got string "yes"`},
		{"queryDatastore", `{}`, tool.CodeValidation, `resourceId: required`},
		{"queryDatastore", `{"resourceId":"r","limit":5000}`, tool.CodeValidation, `limit: must be <= 1000, got 5000`},
		{"queryDatastore", `{"resourceId":"r","filters":{"city":{"$gt":1}}}`, tool.CodeValidation, `filters.city: must be a string, number, boolean or a list of them`},
		{"queryDatastore", `{"resourceId":"r","filters":{"year":[]}}`, tool.CodeValidation, `filters.year: a list must have 1 to 100 values, got 0`},
		{"queryDatastore", `{"resourceId":"r","sort":"a asc, \"b"}`, tool.CodeValidation, `sort: must be "column", "column asc" or "column desc", comma-separated, got "a asc, \"b"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			res, env := call(t, reg, tt.tool, tt.args)
			e := mustFail(t, res, tt.code)
			if !strings.HasPrefix(e.Message, tt.message) {
				t.Errorf("message = %q\n  want prefix %q", e.Message, tt.message)
			}
			if env["success"] != false || env["error_code"] != string(tt.code) {
				t.Errorf("envelope %s", res.JSON)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("invalid inputs reached the portal %d times", n)
	}
}

func TestSearchDatasetsHebrewForms(t *testing.T) {
	t.Run("a Hebrew word is searched in its other forms", func(t *testing.T) {
		srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
		res, env := call(t, serverRegistry(t, srv), "searchDatasets", `{"query":"תַּחְבּוּרָה ציבורית"}`)
		var out SearchDatasetsOutput
		mustOK(t, res, &out)
		q := srv.Last(t).Query.Get("q")
		for _, s := range []string{"(title:תחבורה^4 OR text:(תחבורה^2 OR ", " OR ותחבורה", ") AND (title:ציבורית^4", " OR הציבורית"} {
			if !strings.Contains(q, s) {
				t.Errorf("q lacks %q:\n%s", s, q)
			}
		}
		if got := out.HebrewForms["תַּחְבּוּרָה"]; len(got) == 0 || got[0] != "תחבורה" || got[1] != "תחבורות" || got[len(got)-1] != "(+18 more)" {
			t.Errorf("hebrewForms = %q", out.HebrewForms)
		}
		if s, _ := env["summary"].(string); !strings.HasPrefix(s, `3 of 3 datasets for "תַּחְבּוּרָה ציבורית" (Hebrew word forms included): `) {
			t.Errorf("summary = %q", s)
		}
	})
	t.Run("Solr syntax, English and exactQuery are sent as written", func(t *testing.T) {
		for _, args := range []string{`{"query":"title:תחבורה"}`, `{"query":"transport"}`, `{"query":"תחבורה","exactQuery":true}`} {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
			res, _ := call(t, serverRegistry(t, srv), "searchDatasets", args)
			var out SearchDatasetsOutput
			mustOK(t, res, &out)
			var in SearchDatasetsInput
			_ = json.Unmarshal([]byte(args), &in)
			if q := srv.Last(t).Query.Get("q"); q != in.Query || out.HebrewForms != nil {
				t.Errorf("%s: q = %q, hebrewForms = %q", args, q, out.HebrewForms)
			}
		}
	})
	t.Run("a portal that refuses the rewritten query is asked the query as typed", func(t *testing.T) {
		// CONSTRUCTED: CKAN's answer to a query its Solr cannot parse
		// (ckan/logic/action/get.py raises SearchQueryError → 409).
		refused := tooltest.Reply{Status: http.StatusConflict, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"help":"h","success":false,"error":{"__type":"Search Query Error","message":"Search Query is invalid: undefined field text"}}`)}
		ok := tooltest.Reply{Handle: tooltest.CKANPackageSearch(t)}
		srv := tooltest.NewServer(t, tooltest.Sequence(refused, ok))
		res, _ := call(t, serverRegistry(t, srv), "searchDatasets", `{"query":"תחבורה"}`)
		var out SearchDatasetsOutput
		mustOK(t, res, &out)
		reqs := srv.Requests()
		if len(reqs) != 2 || !strings.HasPrefix(reqs[0].Query.Get("q"), "(title:") || reqs[1].Query.Get("q") != "תחבורה" {
			t.Fatalf("requests: %d, q %q", len(reqs), func() []string {
				var qs []string
				for _, r := range reqs {
					qs = append(qs, r.Query.Get("q"))
				}
				return qs
			}())
		}
		if out.HebrewForms != nil || out.Total != 3 {
			t.Errorf("hebrewForms = %q, total %d", out.HebrewForms, out.Total)
		}
	})
}
