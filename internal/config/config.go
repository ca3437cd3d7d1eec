// Package config resolves Toolport's settings: environment variables first, then
// the credentials file, then defaults. Command-line flags, which win over both,
// are applied by the commands themselves.
//
// The credentials file is JSON with a nested layout shared with ikigai:
//
//	{"web_search": {"brave": {"api_key": "…"}, "google": {"api_key": "…", "engine_id": "…"}},
//	 "tidal": {"client_id": "…", "client_secret": "…"},
//	 "llm": {"anthropic": {"api_key": "…"}, "openai": {"api_key": "…"}}}
//
// It is read from $TOOLPORT_CREDENTIALS, ~/.config/toolport/credentials.json, then
// ~/.config/ikigai/credentials.json: the first that exists is used.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxCredentialsBytes bounds the credentials file: it holds a few keys.
const maxCredentialsBytes = 1 << 20

// Config is a resolved view of the environment and the credentials file.
// The zero value is not usable; build one with [Load] or [New].
type Config struct {
	getenv func(string) string
	creds  map[string]any
	// CredentialsPath is the credentials file in use, or "" if none was found.
	CredentialsPath string
	// Warnings are problems worth telling the user about, such as a credentials
	// file that other users can read. They never contain secret values.
	Warnings []string
	secrets  []string
}

// Load reads the process environment and the first credentials file found.
func Load() (*Config, error) {
	home, _ := os.UserHomeDir()
	return New(os.Getenv, home)
}

// New resolves configuration from getenv and a home directory (for the
// default credentials locations); tests pass their own.
func New(getenv func(string) string, home string) (*Config, error) {
	c := &Config{getenv: getenv, creds: map[string]any{}}
	var candidates []string
	if p := getenv("TOOLPORT_CREDENTIALS"); p != "" {
		candidates = append(candidates, p)
	}
	if home != "" {
		candidates = append(candidates,
			filepath.Join(home, ".config", "toolport", "credentials.json"),
			filepath.Join(home, ".config", "ikigai", "credentials.json"))
	}
	for i, p := range candidates {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && !(i == 0 && getenv("TOOLPORT_CREDENTIALS") != "") {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("credentials file: %w", err)
		}
		if err := c.readCredentials(p, info); err != nil {
			return nil, err
		}
		break
	}
	return c, nil
}

func (c *Config) readCredentials(path string, info fs.FileInfo) error {
	if info.Size() > maxCredentialsBytes {
		return fmt.Errorf("credentials file %s: too large (%d bytes)", path, info.Size())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := json.Unmarshal(raw, &c.creds); err != nil {
		// The decoder's message names a position, never the file's content.
		return fmt.Errorf("credentials file %s: not valid JSON: %w", path, err)
	}
	c.CredentialsPath = path
	if info.Mode().Perm()&0o077 != 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"credentials file %s is readable by other users (mode %v); run: chmod 600 %s", path, info.Mode().Perm(), path))
	}
	return nil
}

// Env returns an environment variable's value.
func (c *Config) Env(name string) string { return c.getenv(name) }

// Lookup returns the first non-empty value of the environment variable env and
// the credentials file entry at path (dot-separated, e.g.
// "web_search.brave.api_key"); either may be empty to skip it.
func (c *Config) Lookup(env, path string) string {
	if env != "" {
		if v := strings.TrimSpace(c.getenv(env)); v != "" {
			return v
		}
	}
	if path == "" {
		return ""
	}
	var cur any = c.creds
	for key := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[key]
	}
	s, _ := cur.(string)
	return strings.TrimSpace(s)
}

// Secret is [Config.Lookup] for a credential: the value is also remembered so
// that [Config.Secrets] can list it for redaction.
func (c *Config) Secret(env, path string) string {
	v := c.Lookup(env, path)
	if v != "" {
		c.secrets = append(c.secrets, v)
	}
	return v
}

// Secrets lists every credential handed out by [Config.Secret], for
// tool.WithSecrets and log redaction.
func (c *Config) Secrets() []string { return append([]string(nil), c.secrets...) }

// Default returns the environment variable's value, or def when it is unset.
func (c *Config) Default(env, def string) string {
	if v := strings.TrimSpace(c.getenv(env)); v != "" {
		return v
	}
	return def
}

// Bool reads a boolean environment variable ("1", "true", "yes", "on").
func (c *Config) Bool(env string) bool {
	switch strings.ToLower(strings.TrimSpace(c.getenv(env))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
