package mcphost_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/tool"
)

// BenchmarkAttachedCall measures what attaching adds to a call: the same
// echo tool called in its own registry (direct), and through an attached
// Toolport MCP server (the host's registry, the SDK client, streamable
// HTTP on loopback, the server's registry).
func BenchmarkAttachedCall(b *testing.B) {
	args := json.RawMessage(`{"text":"shalom"}`)
	own := tool.NewRegistry()
	echo := func(_ context.Context, in echoIn) (echoOut, error) { return echoOut{Echo: in.Text}, nil }
	if err := own.Register(tool.Must(tool.New(tool.Spec{Name: "echo", Description: "Echoes its text", Pack: "web",
		Annotations: tool.Annotations{ReadOnly: true}}, echo))); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, reg *tool.Registry, name string) {
		b.ReportAllocs()
		for b.Loop() {
			if res := reg.Call(context.Background(), name, args); !res.OK() {
				b.Fatal(string(res.JSON))
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, own, "echo") })
	b.Run("http", func(b *testing.B) {
		ts := toolportServer(b, "bench-token-1234")
		reg := tool.NewRegistry()
		h, err := mcphost.Attach(context.Background(), reg, []mcphost.Server{{Name: "tp", URL: ts.URL, Token: "bench-token-1234"}}, mcphost.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		run(b, reg, "tp__echo")
	})
}
