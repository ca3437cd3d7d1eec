package llm_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
)

func TestParseModel(t *testing.T) {
	tests := []struct {
		spec    string
		want    llm.ModelSpec
		wantErr string
	}{
		{"anthropic:claude-sonnet-4-5", llm.ModelSpec{Provider: "anthropic", Model: "claude-sonnet-4-5"}, ""},
		{"openai:gpt-4.1", llm.ModelSpec{Provider: "openai", Model: "gpt-4.1"}, ""},
		{"openai:qwen2.5@http://127.0.0.1:11434/v1", llm.ModelSpec{Provider: "openai", Model: "qwen2.5", BaseURL: "http://127.0.0.1:11434/v1"}, ""},
		{" OpenAI:qwen2.5:7b @ http://localhost:8000/v1 ", llm.ModelSpec{Provider: "openai", Model: "qwen2.5:7b", BaseURL: "http://localhost:8000/v1"}, ""},
		{"gpt-4.1", llm.ModelSpec{}, "want provider:model"},
		{"google:gemini", llm.ModelSpec{}, `unknown provider "google"`},
		{"openai:", llm.ModelSpec{}, "empty model name"},
		{"openai:m@localhost:11434", llm.ModelSpec{}, "want http(s)://"},
		{"openai:m@ftp://host/v1", llm.ModelSpec{}, "want http(s)://"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := llm.ParseModel(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := llm.ParseModel("  "); !errors.Is(err, llm.ErrNoModel) {
		t.Errorf("empty spec: err = %v, want ErrNoModel", err)
	}
}

func newConfig(t *testing.T, env map[string]string, creds string) *config.Config {
	t.Helper()
	home := t.TempDir()
	if creds != "" {
		dir := filepath.Join(home, ".config", "toolport")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "credentials.json"), []byte(creds), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := config.New(func(k string) string { return env[k] }, home)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFromConfigNoModel(t *testing.T) {
	_, err := llm.FromConfig(newConfig(t, nil, ""))
	if !errors.Is(err, llm.ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
	var e *llm.Error
	if !errors.As(err, &e) || e.Code != llm.CodeNotConfigured || !strings.Contains(e.Message, "TOOLPORT_MODEL=") {
		t.Errorf("error %v does not say how to configure a model", err)
	}
}

func TestFromConfigMissingKey(t *testing.T) {
	for _, model := range []string{"anthropic:claude-sonnet-4-5", "openai:gpt-4.1"} {
		_, err := llm.FromConfig(newConfig(t, map[string]string{"TOOLPORT_MODEL": model}, ""))
		var e *llm.Error
		if !errors.As(err, &e) || e.Code != llm.CodeNotConfigured || !strings.Contains(e.Message, "_API_KEY") {
			t.Errorf("%s: err = %v, want not_configured naming the key variable", model, err)
		}
	}
}

func TestFromConfigBadBaseURL(t *testing.T) {
	_, err := llm.FromConfig(newConfig(t, map[string]string{"TOOLPORT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "localhost:1234"}, ""))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Fatalf("err = %v", err)
	}
}

// TestFromConfigWiring checks where keys and URLs come from by sending a real
// request to a replay server and looking at what arrives.
func TestFromConfigWiring(t *testing.T) {
	anthropicSSE := readFixture(t, "anthropic/claude-sonnet-4-5.text-then-two-tool_use.sse")
	openaiSSE := readFixture(t, "openai/gpt-4.1.single-tool-call.sse")
	tests := []struct {
		name       string
		env        map[string]string // "$URL" is replaced by the server's URL
		creds      string
		sse        []byte
		wantModel  string
		wantHeader string
		wantValue  string
	}{
		{"anthropic key from env", map[string]string{"TOOLPORT_MODEL": "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY": "env-key", "ANTHROPIC_BASE_URL": "$URL"}, "",
			anthropicSSE, "claude-sonnet-4-5", "X-Api-Key", "env-key"},
		{"anthropic key from credentials file", map[string]string{"TOOLPORT_MODEL": "anthropic:claude-sonnet-4-5", "ANTHROPIC_BASE_URL": "$URL"},
			`{"llm":{"anthropic":{"api_key":"file-key"}}}`, anthropicSSE, "claude-sonnet-4-5", "X-Api-Key", "file-key"},
		{"env wins over credentials file", map[string]string{"TOOLPORT_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "env-key", "OPENAI_BASE_URL": "$URL/v1"},
			`{"llm":{"openai":{"api_key":"file-key"}}}`, openaiSSE, "gpt-4.1", "Authorization", "Bearer env-key"},
		{"openai key from credentials file", map[string]string{"TOOLPORT_MODEL": "openai:gpt-4.1", "OPENAI_BASE_URL": "$URL/v1"},
			`{"llm":{"openai":{"api_key":"file-key"}}}`, openaiSSE, "gpt-4.1", "Authorization", "Bearer file-key"},
		{"@URL in the spec wins over OPENAI_BASE_URL; no key needed", map[string]string{"TOOLPORT_MODEL": "openai:qwen2.5:7b@$URL/v1", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "",
			ollamaStream, "qwen2.5:7b", "Authorization", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := replayServer(t, http.StatusOK, sseHeader, tt.sse)
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = strings.ReplaceAll(v, "$URL", srv.URL)
			}
			c := newConfig(t, env, tt.creds)
			p, err := llm.FromConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if p.Model() != tt.wantModel {
				t.Errorf("Model() = %q", p.Model())
			}
			s, err := p.Stream(t.Context(), llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := llmtest.Events(t, s); err != nil {
				t.Fatal(err)
			}
			if v := got.header.Get(tt.wantHeader); v != tt.wantValue {
				t.Errorf("%s = %q, want %q", tt.wantHeader, v, tt.wantValue)
			}
			if m := got.json(t)["model"]; m != tt.wantModel {
				t.Errorf("model sent = %v", m)
			}
			if tt.wantValue != "" && !contains(c.Secrets(), strings.TrimPrefix(tt.wantValue, "Bearer ")) {
				t.Errorf("key not registered for redaction: %v", c.Secrets())
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
