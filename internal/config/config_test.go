package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
)

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const braveFile = `{"web_search":{"brave":{"api_key":"file-key"},"google":{"api_key":"g","engine_id":"cx"}}}`

func TestLookupPrecedence(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config/ikigai/credentials.json"), `{"web_search":{"brave":{"api_key":"ikigai-key"}}}`, 0o600)

	tests := []struct {
		name     string
		env      map[string]string
		toolport string // content of ~/.config/toolport/credentials.json, if any
		want     string
		path     string
	}{
		{name: "ikigai file is the last resort", want: "ikigai-key", path: ".config/ikigai/credentials.json"},
		{name: "toolport file wins over ikigai's", toolport: braveFile, want: "file-key", path: ".config/toolport/credentials.json"},
		{name: "environment wins over files", env: map[string]string{"BRAVE_API_KEY": "env-key"}, toolport: braveFile, want: "env-key", path: ".config/toolport/credentials.json"},
		{name: "blank environment value is ignored", env: map[string]string{"BRAVE_API_KEY": "  "}, toolport: braveFile, want: "file-key", path: ".config/toolport/credentials.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := filepath.Join(home, ".config/toolport/credentials.json")
			os.Remove(tp)
			if tt.toolport != "" {
				writeFile(t, tp, tt.toolport, 0o600)
			}
			c, err := config.New(envOf(tt.env), home)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Secret("BRAVE_API_KEY", "web_search.brave.api_key"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if want := filepath.Join(home, tt.path); c.CredentialsPath != want {
				t.Errorf("CredentialsPath = %q, want %q", c.CredentialsPath, want)
			}
			if s := c.Secrets(); len(s) != 1 || s[0] != tt.want {
				t.Errorf("Secrets() = %v", s)
			}
		})
	}
}

func TestExplicitCredentialsFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "creds.json")
	writeFile(t, p, braveFile, 0o600)
	c, err := config.New(envOf(map[string]string{"TOOLPORT_CREDENTIALS": p}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Lookup("", "web_search.google.engine_id"); got != "cx" {
		t.Errorf("engine id = %q", got)
	}
	if got := c.Lookup("", "web_search.google.missing"); got != "" {
		t.Errorf("missing entry = %q", got)
	}
	if got := c.Lookup("", "web_search.brave.api_key.deeper"); got != "" {
		t.Errorf("path through a string = %q", got)
	}

	// A named file that does not exist is reported, not a silent fallback.
	c, err = config.New(envOf(map[string]string{"TOOLPORT_CREDENTIALS": filepath.Join(dir, "nope.json")}), t.TempDir())
	if err != nil || c.CredentialsErr == nil || !strings.Contains(c.CredentialsErr.Error(), "nope.json") {
		t.Errorf("missing TOOLPORT_CREDENTIALS file: err=%v CredentialsErr=%v", err, c.CredentialsErr)
	}
}

// An unusable credentials file is ignored with one warning, so that commands
// needing no credentials still run; CheckCredentials reports it to those that
// do. Neither names the file's content.
func TestUnusableFileIsIgnoredWithAWarning(t *testing.T) {
	const secret = "sk-secret-value"
	tests := []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{name: "truncated", body: `{"web_search": {"brave": {"api_key": "` + secret + `"`, mode: 0o600, want: "not valid JSON (error at line 1, column 54)"},
		{name: "stray character on line 2", body: "{\"llm\": {}\n  s" + secret + "}", mode: 0o600, want: "not valid JSON (error at line 2, column 3)"},
		{name: "an array", body: `["` + secret + `"]`, mode: 0o600, want: "not a JSON object"},
		{name: "unreadable", body: `{}`, mode: 0o000, want: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mode == 0 && os.Geteuid() == 0 {
				t.Skip("root reads files whatever their mode")
			}
			home := t.TempDir()
			path := filepath.Join(home, ".config/toolport/credentials.json")
			writeFile(t, path, tt.body, tt.mode)
			c, err := config.New(envOf(map[string]string{"BRAVE_API_KEY": "env-key"}), home)
			if err != nil {
				t.Fatalf("New failed on an unusable credentials file: %v", err)
			}
			if c.CredentialsErr == nil || !strings.Contains(c.CredentialsErr.Error(), tt.want) || !strings.Contains(c.CredentialsErr.Error(), path) {
				t.Errorf("CredentialsErr = %v, want the path and %q", c.CredentialsErr, tt.want)
			}
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "ignoring it") {
				t.Errorf("Warnings = %q, want one saying the file is ignored", c.Warnings)
			}
			if err := c.CheckCredentials(); err == nil || !strings.Contains(err.Error(), "TOOLPORT_CREDENTIALS") {
				t.Errorf("CheckCredentials() = %v", err)
			}
			for _, s := range append(c.Warnings, c.CredentialsErr.Error(), c.CheckCredentials().Error()) {
				if strings.Contains(s, secret) || strings.Contains(s, "'s'") {
					t.Errorf("message quotes the file: %s", s)
				}
			}
			if c.CredentialsPath != "" {
				t.Errorf("CredentialsPath = %q for an ignored file", c.CredentialsPath)
			}
			if got := c.Secret("BRAVE_API_KEY", "web_search.brave.api_key"); got != "env-key" {
				t.Errorf("the environment no longer applies: %q", got)
			}
		})
	}
}

func TestCheckCredentialsWithAGoodFile(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config/toolport/credentials.json"), braveFile, 0o600)
	c, err := config.New(envOf(nil), home)
	if err != nil || c.CheckCredentials() != nil || c.CredentialsErr != nil {
		t.Errorf("err=%v CheckCredentials=%v", err, c.CheckCredentials())
	}
}

func TestWarnsWhenOthersCanRead(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config/toolport/credentials.json"), braveFile, 0o644)
	c, err := config.New(envOf(nil), home)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "chmod 600") {
		t.Errorf("warnings = %v", c.Warnings)
	}
	os.Chmod(filepath.Join(home, ".config/toolport/credentials.json"), 0o600)
	c, _ = config.New(envOf(nil), home)
	if len(c.Warnings) != 0 {
		t.Errorf("warnings for a private file: %v", c.Warnings)
	}
}

func TestDefaultsAndBools(t *testing.T) {
	c, err := config.New(envOf(map[string]string{"A": "x", "ON": "yes", "OFF": "0"}), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Default("A", "d") != "x" || c.Default("B", "d") != "d" {
		t.Error("Default")
	}
	if !c.Bool("ON") || c.Bool("OFF") || c.Bool("UNSET") {
		t.Error("Bool")
	}
}

func TestRedisURL(t *testing.T) {
	env := map[string]string{"TOOLPORT_REDIS_URL": "redis://app:s3cr3tpw@10.0.0.5:6379/0"}
	c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RedisURL(); got != env["TOOLPORT_REDIS_URL"] {
		t.Fatalf("RedisURL = %q", got)
	}
	if s := c.Secrets(); !slices.Contains(s, "s3cr3tpw") || !slices.Contains(s, env["TOOLPORT_REDIS_URL"]) {
		t.Fatalf("Secrets = %q: want the URL and its password", s)
	}
	for raw, want := range map[string]string{
		"redis://app:s3cr3tpw@10.0.0.5:6379/0": "redis://app:xxxxx@10.0.0.5:6379/0",
		"redis://:pw@h:6379":                   "redis://:xxxxx@h:6379",
		"redis://127.0.0.1:6379/0":             "redis://127.0.0.1:6379/0",
		"redis://h:6379/%zz":                   "(unparsable URL)",
	} {
		if got := config.RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
