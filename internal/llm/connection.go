package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/toolport/toolport/internal/config"
)

// FromConnection builds the provider of a model connection from the
// credentials file (the page's Settings), with the timeouts of c as
// [FromConfig] describes.
func FromConnection(c *config.Config, conn config.ModelConnection, hc *http.Client) (Provider, error) {
	firstByte, err := ParseTimeout("TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT", c.Env("TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT"))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	idle, err := ParseTimeout("TOOLPORT_MODEL_IDLE_TIMEOUT", c.Env("TOOLPORT_MODEL_IDLE_TIMEOUT"))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	o := Options{APIKey: conn.APIKey, BaseURL: conn.BaseURL, HTTPClient: hc, FirstByteTimeout: firstByte, IdleTimeout: idle}
	if conn.Provider == ProviderAnthropic {
		return NewAnthropic(conn.Model, o)
	}
	return NewOpenAI(conn.Model, o)
}

// Bounds of a model listing.
const (
	maxModelListBytes = 4 << 20
	maxListedModels   = 500
)

// ErrNoModelList is returned by [ListModels] when the server offers no
// model listing (404): the model is then typed in.
var ErrNoModelList = errors.New("the server does not list its models")

// ListModels asks a connection's server for its models: GET /models under
// an OpenAI-compatible base URL (Ollama, LM Studio, vLLM and OpenAI itself
// serve it), or Anthropic's GET /v1/models. The ids come back sorted,
// at most 500. Errors name the status, never the key or the body.
func ListModels(ctx context.Context, conn config.ModelConnection, hc *http.Client) ([]string, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	base := strings.TrimRight(conn.BaseURL, "/")
	var u string
	switch {
	case conn.Provider == ProviderAnthropic && base == "":
		u = "https://api.anthropic.com/v1/models?limit=1000"
	case conn.Provider == ProviderAnthropic:
		u = base + "/v1/models?limit=1000"
	case base == "":
		u = "https://api.openai.com/v1/models"
	default:
		u = base + "/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	if conn.Provider == ProviderAnthropic {
		req.Header.Set("anthropic-version", "2023-06-01")
		if conn.APIKey != "" {
			req.Header.Set("x-api-key", conn.APIKey)
		}
	} else if conn.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+conn.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// The transport's error names the URL, which has no key in it
		// (ParseModelConnection refuses credentials in base URLs).
		return nil, fmt.Errorf("listing models: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNoModelList
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("listing models: the server refused the key (HTTP %d)", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("listing models: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelListBytes+1))
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	if len(body) > maxModelListBytes {
		return nil, fmt.Errorf("listing models: the answer is larger than %d bytes", maxModelListBytes)
	}
	return parseModelList(body)
}

// parseModelList reads {"data":[{"id":…},…]}, the shape OpenAI and
// Anthropic both answer with.
func parseModelList(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, errors.New("listing models: the answer is not a model list")
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if id := strings.TrimSpace(m.ID); id != "" && len(id) <= 200 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > maxListedModels {
		ids = ids[:maxListedModels]
	}
	return ids, nil
}
