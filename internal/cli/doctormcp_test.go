package cli_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/doctor"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

type pingIn struct {
	Text string `json:"text"`
}
type pingOut struct {
	Text string `json:"text"`
}

func (o pingOut) Summary() string { return o.Text }

// pingServer serves on loopback an MCP server (Toolport's own handler) with
// the read-only tool "ping" and, withPong, "pong", which is not; both answer
// with their input. It returns the server's URL and closes at the test's
// cleanup: after what the test starts later (cleanups run last first), such
// as a serve whose session holds a connection to it.
func pingServer(t *testing.T, withPong bool) string {
	t.Helper()
	reg := tool.NewRegistry()
	ping := func(_ context.Context, in pingIn) (pingOut, error) { return pingOut(in), nil }
	tools := []*tool.Tool{tool.Must(tool.New(tool.Spec{Name: "ping", Description: "Answers.", Annotations: tool.Annotations{ReadOnly: true}}, ping))}
	if withPong {
		tools = append(tools, tool.Must(tool.New(tool.Spec{Name: "pong", Description: "Answers too."}, ping)))
	}
	if err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(reg, mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{}))
	t.Cleanup(up.Close)
	return up.URL
}

// The doctor has a line per MCP server the credentials file attaches:
// connected with its tool count, or the error.
func TestDoctorChecksAttachedMCPServers(t *testing.T) {
	up := pingServer(t, true)
	home := t.TempDir()
	creds := filepath.Join(home, "credentials.json")
	body, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": map[string]any{
		"up":   map[string]any{"url": up},
		"down": map[string]any{"url": closedURL(t)},
	}}})
	if err := os.WriteFile(creds, body, 0o600); err != nil {
		t.Fatal(err)
	}
	vars := keyless(closedURL(t))
	vars["HOME"], vars["TOOLPORT_CREDENTIALS"] = home, creds
	code, out, stderr := runEnv(t, vars, "", false, "doctor", "--json", "--timeout", "5s")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d %v:\n%s\n%s", code, err, out, stderr)
	}
	if code != cli.ExitFailure {
		t.Errorf("exit %d: the down server (and the keyless defaults) fail", code)
	}
	got := map[string]doctor.Result{}
	for _, r := range rep.Results {
		got[r.Name] = r
	}
	if r := got["mcp:up"]; r.Status != doctor.OK || r.Detail != "connected, 2 tools" {
		t.Errorf("mcp:up = %+v", r)
	}
	if r := got["mcp:down"]; r.Status == doctor.OK || r.Detail == "" {
		t.Errorf("mcp:down = %+v", r)
	}
}

// `toolport serve` attaches the MCP servers of the credentials file beside
// the tools --packs selects: the bench lists them with their server.
func TestServeAttachesCredentialsFileMCPServers(t *testing.T) {
	up := pingServer(t, false) // closed after serve stops: its session holds a connection
	home := t.TempDir()
	creds := filepath.Join(home, "credentials.json")
	body, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": map[string]any{"up": map[string]any{"url": up}}}})
	if err := os.WriteFile(creds, body, 0o600); err != nil {
		t.Fatal(err)
	}

	base, _, _ := startServe(t, map[string]string{"HOME": home, "TOOLPORT_CREDENTIALS": creds}, "--packs", "web")
	var tools struct {
		Tools []struct {
			Name, Pack, Server string
			Offered            bool
		}
	}
	getJSON(t, base+"/api/tools", &tools)
	var found bool
	for _, tl := range tools.Tools {
		if tl.Name == "up__ping" {
			found = tl.Server == "up" && tl.Offered
		}
	}
	if !found {
		t.Errorf("/api/tools lacks an offered up__ping: %+v", tools.Tools)
	}
}
