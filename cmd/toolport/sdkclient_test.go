package main_test

// Interoperability with the official MCP TypeScript SDK's client (pinned in
// testdata/npm), over stdio and streamable HTTP: testdata/mcpclients/
// sdkclient.mjs runs the steps each test plans and prints one JSON line per
// step, which the test asserts.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolport/toolport/internal/testexec"
)

// sdkLine is what sdkclient.mjs prints for a step.
type sdkLine struct {
	Op    string
	Error string
	Tools []struct {
		Name            string
		HasOutputSchema bool
	}
	IsError           bool
	StructuredContent map[string]any
	Text              string
	Progress          []struct {
		Progress float64
		Total    *float64
		Message  *string
	}
	Started, Aborted bool
	ProtocolVersion  string

	raw []byte // the line, for the tests that decode more of it
}

// sdkProc is a running sdkclient.mjs.
type sdkProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan sdkLine
	stderr *testexec.Buffer
	done   chan error
}

// startSDK runs sdkclient.mjs with plan; the process is killed when the
// test ends if it is still running.
func startSDK(t *testing.T, plan map[string]any) *sdkProc {
	t.Helper()
	npm := testexec.NPMTools(t)
	testexec.NPMFile(t, "@modelcontextprotocol/sdk/package.json")
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	p := &sdkProc{lines: make(chan sdkLine, 16), stderr: &testexec.Buffer{}, done: make(chan error, 1)}
	p.cmd = npm.Script(ctx, t, filepath.Join("testdata", "mcpclients", "sdkclient.mjs"), string(raw))
	p.cmd.Stderr = p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var l sdkLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = sdkLine{Op: "unparsed", Error: sc.Text()}
			}
			l.raw = slices.Clone(sc.Bytes())
			p.lines <- l
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	return p
}

// next returns the next line the client prints; the client's exit before
// it fails the test.
func (p *sdkProc) next(t *testing.T) sdkLine {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("the TypeScript client exited early:\n%s", p.stderr.String())
		}
		if l.Op == "unparsed" {
			t.Fatalf("the TypeScript client printed %q", l.Error)
		}
		return l
	case <-time.After(2 * time.Minute):
		t.Fatalf("the TypeScript client printed nothing for 2 minutes:\n%s", p.stderr.String())
	}
	return sdkLine{}
}

// finish waits for the client's exit and returns the lines it printed
// since the last next.
func (p *sdkProc) finish(t *testing.T) []sdkLine {
	t.Helper()
	var rest []sdkLine
	for l := range p.lines {
		rest = append(rest, l)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, p.stderr.String())
	}
	return rest
}

// runSDK runs a plan to its end and returns every line after "connected".
func runSDK(t *testing.T, plan map[string]any) []sdkLine {
	t.Helper()
	p := startSDK(t, plan)
	if l := p.next(t); l.Op != "connected" {
		t.Fatalf("first line %+v, want connected", l)
	}
	lines := p.finish(t)
	if want := len(plan["steps"].([]map[string]any)); len(lines) != want {
		t.Fatalf("%d lines for %d steps: %+v\n%s", len(lines), want, lines, p.stderr.String())
	}
	return lines
}

// stdioPlan has the client start `toolport mcp` with env (and packs, when
// given) in an isolated home.
func stdioPlan(t *testing.T, env map[string]string, packs string, steps ...map[string]any) map[string]any {
	args := []string{"mcp"}
	if packs != "" {
		args = append(args, "--packs", packs)
	}
	full := map[string]string{}
	for _, kv := range testexec.Env(t, env) {
		k, v, _ := strings.Cut(kv, "=")
		full[k] = v
	}
	return map[string]any{"transport": "stdio", "command": toolport(t), "args": args, "env": full, "steps": steps}
}

func httpPlan(url, token string, steps ...map[string]any) map[string]any {
	return map[string]any{"transport": "http", "url": url, "token": token, "steps": steps}
}

func list() map[string]any { return map[string]any{"op": "list"} }

func call(op, name string, args map[string]any) map[string]any {
	return map[string]any{"op": op, "name": name, "arguments": args}
}

// packCall is one call of a tool that works offline, per pack, and one
// with an invalid argument.
type packCall struct {
	pack, tool string
	args       map[string]any
	want       string // in the text
	invalid    map[string]any
	invalidMsg string
}

func packCalls(env map[string]string) []packCall {
	return []packCall{
		{"web", "web_fetch", map[string]any{"url": env["ARTICLE_URL"]}, "Rivers carry water",
			map[string]any{"query": "semantic kernel", "count": 50}, "count: must be <= 20, got 50"},
		{"ckan", "searchDatasets", map[string]any{"query": "תחבורה", "rows": 3}, `"success":true`,
			map[string]any{"query": "x", "rows": 5000}, "rows: must be <= 1000, got 5000"},
		// The index is empty in a fresh home: the search succeeds and says so.
		{"music", "semanticSearch", map[string]any{"query": "sad song", "limit": 2}, "the index is empty",
			map[string]any{"query": "sad song", "limit": 500}, "limit: must be <= 50, got 500"},
	}
}

// invalidTool is the tool packCall.invalid is for.
func (c packCall) invalidTool() string {
	if c.pack == "web" {
		return "web_search_brave"
	}
	return c.tool
}

// goSDKTools lists the tools of `toolport mcp --packs packs` with the Go SDK,
// which the other tests check: the TypeScript client must see the same.
func goSDKTools(t *testing.T, env map[string]string, packs string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var args []string
	if packs != "" {
		args = []string{"--packs", packs}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport-e2e", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(t, env, args...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// checkSteps checks the lines of a plan made by packSteps.
func checkSteps(t *testing.T, lines []sdkLine, wantTools []string, calls []packCall) {
	t.Helper()
	l := lines[0]
	var names []string
	for _, tl := range l.Tools {
		names = append(names, tl.Name)
		if !tl.HasOutputSchema {
			t.Errorf("listTools: %s has no outputSchema", tl.Name)
		}
	}
	slices.Sort(names)
	if l.Error != "" || !slices.Equal(names, wantTools) {
		t.Errorf("listTools: error %q\n got %q\nwant %q", l.Error, names, wantTools)
	}
	for i, c := range calls {
		ok, bad := lines[1+2*i], lines[2+2*i]
		if ok.Error != "" || ok.IsError || ok.StructuredContent["success"] != true || !strings.Contains(ok.Text, c.want) {
			t.Errorf("%s: error %q, isError %v, structuredContent %v, text lacks %q:\n%.600s", c.tool, ok.Error, ok.IsError, ok.StructuredContent, c.want, ok.Text)
		}
		// A validation failure is a result the model can read, not a
		// protocol error.
		if bad.Error != "" || !bad.IsError || !strings.Contains(bad.Text, c.invalidMsg) || !strings.Contains(bad.Text, `"error_code":"VALIDATION"`) {
			t.Errorf("%s with invalid arguments: error %q, isError %v, text lacks %q:\n%.600s", c.invalidTool(), bad.Error, bad.IsError, c.invalidMsg, bad.Text)
		}
	}
}

// packSteps lists the tools, then calls each pack's tool well and badly.
func packSteps(calls []packCall) []map[string]any {
	steps := []map[string]any{list()}
	for _, c := range calls {
		steps = append(steps, call("call", c.tool, c.args), call("call", c.invalidTool(), c.invalid))
	}
	return steps
}

// TestTypeScriptSDKOverStdio lists the tools with every pack and with each
// pack alone, and calls each pack's tool, well and with invalid arguments.
func TestTypeScriptSDKOverStdio(t *testing.T) {
	testexec.NPMTools(t)
	env := upstreams(t)
	all := packCalls(env)
	for _, packs := range []string{"", "web", "ckan", "music"} {
		name := packs
		if name == "" {
			name = "all"
		}
		t.Run(name, func(t *testing.T) {
			calls := all
			if packs != "" {
				calls = slices.DeleteFunc(slices.Clone(all), func(c packCall) bool { return c.pack != packs })
			}
			lines := runSDK(t, stdioPlan(t, env, packs, packSteps(calls)...))
			checkSteps(t, lines, goSDKTools(t, env, packs), calls)
		})
	}
}

// TestTypeScriptSDKOverHTTP does the same against `toolport serve`'s /mcp,
// which serves every pack.
func TestTypeScriptSDKOverHTTP(t *testing.T) {
	testexec.NPMTools(t)
	env := upstreams(t)
	env["TOOLPORT_API_TOKEN"] = "e2e-token"
	base := serve(t, env)
	calls := packCalls(env)
	lines := runSDK(t, httpPlan(base+"/mcp", "e2e-token", packSteps(calls)...))
	checkSteps(t, lines, goSDKTools(t, env, ""), calls)
}

// heldUpstream serves /held only when the test releases it, and reports
// when a request arrives and when the client gave it up.
type heldUpstream struct {
	srv             *httptest.Server
	arrived, gaveUp chan struct{}
	release         chan struct{}
	once            sync.Once
}

func newHeldUpstream(t *testing.T) *heldUpstream {
	h := &heldUpstream{arrived: make(chan struct{}, 1), gaveUp: make(chan struct{}, 1), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/held" { // robots.txt, asked first
			http.NotFound(w, r)
			return
		}
		// Non-blocking: an unexpected second request must not hang the
		// server's Close at cleanup; the test sees only the first.
		notify(h.arrived)
		select {
		case <-r.Context().Done():
			notify(h.gaveUp)
		case <-h.release:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>Held</title></head><body><article><p>The held page, released by the test.</p></article></body></html>")
		}
	}))
	t.Cleanup(func() {
		h.Release()
		h.srv.Close()
	})
	return h
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Release lets the held request (and any later one) be answered.
func (h *heldUpstream) Release() { h.once.Do(func() { close(h.release) }) }

// checkCancel runs a plan whose first step is a cancelled web_fetch of the
// held page and whose second fetches the article: the abort must reach the
// upstream request (toolport cancels the call's context) and the session
// must go on serving.
func checkCancel(t *testing.T, held *heldUpstream, plan map[string]any) {
	t.Helper()
	p := startSDK(t, plan)
	if l := p.next(t); l.Op != "connected" {
		t.Fatalf("first line %+v, want connected", l)
	}
	if l := p.next(t); l.Op != "cancel" || !l.Started {
		t.Fatalf("cancel step: %+v", l)
	}
	select {
	case <-held.arrived:
	case <-time.After(time.Minute):
		t.Fatalf("web_fetch never reached the upstream:\n%s", p.stderr.String())
	}
	if _, err := io.WriteString(p.stdin, "abort\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.gaveUp:
	case <-time.After(time.Minute):
		t.Fatalf("the aborted call's upstream request was never cancelled:\n%s", p.stderr.String())
	}
	if l := p.next(t); !l.Aborted || !strings.Contains(l.Error, "cancelled by the test") {
		t.Errorf("the aborted call: %+v", l)
	}
	rest := p.finish(t)
	if len(rest) != 1 || rest[0].IsError || !strings.Contains(rest[0].Text, "Rivers carry water") {
		t.Errorf("the call after the abort: %+v", rest)
	}
}

func cancelSteps(held *heldUpstream, env map[string]string) []map[string]any {
	return []map[string]any{
		call("cancel", "web_fetch", map[string]any{"url": held.srv.URL + "/held"}),
		call("call", "web_fetch", map[string]any{"url": env["ARTICLE_URL"]}),
	}
}

// TestTypeScriptSDKCancellation aborts a call with an AbortSignal while its
// upstream holds the response, over stdio and over HTTP.
func TestTypeScriptSDKCancellation(t *testing.T) {
	testexec.NPMTools(t)
	t.Run("stdio", func(t *testing.T) {
		env := upstreams(t)
		held := newHeldUpstream(t)
		checkCancel(t, held, stdioPlan(t, env, "web", cancelSteps(held, env)...))
	})
	t.Run("http", func(t *testing.T) {
		env := upstreams(t)
		env["TOOLPORT_API_TOKEN"] = "e2e-token"
		base := serve(t, env)
		held := newHeldUpstream(t)
		checkCancel(t, held, httpPlan(base+"/mcp", "e2e-token", cancelSteps(held, env)...))
	})
}

// TestTypeScriptSDKProgress calls web_fetch with an onprogress callback. The
// tool reports fetching (0 of 2) before it asks its upstream, which holds
// the page until the client has printed that notification; extracting and
// done follow. Only the first is asserted to arrive: the TypeScript client
// runs notification handlers a microtask after it reads them but settles a
// response at once, so notifications read in the same chunk as the response
// (as over stdio, where the three come in one write burst) are dropped by
// the client, not by toolport (whose order internal/mcpserver's tests check).
func TestTypeScriptSDKProgress(t *testing.T) {
	testexec.NPMTools(t)
	check := func(t *testing.T, held *heldUpstream, plan map[string]any) {
		p := startSDK(t, plan)
		if l := p.next(t); l.Op != "connected" {
			t.Fatalf("first line %+v, want connected", l)
		}
		first := p.next(t)
		if first.Op != "progress-event" || len(first.Progress) != 1 || first.Progress[0].Progress != 0 ||
			first.Progress[0].Total == nil || *first.Progress[0].Total != 2 || first.Progress[0].Message == nil || *first.Progress[0].Message != "fetching" {
			t.Fatalf("first progress: %+v", first)
		}
		held.Release()
		rest := p.finish(t)
		if len(rest) == 0 {
			t.Fatal("no result after the progress")
		}
		res := rest[len(rest)-1]
		if res.Op != "progress" || res.Error != "" || res.IsError || !strings.Contains(res.Text, "The held page, released by the test.") {
			t.Fatalf("web_fetch with progress: %+v", res)
		}
		last := -1.0
		for _, p := range res.Progress {
			if p.Progress <= last || p.Total == nil || *p.Total != 2 || p.Message == nil {
				t.Errorf("progress %+v after %v: must increase, out of 2, with a message", p, last)
			}
			last = p.Progress
		}
	}
	fetch := func(held *heldUpstream) map[string]any {
		return call("progress", "web_fetch", map[string]any{"url": held.srv.URL + "/held"})
	}
	t.Run("stdio", func(t *testing.T) {
		held := newHeldUpstream(t)
		check(t, held, stdioPlan(t, upstreams(t), "web", fetch(held)))
	})
	t.Run("http", func(t *testing.T) {
		env := upstreams(t)
		env["TOOLPORT_API_TOKEN"] = "e2e-token"
		base := serve(t, env)
		held := newHeldUpstream(t)
		check(t, held, httpPlan(base+"/mcp", "e2e-token", fetch(held)))
	})
}
