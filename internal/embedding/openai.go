package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/record"
	"github.com/toolport/toolport/tool"
)

// DefaultBatchSize is how many texts go into one request when Config.BatchSize
// is zero. OpenAI accepts 2048 inputs per request; local servers often fewer.
const DefaultBatchSize = 64

// maxResponseBytes bounds an embeddings response body (a 64-text batch of
// 3072-d vectors as JSON is about 4 MB).
const maxResponseBytes = 64 << 20

// maxUpstreamMessage bounds the upstream text kept in an error message, in bytes.
const maxUpstreamMessage = 200

// maxRetryAfter bounds the wait a server's Retry-After may ask for.
const maxRetryAfter = 24 * time.Hour

// Config configures an OpenAI-compatible embeddings endpoint.
type Config struct {
	// BaseURL is the scheme and host (and any path prefix before /v1), e.g.
	// https://api.openai.com or http://127.0.0.1:11434 for Ollama.
	BaseURL string
	// Model is sent as "model", e.g. text-embedding-3-small or nomic-embed-text.
	Model string
	// APIKey is sent as a bearer token when not empty (local servers need none).
	APIKey string
	// HTTPClient defaults to a client with a 60 s timeout.
	HTTPClient *http.Client
	// BatchSize is the maximum number of texts per request (default 64).
	BatchSize int
	// Dimensions, when not zero, is the expected vector length; when zero it
	// is learnt from the first response. A response of another length is an
	// error either way.
	Dimensions int
}

// ConfigFromEnv reads TOOLPORT_EMBEDDINGS_URL, TOOLPORT_EMBEDDINGS_MODEL and
// TOOLPORT_EMBEDDINGS_API_KEY (or the credentials file's embeddings.api_key).
// When the URL is OpenAI's and no key is set, OPENAI_API_KEY is used. An empty
// BaseURL means no remote embedder is configured: use [NewDefault].
func ConfigFromEnv(c *config.Config) Config {
	cfg := Config{
		BaseURL: strings.TrimRight(c.Lookup("TOOLPORT_EMBEDDINGS_URL", "embeddings.url"), "/"),
		Model:   c.Lookup("TOOLPORT_EMBEDDINGS_MODEL", "embeddings.model"),
		APIKey:  c.Secret("TOOLPORT_EMBEDDINGS_API_KEY", "embeddings.api_key"),
	}
	if cfg.APIKey == "" && isOpenAI(cfg.BaseURL) {
		cfg.APIKey = c.Secret("OPENAI_API_KEY", "openai.api_key")
	}
	return cfg
}

// isOpenAI reports whether base points at OpenAI's own API host over HTTPS:
// the only base URL for which OPENAI_API_KEY is used as a fallback key, so
// that key is never sent to another server.
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Scheme == "https" && u.Hostname() == "api.openai.com"
}

// OpenAI is an [Embedder] backed by an OpenAI-compatible /v1/embeddings
// endpoint. It does not retry: failures are *tool.Error values whose
// Retryable flag tells the caller whether to try again.
type OpenAI struct {
	cfg      Config
	endpoint string
	dims     atomic.Int64 // configured, or learnt from the first response; 0 until known
}

// NewOpenAI checks cfg and returns the embedder.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, tool.Errorf(tool.CodeConfig, "embeddings: no base URL (set TOOLPORT_EMBEDDINGS_URL)")
	}
	u, err := httpclient.ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, tool.Errorf(tool.CodeConfig, "embeddings: base URL must be an http(s) URL with a host: %w", err)
	}
	if cfg.Model == "" {
		return nil, tool.Errorf(tool.CodeConfig, "embeddings: no model (set TOOLPORT_EMBEDDINGS_MODEL)")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = httpclient.NewClient(60 * time.Second) // pooled for concurrent calls
	}
	e := &OpenAI{
		cfg:      cfg,
		endpoint: httpclient.WithPath(u, "/v1/embeddings").String(),
	}
	if cfg.Dimensions > 0 {
		e.dims.Store(int64(cfg.Dimensions))
	}
	return e, nil
}

// Name is "openai:" and the model.
func (e *OpenAI) Name() string { return "openai:" + e.cfg.Model }

// Dimensions is the configured or learnt vector length; 0 until the first
// successful response when not configured.
func (e *OpenAI) Dimensions() int { return int(e.dims.Load()) }

// checkDims records d as the vector length if none is known yet and reports
// whether d agrees with it.
func (e *OpenAI) checkDims(d int) bool {
	e.dims.CompareAndSwap(0, int64(d))
	return e.dims.Load() == int64(d)
}

// Embed embeds texts in batches of Config.BatchSize, one request at a time.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.BatchSize {
		batch := texts[start:min(start+e.cfg.BatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

type errorResponse struct {
	Error json.RawMessage `json:"error"`
}

func (e *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: e.cfg.Model, Input: texts})
	if err != nil {
		return nil, tool.Errorf(tool.CodeInternal, "embeddings: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, tool.Errorf(tool.CodeConfig, "embeddings: bad base URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, tool.Classify(err) // strips the URL from the message
	}
	defer resp.Body.Close()
	data, err := httpclient.ReadBody(resp.Body, maxResponseBytes)
	tooLarge := errors.Is(err, httpclient.ErrBodyTooLarge)
	if err != nil && !tooLarge {
		return nil, tool.Classify(err)
	}
	if resp.StatusCode != http.StatusOK {
		// An error status is classified by itself, whatever the body's size.
		msg := fmt.Sprintf("embeddings endpoint answered HTTP %d%s", resp.StatusCode, upstreamMessage(data, e.cfg.APIKey))
		return nil, tool.HTTPStatusError(resp.StatusCode, httpclient.RetryAfterHeader(resp.Header, time.Now(), maxRetryAfter), msg)
	}
	if tooLarge {
		return nil, tool.Errorf(tool.CodeParse, "embeddings: response larger than %d bytes", maxResponseBytes)
	}
	var r embeddingsResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, tool.Errorf(tool.CodeParse, "embeddings: malformed response: %w", err)
	}
	if len(r.Data) != len(texts) {
		return nil, tool.Errorf(tool.CodeParse, "embeddings: %d vectors for %d inputs", len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, d := range r.Data {
		idx := i // servers that omit index answer in order
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= len(out) || out[idx] != nil {
			return nil, tool.Errorf(tool.CodeParse, "embeddings: bad or repeated index %d", idx)
		}
		if len(d.Embedding) == 0 {
			return nil, tool.Errorf(tool.CodeParse, "embeddings: empty vector at index %d", idx)
		}
		if !e.checkDims(len(d.Embedding)) {
			return nil, tool.Errorf(tool.CodeParse, "embeddings: vector of %d dimensions, want %d", len(d.Embedding), e.Dimensions())
		}
		out[idx] = d.Embedding
	}
	return out, nil
}

// upstreamMessage extracts a short error message from an OpenAI-style error
// body ({"error":{"message":...}} or {"error":"..."}), or returns "". The key
// is removed before the message is clipped: clipping first could cut the key
// in two and let its start through.
func upstreamMessage(body []byte, apiKey string) string {
	var r errorResponse
	if json.Unmarshal(body, &r) != nil || len(r.Error) == 0 {
		return ""
	}
	var msg string
	var obj struct {
		Message string `json:"message"`
	}
	switch {
	case json.Unmarshal(r.Error, &msg) == nil:
	case json.Unmarshal(r.Error, &obj) == nil:
		msg = obj.Message
	}
	if apiKey != "" { // an upstream may echo the key back, in any of its forms
		msg = record.NewScrubber(apiKey).String(msg)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	return ": " + httpclient.Clip(msg, maxUpstreamMessage)
}

var _ Embedder = (*OpenAI)(nil)
var _ Embedder = (*WordVectors)(nil)
