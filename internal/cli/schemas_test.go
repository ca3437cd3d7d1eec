package cli

import "testing"

// TestToolSchemasCompile compiles every pack tool's input and output
// schemas (schemacheck refuses any keyword it does not implement). Tools compile them on first call (start-up stays cheap), so a
// schema that does not compile would otherwise surface only when the tool
// is called.
func TestToolSchemasCompile(t *testing.T) {
	for _, tl := range allPackTools(t) {
		if err := tl.CheckSchemas(); err != nil {
			t.Error(err)
		}
	}
}
