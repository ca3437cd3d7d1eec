package main_test

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
)

// TestMCPInspectorStrict lists every pack's tools through the official MCP
// Inspector with --strict, which reports the schema forms clients reject
// (errors: a boolean where a schema object is expected, which makes the
// official TypeScript SDK refuse the whole tools/list) and those that are
// less portable (warnings: type arrays, which single-type dialects such as
// Gemini's function declarations refuse). There must be no error, and the
// only warnings allowed are for values the schema really leaves open (the
// CKAN scheming labels, help texts and about, which portals fill with a
// string or a language → string object and which are passed on as they come).
func TestMCPInspectorStrict(t *testing.T) {
	npm := testexec.NPMTools(t) // skips naming what is missing, or fails where required
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := npm.Inspector(ctx, t, "--cli", "--strict", "--method", "tools/list", "-e", "TOOLPORT_BRAVE_TOOLS=all", "--", toolport(t), "mcp", "--packs", "web,ckan,music")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	report := stderr.String()
	summary := regexp.MustCompile(`(\d+) errors?, (\d+) warnings?`).FindStringSubmatch(report)
	if summary == nil || !strings.Contains(string(out), `"tools"`) {
		t.Fatalf("the Inspector listed no tools or printed no report (%v):\n%.2000s\n%.2000s", err, out, report)
	}
	if err != nil || summary[1] != "0" {
		t.Errorf("--strict: %s (%v); each finding follows", summary[0], err)
	}
	open := regexp.MustCompile(`^outputSchema\.properties\.(about|(dataset|resource)_fields\.anyOf\[1\]\.items\.properties\.(label|help_text|choices\.items\.properties\.label))$`)
	var finding, path string
	for line := range strings.Lines(report) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Warning: ") || strings.HasPrefix(line, "Error: "):
			finding = line
		case strings.HasPrefix(line, "Path: "):
			path = strings.TrimPrefix(line, "Path: ")
		case strings.HasPrefix(line, "Issue: "):
			untyped := strings.Contains(line, "carries no validation keyword")
			if !strings.HasPrefix(finding, "Warning: tool \"getDatasetSchema\"") || !untyped || !open.MatchString(path) {
				t.Errorf("%s\n  %s\n  %s", finding, path, line)
			}
		}
	}
	t.Logf("inspector --strict: %s", summary[0])
}
