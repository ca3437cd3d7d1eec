package main_test

// End-to-end tests of the toolport binary: built once, run as a process against
// local servers that replay recorded upstream responses.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	bin       string
	buildErr  error
)

func toolport(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolport-bin")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "toolport")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bin != "" {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(toolport(t), args...)
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
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
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if gotQuery != "תחבורה" {
		t.Errorf("the portal received q=%q", gotQuery)
	}
	var out struct {
		Success  bool
		Summary  string
		Total    int
		APIURL   string `json:"apiUrl"`
		Datasets []struct{ Name, Title string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not the result JSON: %v\n%s", err, r.stdout)
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
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
		})
	}
	list := run(t, nil, "", "list")
	for _, name := range []string{"web_search_brave", "web_search_google", "web_fetch", "searchDatasets", "getDatasetDetails", "listGroups", "listTags"} {
		if !strings.Contains(list.stdout, name) {
			t.Errorf("list lacks %s", name)
		}
	}
}
