package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
)

// serve starts `toolport serve` on a free loopback port with env and returns
// its base URL. The server is stopped with SIGTERM when the test ends, and
// must exit cleanly.
func serve(t *testing.T, env map[string]string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	cmd := exec.Command(toolport(t), "serve", "--addr", addr)
	cmd.Env = testexec.Env(t, env)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "serving on "); ok {
				ready <- strings.TrimSuffix(url, "/")
			}
		}
	}()
	var base string
	select {
	case base = <-ready:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("toolport serve did not start:\n%s", stderr.String())
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("toolport serve exited with %v:\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("toolport serve did not stop on SIGTERM")
		}
	})
	return base
}

func TestServeStartsWithNoConfiguration(t *testing.T) {
	base := serve(t, nil)
	for path, want := range map[string]string{
		"/healthz":  "ok",
		"/api/info": `"modelConfigured":false`,
		"/":         "<!doctype html>",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(strings.ToLower(string(body)), strings.ToLower(want)) {
			t.Errorf("GET %s: %d %.300s", path, resp.StatusCode, body)
		}
	}
	// A chat without a model is answered with an error event that says how to configure one.
	resp, err := http.Post(base+"/api/conversations", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var id string
	fmt.Sscanf(readAll(t, resp), `{"id":%q`, &id)
	if id == "" {
		t.Fatal("no conversation id")
	}
	resp, err = http.Post(base+"/api/conversations/"+id+"/messages", "application/json", strings.NewReader(`{"content":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "MODEL_NOT_CONFIGURED") || !strings.Contains(body, "TOOLPORT_MODEL") {
		t.Errorf("chat without a model:\n%s", body)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestMCPOverStreamableHTTP(t *testing.T) {
	env := upstreams(t)
	env["TOOLPORT_API_TOKEN"] = "e2e-token"
	base := serve(t, env)

	// Without the token: refused.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := connectHTTP(ctx, t, base+"/mcp", "e2e-token")
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != latestProtocolVersion() {
		t.Errorf("negotiated %s, want the SDK's newest %s", got, latestProtocolVersion())
	}
	checkTools(ctx, t, cs, env)
}

func TestMCPInspectorOverHTTP(t *testing.T) {
	npm := testexec.NPMTools(t)
	env := upstreams(t)
	env["TOOLPORT_API_TOKEN"] = "e2e-token"
	base := serve(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		full := append([]string{"--cli", base + "/mcp", "--transport", "http", "--header", "Authorization: Bearer e2e-token"}, args...)
		out, _ := npm.Inspector(ctx, t, full...).Output()
		return string(out)
	}
	if out := run("--method", "tools/list"); !strings.Contains(out, `"name": "searchDatasets"`) || !strings.Contains(out, `"name": "semanticSearch"`) {
		t.Errorf("tools/list over HTTP:\n%.600s", out)
	}
	if out := run("--method", "tools/call", "--tool-name", "searchDatasets", "--tool-arg", "query=transport"); !strings.Contains(out, `\"success\":true`) {
		t.Errorf("tools/call over HTTP:\n%.600s", out)
	}
	if out := run("--method", "tools/call", "--tool-name", "searchDatasets", "--tool-arg", "rows=5000", "--tool-arg", "query=x"); !strings.Contains(out, "rows: must be <= 1000, got 5000") {
		t.Errorf("invalid call over HTTP:\n%.600s", out)
	}
}
