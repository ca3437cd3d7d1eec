package exectool_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExecutablesLinkOnlyWhatTheirToolNeeds guards the ikigai executables'
// start-up: Go runs every linked package's init on every start, whether the
// tool uses it or not, so an executable must not link what its tool does
// not need (the page extractor's regexps and tables, the SQL drivers, the
// LLM SDKs, the vector store's client). The heavy packages are named by
// prefix; the check fails if `go list -deps` stops listing the tool's own
// package (it would then prove nothing).
func TestExecutablesLinkOnlyWhatTheirToolNeeds(t *testing.T) {
	const mod = "github.com/toolport/toolport/"
	// Needed by no ikigai executable.
	everywhere := []string{
		// The extraction libraries Toolport's extractor replaced: only
		// extract's tests link them, as peers to measure it against.
		"github.com/markusmobius/",
		"github.com/go-shiori/",
		"codeberg.org/readeck/",
		"github.com/weaviate/",
		"modernc.org/sqlite",
		"github.com/jackc/pgx",
		"github.com/openai/openai-go",
		"github.com/anthropics/anthropic-sdk-go",
		"github.com/xuri/excelize",
		"github.com/prometheus/",
		"github.com/redis/",
		mod + "internal/server",
		mod + "internal/store",
		mod + "internal/index",
		mod + "internal/embedding",
		// Compiles the metaschemas of five drafts at package init (22 M
		// instructions); tools validate with internal/schemacheck.
		"github.com/santhosh-tekuri/jsonschema",
	}
	// Needed by web_fetch only: the extractor, its charset detection and
	// the PDF reader.
	extractor := []string{
		mod + "extract",
		"github.com/gogs/chardet",
		"github.com/ledongthuc/pdf",
	}
	search := append(append([]string{}, everywhere...), extractor...)
	tests := []struct {
		cmd       string
		needs     string // a package it must link, so that the list is real
		forbidden []string
	}{
		{"web-search-brave-tool", mod + "internal/pack/websearch", search},
		{"web-search-google-tool", mod + "internal/pack/websearch", search},
		{"news-search-brave-tool", mod + "internal/pack/websearch", search},
		{"image-search-brave-tool", mod + "internal/pack/websearch", search},
		{"video-search-brave-tool", mod + "internal/pack/websearch", search},
		{"local-search-brave-tool", mod + "internal/pack/websearch", search},
		{"llm-context-brave-tool", mod + "internal/pack/websearch", search},
		{"answer-brave-tool", mod + "internal/pack/websearch", search},
		{"web-search-searxng-tool", mod + "internal/pack/websearch", search},
		{"web-fetch-tool", mod + "internal/pack/webfetch", everywhere},
		// /metrics is served by internal/metric: the Prometheus client's
		// init (and that of runtime/metrics, which it links) would run at
		// every start of every command.
		{"toolport", mod + "internal/cli", []string{"github.com/santhosh-tekuri/jsonschema", "github.com/xuri/excelize", "github.com/markusmobius/", "github.com/go-shiori/", "codeberg.org/readeck/", "github.com/prometheus/", "runtime/metrics", "expvar"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+"cmd/"+tt.cmd).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			found := false
			for _, p := range deps {
				found = found || p == tt.needs
				for _, f := range tt.forbidden {
					if f = strings.TrimSuffix(f, "/"); p == f || strings.HasPrefix(p, f+"/") {
						t.Errorf("links %s, which its tool does not need (its init runs at every start)", p)
					}
				}
			}
			if !found {
				t.Fatalf("go list does not list %s among %d packages: the check would prove nothing", tt.needs, len(deps))
			}
		})
	}
}
