package llm

import (
	"fmt"
	"strings"
)

// MaxModels bounds the list of TOOLPORT_MODELS.
const MaxModels = 16

// ParseModels parses a comma-separated list of model specs in
// [ParseModel]'s syntax (TOOLPORT_MODELS), for example
// "anthropic:claude-sonnet-4-5, openai:gpt-4.1". Blank entries are skipped; a
// spec listed twice (by provider:model) is kept once. An empty list is none.
func ParseModels(list string) ([]ModelSpec, error) {
	var out []ModelSpec
	seen := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		spec, err := ParseModel(item)
		if err != nil {
			return nil, fmt.Errorf("TOOLPORT_MODELS: %w", err)
		}
		if seen[spec.Name()] {
			continue
		}
		seen[spec.Name()] = true
		if len(out) == MaxModels {
			return nil, fmt.Errorf("TOOLPORT_MODELS: more than %d models", MaxModels)
		}
		out = append(out, spec)
	}
	return out, nil
}

// Name is how the model is shown and chosen: "provider:model", never the
// base URL (which may hold credentials).
func (s ModelSpec) Name() string { return s.Provider + ":" + s.Model }

// contextWindows are the context limits, in tokens, of model families as
// their providers document them (Anthropic's models overview; OpenAI's model
// pages), by model-name prefix; the longest matching prefix wins.
var contextWindows = map[string]map[string]int{
	ProviderAnthropic: {
		"claude-": 200_000,
	},
	ProviderOpenAI: {
		"gpt-4.1":     1_047_576,
		"gpt-4o":      128_000,
		"gpt-4-turbo": 128_000,
		"gpt-5":       400_000,
		"o1":          200_000,
		"o3":          200_000,
		"o4-mini":     200_000,
	},
}

// ContextWindow returns the context limit in tokens of the model spec names,
// or 0 when it is not known (a local server's model, a family not listed).
// A model behind another base URL is the provider's only if the name says
// so; an OpenAI-compatible server's "gpt-4o" is taken at its word.
func ContextWindow(spec ModelSpec) int {
	best, n := 0, 0
	for prefix, limit := range contextWindows[spec.Provider] {
		if strings.HasPrefix(spec.Model, prefix) && len(prefix) > n {
			best, n = limit, len(prefix)
		}
	}
	return best
}
