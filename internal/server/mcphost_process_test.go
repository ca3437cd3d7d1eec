package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/testexec"
)

// TestServeProcessAttachesAnotherServe runs two `toolport serve` processes:
// the second (no model, an API token) is attached to the first over streamable
// HTTP by the first's credentials file. A chat turn on the first calls the second's
// web_fetch on a loopback page and gets its result; then the second is
// killed while one of its calls waits on a slow page: that call fails with
// an error naming the server, the first's own tool called beside it
// succeeds, and the turn completes.
func TestServeProcessAttachesAnotherServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	bin := buildToolport(t)

	slowStarted := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/slow" {
			once.Do(func() { close(slowStarted) })
			select { // held until the peer dies (its connection closes) or the test ends
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		fmt.Fprint(w, "<html><head><title>Loopback page</title></head><body><p>The peer fetched this page.</p></body></html>")
	}))
	t.Cleanup(upstream.Close)

	// The attached server: its own HOME, database, port and API token; no
	// model.
	const peerToken = "peer-api-token-5f3a9c"
	peerDir := t.TempDir()
	peerEnv := testexec.Env(t, map[string]string{
		"TOOLPORT_DATABASE_URL": filepath.Join(peerDir, "peer.db"), "TOOLPORT_FETCH_ALLOW_PRIVATE": "1", "TOOLPORT_API_TOKEN": peerToken})
	peer, peerURL := startServe(t, bin, peerEnv)

	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "fetch the page", Events: []servertest.Event{
			servertest.Call("c1", "peer__web_fetch", `{"url":"`+upstream.URL+`/page"}`)}},
		servertest.Turn{Match: "fetch the page", Step: 1, Events: []servertest.Event{servertest.Text("Fetched.")}},
		servertest.Turn{Match: "slow page", Events: []servertest.Event{
			servertest.Call("c2", "peer__web_fetch", `{"url":"`+upstream.URL+`/slow"}`),
			servertest.Call("c3", "web_fetch", `{"url":"`+upstream.URL+`/page"}`)}},
		servertest.Turn{Match: "slow page", Step: 1, Events: []servertest.Event{servertest.Text("One failed.")}})
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"mcp":{"servers":{"peer":{"url":"`+peerURL+`/mcp","token":"`+peerToken+`"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := append(testexec.Env(t, map[string]string{
		"TOOLPORT_DATABASE_URL": filepath.Join(dir, "chat.db"), "TOOLPORT_CREDENTIALS": creds,
		"TOOLPORT_FETCH_ALLOW_PRIVATE": "1"}), ms.Env("anthropic")...)
	_, url := startServe(t, bin, environ)
	e := &env{url: url}

	status, body := e.do(t, "GET", "/api/info", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"name":"peer","transport":"http","connected":true`) ||
		!strings.Contains(string(body), `"peer__web_fetch"`) {
		t.Fatalf("info = %d %s", status, body)
	}

	// A call of the attached server's tool.
	s := e.chat(t, context.Background(), e.newConversation(t), "fetch the page please", nil)
	end := s.first("tool_call_end")
	if end == nil || end["toolCallId"] != "c1" || !strings.Contains(fmt.Sprint(end["summary"]), "Loopback page") {
		t.Fatalf("the peer's web_fetch = %s", s.raw)
	}
	if m := s.first("message_end"); m == nil || m["stopReason"] != "end_turn" {
		t.Fatalf("turn = %s", s.raw)
	}
	if strings.Contains(s.raw, peerToken) || strings.Contains(string(body), peerToken) {
		t.Errorf("the peer's token reached the stream or /api/info")
	}
	// The model's step after the call carries the peer's result (the
	// titling call that follows a first answer carries the answer only).
	given := false
	for _, r := range ms.Requests() {
		given = given || strings.Contains(string(r.Body), "The peer fetched this page.")
	}
	if !given {
		t.Errorf("the model was not given the peer's result")
	}

	// The peer dies with a call in flight.
	go func() {
		<-slowStarted
		if err := peer.Process.Kill(); err != nil {
			t.Errorf("kill: %v", err)
		}
	}()
	s = e.chat(t, context.Background(), e.newConversation(t), "the slow page now", nil)
	var failed, local map[string]any
	for _, ev := range s.events {
		switch {
		case ev["type"] == "tool_call_error" && ev["toolCallId"] == "c2":
			failed = ev
		case ev["type"] == "tool_call_end" && ev["toolCallId"] == "c3":
			local = ev
		case ev["type"] == "tool_call_error":
			t.Errorf("another call failed: %v", ev)
		}
	}
	if failed == nil || failed["errorCode"] != "NETWORK_ERROR" || !strings.Contains(fmt.Sprint(failed["error"]), `MCP server "peer"`) {
		t.Errorf("the peer's call in flight = %v; stream %s", failed, s.raw)
	}
	if local == nil || !strings.Contains(fmt.Sprint(local["summary"]), "Loopback page") {
		t.Errorf("the first's own web_fetch = %v; stream %s", local, s.raw)
	}
	if m := s.first("message_end"); m == nil || m["stopReason"] != "end_turn" {
		t.Errorf("turn after the kill = %s", s.raw)
	}
	status, body = e.do(t, "GET", "/api/info", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"name":"peer","transport":"http","connected":false`) ||
		!strings.Contains(string(body), "the connection was lost") {
		t.Errorf("info after the kill = %d %s", status, body)
	}
}
