package llm

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseModels(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "anthropic:claude-sonnet-4-5", want: []string{"anthropic:claude-sonnet-4-5"}},
		{in: "anthropic:claude-sonnet-4-5, openai:gpt-4.1 ,openai:qwen2.5:7b@http://127.0.0.1:11434/v1",
			want: []string{"anthropic:claude-sonnet-4-5", "openai:gpt-4.1", "openai:qwen2.5:7b@http://127.0.0.1:11434/v1"}},
		{in: "openai:gpt-4.1,openai:gpt-4.1@http://127.0.0.1:9/v1", want: []string{"openai:gpt-4.1"}},
		{in: "openai:gpt-4.1,mistral:large", wantErr: "unknown provider"},
		{in: "openai:", wantErr: "empty model name"},
		{in: "openai:m,", want: []string{"openai:m"}},
	} {
		specs, err := ParseModels(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "TOOLPORT_MODELS") {
				t.Errorf("ParseModels(%q) err = %v, want one naming TOOLPORT_MODELS and %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		var got []string
		for _, s := range specs {
			got = append(got, s.String())
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseModels(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	var many []string
	for i := range MaxModels + 1 {
		many = append(many, "openai:m"+strings.Repeat("x", i))
	}
	if _, err := ParseModels(strings.Join(many, ",")); err == nil {
		t.Errorf("%d models: no error, want the bound of %d", len(many), MaxModels)
	}
}

func TestContextWindow(t *testing.T) {
	for _, tc := range []struct {
		spec ModelSpec
		want int
	}{
		{ModelSpec{Provider: ProviderAnthropic, Model: "claude-sonnet-4-5"}, 200_000},
		{ModelSpec{Provider: ProviderOpenAI, Model: "gpt-4.1-mini"}, 1_047_576},
		{ModelSpec{Provider: ProviderOpenAI, Model: "gpt-4o-mini"}, 128_000},
		{ModelSpec{Provider: ProviderOpenAI, Model: "qwen2.5:7b", BaseURL: "http://127.0.0.1:11434/v1"}, 0},
		{ModelSpec{Provider: ProviderAnthropic, Model: "gpt-4o"}, 0},
	} {
		if got := ContextWindow(tc.spec); got != tc.want {
			t.Errorf("ContextWindow(%s) = %d, want %d", tc.spec, got, tc.want)
		}
	}
}

func FuzzParseModels(f *testing.F) {
	f.Add("anthropic:claude-sonnet-4-5, openai:gpt-4.1")
	f.Add("openai:qwen2.5:7b@http://127.0.0.1:11434/v1,,")
	f.Fuzz(func(t *testing.T, in string) {
		specs, err := ParseModels(in)
		if err != nil {
			return
		}
		if len(specs) > MaxModels {
			t.Fatalf("%d models, above the bound", len(specs))
		}
		for _, s := range specs {
			if s.Model == "" || (s.Provider != ProviderAnthropic && s.Provider != ProviderOpenAI) {
				t.Fatalf("bad spec %+v from %q", s, in)
			}
		}
	})
}
