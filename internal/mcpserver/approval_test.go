package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

type writeOut struct {
	Wrote string `json:"wrote"`
}

func (o writeOut) Summary() string { return "wrote " + o.Wrote }

// An attached MCP server's write tool (as internal/mcphost declares it:
// not read-only, so acting on the user's behalf) and Toolport's own tools
// are confirmed through elicitation as the approval policy says.
func TestElicitationFollowsTheApprovalPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy map[string]bool
		call   string
		asks   bool
	}{
		{"an attached server's write tool asks", nil, "fs__write_file", true},
		{"savePlaylistToTidal asks", nil, "savePlaylistToTidal", true},
		{"suggestPlaylist (Toolport's own data) does not", nil, "suggestPlaylist", false},
		{"policy: always ask", map[string]bool{"suggestPlaylist": true}, "suggestPlaylist", true},
		{"policy: never ask", map[string]bool{"fs__write_file": false}, "fs__write_file", false},
	}
	for _, v := range versions {
		for _, tc := range tests {
			t.Run(tc.name+"/version="+v, func(t *testing.T) {
				f := newPackFixture(t)
				var wrote atomic.Int32
				ext, err := tool.NewRaw(tool.Spec{Name: "fs__write_file", Title: "fs: Write File", Description: "Writes a file.", Pack: "mcp",
					Annotations: tool.Annotations{Destructive: true, OpenWorld: true, UserAccount: true}},
					json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
					func(context.Context, json.RawMessage) (writeOut, error) {
						wrote.Add(1)
						return writeOut{Wrote: "x"}, nil
					})
				if err != nil {
					t.Fatal(err)
				}
				if err := f.reg.Register(ext); err != nil {
					t.Fatal(err)
				}
				var asked atomic.Int32
				var message string
				cs := f.inMemory(t, mcpserver.Options{Approval: tc.policy}, v, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						message = req.Params.Message
						return &mcp.ElicitResult{Action: "decline"}, nil
					},
				})
				args := map[string]any{"name": "p1"}
				if tc.call == "fs__write_file" {
					args = map[string]any{"path": "/tmp/x"}
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.call, Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				if got := asked.Load() == 1; got != tc.asks {
					t.Fatalf("asked = %v; want %v (%v)", got, tc.asks, texts(res))
				}
				if !tc.asks {
					if res.IsError {
						t.Errorf("a call not confirmed failed: %v", texts(res))
					}
					return
				}
				if !res.IsError || !strings.Contains(strings.Join(texts(res), " "), mcpserver.CodeDeclined) || wrote.Load() != 0 {
					t.Errorf("a declined call: %v (ran %d)", texts(res), wrote.Load())
				}
				if !strings.Contains(message, tc.call) {
					t.Errorf("the question does not name the tool: %q", message)
				}
				if tc.call == "fs__write_file" && !strings.Contains(message, "on your behalf") {
					t.Errorf("the question does not say the tool acts for the user: %q", message)
				}
			})
		}
	}
}
