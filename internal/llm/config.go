package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/config"
)

// Provider names accepted in a model spec.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// ModelSpec is a parsed TOOLPORT_MODEL value.
type ModelSpec struct {
	Provider string // ProviderAnthropic or ProviderOpenAI
	Model    string // as the provider names it, e.g. "claude-sonnet-4-5", "qwen2.5:7b"
	BaseURL  string // from "@url", or ""
}

func (s ModelSpec) String() string {
	if s.BaseURL == "" {
		return s.Provider + ":" + s.Model
	}
	return s.Provider + ":" + s.Model + "@" + s.BaseURL
}

// ParseModel parses "provider:model" or "provider:model@baseURL", for example
// "anthropic:claude-sonnet-4-5", "openai:gpt-4.1" or
// "openai:qwen2.5@http://127.0.0.1:11434/v1". The provider is split off at the
// first colon, so model names may contain colons ("openai:qwen2.5:7b"). An
// empty spec returns [ErrNoModel].
func ParseModel(spec string) (ModelSpec, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return ModelSpec{}, ErrNoModel
	}
	provider, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return ModelSpec{}, fmt.Errorf("llm: model %q: want provider:model, e.g. anthropic:claude-sonnet-4-5 or openai:gpt-4.1", spec)
	}
	provider = strings.ToLower(strings.TrimSpace(provider))
	if provider != ProviderAnthropic && provider != ProviderOpenAI {
		return ModelSpec{}, fmt.Errorf("llm: model %q: unknown provider %q (want %s or %s)", spec, provider, ProviderAnthropic, ProviderOpenAI)
	}
	model, base, _ := strings.Cut(rest, "@")
	model = strings.TrimSpace(model)
	if model == "" {
		return ModelSpec{}, fmt.Errorf("llm: model %q: empty model name", spec)
	}
	s := ModelSpec{Provider: provider, Model: model}
	if base = strings.TrimSpace(base); base != "" {
		if err := checkBaseURL(base); err != nil {
			return ModelSpec{}, fmt.Errorf("llm: model %q: %w", spec, err)
		}
		s.BaseURL = base
	}
	return s, nil
}

func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q: want http(s)://host[:port][/path]", base)
	}
	return nil
}

// FromConfig builds the provider that TOOLPORT_MODEL names. Keys come from
// ANTHROPIC_API_KEY / llm.anthropic.api_key and OPENAI_API_KEY /
// llm.openai.api_key (environment first, then the credentials file); base
// URLs from ANTHROPIC_BASE_URL and OPENAI_BASE_URL, except that a base URL in
// the model spec wins. TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT and
// TOOLPORT_MODEL_IDLE_TIMEOUT (Go durations, "30s", "2m"; "off" for none) set
// [Options.FirstByteTimeout] and [Options.IdleTimeout]. With no model
// configured it returns [ErrNoModel].
func FromConfig(c *config.Config) (Provider, error) { return FromConfigWithClient(c, nil) }

// FromConfigWithClient is [FromConfig] with the provider's requests sent
// through hc (nil: the default client), for callers that wrap the transport
// (`toolport doctor`, recording).
func FromConfigWithClient(c *config.Config, hc *http.Client) (Provider, error) {
	spec, err := ParseModel(c.Env("TOOLPORT_MODEL"))
	if err != nil {
		return nil, err
	}
	return FromSpecWithClient(c, spec, hc)
}

// FromSpec builds the provider of one parsed model spec, with keys, base
// URLs and timeouts from c as [FromConfig] describes.
func FromSpec(c *config.Config, spec ModelSpec) (Provider, error) {
	return FromSpecWithClient(c, spec, nil)
}

// FromSpecWithClient is [FromSpec] with the provider's requests sent through
// hc (nil: the default client).
func FromSpecWithClient(c *config.Config, spec ModelSpec, hc *http.Client) (Provider, error) {
	firstByte, err := ParseTimeout("TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT", c.Env("TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT"))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	idle, err := ParseTimeout("TOOLPORT_MODEL_IDLE_TIMEOUT", c.Env("TOOLPORT_MODEL_IDLE_TIMEOUT"))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	switch spec.Provider {
	case ProviderAnthropic:
		o := Options{
			FirstByteTimeout: firstByte, IdleTimeout: idle, HTTPClient: hc,
			APIKey:  c.Secret("ANTHROPIC_API_KEY", "llm.anthropic.api_key"),
			BaseURL: c.Default("ANTHROPIC_BASE_URL", ""),
		}
		if spec.BaseURL != "" {
			o.BaseURL = spec.BaseURL
		}
		if err := checkOptionalBaseURL("ANTHROPIC_BASE_URL", o.BaseURL); err != nil {
			return nil, err
		}
		return NewAnthropic(spec.Model, o)
	default:
		o := Options{
			FirstByteTimeout: firstByte, IdleTimeout: idle, HTTPClient: hc,
			APIKey:  c.Secret("OPENAI_API_KEY", "llm.openai.api_key"),
			BaseURL: c.Default("OPENAI_BASE_URL", ""),
		}
		if spec.BaseURL != "" {
			o.BaseURL = spec.BaseURL
		}
		if err := checkOptionalBaseURL("OPENAI_BASE_URL", o.BaseURL); err != nil {
			return nil, err
		}
		return NewOpenAI(spec.Model, o)
	}
}

func checkOptionalBaseURL(env, base string) error {
	if base == "" {
		return nil
	}
	if err := checkBaseURL(base); err != nil {
		return fmt.Errorf("llm: %s: %w", env, err)
	}
	return nil
}

// maxTimeout bounds a configured timeout: a day is more than any turn needs,
// and keeps a typo ("30000h") from meaning forever.
const maxTimeout = 24 * time.Hour

// ParseTimeout parses the value of the timeout setting name: "" is 0 (the
// default), "off" is -1 (none), anything else a positive Go duration ("30s",
// "10m") of at most a day.
func ParseTimeout(name, value string) (time.Duration, error) {
	value = strings.TrimSpace(value)
	switch strings.ToLower(value) {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 || d > maxTimeout {
		return 0, fmt.Errorf("%s=%q: want a duration such as 30s or 10m (at most 24h), or off", name, value)
	}
	return d, nil
}
