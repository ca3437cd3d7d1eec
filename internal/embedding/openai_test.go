package embedding

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
)

// fakeServer is an OpenAI-compatible /v1/embeddings endpoint on 127.0.0.1.
// Each input text "tN" gets the vector [N, N+0.5]; answers list the data in
// reverse order so that clients must sort by index.
type fakeServer struct {
	mu       sync.Mutex
	batches  [][]string
	auth     []string
	models   []string
	respond  func(w http.ResponseWriter, inputs []string) bool // true: handled
	reversed bool
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, req.Input)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.models = append(f.models, req.Model)
	respond := f.respond
	f.mu.Unlock()
	if respond != nil && respond(w, req.Input) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, in := range req.Input {
		var n float32
		fmt.Sscanf(in, "t%g", &n)
		data = append(data, item{"embedding", i, []float32{n, n + 0.5}})
	}
	if f.reversed {
		slices.Reverse(data)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func newFake(t *testing.T, f *fakeServer, cfg Config) *OpenAI {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	e, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

func TestOpenAIBatchesAndOrders(t *testing.T) {
	f := &fakeServer{reversed: true}
	e := newFake(t, f, Config{BatchSize: 3, APIKey: "sk-test"})
	got, err := e.Embed(context.Background(), texts(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Fatalf("got %d vectors, want 7", len(got))
	}
	for i, v := range got {
		if want := []float32{float32(i), float32(i) + 0.5}; !slices.Equal(v, want) {
			t.Errorf("vector %d = %v, want %v (order must follow index)", i, v, want)
		}
	}
	if sizes := []int{len(f.batches[0]), len(f.batches[1]), len(f.batches[2])}; len(f.batches) != 3 || !slices.Equal(sizes, []int{3, 3, 1}) {
		t.Errorf("batches = %v, want sizes 3, 3, 1", f.batches)
	}
	for i, a := range f.auth {
		if a != "Bearer sk-test" || f.models[i] != "test-model" {
			t.Errorf("request %d: Authorization %q, model %q", i, a, f.models[i])
		}
	}
	if e.Dimensions() != 2 || e.Name() != "openai:test-model" {
		t.Errorf("Dimensions %d, Name %q; want 2, openai:test-model", e.Dimensions(), e.Name())
	}
}

func TestOpenAINoKeyNoHeader(t *testing.T) {
	f := &fakeServer{}
	e := newFake(t, f, Config{})
	if _, err := e.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	if f.auth[0] != "" {
		t.Errorf("Authorization = %q, want none without a key", f.auth[0])
	}
}

func TestOpenAIEmptyInputMakesNoRequest(t *testing.T) {
	f := &fakeServer{}
	e := newFake(t, f, Config{})
	got, err := e.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 || len(f.batches) != 0 {
		t.Errorf("Embed(nil) = %v, %v after %d requests; want no vectors, no error, no request", got, err, len(f.batches))
	}
}

func TestOpenAIErrors(t *testing.T) {
	const key = "sk-secret-123"
	status := func(code int, body string, header ...string) func(http.ResponseWriter, []string) bool {
		return func(w http.ResponseWriter, _ []string) bool {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(code)
			fmt.Fprint(w, body)
			return true
		}
	}
	tests := []struct {
		name      string
		respond   func(http.ResponseWriter, []string) bool
		dims      int
		code      tool.Code
		retryable bool
		status    int
	}{
		{"401 invalid key", status(401, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error"}}`), 0, tool.CodeAuthInvalid, false, 401},
		{"403", status(403, `{"error":"forbidden"}`), 0, tool.CodeAuthInvalid, false, 403},
		{"429 rate limit", status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "2"), 0, tool.CodeRateLimit, true, 429},
		{"500", status(500, `oops`), 0, tool.CodeHTTP, false, 500},
		{"503", status(503, ``), 0, tool.CodeHTTP, true, 503},
		{"400 input too long", status(400, `{"error":{"message":"maximum context length"}}`), 0, tool.CodeHTTP, false, 400},
		{"malformed body", status(200, `{"data": [`), 0, tool.CodeParse, false, 0},
		{"not JSON", status(200, `<html>`), 0, tool.CodeParse, false, 0},
		{"too few vectors", status(200, `{"data":[{"index":0,"embedding":[1,2]}]}`), 0, tool.CodeParse, false, 0},
		{"repeated index", status(200, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`), 0, tool.CodeParse, false, 0},
		{"index out of range", status(200, `{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[1,2]}]}`), 0, tool.CodeParse, false, 0},
		{"empty vector", status(200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1,2]}]}`), 0, tool.CodeParse, false, 0},
		{"ragged dimensions", status(200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`), 0, tool.CodeParse, false, 0},
		{"configured dimensions differ", nil, 3, tool.CodeParse, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFake(t, &fakeServer{respond: tt.respond}, Config{APIKey: key, Dimensions: tt.dims})
			got, err := e.Embed(context.Background(), texts(2))
			if err == nil {
				t.Fatalf("Embed = %v, want an error", got)
			}
			var te *tool.Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v (%T) is not a *tool.Error", err, err)
			}
			if te.Code != tt.code || te.Retryable != tt.retryable || te.Status != tt.status {
				t.Errorf("code %s retryable %v status %d; want %s %v %d (%v)", te.Code, te.Retryable, te.Status, tt.code, tt.retryable, tt.status, te)
			}
			if strings.Contains(te.Message, key) {
				t.Errorf("message leaks the API key: %q", te.Message)
			}
		})
	}
}

func TestOpenAIRetryAfter(t *testing.T) {
	f := &fakeServer{respond: func(w http.ResponseWriter, _ []string) bool {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}}
	e := newFake(t, f, Config{})
	_, err := e.Embed(context.Background(), texts(1))
	var te *tool.Error
	if !errors.As(err, &te) || te.RetryAfter.Seconds() != 3 {
		t.Fatalf("err = %v, want RetryAfter 3s", err)
	}
	if len(f.batches) != 1 {
		t.Errorf("%d requests, want 1: the client must not retry by itself", len(f.batches))
	}
}

func TestOpenAINetworkErrorHidesURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens any more
	e, err := NewOpenAI(Config{BaseURL: base + "/secret-path", Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), texts(1))
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeNetwork || !te.Retryable {
		t.Fatalf("err = %#v, want a retryable NETWORK_ERROR", err)
	}
	if strings.Contains(te.Message, "secret-path") {
		t.Errorf("message holds the URL: %q", te.Message)
	}
}

func TestOpenAICanceled(t *testing.T) {
	e := newFake(t, &fakeServer{}, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Embed(ctx, texts(1))
	if te := tool.Classify(err); te.Code != tool.CodeCanceled {
		t.Errorf("err = %v, want CANCELED", err)
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no URL", Config{Model: "m"}},
		{"no model", Config{BaseURL: "http://127.0.0.1:1"}},
		{"not http", Config{BaseURL: "ftp://example.invalid", Model: "m"}},
		{"no host", Config{BaseURL: "http://", Model: "m"}},
		// A key in the URL would go to whoever the URL names, in clear.
		{"credentials in the URL", Config{BaseURL: "https://user:s3cret@api.openai.com", Model: "m"}},
		{"a query", Config{BaseURL: "https://api.openai.com/?key=s3cret", Model: "m"}},
	}
	for _, tt := range tests {
		_, err := NewOpenAI(tt.cfg)
		var te *tool.Error
		if !errors.As(err, &te) || te.Code != tool.CodeConfig {
			t.Errorf("%s: err = %v, want CONFIG_ERROR", tt.name, err)
		} else if strings.Contains(te.Message, "s3cret") {
			t.Errorf("%s: message repeats the URL: %q", tt.name, te.Message)
		}
	}
}

// An upstream message is clipped to a bound without splitting a character,
// and the key is removed before clipping, so no part of it gets through.
func TestOpenAIUpstreamMessageIsClippedSafely(t *testing.T) {
	const key = "sk-secret-0123456789"
	for _, tt := range []struct {
		name, message string
	}{
		{"key across the clipping point", strings.Repeat("x", 190) + key + " was refused"},
		{"multi-byte text", "x" + strings.Repeat("é", 300)}, // byte 200 falls inside a letter
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"error": map[string]string{"message": tt.message}})
			e := newFake(t, &fakeServer{respond: func(w http.ResponseWriter, _ []string) bool {
				w.WriteHeader(http.StatusBadRequest)
				w.Write(body)
				return true
			}}, Config{APIKey: key})
			_, err := e.Embed(context.Background(), texts(1))
			var te *tool.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(te.Message, key[:6]) {
				t.Errorf("message leaks the start of the key: %q", te.Message)
			}
			if !utf8.ValidString(te.Message) || len(te.Message) > 300 {
				t.Errorf("message is not clipped to valid UTF-8: %d bytes, %q", len(te.Message), te.Message)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantURL string
		wantKey string
	}{
		{"unset", map[string]string{"OPENAI_API_KEY": "sk-o"}, "", ""},
		{"ollama: no OpenAI key sent elsewhere",
			map[string]string{"TOOLPORT_EMBEDDINGS_URL": "http://127.0.0.1:11434", "OPENAI_API_KEY": "sk-o"},
			"http://127.0.0.1:11434", ""},
		{"OpenAI falls back to OPENAI_API_KEY",
			map[string]string{"TOOLPORT_EMBEDDINGS_URL": "https://api.openai.com/", "OPENAI_API_KEY": "sk-o"},
			"https://api.openai.com", "sk-o"},
		{"own key wins",
			map[string]string{"TOOLPORT_EMBEDDINGS_URL": "https://api.openai.com", "TOOLPORT_EMBEDDINGS_API_KEY": "sk-t", "OPENAI_API_KEY": "sk-o"},
			"https://api.openai.com", "sk-t"},
		{"look-alike host gets no OpenAI key",
			map[string]string{"TOOLPORT_EMBEDDINGS_URL": "https://api.openai.com.evil.example", "OPENAI_API_KEY": "sk-o"},
			"https://api.openai.com.evil.example", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			env["TOOLPORT_EMBEDDINGS_MODEL"] = "m1"
			c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cfg := ConfigFromEnv(c)
			if cfg.BaseURL != tt.wantURL || cfg.APIKey != tt.wantKey || cfg.Model != "m1" {
				t.Errorf("got URL %q key %q model %q; want %q %q m1", cfg.BaseURL, cfg.APIKey, cfg.Model, tt.wantURL, tt.wantKey)
			}
			if tt.wantKey != "" && !slices.Contains(c.Secrets(), tt.wantKey) {
				t.Errorf("key not registered as a secret: %v", c.Secrets())
			}
		})
	}
}

// A key an upstream echoes is removed in the forms it travels in, with the
// marker every other scrubbed place uses.
func TestUpstreamMessageScrubsEveryFormOfTheKey(t *testing.T) {
	const key = "sk-secret/0123+456789"
	for name, echoed := range map[string]string{
		"raw":         key,
		"URL-encoded": url.QueryEscape(key),
		"base64":      base64.StdEncoding.EncodeToString([]byte(key)),
	} {
		t.Run(name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"error": map[string]string{"message": "bad key " + echoed}})
			got := upstreamMessage(body, key)
			if got != ": bad key [REDACTED]" {
				t.Errorf("upstreamMessage = %q, want %q", got, ": bad key [REDACTED]")
			}
		})
	}
}
