package opendata

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// substringResourceSearch answers resource_search over the resources of
// testdata/searchquality/catalogue.json as CKAN does: every "field:term"
// is a case-insensitive substring match (ILIKE '%term%'), all must match.
func substringResourceSearch(t *testing.T) http.HandlerFunc {
	catalogue, _ := readSearchQuality(t)
	var pkgs []struct {
		ID        string
		Resources []map[string]any
	}
	if err := json.Unmarshal(catalogue, &pkgs); err != nil {
		t.Fatal(err)
	}
	var all []map[string]any
	for _, p := range pkgs {
		for _, r := range p.Resources {
			r["package_id"] = p.ID
			all = append(all, r)
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		offset, _ := strconv.Atoi(q.Get("offset"))
		var hits []map[string]any
		for _, res := range all {
			ok := true
			for _, term := range q["query"] {
				field, value, _ := strings.Cut(term, ":")
				s, _ := res[field].(string)
				ok = ok && strings.Contains(strings.ToLower(s), strings.ToLower(value))
			}
			if ok {
				hits = append(hits, res)
			}
		}
		page := hits[min(offset, len(hits)):min(offset+limit, len(hits))]
		okJSON(t, map[string]any{"count": len(hits), "results": nonNil(page)})(w, r)
	}
}

func TestSearchResourcesHebrewForms(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantCalls []string // the name terms asked for, in order
		wantNames []string
		wantForms []string
	}{
		{"a prefixed word finds the bare one", `{"query":"לבדיקות"}`,
			[]string{"name:לבדיקות", "name:בדיקות", "name:בדיק"}, []string{"בדיקות יומיות", "בדיקות מים"}, []string{"בדיקות", "בדיק"}},
		{"niqqud is stripped", `{"query":"מוּסָכִים"}`,
			[]string{"name:מוסכים", "name:מוסכ", "name:מוסך"}, []string{"מוסכים"}, []string{"מוסכ", "מוסך"}},
		{"a singular finds the plural", `{"query":"מוסך"}`,
			[]string{"name:מוסך", "name:מוסכ"}, []string{"מוסכים"}, []string{"מוסכ"}},
		{"exactQuery asks once", `{"query":"לבדיקות","exactQuery":true}`,
			[]string{"name:לבדיקות"}, nil, nil},
		{"a later page asks once", `{"query":"לבדיקות","offset":1}`,
			[]string{"name:לבדיקות"}, nil, nil},
		{"a full page asks once", `{"query":"ספר","limit":1}`,
			[]string{"name:ספר"}, []string{"בתי ספר"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"resource_search": substringResourceSearch(t)})
			res, env := call(t, serverRegistry(t, srv), "searchResources", tt.args)
			var out SearchResourcesOutput
			mustOK(t, res, &out)
			var calls []string
			for _, r := range srv.Requests() {
				calls = append(calls, r.Query["query"]...)
			}
			var names []string
			for _, r := range out.Resources {
				names = append(names, r.Name)
			}
			if !slices.Equal(calls, tt.wantCalls) || !slices.Equal(names, tt.wantNames) || !slices.Equal(out.HebrewForms, tt.wantForms) {
				t.Errorf("calls %q\nnames %q\nforms %q\nsummary %v", calls, names, out.HebrewForms, env["summary"])
			}
			if out.Count != len(tt.wantNames) && tt.name != "a full page asks once" {
				t.Errorf("count %d, want %d (every call was complete)", out.Count, len(tt.wantNames))
			}
		})
	}
}

// Where resource_search is off, the package_search fallback asks Solr for
// the word's whole-word forms and matches the resources locally with the
// substring forms.
func TestSearchResourcesHebrewFallback(t *testing.T) {
	catalogue, _ := readSearchQuality(t)
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		// CONSTRUCTED: CKAN's answer for an action it does not know.
		"resource_search": tooltest.Respond(400, "application/json", []byte(`"Bad request - Action name not known: resource_search"`)),
		"package_search":  newSolrFake(t, catalogue).ServeHTTP,
	})
	res, _ := call(t, serverRegistry(t, srv), "searchResources", `{"query":"מוסך"}`)
	var out SearchResourcesOutput
	mustOK(t, res, &out)
	if out.Source != "package_search" || len(out.Resources) != 1 || out.Resources[0].Name != "מוסכים" {
		t.Fatalf("source %s, resources %+v", out.Source, out.Resources)
	}
	q := srv.Last(t).Query.Get("q")
	if !strings.HasPrefix(q, `res_name:("מוסך" OR "מוסכים"`) {
		t.Errorf("q = %s", q)
	}
	if out.Resources[0].PortalURL != srv.URL+"/dataset/licensed-garages/resource/"+out.Resources[0].ID {
		t.Errorf("portalUrl = %s", out.Resources[0].PortalURL)
	}
}
