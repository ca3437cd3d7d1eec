package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/testexec"
)

// docServer is one server entry of a client configuration: Claude Desktop's
// and Cursor's "mcpServers", VS Code's "servers".
type docServer struct {
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// packAnchors is one tool of each pack, to tell which packs a server serves.
var packAnchors = map[string]string{"web": "web_fetch", "ckan": "searchDatasets", "music": "semanticSearch"}

// TestMCPClientDocs checks every JSON snippet of docs/mcp-clients.md: it
// parses, and, with the doc's placeholders (binary path, URL, token) replaced
// by the test's, the server it configures answers initialize and tools/list:
// a toolport command is started as written, mcp-remote (the pinned one, not
// npx's) is run with the snippet's arguments and environment against a local
// `toolport serve`, and a URL is connected to with the snippet's headers.
func TestMCPClientDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp-clients.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := jsonBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) == 0 {
		t.Fatal("no JSON snippets in docs/mcp-clients.md")
	}
	const token = "docs-token"
	env := upstreams(t)
	env["TOOLPORT_API_TOKEN"] = token
	base := serve(t, env)
	placeholders := strings.NewReplacer("http://127.0.0.1:8080", base, "your-token", token, "${input:toolport-token}", token)
	for i, b := range blocks {
		t.Run(fmt.Sprintf("snippet%d", i+1), func(t *testing.T) {
			if strings.HasPrefix(strings.TrimSpace(b[1]), `{"mcp"`) {
				checkCredentialsSnippet(t, b[1])
				return
			}
			var cfg struct {
				MCPServers map[string]docServer `json:"mcpServers"`
				Servers    map[string]docServer `json:"servers"`
				Inputs     []map[string]any     `json:"inputs"`
			}
			dec := json.NewDecoder(strings.NewReader(placeholders.Replace(b[1])))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				t.Fatalf("does not parse: %v\n%s", err, b[1])
			}
			servers := cfg.MCPServers
			if cfg.Servers != nil {
				// VS Code's file; its inputs are what ${input:…} names.
				if cfg.MCPServers != nil {
					t.Errorf("both servers and mcpServers")
				}
				servers = cfg.Servers
				for _, s := range servers {
					if s.Type == "" {
						t.Errorf("a VS Code server needs a type")
					}
				}
			}
			if len(servers) == 0 {
				t.Fatalf("snippet %d configures no server", i+1)
			}
			for _, s := range servers {
				checkDocServer(t, s, env)
			}
		})
	}
}

func checkDocServer(t *testing.T, s docServer, env map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport-docs", Version: "v0"}, nil)
	var tr mcp.Transport
	wantPacks := []string{"web", "ckan", "music"} // what serve serves
	switch prog := s.Command[strings.LastIndexAny(s.Command, `/\`)+1:]; {
	case s.URL != "":
		if s.Type != "" && s.Type != "http" {
			t.Errorf("url with type %q", s.Type)
		}
		tr = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: headers{s.Headers, http.DefaultTransport}}}
	case prog == "toolport" || prog == "toolport.exe":
		// Desktop clients do not search PATH.
		if !strings.HasPrefix(s.Command, "/") && !regexp.MustCompile(`^[A-Z]:\\`).MatchString(s.Command) {
			t.Errorf("command %q is not an absolute path", s.Command)
		}
		if s.Type != "" && s.Type != "stdio" {
			t.Errorf("command with type %q", s.Type)
		}
		if len(s.Args) == 0 || s.Args[0] != "mcp" {
			t.Fatalf("args %q do not start toolport mcp", s.Args)
		}
		if i := slices.Index(s.Args, "--packs"); i >= 0 && i+1 < len(s.Args) {
			wantPacks = strings.Split(s.Args[i+1], ",")
		}
		full := map[string]string{}
		for k, v := range env {
			full[k] = v
		}
		for k, v := range s.Env {
			full[k] = v
		}
		cmd := exec.Command(toolport(t), s.Args...) // the snippet's command, built here
		cmd.Env = testexec.Env(t, full)
		tr = &mcp.CommandTransport{Command: cmd}
	case s.Command == "npx" && len(s.Args) > 0 && s.Args[0] == "mcp-remote":
		npm := testexec.NPMTools(t)
		cmd := npm.Command(ctx, t, "mcp-remote", s.Args[1:]...)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		tr = &mcp.CommandTransport{Command: cmd}
	default:
		t.Fatalf("no check for a server started with %q %q", s.Command, s.Args)
	}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	for pack, anchor := range packAnchors {
		if want := slices.Contains(wantPacks, pack); slices.Contains(names, anchor) != want {
			t.Errorf("pack %s served: %v, want %v (tools %q)", pack, !want, want, names)
		}
	}
}

// headers adds a snippet's headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// TestMCPClientDocsVersions checks that the versions docs/mcp-clients.md
// names are the ones pinned in testdata/npm, which the tests run.
func TestMCPClientDocsVersions(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp-clients.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../testdata/npm/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	pin := func(name string) string {
		v := pkg.Dependencies[name]
		if v == "" {
			t.Fatalf("testdata/npm/package.json does not pin %s", name)
		}
		return v
	}
	for _, want := range []string{
		"`@modelcontextprotocol/sdk` " + pin("@modelcontextprotocol/sdk"),
		"MCP Inspector " + pin("@modelcontextprotocol/inspector"),
		"mcp-remote " + pin("mcp-remote"),
		"`mcp-remote@" + pin("mcp-remote") + "`",
		"`@modelcontextprotocol/conformance` " + pin("@modelcontextprotocol/conformance"),
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/mcp-clients.md does not say %q", want)
		}
	}
	// Every versioned npx command names the pinned version.
	for _, m := range regexp.MustCompile(`(@modelcontextprotocol/inspector|mcp-remote)@([0-9][0-9.]*)`).FindAllStringSubmatch(string(doc), -1) {
		if m[2] != pin(m[1]) {
			t.Errorf("docs/mcp-clients.md runs %s@%s; testdata/npm pins %s", m[1], m[2], pin(m[1]))
		}
	}
}

// checkCredentialsSnippet holds a credentials-file snippet (servers to
// attach, the approval policy) to what Toolport reads: config accepts it
// and finds every server it names.
func checkCredentialsSnippet(t *testing.T, snippet string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, []byte(snippet), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.New(func(k string) string {
		if k == "TOOLPORT_CREDENTIALS" {
			return path
		}
		return ""
	}, t.TempDir())
	if err != nil {
		t.Fatalf("credentials snippet: %v\n%s", err, snippet)
	}
	servers, err := cfg.MCPServers()
	if err != nil || len(servers) == 0 {
		t.Fatalf("credentials snippet: %d servers, %v\n%s", len(servers), err, snippet)
	}
	if _, err := cfg.ApprovalPolicy(); err != nil {
		t.Fatalf("credentials snippet: approval: %v\n%s", err, snippet)
	}
}
