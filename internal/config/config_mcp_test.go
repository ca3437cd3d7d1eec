package config_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/config"
)

func configFrom(t *testing.T, body string) *config.Config {
	t.Helper()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config/toolport/credentials.json"), body, 0o600)
	c, err := config.New(envOf(nil), home)
	if err != nil || c.CredentialsErr != nil {
		t.Fatalf("config: %v %v", err, c.CredentialsErr)
	}
	return c
}

func TestMCPServers(t *testing.T) {
	c := configFrom(t, `{"mcp":{"servers":{
		"remote":{"url":"https://example.org/mcp","token":"remote-token-1234","timeout_seconds":30},
		"everything":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"],"env":{"API_KEY":"env-secret-5678"}}}}}`)
	got, err := c.MCPServers()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "everything" || got[1].Name != "remote" {
		t.Fatalf("servers = %+v; want everything then remote", got)
	}
	if e := got[0]; e.Command != "npx" || strings.Join(e.Args, " ") != "-y @modelcontextprotocol/server-everything" || e.Env["API_KEY"] != "env-secret-5678" {
		t.Errorf("everything = %+v", e)
	}
	if r := got[1]; r.URL != "https://example.org/mcp" || r.Token != "remote-token-1234" || r.Timeout != 30*time.Second {
		t.Errorf("remote = %+v", r)
	}
	secrets := c.Secrets()
	if !slices.Contains(secrets, "remote-token-1234") || !slices.Contains(secrets, "env-secret-5678") {
		t.Errorf("the token and env values are not registered as secrets: %d secrets", len(secrets))
	}
}

func TestMCPServersInvalid(t *testing.T) {
	const secret = "do-not-quote-me"
	tests := []struct{ name, body, want string }{
		{"servers not an object", `{"mcp":{"servers":[1]}}`, "mcp.servers must be an object"},
		{"bad name", `{"mcp":{"servers":{"a b":{"command":"x"}}}}`, "name must match"},
		{"neither", `{"mcp":{"servers":{"a":{}}}}`, "needs a command"},
		{"both", `{"mcp":{"servers":{"a":{"command":"x","url":"http://h/"}}}}`, "both"},
		{"token on stdio", `{"mcp":{"servers":{"a":{"command":"x","token":"` + secret + `"}}}}`, "token is for url servers"},
		{"file url", `{"mcp":{"servers":{"a":{"url":"file:///etc/passwd"}}}}`, "http or https"},
		{"credentials in url", `{"mcp":{"servers":{"a":{"url":"https://u:` + secret + `@h/"}}}}`, "must not hold credentials"},
		{"args not strings", `{"mcp":{"servers":{"a":{"command":"x","args":[1]}}}}`, "a.args: item 0"},
		{"unknown field", `{"mcp":{"servers":{"a":{"command":"x","cmd":"y"}}}}`, "a.cmd: unknown field"},
		{"timeout", `{"mcp":{"servers":{"a":{"command":"x","timeout_seconds":0.5}}}}`, "whole number"},
		{"env value", `{"mcp":{"servers":{"a":{"command":"x","env":{"K":1}}}}}`, "K must be a string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configFrom(t, tc.body).MCPServers()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes a value: %v", err)
			}
		})
	}
}

func TestApprovalPolicy(t *testing.T) {
	c := configFrom(t, `{"approval":{"tools":{"savePlaylistToTidal":"never","suggestPlaylist":"ask"}}}`)
	got, err := c.ApprovalPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if ask, ok := got["savePlaylistToTidal"]; !ok || ask {
		t.Errorf("savePlaylistToTidal: %v %v; want never", ask, ok)
	}
	if !got["suggestPlaylist"] {
		t.Error("suggestPlaylist: want ask")
	}
	for _, body := range []string{`{"approval":{"tools":{"x":"sometimes"}}}`, `{"approval":{"tool":{}}}`, `{"approval":[]}`} {
		if _, err := configFrom(t, body).ApprovalPolicy(); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
	if got, err := configFrom(t, `{}`).ApprovalPolicy(); err != nil || got != nil {
		t.Errorf("no approval section: %v %v", got, err)
	}
}
