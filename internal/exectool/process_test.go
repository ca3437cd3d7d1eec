package exectool_test

// These tests run the real ikigai executables as processes, the way a host
// does: flags, stdin, stdout, stderr and the exit code.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolport/toolport/internal/exectool"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/tooltest"
)

// bins holds the executables, built once for the whole test binary.
var bins testexec.Builder

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Cleanup()
	os.Exit(code)
}

// runTool runs an ikigai executable in an isolated environment.
func runTool(t *testing.T, name string, env map[string]string, stdin string, args ...string) testexec.Result {
	t.Helper()
	return testexec.Run(t, bins.Build(t, filepath.Join(tooltest.Root(t), "cmd", name)), env, stdin, args...)
}

func TestExecutablesPrintAValidSchema(t *testing.T) {
	for name, toolName := range map[string]string{
		"web-fetch-tool": "web_fetch", "web-search-brave-tool": "web_search_brave", "web-search-google-tool": "web_search_google",
		"news-search-brave-tool": "news_search_brave", "image-search-brave-tool": "image_search_brave", "video-search-brave-tool": "video_search_brave",
		"local-search-brave-tool": "local_search_brave", "llm-context-brave-tool": "llm_context_brave", "answer-brave-tool": "answer_brave",
		"web-search-searxng-tool": "web_search_searxng",
	} {
		t.Run(name, func(t *testing.T) {
			p := runTool(t, name, nil, "", "--schema")
			if p.Code != 0 || p.Stderr != "" {
				t.Fatalf("exit %d, stderr %s", p.Code, p.Stderr)
			}
			if len(p.Stdout) > exectool.MaxSchemaBytes {
				t.Errorf("--schema is %d bytes, over the host's 8 KB cap", len(p.Stdout))
			}
			var def struct {
				Name        string
				Description string
				Parameters  json.RawMessage
			}
			if err := json.Unmarshal([]byte(p.Stdout), &def); err != nil {
				t.Fatal(err)
			}
			if def.Name != toolName || def.Description == "" {
				t.Errorf("name %q, description %q", def.Name, def.Description)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(def.Parameters))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("schema.json", doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile("schema.json"); err != nil {
				t.Errorf("parameters are not a valid JSON Schema: %v", err)
			}
		})
	}
}

func TestBraveExecutable(t *testing.T) {
	body := tooltest.Fixture(t, "brave", "web_search_what_is_semantic_kernel.json")
	tokenInvalid := tooltest.Fixture(t, "brave", "docs_example_422_subscription_token_invalid.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "test-key" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write(tokenInvalid)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	ok := runTool(t, "web-search-brave-tool", map[string]string{"BRAVE_API_KEY": "test-key", "BRAVE_API_BASE_URL": srv.URL}, `{"query":"what is semantic kernel","count":3}`)
	if ok.Code != 0 || !strings.Contains(ok.Stdout, `"success":true`) || !strings.Contains(ok.Stdout, `"count":3`) {
		t.Errorf("success run: exit %d\n%s\n%s", ok.Code, ok.Stdout, ok.Stderr)
	}

	bad := runTool(t, "web-search-brave-tool", map[string]string{"BRAVE_API_KEY": "wrong-key", "BRAVE_API_BASE_URL": srv.URL}, `{"query":"semantic kernel"}`)
	if bad.Code != 1 || !strings.Contains(bad.Stdout, `"error_code":"AUTH_INVALID"`) || strings.Contains(bad.Stdout+bad.Stderr, "wrong-key") {
		t.Errorf("bad key run: exit %d\n%s\n%s", bad.Code, bad.Stdout, bad.Stderr)
	}

	missing := runTool(t, "web-search-brave-tool", nil, `{"query":"semantic kernel"}`)
	if missing.Code != 1 || !strings.Contains(missing.Stdout, `"error_code":"AUTH_MISSING"`) {
		t.Errorf("missing key: exit %d\n%s", missing.Code, missing.Stdout)
	}
	var ev struct {
		Kind     string `json:"kind"`
		Content  string `json:"content"`
		DataJSON string `json:"data_json"`
	}
	if err := json.Unmarshal([]byte(missing.Stderr), &ev); err != nil || ev.Kind != "config_required" || !strings.Contains(ev.DataJSON, `"tool": "web_search_brave"`) {
		t.Errorf("config_required event on stderr: %v %q", err, missing.Stderr)
	}

	zero := runTool(t, "web-search-brave-tool", nil, `{"query":"semantic kernel"}`, "--exit-zero")
	if zero.Code != 0 || zero.Stderr != "" || !strings.Contains(zero.Stdout, `"_event":{"kind":"config_required"`) {
		t.Errorf("--exit-zero: exit %d\n%s\n%s", zero.Code, zero.Stdout, zero.Stderr)
	}
}

// TestNewsExecutable runs news-search-brave-tool; the image and video
// executables are the same main over another declaration.
func TestNewsExecutable(t *testing.T) {
	body := tooltest.Fixture(t, "brave", "docs_example_news_search.json")
	tokenInvalid := tooltest.Fixture(t, "brave", "docs_example_422_subscription_token_invalid.json")
	var gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/news/search" || r.Header.Get("X-Subscription-Token") != "test-key" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write(tokenInvalid)
			return
		}
		gotQuery = r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	// TOOLPORT_BRAVE_TOOLS selects what the registry offers; the executable
	// is an explicit choice and runs whatever it says.
	env := map[string]string{"BRAVE_API_KEY": "test-key", "BRAVE_API_BASE_URL": srv.URL, "TOOLPORT_BRAVE_TOOLS": "web"}
	ok := runTool(t, "news-search-brave-tool", env, `{"query":"space exploration","count":20,"freshness":"pd"}`)
	if ok.Code != 0 || !strings.Contains(ok.Stdout, `"success":true`) || !strings.Contains(ok.Stdout, `"source":"news.example.com"`) ||
		!strings.Contains(ok.Stdout, `"summary":"1 news result for \"space exploration\""`) {
		t.Errorf("success run: exit %d\n%s\n%s", ok.Code, ok.Stdout, ok.Stderr)
	}
	if gotQuery != "count=20&freshness=pd&q=space+exploration" {
		t.Errorf("query = %q", gotQuery)
	}

	bad := runTool(t, "news-search-brave-tool", map[string]string{"BRAVE_API_KEY": "wrong-key", "BRAVE_API_BASE_URL": srv.URL}, `{"query":"space exploration"}`)
	if bad.Code != 1 || !strings.Contains(bad.Stdout, `"error_code":"AUTH_INVALID"`) || strings.Contains(bad.Stdout+bad.Stderr, "wrong-key") {
		t.Errorf("bad key run: exit %d\n%s\n%s", bad.Code, bad.Stdout, bad.Stderr)
	}

	invalid := runTool(t, "news-search-brave-tool", env, `{"query":"space exploration","count":51}`)
	if invalid.Code != 1 || !strings.Contains(invalid.Stdout, `"error_code":"VALIDATION"`) {
		t.Errorf("count 51: exit %d\n%s", invalid.Code, invalid.Stdout)
	}

	missing := runTool(t, "news-search-brave-tool", nil, `{"query":"space exploration"}`)
	var ev struct {
		Kind     string `json:"kind"`
		DataJSON string `json:"data_json"`
	}
	if missing.Code != 1 || json.Unmarshal([]byte(missing.Stderr), &ev) != nil || ev.Kind != "config_required" ||
		!strings.Contains(ev.DataJSON, `"tool": "news_search_brave"`) {
		t.Errorf("missing key: exit %d\n%s\n%s", missing.Code, missing.Stdout, missing.Stderr)
	}
}

func TestGoogleExecutable(t *testing.T) {
	body := tooltest.Fixture(t, "google", "cse_what_is_semantic_kernel.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/customsearch/v1" || r.URL.Query().Get("key") != "gkey" || r.URL.Query().Get("cx") != "engine" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(body)
	}))
	defer srv.Close()
	env := map[string]string{"GOOGLE_SEARCH_API_KEY": "gkey", "GOOGLE_SEARCH_ENGINE_ID": "engine", "GOOGLE_SEARCH_BASE_URL": srv.URL}
	p := runTool(t, "web-search-google-tool", env, `{"query":"semantic kernel","num":5}`)
	if p.Code != 0 || !strings.Contains(p.Stdout, `"success":true`) {
		t.Errorf("exit %d\n%s\n%s", p.Code, p.Stdout, p.Stderr)
	}
	missing := runTool(t, "web-search-google-tool", nil, `{"query":"semantic kernel"}`)
	if missing.Code != 1 || !strings.Contains(missing.Stderr, `"kind":"config_required"`) {
		t.Errorf("missing key: exit %d\n%s\n%s", missing.Code, missing.Stdout, missing.Stderr)
	}
}

func TestFetchExecutable(t *testing.T) {
	var page strings.Builder
	page.WriteString("<html><head><title>Long page</title></head><body><article>")
	for i := range 3000 {
		fmt.Fprintf(&page, "<p>Paragraph %d of a long article about rivers, bridges and the people who cross them every day.</p>\n", i)
	}
	page.WriteString("</article></body></html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page.String())
	}))
	defer srv.Close()

	blocked := runTool(t, "web-fetch-tool", nil, `{"url":"`+srv.URL+`"}`)
	if blocked.Code != 1 || !strings.Contains(blocked.Stdout, `"error_code":"BLOCKED"`) {
		t.Errorf("loopback without opt-in: exit %d\n%s", blocked.Code, blocked.Stdout)
	}

	allow := map[string]string{"TOOLPORT_FETCH_ALLOW_PRIVATE": "1"}
	type result struct {
		Success        bool
		Title          string
		Content        string
		TotalLines     int
		HasMore        bool
		NextStartIndex *int
	}
	decode := func(p testexec.Result) result {
		t.Helper()
		if p.Code != 0 {
			t.Fatalf("exit %d\n%s", p.Code, p.Stderr)
		}
		if len(p.Stdout) > exectool.MaxOutputBytes {
			t.Errorf("stdout is %d bytes, over the host's 64 KB cap", len(p.Stdout))
		}
		var res result
		if err := json.Unmarshal([]byte(p.Stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Without paging arguments the page's first 5000 characters at most
	// (web_fetch's DefaultMaxLength), with where to go on: nothing to cut.
	res := decode(runTool(t, "web-fetch-tool", allow, `{"url":"`+srv.URL+`"}`))
	if !res.Success || res.Title != "Long page" || !res.HasMore || res.NextStartIndex == nil || *res.NextStartIndex != utf8.RuneCountInString(res.Content) ||
		utf8.RuneCountInString(res.Content) > 5000 || strings.Contains(res.Content, "Truncated") || res.TotalLines < 3000 {
		t.Errorf("unpaged result: success=%v title=%q hasMore=%v nextStartIndex=%v totalLines=%d, %d characters",
			res.Success, res.Title, res.HasMore, res.NextStartIndex, res.TotalLines, utf8.RuneCountInString(res.Content))
	}
	// A page asked for whole is cut to fit the host's cap, and says so.
	res = decode(runTool(t, "web-fetch-tool", allow, `{"url":"`+srv.URL+`","max_length":1000000}`))
	if !res.Success || !strings.Contains(res.Content, "[Truncated to fit") {
		t.Errorf("truncated result: success=%v tail=%q", res.Success, res.Content[max(0, len(res.Content)-200):])
	}

	paged := runTool(t, "web-fetch-tool", allow, `{"url":"`+srv.URL+`","offset":5997,"limit":3}`)
	// Paragraphs are separated by blank lines: paragraph k is on line 2k+1.
	if paged.Code != 0 || !strings.Contains(paged.Stdout, `"content":"Paragraph 2998 of`) || !strings.Contains(paged.Stdout, `"lines":3`) || strings.Contains(paged.Stdout, "Truncated") {
		t.Errorf("paged: exit %d\n%s", paged.Code, paged.Stdout)
	}
}
