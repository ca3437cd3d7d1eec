package opendata

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// tagPortal serves the recorded Italian tag_list, filtering by query as
// CKAN does (case-insensitive substring), and a package_search whose tag
// facet counts are given.
func tagPortal(t *testing.T, counts map[string]int) map[string]http.HandlerFunc {
	var all []string
	if err := json.Unmarshal(tooltest.CKANResult(t, "dati-ustat.mur.gov.it/tag_list_names.jsonc"), &all); err != nil {
		t.Fatal(err)
	}
	return map[string]http.HandlerFunc{
		"tag_list": func(w http.ResponseWriter, r *http.Request) {
			q := strings.ToLower(r.URL.Query().Get("query"))
			names := []string{}
			for _, n := range all {
				if strings.Contains(strings.ToLower(n), q) {
					names = append(names, n)
				}
			}
			okJSON(t, names)(w, r)
		},
		"package_search": func(w http.ResponseWriter, r *http.Request) {
			items := []any{}
			for name, n := range counts {
				items = append(items, map[string]any{"name": name, "display_name": name, "count": n})
			}
			okJSON(t, map[string]any{"count": 9, "results": []any{},
				"search_facets": map[string]any{"tags": map[string]any{"title": "tags", "items": items}}})(w, r)
		},
	}
}

func TestListTagsNames(t *testing.T) {
	srv := tooltest.NewCKANServer(t, tagPortal(t, nil))
	res, env := call(t, serverRegistry(t, srv), "listTags", `{}`)
	var out ListTagsOutput
	mustOK(t, res, &out)
	if out.Count != 10 || *out.Total != 10 || out.Names[0] != "Accademia" || out.Tags != nil {
		t.Errorf("output = %+v", out)
	}
	if want := srv.URL + "/api/3/action/tag_list"; out.APIURL != want || len(srv.Requests()) != 1 {
		t.Errorf("apiUrl %s after %d calls", out.APIURL, len(srv.Requests()))
	}
	if env["summary"] != `10 tags (of 10): "Accademia", "Accademia Nazionale di Arte Drammatica", "Accademia Nazionale di Danza", "Accademie", "Alta Formazione Artistica e Musicale", "Dottori di ricerca", "Immatricolati", "Iscritti" and 2 more` {
		t.Errorf("summary = %v", env["summary"])
	}
}

func TestListTagsQueryAndPaging(t *testing.T) {
	srv := tooltest.NewCKANServer(t, tagPortal(t, nil))
	res, env := call(t, serverRegistry(t, srv), "listTags", `{"query":"accademia","limit":2,"offset":1}`)
	var out ListTagsOutput
	mustOK(t, res, &out)
	if got := srv.Last(t).Query.Get("query"); got != "accademia" {
		t.Errorf("query sent = %q", got)
	}
	want := []string{"Accademia Nazionale di Arte Drammatica", "Accademia Nazionale di Danza"}
	if !slices.Equal(out.Names, want) || *out.Total != 3 || out.Count != 2 {
		t.Errorf("names %v total %d count %d; want %v of 3", out.Names, *out.Total, out.Count, want)
	}
	if env["summary"] != `2 tags matching "accademia" (of 3): "Accademia Nazionale di Arte Drammatica", "Accademia Nazionale di Danza"` {
		t.Errorf("summary = %v", env["summary"])
	}
}

func TestListTagsCountsWithQuery(t *testing.T) {
	counts := map[string]int{"Accademia": 4, "Accademie": 2, "Laureati": 7, "Iscritti": 1}
	srv := tooltest.NewCKANServer(t, tagPortal(t, counts))
	res, _ := call(t, serverRegistry(t, srv), "listTags", `{"query":"accadem","allFields":true}`)
	var out ListTagsOutput
	mustOK(t, res, &out)
	tag := func(name string, n int) TagCount {
		return TagCount{Name: name, Count: n, PortalURL: srv.URL + "/dataset/?tags=" + url.QueryEscape(name)}
	}
	want := []TagCount{
		tag("Accademia", 4), tag("Accademia Nazionale di Arte Drammatica", 0), tag("Accademia Nazionale di Danza", 0), tag("Accademie", 2),
	}
	if !slices.Equal(out.Tags, want) {
		t.Errorf("tags = %v\nwant %v", out.Tags, want)
	}
	calls := srv.Requests()
	if len(calls) != 2 || tooltest.CKANAction(calls[0]) != "tag_list" || tooltest.CKANAction(calls[1]) != "package_search" {
		t.Fatalf("calls = %+v", calls)
	}
	q := calls[1].Query
	wantFQ := `tags:("Accademia" OR "Accademia Nazionale di Arte Drammatica" OR "Accademia Nazionale di Danza" OR "Accademie")`
	if q.Get("rows") != "0" || q.Get("facet.field") != `["tags"]` || q.Get("facet.limit") != "-1" || q.Get("fq") != wantFQ {
		t.Errorf("counting call = %v", q)
	}
	if !strings.HasPrefix(out.CountsAPIURL, srv.URL+"/api/3/action/package_search?") {
		t.Errorf("countsApiUrl = %s", out.CountsAPIURL)
	}
}

func TestListTagsCountsChunked(t *testing.T) {
	names := []string{}
	for i := range 100 {
		names = append(names, fmt.Sprintf("tag-%03d", i))
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"tag_list": okJSON(t, names),
		"package_search": okJSON(t, map[string]any{"count": 1, "results": []any{},
			"search_facets": map[string]any{"tags": map[string]any{"items": []any{map[string]any{"name": "tag-099", "count": 5}}}}}),
	})
	res, _ := call(t, serverRegistry(t, srv), "listTags", `{"query":"tag","allFields":true}`)
	var out ListTagsOutput
	mustOK(t, res, &out)
	calls := srv.Requests()
	if len(calls) != 4 { // tag_list, then counts for 40 + 40 + 20 tags
		t.Fatalf("%d calls, want 4", len(calls))
	}
	for _, c := range calls[1:] {
		if n := strings.Count(c.Query.Get("fq"), `"tag-`); n > tagCountChunk {
			t.Errorf("one counting call filters on %d tags", n)
		}
	}
	if out.Count != 100 || out.Tags[99].Name != "tag-099" || out.Tags[99].Count != 5 || out.Tags[0].Name != "tag-000" || out.Tags[0].Count != 0 {
		t.Errorf("count %d, tags[0] %v, tags[99] %v", out.Count, out.Tags[0], out.Tags[99])
	}
}

// Without a query, allFields lists the most used tags from one facet call.
func TestListTagsTopByCount(t *testing.T) {
	counts := map[string]int{"Laureati": 7, "Iscritti": 7, "Accademia": 4, "Accademie": 2}
	srv := tooltest.NewCKANServer(t, tagPortal(t, counts))
	res, _ := call(t, serverRegistry(t, srv), "listTags", `{"allFields":true,"limit":2,"offset":1}`)
	var out ListTagsOutput
	mustOK(t, res, &out)
	want := []TagCount{
		{Name: "Laureati", Count: 7, PortalURL: srv.URL + "/dataset/?tags=Laureati"},
		{Name: "Accademia", Count: 4, PortalURL: srv.URL + "/dataset/?tags=Accademia"},
	}
	if !slices.Equal(out.Tags, want) || out.Total != nil {
		t.Errorf("tags = %v total %v; want %v", out.Tags, out.Total, want)
	}
	calls := srv.Requests()
	if len(calls) != 1 || tooltest.CKANAction(calls[0]) != "package_search" || calls[0].Query.Get("facet.limit") != "3" || calls[0].Query.Get("rows") != "0" {
		t.Errorf("calls = %+v", calls)
	}
}
