package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
)

// Saved OAuth tokens stay with their server: read back only for the URL
// they were issued for, never written for a server no longer declared
// (detached while its flow ran), deleted on request, and registered as
// secrets when the file is read.
func TestMCPTokensKeepToTheirServer(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".config/toolport/credentials.json")
	writeFile(t, path, `{"mcp":{"servers":{"notes":{"url":"https://notes.example/mcp"}}}}`, 0o600)
	store := &config.MCPTokens{Path: path}
	saved := json.RawMessage(`{"access_token":"at-secret-123456","refresh_token":"rt-secret-654321","client_id":"c1","token_url":"https://as.example/token"}`)
	if err := store.SaveOAuth("notes", "https://notes.example/mcp", saved); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveOAuth("gone", "https://gone.example/mcp", saved); err != nil {
		t.Fatal(err)
	}
	got, err := store.LoadOAuth("notes", "https://notes.example/mcp")
	if err != nil || !strings.Contains(string(got), "rt-secret-654321") {
		t.Fatalf("load = %s, %v", got, err)
	}
	if got, _ := store.LoadOAuth("notes", "https://elsewhere.example/mcp"); got != nil {
		t.Errorf("tokens handed out for another URL: %s", got)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), `"gone"`) {
		t.Errorf("a server that is not declared was written: %s", raw)
	}
	c, err := config.New(envOf(nil), home)
	if err != nil || c.CredentialsErr != nil {
		t.Fatalf("config: %v %v", err, c.CredentialsErr)
	}
	if _, err := c.MCPServers(); err != nil {
		t.Fatal(err)
	}
	if s := c.Secrets(); !slices.Contains(s, "at-secret-123456") || !slices.Contains(s, "rt-secret-654321") {
		t.Errorf("saved tokens are not secrets: %d secrets", len(s))
	}
	if err := store.SaveOAuth("notes", "https://notes.example/mcp", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.LoadOAuth("notes", "https://notes.example/mcp"); got != nil {
		t.Errorf("deleted tokens still read: %s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

func TestMCPServerOAuthField(t *testing.T) {
	for _, tc := range []struct{ name, decl, want string }{
		{"not an object", `{"url":"https://a.example/mcp","oauth":"x"}`, "oauth: must be an object"},
		{"on a command", `{"command":"true","oauth":{"access_token":"t"}}`, "oauth is for url servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var decl map[string]any
			if err := json.Unmarshal([]byte(tc.decl), &decl); err != nil {
				t.Fatal(err)
			}
			_, err := config.ParseMCPServer("s", decl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want %q", err, tc.want)
			}
		})
	}
}
