package mcpserver_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolport/toolport/internal/mcpserver"
)

// A client that closes its end of stdout has gone away, as one that closes
// stdin has: the server ends cleanly instead of failing on the answer it
// could not write.
func TestRunStdioEndsCleanlyWhenTheClientClosesStdout(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v"}, nil)
	stdin, in := io.Pipe()
	out, stdout := io.Pipe()
	out.Close()                                                     // the client stopped reading
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang guard
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mcpserver.RunStdio(ctx, srv, stdin, stdout) }()
	go func() {
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
	}()
	if err := <-done; err != nil {
		t.Fatalf("RunStdio = %v, want nil: the client is gone", err)
	}
	if ctx.Err() != nil {
		t.Fatal("RunStdio ended only at the hang guard")
	}
}
