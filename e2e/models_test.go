package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server/servertest"
)

// TestServeModels runs `toolport serve` with TOOLPORT_MODELS naming a second
// model: /api/info lists both with the default first, a conversation that
// chooses the second is answered by it (the scripted server sees its name),
// and regenerating that answer streams a new one that replaces it.
func TestServeModels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolport")
	}
	bin := buildToolport(t)
	ms := servertest.NewModelServer(t,
		servertest.Turn{Events: []servertest.Event{servertest.Text("first")}, InputTokens: 30, OutputTokens: 3},
		servertest.Turn{Events: []servertest.Event{servertest.Text("second")}, InputTokens: 31, OutputTokens: 4},
	)
	env := append(baseEnv(t.TempDir()), ms.Env("anthropic")...)
	env = append(env, "TOOLPORT_MODELS=openai:other-model@"+ms.OpenAIBaseURL(), "OPENAI_API_KEY="+servertest.APIKey)
	srv := startServe(t, bin, env)
	defer srv.stop(t)

	call := func(method, path, body string) (int, []byte) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, srv.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, b
	}
	_, body := call("GET", "/api/info", "")
	var info struct {
		Model  string
		Models []struct{ Name string }
	}
	json.Unmarshal(body, &info)
	if info.Model != "anthropic:"+servertest.ModelName || len(info.Models) != 2 || info.Models[1].Name != "openai:other-model" {
		t.Fatalf("info = %s, want the default and openai:other-model", body)
	}
	_, body = call("POST", "/api/conversations", "{}")
	var conv struct{ ID string }
	json.Unmarshal(body, &conv)
	if code, b := call("PATCH", "/api/conversations/"+conv.ID, `{"model":"openai:other-model"}`); code != 200 {
		t.Fatalf("PATCH model: %d %s", code, b)
	}
	events := func(b []byte) []string {
		var types []string
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev struct{ Type, Content string }
				json.Unmarshal([]byte(line), &ev)
				types = append(types, ev.Type+":"+ev.Content)
			}
		}
		return types
	}
	code, b := call("POST", "/api/conversations/"+conv.ID+"/messages", `{"content":"hi"}`)
	if code != 200 || !strings.Contains(strings.Join(events(b), " "), "text_delta:first") {
		t.Fatalf("message: %d %s", code, b)
	}
	reqs := ms.Requests()
	if got := reqs[len(reqs)-1].JSON()["model"]; got != "other-model" || !strings.HasPrefix(reqs[len(reqs)-1].Path, "/v1/chat/") {
		t.Errorf("the turn went to %s as %v, want the OpenAI protocol's other-model", reqs[len(reqs)-1].Path, got)
	}
	code, b = call("POST", "/api/conversations/"+conv.ID+"/regenerate", "")
	if code != 200 || !strings.Contains(strings.Join(events(b), " "), "text_delta:second") {
		t.Fatalf("regenerate: %d %s", code, b)
	}
	_, b = call("GET", "/api/conversations/"+conv.ID, "")
	var got struct {
		Model    string
		Messages []struct{ Role string }
		Usage    struct{ InputTokens, OutputTokens int }
	}
	json.Unmarshal(b, &got)
	if got.Model != "openai:other-model" || len(got.Messages) != 2 || got.Usage.InputTokens != 31 {
		t.Errorf("after regenerate: %s; want the model kept, 2 messages, usage of the new answer only", b)
	}
}
