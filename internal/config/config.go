// Package config resolves Toolport's settings: environment variables first, then
// the credentials file, then defaults. Command-line flags, which win over both,
// are applied by the commands themselves.
//
// It reads no environment of its own: [New] is handed a getenv function by
// internal/cli (or a test), and every other package gets its settings from
// the resulting [Config] or from values cli resolved. Only internal/cli,
// cmd/… mains and test-support packages (…test, internal/testexec, which
// read the TOOLPORT_TEST_* variables) touch the process environment;
// TestNothingElseReadsTheEnvironment holds the tree to it.
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
	home   string
	creds  map[string]any
	// CredentialsPath is the credentials file in use, or "" if none was found.
	CredentialsPath string
	// CredentialsErr says why a credentials file was found but not used
	// (unreadable, too large, not a JSON object), or is nil. Such a file is
	// ignored rather than fatal, so that commands which need no credentials
	// still run; commands that need them report it with [Config.CheckCredentials].
	CredentialsErr error
	// Warnings are problems worth telling the user about, such as a credentials
	// file that other users can read. They never contain secret values.
	Warnings []string
	secrets  []string
}

// New resolves configuration from getenv and a home directory (for the
// default credentials locations); tests pass their own. A credentials file that
// cannot be used does not make New fail: it is recorded in CredentialsErr and
// Warnings, and the environment alone applies. The error result is reserved
// for problems that leave no usable configuration; there are none today.
func New(getenv func(string) string, home string) (*Config, error) {
	c := &Config{getenv: getenv, home: home, creds: map[string]any{}}
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
		if err == nil {
			err = c.readCredentials(p, info)
		} else {
			err = fmt.Errorf("credentials file %s: %w", p, err)
		}
		if err != nil {
			c.creds = map[string]any{}
			c.CredentialsErr = err
			c.Warnings = append(c.Warnings, err.Error()+"; ignoring it (settings from the environment still apply)")
		}
		break
	}
	return c, nil
}

// CheckCredentials returns CredentialsErr, with a hint on fixing it, for
// commands that need credentials and must not run without the file.
func (c *Config) CheckCredentials() error {
	if c.CredentialsErr == nil {
		return nil
	}
	return fmt.Errorf("%w (fix the file, or set TOOLPORT_CREDENTIALS to another one)", c.CredentialsErr)
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
		return fmt.Errorf("credentials file %s: %s", path, describeJSONError(raw, err))
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

// AddSecret registers a credential read from elsewhere than the environment
// or the credentials file (a saved login's tokens), so that [Config.Secrets]
// lists it for redaction. Values shorter than 4 bytes are not redacted (the
// registry ignores them too).
func (c *Config) AddSecret(values ...string) {
	for _, v := range values {
		if v != "" {
			c.secrets = append(c.secrets, v)
		}
	}
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

// describeJSONError says what is wrong with a credentials file by position
// only: the decoder's own messages quote characters of the input, and the
// input holds secrets.
func describeJSONError(raw []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		// Offset is just past the byte that went wrong.
		line, col := position(raw, syntax.Offset-1)
		return fmt.Sprintf("not valid JSON (error at line %d, column %d)", line, col)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return "not a JSON object"
		}
		return fmt.Sprintf("not valid: %s is a JSON %s", typ.Field, typ.Value)
	}
	return "not valid JSON"
}

// position turns a byte offset into a 1-based line and column.
func position(raw []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(raw)))
	line, col = 1, 1
	for _, b := range raw[:offset] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
