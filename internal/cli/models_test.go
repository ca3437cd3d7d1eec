package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
)

func TestServeModels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    []string
		windows []int
		wantErr string
	}{
		{name: "none", env: map[string]string{}},
		{name: "two", env: map[string]string{"TOOLPORT_MODELS": "anthropic:claude-sonnet-4-5, openai:qwen2.5@http://127.0.0.1:11434/v1",
			"ANTHROPIC_API_KEY": "sk-ant-test"},
			want: []string{"anthropic:claude-sonnet-4-5", "openai:qwen2.5"}, windows: []int{200000, 0}},
		{name: "unknown provider", env: map[string]string{"TOOLPORT_MODELS": "mistral:large"}, wantErr: "unknown provider"},
		{name: "missing key", env: map[string]string{"TOOLPORT_MODELS": "anthropic:claude-sonnet-4-5"}, wantErr: "TOOLPORT_MODELS: anthropic:claude-sonnet-4-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.New(func(k string) string { return tc.env[k] }, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			models, err := serveModels(&Env{Config: cfg})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "sk-ant") {
					t.Errorf("the error shows a key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var windows []int
			for _, m := range models {
				names = append(names, m.Name)
				windows = append(windows, m.ContextWindow)
			}
			if !reflect.DeepEqual(names, tc.want) || !reflect.DeepEqual(windows, tc.windows) {
				t.Errorf("models = %q %v, want %q %v", names, windows, tc.want, tc.windows)
			}
		})
	}
}
