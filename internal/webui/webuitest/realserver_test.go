package webuitest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/webui"
)

// The harness of the checks against the real chat server: in process, on a
// fresh SQLite store, wired as `toolport serve` wires it, with the model
// scripted (servertest) and the tools each test registers.

// newStore opens a fresh SQLite store, closed when the test ends.
func newStore(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "toolport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scriptedAgent is the agent of a server whose model (over Anthropic's API)
// plays turns; it returns the model server too, for the requests it got.
// The context window is small enough for the page's gauge to move, and a
// failed model call is retried at once.
func scriptedAgent(t *testing.T, turns ...servertest.Turn) (agent.Config, *servertest.ModelServer) {
	t.Helper()
	ms := servertest.NewModelServer(t, turns...)
	model, err := llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.AnthropicBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	return agent.Config{Provider: model, ModelName: "anthropic:" + servertest.ModelName,
		ContextWindow: 10000, ModelRetryDelay: time.Millisecond}, ms
}

// startServer serves the chat server of cfg (Version "test" and the page
// unless cfg names others) and wiring on a loopback port until the test
// ends, and returns its base URL.
func startServer(t *testing.T, cfg server.Config, wiring server.Wiring) string {
	t.Helper()
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	if cfg.Web == nil {
		cfg.Web = webui.Handler()
	}
	parts, err := server.Wire(cfg, wiring)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	// The server is closed first: it ends running turns, whose streams the
	// listener's close would otherwise wait for.
	t.Cleanup(srv.Close)
	return hs.URL
}

// serveWithModel starts `toolport serve` (runServe) with args and the
// scripted model of ms as its only model, over OpenAI's API, and returns its
// base URL.
func serveWithModel(t *testing.T, ms *servertest.ModelServer, args ...string) string {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range ms.Env("openai") {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return runServe(t, vars, args...)
}

// attachFromSettings opens Settings and attaches the MCP server name, its
// command or url (field) set to value, as a person does in the form.
func attachFromSettings(name, field, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(openSettings(),
		setField(`#setup-mcp-form input[name="name"]`, name),
		setField(`#setup-mcp-form input[name=`+jsString(field)+`]`, value),
		chromedp.Click(css("#setup-attach")))
}
