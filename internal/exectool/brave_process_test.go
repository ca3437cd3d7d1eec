package exectool_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// TestPlaceContextAndAnswerExecutables run the three executables of Brave's
// plan-bound tools against a stand-in Brave, and without a key.
func TestPlaceContextAndAnswerExecutables(t *testing.T) {
	// Brave's documented POI example without its published trailing comma.
	pois := regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(tooltest.Fixture(t, "brave", "docs_example_local_pois.jsonc"), []byte("$1"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "test-key" {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		}
		switch r.URL.Path {
		case "/res/v1/web/search": // CONSTRUCTED: a locations block with the example's id
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"type":"search","locations":{"type":"locations","results":[{"id":"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=","title":"Park Mediterranean Grill"}]}}`))
		case "/res/v1/local/pois":
			w.Header().Set("Content-Type", "application/json")
			w.Write(pois)
		case "/res/v1/llm/context": // CONSTRUCTED from the documented response
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"grounding":{"generic":[{"url":"https://go.dev/","title":"Go","snippets":["Go is a language."]}]},"sources":{"https://go.dev/":{"title":"Go","hostname":"go.dev"}}}`))
		case "/res/v1/chat/completions": // CONSTRUCTED from the documented stream
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(`data: {"model":"brave","choices":[{"delta":{"content":"Go is a language.<citation>{\"number\":1,\"url\":\"https://go.dev/\"}</citation>"}}]}` + "\n\ndata: [DONE]\n\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := map[string]string{"BRAVE_API_KEY": "test-key", "BRAVE_API_BASE_URL": srv.URL}
	for _, tt := range []struct{ cmd, args, want string }{
		{"local-search-brave-tool", `{"query":"mediterranean san francisco"}`, `"hours_today":"Monday 07:00-21:00"`},
		{"llm-context-brave-tool", `{"query":"what is go"}`, `"snippets":["Go is a language."]`},
		{"answer-brave-tool", `{"question":"what is go?"}`, `"answer":"Go is a language. [1]"`},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			ok := runTool(t, tt.cmd, env, tt.args)
			if ok.Code != 0 || !strings.Contains(ok.Stdout, `"success":true`) || !strings.Contains(ok.Stdout, tt.want) {
				t.Errorf("exit %d\n%s\n%s", ok.Code, ok.Stdout, ok.Stderr)
			}
			missing := runTool(t, tt.cmd, nil, tt.args)
			if missing.Code != 1 || !strings.Contains(missing.Stdout, `"error_code":"AUTH_MISSING"`) || !strings.Contains(missing.Stderr, "config_required") {
				t.Errorf("without a key: exit %d\n%s\n%s", missing.Code, missing.Stdout, missing.Stderr)
			}
		})
	}
}

func TestSearxngExecutableNeedsAnInstance(t *testing.T) {
	p := runTool(t, "web-search-searxng-tool", nil, `{"query":"go"}`)
	if p.Code != 1 || !strings.Contains(p.Stdout, `"error_code":"CONFIG_ERROR"`) || !strings.Contains(p.Stdout, "SearXNG") {
		t.Errorf("exit %d\n%s\n%s", p.Code, p.Stdout, p.Stderr)
	}
}
