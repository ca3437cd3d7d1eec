package cli

import (
	"log/slog"
	"testing"

	"github.com/toolport/toolport/internal/config"
)

// TestToolSchemasCompile compiles every pack tool's input and output
// schemas. Tools compile them on first call (start-up stays cheap), so a
// schema that does not compile would otherwise surface only when the tool
// is called.
func TestToolSchemasCompile(t *testing.T) {
	c, err := config.New(func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	engines, err := openSharedEngines(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer engines.Close()
	tools, _, err := packTools(&Env{Config: c}, newSharedStore(c), engines)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) < 10 {
		t.Fatalf("only %d tools: the check would prove little", len(tools))
	}
	for _, tl := range tools {
		if err := tl.CheckSchemas(); err != nil {
			t.Error(err)
		}
	}
}
