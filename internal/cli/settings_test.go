package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/server/servertest"
)

// send sends a JSON request to the settings API and returns the status and
// the body.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The page's Settings against the real `toolport serve`: a key set from the
// page is kept in the credentials file (0600), never sent back nor logged,
// and the tool that needed it is offered to the model at once.
func TestSettingsSetAKeyLive(t *testing.T) {
	home := t.TempDir()
	creds := filepath.Join(home, "credentials.json")
	// A file the user wrote by hand: what the page does not touch stays.
	if err := os.WriteFile(creds, []byte(`{"tidal": {"client_secret": "kept-tidal-secret-0000"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stderr, _ := startServe(t, map[string]string{"HOME": home, "TOOLPORT_CREDENTIALS": creds}, "--packs", "web")
	const key = "BSA-test-key-from-the-page-4242"

	offered := func() []string {
		var i struct{ OfferedTools []string }
		getJSON(t, base+"/api/info", &i)
		return i.OfferedTools
	}
	if slices.Contains(offered(), "web_search_brave") {
		t.Fatal("web_search_brave offered without a key")
	}
	code, body := send(t, "PUT", base+"/api/settings/keys", `{"brave_api_key": "`+key+`", "searxng_url": "http://127.0.0.1:8888"}`)
	if code != 200 {
		t.Fatalf("PUT keys: %d %s", code, body)
	}
	if strings.Contains(body, key) || !strings.Contains(body, "••••4242") {
		t.Errorf("the answer does not mask the key: %s", body)
	}
	if got := offered(); !slices.Contains(got, "web_search_brave") || !slices.Contains(got, "web_search_searxng") {
		t.Errorf("after setting the keys, offered %v", got)
	}
	info, err := os.Stat(creds)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", info.Mode().Perm())
	}
	raw, _ := os.ReadFile(creds)
	var file struct {
		WebSearch struct {
			Brave struct {
				APIKey string `json:"api_key"`
			}
		} `json:"web_search"`
		Tidal struct {
			ClientSecret string `json:"client_secret"`
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if file.WebSearch.Brave.APIKey != key || file.Tidal.ClientSecret != "kept-tidal-secret-0000" {
		t.Errorf("credentials file: %s", raw)
	}
	_, view := send(t, "GET", base+"/api/settings", "")
	if strings.Contains(view, key) || strings.Contains(view, "kept-tidal-secret") {
		t.Errorf("GET /api/settings holds a secret: %s", view)
	}
	if strings.Contains(stderr.String(), key) {
		t.Errorf("the log holds the key:\n%s", stderr.String())
	}
	// Cleared from the page: gone from the file and from the offer.
	if code, body := send(t, "PUT", base+"/api/settings/keys", `{"brave_api_key": ""}`); code != 200 {
		t.Fatalf("clearing: %d %s", code, body)
	}
	if slices.Contains(offered(), "web_search_brave") {
		t.Error("web_search_brave still offered after its key was cleared")
	}
}

// Input the settings refuse: small structured errors that never quote the
// value sent.
func TestSettingsRefuseBadInput(t *testing.T) {
	home := t.TempDir()
	// No credentials file yet: the page writes the first one.
	base, stderr, _ := startServe(t, map[string]string{"HOME": home}, "--packs", "web")
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown key", "PUT", "/api/settings/keys", `{"nope_key": "x"}`, 400, "BAD_REQUEST"},
		{"no keys", "PUT", "/api/settings/keys", `{}`, 400, "BAD_REQUEST"},
		{"not a URL", "PUT", "/api/settings/keys", `{"searxng_url": "ftp://secret-host-9/x"}`, 400, "BAD_REQUEST"},
		{"control characters", "PUT", "/api/settings/keys", `{"brave_api_key": "a\nb-secret-value"}`, 400, "BAD_REQUEST"},
		{"not JSON", "PUT", "/api/settings/keys", `{"brave_api_key":`, 400, "BAD_REQUEST"},
		{"credentials in a base URL", "POST", "/api/settings/models",
			`{"name":"x","provider":"openai","baseUrl":"http://u:pass-secret-1@127.0.0.1:1/v1","model":"m"}`, 400, "BAD_REQUEST"},
		{"unknown provider", "POST", "/api/settings/models", `{"name":"x","provider":"acme","model":"m"}`, 400, "BAD_REQUEST"},
		{"no model", "POST", "/api/settings/models", `{"name":"x","provider":"openai"}`, 400, "BAD_REQUEST"},
		{"bad name", "POST", "/api/settings/models", `{"name":"a b","provider":"openai","model":"m"}`, 400, "BAD_REQUEST"},
		{"no such connection", "DELETE", "/api/settings/models/nope", "", 404, "NOT_FOUND"},
		{"MCP server with both", "POST", "/api/settings/mcp", `{"name":"s","command":"true","url":"http://127.0.0.1:1/mcp"}`, 400, "BAD_REQUEST"},
		{"MCP server with neither", "POST", "/api/settings/mcp", `{"name":"s"}`, 400, "BAD_REQUEST"},
		{"MCP token without URL", "POST", "/api/settings/mcp", `{"name":"s","command":"true","token":"tok-secret-77"}`, 400, "BAD_REQUEST"},
		{"no such MCP server", "DELETE", "/api/settings/mcp/nope", "", 404, "NOT_FOUND"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := send(t, c.method, base+c.path, c.body)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != c.status || e.Error.Code != c.code {
				t.Fatalf("%d %s, want %d %s", status, body, c.status, c.code)
			}
			for _, secret := range []string{"secret-host", "pass-secret", "b-secret", "tok-secret"} {
				if strings.Contains(body, secret) {
					t.Errorf("the error quotes the value: %s", body)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(home, "c.json")); err == nil {
		raw, _ := os.ReadFile(filepath.Join(home, "c.json"))
		if strings.Contains(string(raw), "secret") {
			t.Errorf("refused input was written: %s", raw)
		}
	}
	if s := stderr.String(); strings.Contains(s, "secret") {
		t.Errorf("the log holds a refused value:\n%s", s)
	}
}

// A model connection to a local OpenAI-compatible server, set from the
// page: its models are listed, it becomes the default, and the next chat
// answers with it, without a restart.
func TestSettingsAddAModelAndChat(t *testing.T) {
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "hello", Events: []servertest.Event{servertest.Text("Hi from the local model.")}})
	// CONSTRUCTED from OpenAI's documented GET /v1/models answer (Ollama,
	// LM Studio and vLLM answer the same shape).
	lister := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-local-secret-abcdef123456" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen2.5:7b","object":"model","created":1,"owned_by":"library"},{"id":"llama3.2","object":"model","created":1,"owned_by":"library"}]}`)
	}))
	t.Cleanup(lister.Close)
	home := t.TempDir()
	// No credentials file yet: the page writes the first one.
	base, stderr, _ := startServe(t, map[string]string{"HOME": home}, "--packs", "web")

	code, body := send(t, "POST", base+"/api/settings/models/list",
		`{"name":"local","provider":"openai","baseUrl":"`+lister.URL+`/v1","apiKey":"sk-local-secret-abcdef123456"}`)
	if code != 200 || !strings.Contains(body, `"llama3.2"`) || !strings.Contains(body, `"qwen2.5:7b"`) {
		t.Fatalf("listing: %d %s", code, body)
	}
	code, body = send(t, "POST", base+"/api/settings/models",
		`{"name":"local","provider":"openai","baseUrl":"`+ms.OpenAIBaseURL()+`","apiKey":"sk-local-secret-abcdef123456","model":"qwen2.5:7b","default":true}`)
	if code != 200 || strings.Contains(body, "sk-local-secret") {
		t.Fatalf("saving: %d %s", code, body)
	}
	var info struct {
		Model           string
		ModelConfigured bool
		Models          []struct{ Name string }
	}
	getJSON(t, base+"/api/info", &info)
	if !info.ModelConfigured || info.Model != "local:qwen2.5:7b" || len(info.Models) != 1 {
		t.Fatalf("/api/info after saving: %+v", info)
	}
	code, body = send(t, "POST", base+"/api/conversations", "")
	if code != 201 {
		t.Fatalf("conversation: %d %s", code, body)
	}
	var conv struct{ ID string }
	json.Unmarshal([]byte(body), &conv)
	code, body = send(t, "POST", base+"/api/conversations/"+conv.ID+"/messages", `{"content":"hello there"}`)
	if code != 200 || !strings.Contains(body, "Hi from the local model.") {
		t.Fatalf("chat: %d %s", code, body)
	}
	if reqs := ms.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].Path, "/chat/completions") {
		t.Errorf("the model server saw %+v", reqs)
	}
	// Saved again without a key: the stored one is kept.
	code, body = send(t, "POST", base+"/api/settings/models",
		`{"name":"local","provider":"openai","baseUrl":"`+lister.URL+`/v1","model":"llama3.2"}`)
	if code != 200 || !strings.Contains(body, `"keySet":true`) {
		t.Fatalf("saving again: %d %s", code, body)
	}
	if code, body := send(t, "DELETE", base+"/api/settings/models/local", ""); code != 200 {
		t.Fatalf("removing: %d %s", code, body)
	}
	getJSON(t, base+"/api/info", &info)
	if info.ModelConfigured || len(info.Models) != 0 {
		t.Errorf("/api/info after removing: %+v", info)
	}
	if strings.Contains(stderr.String(), "sk-local-secret") {
		t.Errorf("the log holds the key:\n%s", stderr.String())
	}
}

// An MCP server attached from the page: its tools join /api/tools and the
// model's offer at once, and leave when it is detached.
func TestSettingsAttachAnMCPServer(t *testing.T) {
	up := pingServer(t, false)
	home := t.TempDir()
	creds := filepath.Join(home, "c.json")
	if err := os.WriteFile(creds, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _ := startServe(t, map[string]string{"HOME": home, "TOOLPORT_CREDENTIALS": creds}, "--packs", "web")

	code, body := send(t, "POST", base+"/api/settings/mcp", `{"name":"up","url":"`+up+`","token":"mcp-token-secret-123456"}`)
	if code != 200 || strings.Contains(body, "mcp-token-secret") || !strings.Contains(body, `"tokenSet":true`) {
		t.Fatalf("attach: %d %s", code, body)
	}
	offeredPing := func() bool {
		var tools struct {
			Tools []struct {
				Name    string
				Offered bool
			}
		}
		getJSON(t, base+"/api/tools", &tools)
		return slices.ContainsFunc(tools.Tools, func(tl struct {
			Name    string
			Offered bool
		}) bool {
			return tl.Name == "up__ping" && tl.Offered
		})
	}
	if !offeredPing() {
		t.Fatal("/api/tools lacks an offered up__ping after attaching")
	}
	var i struct{ OfferedTools []string }
	getJSON(t, base+"/api/info", &i)
	if !slices.Contains(i.OfferedTools, "up__ping") {
		t.Errorf("the model is not offered up__ping: %v", i.OfferedTools)
	}
	raw, _ := os.ReadFile(creds)
	if !strings.Contains(string(raw), `"up"`) {
		t.Errorf("the server is not kept in the credentials file: %s", raw)
	}
	if code, body := send(t, "POST", base+"/api/settings/mcp", `{"name":"up","url":"`+up+`"}`); code != 400 {
		t.Errorf("attaching a second up: %d %s", code, body)
	}
	if code, body := send(t, "DELETE", base+"/api/settings/mcp/up", ""); code != 200 {
		t.Fatalf("detach: %d %s", code, body)
	}
	if offeredPing() {
		t.Error("up__ping still offered after detaching")
	}
}
