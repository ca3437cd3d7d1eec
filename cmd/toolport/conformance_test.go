package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
)

// conformanceApplicable are the server scenarios of the official suite that
// apply to Toolport; every other one is in
// testdata/conformance-not-applicable.yml.
var conformanceApplicable = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list", "server-sse-multiple-streams",
	"resources-list", "prompts-list", "dns-rebinding-protection",
}

// TestMCPConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/npm) against `toolport
// serve`'s /mcp: every scenario that applies must pass, and the rest must fail
// as listed (the suite exits non-zero otherwise). The suite speaks only HTTP;
// stdio is covered by the TypeScript SDK and Inspector tests.
func TestMCPConformance(t *testing.T) {
	npm := testexec.NPMTools(t)
	base := serve(t, upstreams(t))
	baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-not-applicable.yml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := npm.Command(ctx, t, "conformance", "server", "--url", base+"/mcp", "--expected-failures", baseline)
	cmd.Dir = t.TempDir() // where it would write results
	out, err := cmd.CombinedOutput()
	summary := string(out)
	if i := strings.LastIndex(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	if err != nil {
		t.Errorf("conformance server: %v\n%s", err, summary)
	}
	for _, s := range conformanceApplicable {
		if !strings.Contains(summary, "✓ "+s+":") {
			t.Errorf("scenario %s did not pass", s)
		}
	}
}
