package opendata

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestCatalogPortals(t *testing.T) {
	c := NewCatalog(Config{BaseURL: "https://data.gov.il/api/3", AllowedHosts: []string{"Open.Example.org", "data.gov.il", " "}})
	if got := c.Portals(); !slices.Equal(got, []string{"data.gov.il", "open.example.org"}) {
		t.Errorf("Portals = %v", got)
	}
	for _, host := range []string{"evil.example.com", "127.0.0.1", "data.gov.il.evil.example.com"} {
		_, _, err := c.Dataset(context.Background(), host, "x")
		var te *tool.Error
		if !errors.As(err, &te) || te.Code != tool.CodeBlocked || !strings.Contains(te.Message, host+" is not configured") {
			t.Errorf("Dataset on %s: %v, want BLOCKED naming it", host, err)
		}
		if _, err := c.Groups(context.Background(), host); !errors.As(err, &te) || te.Code != tool.CodeBlocked {
			t.Errorf("Groups on %s: %v, want BLOCKED", host, err)
		}
	}
}

func TestCatalogDataset(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"package_show": tooltest.Respond(200, "application/json", tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_show_17be64bb-da74-4195-9bb8-565c39846af2.json")),
	})
	c := NewCatalog(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	host := strings.TrimPrefix(srv.URL, "http://")
	if got := c.Portals(); !slices.Equal(got, []string{host}) {
		t.Fatalf("Portals = %v, want the default portal %s", got, host)
	}
	for _, h := range []string{host, ""} {
		body, title, err := c.Dataset(context.Background(), h, "2016-regione-asia-est-oceania-classi-di-eta")
		if err != nil {
			t.Fatal(err)
		}
		var out GetDatasetDetailsOutput
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		if title != "2016 Regione Asia Est Oceania * Classi di età" || out.Title != title || len(out.Resources) != 1 ||
			out.PortalURL != srv.URL+"/dataset/2016-regione-asia-est-oceania-classi-di-eta" {
			t.Errorf("dataset %q: %+v", title, out)
		}
	}
	// A portal that has no such dataset.
	var te *tool.Error
	empty := tooltest.NewCKANServer(t, nil)
	c = NewCatalog(Config{BaseURL: empty.URL, HTTPClient: empty.Client()})
	if _, _, err := c.Dataset(context.Background(), "", "missing"); !errors.As(err, &te) || te.Code != tool.CodeNotFound {
		t.Errorf("missing dataset: %v, want NOT_FOUND", err)
	}
}

func TestCatalogNamesAreBoundedAndCached(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"organization_list": okJSON(t, []string{"ministry-of-health", "ministry-of-transport"}),
		"group_list":        okJSON(t, []string{"health"}),
	})
	c := NewCatalog(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	for range 3 {
		got, err := c.Organizations(ctx, "")
		if err != nil || !slices.Equal(got, []string{"ministry-of-health", "ministry-of-transport"}) {
			t.Fatalf("Organizations = %v, %v", got, err)
		}
	}
	if got, err := c.Groups(ctx, ""); err != nil || !slices.Equal(got, []string{"health"}) {
		t.Fatalf("Groups = %v, %v", got, err)
	}
	actions := func() []string {
		var out []string
		for _, r := range srv.Requests() {
			out = append(out, tooltest.CKANAction(r))
		}
		return out
	}
	if got := actions(); !slices.Equal(got, []string{"organization_list", "group_list"}) {
		t.Errorf("calls %v: the names were not reused", got)
	}
	if q := srv.Requests()[0].Query; q.Get("limit") != "1000" {
		t.Errorf("organization_list query %v, want limit=1000", url.Values(q))
	}
	now = now.Add(CatalogTTL)
	if _, err := c.Organizations(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := actions(); len(got) != 3 || got[2] != "organization_list" {
		t.Errorf("calls %v: stale names were not asked again", got)
	}
}

func TestCatalogCutsNamesAtTheBound(t *testing.T) {
	var many []string
	for i := range MaxCatalogNames + 5 {
		many = append(many, "org-"+strings.Repeat("x", i%3)+string(rune('a'+i%26)))
	}
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"organization_list": okJSON(t, many)})
	c := NewCatalog(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	got, err := c.Organizations(context.Background(), "")
	if err != nil || len(got) != MaxCatalogNames {
		t.Errorf("%d names, %v; want %d", len(got), err, MaxCatalogNames)
	}
}
