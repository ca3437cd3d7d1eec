package mcphost_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/tool"
)

// conformanceClient makes this test binary the client under the official
// conformance suite's client scenarios (TestConformanceAuth runs it): the
// suite appends its MCP server's URL to the command.
var conformanceClient = flag.Bool("conformance-client", false, "run as the conformance suite's client (TestConformanceAuth)")

func TestMain(m *testing.M) {
	flag.Parse()
	if *conformanceClient {
		os.Exit(runConformanceClient(flag.Arg(flag.NArg() - 1)))
	}
	os.Exit(m.Run())
}

// runConformanceClient attaches the server with the host and OAuth as
// `toolport serve` does, plays the user's browser (the suite's
// authorization server approves at once and redirects to the callback),
// then lists and calls the server's tools. It prints one JSON line a step.
func runConformanceClient(serverURL string) int {
	say := func(step string, v any) {
		b, _ := json.Marshal(map[string]any{"step": step, "v": v})
		fmt.Println(string(b))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		say("listen", err.Error())
		return 1
	}
	broker, err := mcphost.NewOAuth(mcphost.OAuthConfig{RedirectURL: "http://" + ln.Addr().String() + "/oauth/callback"})
	if err != nil {
		say("oauth", err.Error())
		return 1
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, err := broker.Callback(r.Context(), r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "authorized %s", name)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reg := tool.NewRegistry()
	h, err := mcphost.Attach(ctx, reg, []mcphost.Server{{Name: "conf", URL: serverURL}}, mcphost.Options{OAuth: broker})
	if err != nil {
		say("attach", err.Error())
		return 1
	}
	defer h.Close()
	// Up to three authorizations: the first, and step-up ones a call's 403
	// insufficient_scope asks for.
	for round := 0; round < 3; round++ {
		st := h.Status()[0]
		say("status", st)
		if st.Authorization == mcphost.AuthNeeded {
			resp, err := http.Get(st.AuthorizationURL)
			if err != nil {
				say("browse", err.Error())
				return 1
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			say("callback", fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body))))
			st = h.Status()[0]
		}
		if !st.Connected || len(st.Tools) == 0 {
			say("failed", st.Error)
			return 1
		}
		res := reg.Call(ctx, st.Tools[0], json.RawMessage(`{}`))
		say("call", string(res.JSON))
		if res.Err == nil {
			return 0
		}
		if res.Err.Code != tool.CodeAuthMissing {
			return 1
		}
	}
	return 1
}

// conformanceAuthScenarios are the suite's client authorization scenarios
// (2025-11-25 and the 2025-03-26 fallbacks) that apply to Toolport's host.
// Left out: auth/basic-cimd and auth/pre-registration (Toolport registers
// dynamically; it hosts no client ID metadata document and has no
// pre-registered client), and the draft and extension scenarios.
var conformanceAuthScenarios = []string{
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
	"auth/scope-step-up", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none", "auth/2025-03-26-oauth-endpoint-fallback",
}

// conformanceAuthRefused are scenarios the SDK's client fails on purpose,
// with what it says: the suite's 2025-03-26 server publishes metadata at
// the root whose issuer is another URL, which RFC 8414 §3.3 says a client
// must not use. Should the SDK change, the test says so.
var conformanceAuthRefused = map[string]string{
	"auth/2025-03-26-oauth-metadata-backcompat": "does not match issuer URL",
}

// TestConformanceAuth runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/npm) against the
// host's OAuth: its authorization and MCP servers, written by the
// specification's authors, check discovery, registration, PKCE, scopes and
// token use by this test binary acting as the client.
func TestConformanceAuth(t *testing.T) {
	npm := testexec.NPMTools(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, scenario := range append(conformanceAuthScenarios, "auth/2025-03-26-oauth-metadata-backcompat") {
		t.Run(strings.TrimPrefix(scenario, "auth/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := npm.Command(ctx, t, "conformance", "client", "--scenario", scenario,
				"--command", self+" -conformance-client")
			cmd.Dir = t.TempDir() // where it writes results
			out, err := cmd.CombinedOutput()
			if why, refused := conformanceAuthRefused[scenario]; refused {
				if err == nil || !strings.Contains(string(out), why) {
					t.Errorf("conformance client %s: want it refused (%s); got %v\n%s", scenario, why, err, out)
				}
				return
			}
			if err != nil {
				t.Errorf("conformance client %s: %v\n%s", scenario, err, out)
			}
		})
	}
}
