// Command toolport lists, describes and calls Toolport's tools, and serves them
// over MCP and as a chat agent. See 'toolport --help'.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolport/toolport/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
