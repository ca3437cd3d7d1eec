package opendata

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestPortalInput(t *testing.T) {
	def := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	other := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})

	reg := newRegistry(t, Config{BaseURL: def.URL, HTTPClient: def.Client(), AllowPortal: func(string) error { return nil }})
	res, _ := call(t, reg, "searchDatasets", `{"query":"x","portal":"`+other.URL+`"}`)
	var out SearchDatasetsOutput
	mustOK(t, res, &out)
	if len(def.Requests()) != 0 || len(other.Requests()) != 1 {
		t.Errorf("default portal got %d calls, other %d; want 0 and 1", len(def.Requests()), len(other.Requests()))
	}
	if !strings.HasPrefix(out.APIURL, other.URL+"/api/3/action/package_search?") ||
		!strings.HasPrefix(out.Datasets[0].DatasetURL, other.URL+"/dataset/") {
		t.Errorf("apiUrl %s datasetUrl %s", out.APIURL, out.Datasets[0].DatasetURL)
	}

	// An allow-list refuses other hosts; the default portal is always allowed.
	reg = newRegistry(t, Config{BaseURL: def.URL, HTTPClient: def.Client(), AllowPortal: AllowHosts("demo.ckan.org")})
	res, _ = call(t, reg, "searchDatasets", `{"portal":"https://catalog.data.gov"}`)
	if e := mustFail(t, res, tool.CodeBlocked); !strings.Contains(e.Message, "catalog.data.gov is not in the allowed list (demo.ckan.org)") {
		t.Errorf("message %q", e.Message)
	}
	res, _ = call(t, reg, "searchDatasets", `{"portal":"`+def.URL+`/api/3"}`)
	mustOK(t, res, &out)
}

// A portal named per call goes through the SSRF-checked client: a host name
// that resolves to a loopback address is refused at connect time, even when
// the name itself passes the allow-list.
func TestPortalInputIsCheckedAtConnectTime(t *testing.T) {
	def := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	inside := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	port := inside.Listener.Addr().(*net.TCPAddr).Port

	c, err := config.New(func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := ConfigFromEnv(c)
	cfg.BaseURL, cfg.HTTPClient = def.URL, def.Client()
	cfg.AllowPortal = func(string) error { return nil } // the name check passes; the address check must not
	reg := newRegistry(t, cfg)
	res, _ := call(t, reg, "searchDatasets", fmt.Sprintf(`{"query":"x","portal":"http://localhost:%d"}`, port))
	if e := mustFail(t, res, tool.CodeBlocked); !strings.Contains(e.Message, "loopback") {
		t.Errorf("message %q", e.Message)
	}
	if len(inside.Requests()) != 0 {
		t.Errorf("the loopback portal was reached")
	}
	// The operator's own default portal is trusted, wherever it is.
	res, _ = call(t, reg, "searchDatasets", `{"query":"x"}`)
	var out SearchDatasetsOutput
	mustOK(t, res, &out)
}

func TestDefaultAllowPortal(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://data.gov.il/api/3": true, "https://8.8.8.8/api/3": true, "http://[2001:4860::1]/api/3": true,
		"http://127.0.0.1/api/3": false, "http://10.0.0.1/api/3": false, "http://169.254.169.254/api/3": false,
		"http://[::1]/api/3": false, "http://[::ffff:192.168.1.1]/api/3": false, "http://0.0.0.0/api/3": false,
		"http://100.64.1.1/api/3": false, "http://localhost/api/3": false, "http://a.localhost./api/3": false,
	} {
		if err := DefaultAllowPortal(u); (err == nil) != ok {
			t.Errorf("DefaultAllowPortal(%s) = %v, want allowed=%v", u, err, ok)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"CKAN_BASE_URL": "https://demo.ckan.org", "CKAN_ALLOWED_PORTALS": "catalog.data.gov, https://data.gov.uk/api/3"}
	c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := ConfigFromEnv(c)
	if cfg.BaseURL != "https://demo.ckan.org" || cfg.UserAgent != ckan.DefaultUserAgent || cfg.AllowPortal == nil {
		t.Fatalf("cfg = %+v", cfg)
	}
	if cfg.AllowPortal("https://data.gov.uk/api/3") != nil || cfg.AllowPortal("https://catalog.data.gov/api/3") != nil ||
		cfg.AllowPortal("https://evil.example/api/3") == nil {
		t.Error("allow-list does not hold")
	}
	if got := NewCatalog(cfg).Portals(); !slices.Equal(got, []string{"demo.ckan.org", "catalog.data.gov", "data.gov.uk"}) {
		t.Errorf("catalog portals %v", got)
	}

	c, _ = config.New(func(string) string { return "" }, t.TempDir())
	if cfg := ConfigFromEnv(c); cfg.BaseURL != ckan.DefaultBaseURL || cfg.AllowPortal != nil {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestBadBaseURLIsAConfigError(t *testing.T) {
	reg := newRegistry(t, Config{BaseURL: "data.gov.il"})
	res, _ := call(t, reg, "listTags", `{}`)
	if e := mustFail(t, res, tool.CodeConfig); !strings.HasPrefix(e.Message, "CKAN_BASE_URL: ") {
		t.Errorf("message %q", e.Message)
	}
}

func TestToolDefinitions(t *testing.T) {
	want := []string{"searchDatasets", "getDatasetDetails", "listGroups", "listTags", "listOrganizations", "queryDatastore",
		"getResourceDetails", "searchResources", "getOrganizationDetails", "getDatasetActivity", "getOrganizationActivity",
		"getDatasetSchema", "listAllDatasets", "listLicenses", "getStatus", "previewResource"}
	tools := Tools(Config{})
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for i, tl := range tools {
		s := tl.Spec()
		if s.Name != want[i] || s.Pack != "ckan" || !s.Annotations.ReadOnly || !s.Annotations.OpenWorld || s.Description == "" {
			t.Errorf("tool %d = %+v", i, s)
		}
		if _, ok := tl.OutputSchema().Properties["apiUrl"]; !ok {
			t.Errorf("%s output has no apiUrl", s.Name)
		}
		for _, f := range []tool.Format{tool.FormatAnthropic, tool.FormatOpenAI, tool.FormatMCP} {
			if _, err := tl.Definition(f); err != nil {
				t.Errorf("%s definition %v: %v", s.Name, f, err)
			}
		}
	}
}

// The configured portal (CKAN_BASE_URL) is fetched with the checked client:
// its own host is trusted wherever it is, but a redirect from it to another
// non-public host is refused and nothing of that host's answer comes back.
func TestDefaultPortalRedirectsAreChecked(t *testing.T) {
	inside := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	port := inside.Listener.Addr().(*net.TCPAddr).Port
	portal := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{
		"package_search": tooltest.CKANPackageSearch(t),
		"tag_list": func(w http.ResponseWriter, r *http.Request) {
			// localhost, not the portal's 127.0.0.1: another host.
			http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/api/3/action/package_search", port), http.StatusFound)
		},
	})
	env := map[string]string{"CKAN_BASE_URL": portal.URL}
	c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(t, ConfigFromEnv(c))
	res, _ := call(t, reg, "searchDatasets", `{"query":"x"}`)
	var out SearchDatasetsOutput
	mustOK(t, res, &out)
	res, _ = call(t, reg, "listTags", `{}`)
	if e := mustFail(t, res, tool.CodeBlocked); !strings.Contains(e.Message, "loopback") {
		t.Errorf("message %q", e.Message)
	}
	if len(inside.Requests()) != 0 {
		t.Errorf("the portal's redirect reached another loopback host")
	}
}
