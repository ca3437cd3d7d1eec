package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A server attached at start (from the credentials file) is detached from
// the page at once: its tools leave /api/tools and the model's offer, and
// the file, without a restart.
func TestSettingsDetachAServerAttachedAtStart(t *testing.T) {
	upURL := pingServer(t, false)
	home := t.TempDir()
	creds := filepath.Join(home, "c.json")
	if err := os.WriteFile(creds, []byte(`{"mcp": {"servers": {"up": {"url": "`+upURL+`"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stderr, _ := startServe(t, map[string]string{"HOME": home, "TOOLPORT_CREDENTIALS": creds}, "--packs", "web")
	offered := func() []string {
		var i struct{ OfferedTools []string }
		getJSON(t, base+"/api/info", &i)
		return i.OfferedTools
	}
	if !slices.Contains(offered(), "up__ping") {
		t.Fatalf("up__ping is not offered at start: %v\n%s", offered(), stderr.String())
	}
	if code, body := send(t, "DELETE", base+"/api/settings/mcp/up", ""); code != 200 || strings.Contains(body, `"name":"up"`) {
		t.Fatalf("detach: %d %s", code, body)
	}
	if got := offered(); slices.Contains(got, "up__ping") {
		t.Errorf("up__ping still offered after detaching: %v", got)
	}
	_, tools := send(t, "GET", base+"/api/tools", "")
	if strings.Contains(tools, "up__ping") {
		t.Error("/api/tools still lists up__ping after detaching")
	}
	if raw, _ := os.ReadFile(creds); strings.Contains(string(raw), `"up"`) {
		t.Errorf("the server is still in the credentials file: %s", raw)
	}
	// Attached again from the page under the same name.
	if code, body := send(t, "POST", base+"/api/settings/mcp", `{"name":"up","url":"`+upURL+`"}`); code != 200 {
		t.Fatalf("attaching again: %d %s", code, body)
	}
	if !slices.Contains(offered(), "up__ping") {
		t.Error("up__ping not offered after attaching again")
	}
}
