package server_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// TestNewIsHandedItsParts: the server builds no agent or MCP server of its
// own; New refuses to start without them, and Wire refuses what New would.
func TestNewIsHandedItsParts(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "toolport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := server.Config{Store: db, Registry: testRegistry(t)}
	parts, err := server.Wire(cfg, server.Wiring{})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]server.Parts{
		"no agent":      {MCP: parts.MCP},
		"no MCP server": {Agent: parts.Agent},
	} {
		if _, err := server.New(cfg, p); err == nil || !strings.Contains(err.Error(), "Wire") {
			t.Errorf("%s: New = %v, want an error saying to use Wire", name, err)
		}
	}
	if _, err := server.New(cfg, parts); err != nil {
		t.Errorf("New with Wire's parts: %v", err)
	}
	if _, err := server.Wire(server.Config{Registry: cfg.Registry}, server.Wiring{}); err == nil {
		t.Error("Wire accepted a Config without a Store")
	}
}
