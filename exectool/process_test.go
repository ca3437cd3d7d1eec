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
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolport/toolport/exectool"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binary builds the command once per test run and returns its path.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "toolport-exec-test")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(os.PathSeparator),
			"../cmd/web-fetch-tool", "../cmd/web-search-brave-tool", "../cmd/web-search-google-tool")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

type proc struct {
	code           int
	stdout, stderr string
}

// runTool runs an executable with only the given environment (plus an empty
// HOME, so no credentials file on this machine leaks in).
func runTool(t *testing.T, name string, env map[string]string, stdin string, args ...string) proc {
	t.Helper()
	cmd := exec.Command(binary(t, name), args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
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
	return proc{code, out.String(), errb.String()}
}

func fixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExecutablesPrintAValidSchema(t *testing.T) {
	for name, toolName := range map[string]string{
		"web-fetch-tool": "web_fetch", "web-search-brave-tool": "web_search_brave", "web-search-google-tool": "web_search_google",
	} {
		t.Run(name, func(t *testing.T) {
			p := runTool(t, name, nil, "", "--schema")
			if p.code != 0 || p.stderr != "" {
				t.Fatalf("exit %d, stderr %s", p.code, p.stderr)
			}
			if len(p.stdout) > exectool.MaxSchemaBytes {
				t.Errorf("--schema is %d bytes, over the host's 8 KB cap", len(p.stdout))
			}
			var def struct {
				Name        string
				Description string
				Parameters  json.RawMessage
			}
			if err := json.Unmarshal([]byte(p.stdout), &def); err != nil {
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
	body := fixture(t, "brave/testdata/web_search_what_is_semantic_kernel.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "test-key" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write(fixture(t, "brave/testdata/docs_example_422_subscription_token_invalid.json"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	ok := runTool(t, "web-search-brave-tool", map[string]string{"BRAVE_API_KEY": "test-key", "BRAVE_API_BASE_URL": srv.URL}, `{"query":"what is semantic kernel","count":3}`)
	if ok.code != 0 || !strings.Contains(ok.stdout, `"success":true`) || !strings.Contains(ok.stdout, `"count":3`) {
		t.Errorf("success run: exit %d\n%s\n%s", ok.code, ok.stdout, ok.stderr)
	}

	bad := runTool(t, "web-search-brave-tool", map[string]string{"BRAVE_API_KEY": "wrong-key", "BRAVE_API_BASE_URL": srv.URL}, `{"query":"semantic kernel"}`)
	if bad.code != 1 || !strings.Contains(bad.stdout, `"error_code":"AUTH_INVALID"`) || strings.Contains(bad.stdout+bad.stderr, "wrong-key") {
		t.Errorf("bad key run: exit %d\n%s\n%s", bad.code, bad.stdout, bad.stderr)
	}

	missing := runTool(t, "web-search-brave-tool", nil, `{"query":"semantic kernel"}`)
	if missing.code != 1 || !strings.Contains(missing.stdout, `"error_code":"AUTH_MISSING"`) {
		t.Errorf("missing key: exit %d\n%s", missing.code, missing.stdout)
	}
	var ev struct {
		Kind     string `json:"kind"`
		Content  string `json:"content"`
		DataJSON string `json:"data_json"`
	}
	if err := json.Unmarshal([]byte(missing.stderr), &ev); err != nil || ev.Kind != "config_required" || !strings.Contains(ev.DataJSON, `"tool": "web_search_brave"`) {
		t.Errorf("config_required event on stderr: %v %q", err, missing.stderr)
	}

	zero := runTool(t, "web-search-brave-tool", nil, `{"query":"semantic kernel"}`, "--exit-zero")
	if zero.code != 0 || zero.stderr != "" || !strings.Contains(zero.stdout, `"_event":{"kind":"config_required"`) {
		t.Errorf("--exit-zero: exit %d\n%s\n%s", zero.code, zero.stdout, zero.stderr)
	}
}

func TestGoogleExecutable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/customsearch/v1" || r.URL.Query().Get("key") != "gkey" || r.URL.Query().Get("cx") != "engine" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(fixture(t, "google/testdata/cse_what_is_semantic_kernel.json"))
	}))
	defer srv.Close()
	env := map[string]string{"GOOGLE_SEARCH_API_KEY": "gkey", "GOOGLE_SEARCH_ENGINE_ID": "engine", "GOOGLE_SEARCH_BASE_URL": srv.URL}
	p := runTool(t, "web-search-google-tool", env, `{"query":"semantic kernel","num":5}`)
	if p.code != 0 || !strings.Contains(p.stdout, `"success":true`) {
		t.Errorf("exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	missing := runTool(t, "web-search-google-tool", nil, `{"query":"semantic kernel"}`)
	if missing.code != 1 || !strings.Contains(missing.stderr, `"kind":"config_required"`) {
		t.Errorf("missing key: exit %d\n%s\n%s", missing.code, missing.stdout, missing.stderr)
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
	if blocked.code != 1 || !strings.Contains(blocked.stdout, `"error_code":"BLOCKED"`) {
		t.Errorf("loopback without opt-in: exit %d\n%s", blocked.code, blocked.stdout)
	}

	allow := map[string]string{"TOOLPORT_FETCH_ALLOW_PRIVATE": "1"}
	big := runTool(t, "web-fetch-tool", allow, `{"url":"`+srv.URL+`"}`)
	if big.code != 0 {
		t.Fatalf("exit %d\n%s", big.code, big.stderr)
	}
	if len(big.stdout) > exectool.MaxOutputBytes {
		t.Errorf("stdout is %d bytes, over the host's 64 KB cap", len(big.stdout))
	}
	var res struct {
		Success    bool
		Title      string
		Content    string
		TotalLines int
	}
	if err := json.Unmarshal([]byte(big.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Title != "Long page" || !strings.Contains(res.Content, "[Truncated to fit") || res.TotalLines < 3000 {
		t.Errorf("truncated result: success=%v title=%q totalLines=%d tail=%q", res.Success, res.Title, res.TotalLines, res.Content[max(0, len(res.Content)-200):])
	}

	paged := runTool(t, "web-fetch-tool", allow, `{"url":"`+srv.URL+`","offset":5997,"limit":3}`)
	// Paragraphs are separated by blank lines: paragraph k is on line 2k+1.
	if paged.code != 0 || !strings.Contains(paged.stdout, `"content":"Paragraph 2998 of`) || !strings.Contains(paged.stdout, `"lines":3`) || strings.Contains(paged.stdout, "Truncated") {
		t.Errorf("paged: exit %d\n%s", paged.code, paged.stdout)
	}
}
