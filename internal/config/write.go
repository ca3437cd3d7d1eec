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

// WritePath is where settings made from the page are written: the
// credentials file in use, else $TOOLPORT_CREDENTIALS, else
// ~/.config/toolport/credentials.json; "" when no home is known.
func (c *Config) WritePath() string {
	switch {
	case c.CredentialsPath != "":
		return c.CredentialsPath
	case c.getenv("TOOLPORT_CREDENTIALS") != "":
		return c.getenv("TOOLPORT_CREDENTIALS")
	case c.home != "":
		return filepath.Join(c.home, ".config", "toolport", "credentials.json")
	}
	return ""
}

// Reload resolves the configuration again from the same environment and
// home: what a change to the credentials file needs to take effect.
func (c *Config) Reload() (*Config, error) { return New(c.getenv, c.home) }

// FromEnv reports whether the environment variable env is set (non-blank):
// it then wins over the credentials file, and a value written there is not
// used.
func (c *Config) FromEnv(env string) bool { return strings.TrimSpace(c.getenv(env)) != "" }

// Raw returns the credentials file's value at path (dot-separated), or nil.
func (c *Config) Raw(path string) any { return Lookup(c.creds, path) }

// UpdateCredentials changes the credentials file at path: it reads the file
// (none is an empty object), hands its top-level object to change, and
// writes the result whole to a new file in the same directory, mode 0600,
// renamed over the old one, so that a reader never sees half a file and
// the keys are never readable by others, even for a moment. The directory
// is made (0700) if missing. Errors name the file, never a value.
func UpdateCredentials(path string, change func(root map[string]any) error) error {
	if path == "" {
		return errors.New("credentials file: no path (set TOOLPORT_CREDENTIALS or HOME)")
	}
	root := map[string]any{}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("credentials file: %w", err)
	case len(raw) > maxCredentialsBytes:
		return fmt.Errorf("credentials file %s: too large (%d bytes)", path, len(raw))
	default:
		if err := json.Unmarshal(raw, &root); err != nil {
			return fmt.Errorf("credentials file %s: %s; fix it by hand before changing settings", path, describeJSONError(raw, err))
		}
		if root == nil {
			root = map[string]any{}
		}
	}
	if err := change(root); err != nil {
		return err
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if len(out) > maxCredentialsBytes {
		return fmt.Errorf("credentials file %s: would be larger than %d bytes", path, maxCredentialsBytes)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".credentials-*.json")
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	// CreateTemp makes it 0600 already; say so rather than rely on it.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials file: %w", err)
	}
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	return nil
}

// SetPath sets root's entry at path (dot-separated), making the objects on
// the way; a nil or "" value deletes the entry instead. An entry on the way
// that is not an object is an error.
func SetPath(root map[string]any, path string, value any) error {
	keys := strings.Split(path, ".")
	cur := root
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k]
		if !ok || next == nil {
			if value == nil || value == "" {
				return nil
			}
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("credentials file: %s is not an object", k)
		}
		cur = m
	}
	last := keys[len(keys)-1]
	if value == nil || value == "" {
		delete(cur, last)
		return nil
	}
	cur[last] = value
	return nil
}

// Lookup returns root's entry at path (dot-separated), or nil.
func Lookup(root map[string]any, path string) any {
	var cur any = root
	for key := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[key]
	}
	return cur
}
