package main_test

// End-to-end tests of the toolport binary: built once, run as a process against
// local servers that replay recorded upstream responses.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/testexec"
)

// bins holds the toolport binary, built once for the whole test binary.
var bins testexec.Builder

// toolport returns the path of the built binary.
func toolport(t *testing.T) string {
	t.Helper()
	return bins.Build(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Cleanup()
	os.Exit(code)
}

// run runs toolport in an isolated environment.
func run(t *testing.T, env map[string]string, stdin string, args ...string) testexec.Result {
	t.Helper()
	return testexec.Run(t, toolport(t), env, stdin, args...)
}

func TestCallSearchDatasetsInHebrew(t *testing.T) {
	body, err := os.ReadFile("../../ckan/testdata/demo.ckan.org/package_search_rows3_facets.json")
	if err != nil {
		t.Fatal(err)
	}
	var gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/3/action/package_search" {
			http.NotFound(w, r)
			return
		}
		gotQuery = r.URL.Query().Get("q")
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()

	r := run(t, map[string]string{"CKAN_BASE_URL": srv.URL + "/api/3"}, "", "call", "searchDatasets", `{"query":"תחבורה"}`)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	// A Hebrew word reaches the portal with its prefixed and plural forms.
	if !strings.HasPrefix(gotQuery, "(title:תחבורה^4 OR text:(תחבורה^2 OR ") || !strings.Contains(gotQuery, " OR ותחבורה") {
		t.Errorf("the portal received q=%q", gotQuery)
	}
	var out struct {
		Success  bool
		Summary  string
		Total    int
		APIURL   string `json:"apiUrl"`
		Datasets []struct{ Name, Title string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("stdout is not the result JSON: %v\n%s", err, r.Stdout)
	}
	if !out.Success || len(out.Datasets) == 0 || !strings.HasPrefix(out.APIURL, srv.URL) || out.Summary == "" {
		t.Errorf("unexpected result: %+v", out)
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{name: "help", args: []string{"--help"}, stdout: "Usage:"},
		{name: "list shows every pack", args: []string{"list"}, stdout: "web_fetch"},
		{name: "schema in OpenAI format", args: []string{"schema", "web_search_brave", "--format", "openai"}, stdout: `"type": "function"`},
		{name: "invalid arguments exit 1", args: []string{"call", "searchDatasets", `{"rows":"ten"}`}, code: 1, stdout: `rows: expected integer, got string \"ten\"`},
		{name: "arguments on stdin", args: []string{"call", "web_fetch"}, stdin: `{"url":"ftp://example.com/"}`, code: 1, stdout: `"error_code":"INVALID_URL"`},
		{name: "unknown tool exit 2", args: []string{"call", "nope", "{}"}, code: 2, stderr: `no tool named "nope"`},
		{name: "missing key explains itself", args: []string{"call", "web_search_google", `{"query":"go"}`}, code: 1, stderr: "Configuration Required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, tt.stdin, tt.args...)
			if r.Code != tt.code || !strings.Contains(r.Stdout, tt.stdout) || !strings.Contains(r.Stderr, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
		})
	}
	list := run(t, nil, "", "list")
	for _, name := range []string{"web_search_brave", "web_search_google", "web_fetch", "searchDatasets", "getDatasetDetails", "listGroups", "listTags"} {
		if !strings.Contains(list.Stdout, name) {
			t.Errorf("list lacks %s", name)
		}
	}
	// A tool with a notice shows it: Google's end, with what to use instead.
	for _, line := range strings.Split(list.Stdout, "\n") {
		if strings.HasPrefix(line, "web_search_google ") && !strings.Contains(line, "2027-01-01") {
			t.Errorf("list does not say when Google's API ends: %q", line)
		}
	}
}
