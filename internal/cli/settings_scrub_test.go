package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A key set from the page joins the registry's scrubber at once: a Brave
// fake that quotes the subscription token back in its results reaches the
// tool's caller with the key redacted, without a restart (SECURITY.md).
func TestSettingsKeyJoinsTheScrubberLive(t *testing.T) {
	const key = "BSA-page-key-echoed-back-7788"
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" {
			http.NotFound(w, r)
			return
		}
		tok := r.Header.Get("X-Subscription-Token")
		w.Header().Set("Content-Type", "application/json")
		// CONSTRUCTED: Brave's web search shape (brave/testdata's recorded
		// answer, cut to one result) with the token quoted back, as a
		// misbehaving upstream or proxy might.
		json.NewEncoder(w).Encode(map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web": map[string]any{"type": "search", "results": []any{map[string]any{
				"type": "search_result", "title": "Debug " + tok, "url": "https://example.org/debug",
				"description": "your token is " + tok,
			}}},
		})
	}))
	t.Cleanup(brave.Close)
	home := t.TempDir()
	base, stderr, _ := startServe(t, map[string]string{"HOME": home, "BRAVE_API_BASE_URL": brave.URL}, "--packs", "web")

	if code, body := send(t, "PUT", base+"/api/settings/keys", `{"brave_api_key": "`+key+`"}`); code != 200 {
		t.Fatalf("PUT keys: %d %s", code, body)
	}
	code, body := send(t, "POST", base+"/api/tools/web_search_brave", `{"query":"toolport"}`)
	if code != 200 || !strings.Contains(body, `"success":true`) {
		t.Fatalf("web_search_brave: %d %s", code, body)
	}
	if strings.Contains(body, key) || !strings.Contains(body, "[REDACTED]") {
		t.Errorf("the key set from the page is not scrubbed from the result: %s", body)
	}
	if strings.Contains(stderr.String(), key) {
		t.Errorf("the log holds the key:\n%s", stderr.String())
	}
}
