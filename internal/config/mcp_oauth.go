package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// An attached MCP server authorized by OAuth keeps its tokens beside its
// declaration, in mcp.servers.<name>.oauth (an object internal/mcphost
// writes: access and refresh token, expiry, the client registration), so
// that a restart needs no new login and detaching the server forgets them.

// maxOAuthBytes bounds one server's saved authorization.
const maxOAuthBytes = 16 << 10

// MCPTokens keeps attached servers' OAuth tokens in the credentials file
// at Path; it implements mcphost.TokenStore. Writes of the file that may
// run while it saves (the page's Settings) go through [MCPTokens.Update],
// so that neither loses the other's change.
type MCPTokens struct {
	Path string
	mu   sync.Mutex
}

// Update is [UpdateCredentials] on t.Path, one change at a time.
func (t *MCPTokens) Update(change func(root map[string]any) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return UpdateCredentials(t.Path, change)
}

// LoadOAuth returns server's saved authorization if the server is still
// declared with url; nil otherwise.
func (t *MCPTokens) LoadOAuth(server, url string) (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw, err := os.ReadFile(t.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("credentials file: %w", err)
	case len(raw) > maxCredentialsBytes:
		return nil, fmt.Errorf("credentials file %s: too large", t.Path)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("credentials file %s: %s", t.Path, describeJSONError(raw, err))
	}
	decl, _ := Lookup(root, "mcp.servers."+server).(map[string]any)
	if decl == nil || decl["url"] != url {
		return nil, nil
	}
	o, ok := decl["oauth"].(map[string]any)
	if !ok {
		return nil, nil
	}
	return json.Marshal(o)
}

// SaveOAuth replaces server's saved authorization (nil data deletes it).
// A server no longer declared with url is left alone: it was detached, or
// its URL changed, while its flow ran.
func (t *MCPTokens) SaveOAuth(server, url string, data json.RawMessage) error {
	var o map[string]any
	if data != nil {
		if len(data) > maxOAuthBytes {
			return fmt.Errorf("credentials file: mcp.servers.%s.oauth: larger than %d bytes", server, maxOAuthBytes)
		}
		if err := json.Unmarshal(data, &o); err != nil || o == nil {
			return fmt.Errorf("credentials file: mcp.servers.%s.oauth must be an object", server)
		}
	}
	return t.Update(func(root map[string]any) error {
		decl, _ := Lookup(root, "mcp.servers."+server).(map[string]any)
		if decl == nil || decl["url"] != url {
			return nil
		}
		if o == nil {
			delete(decl, "oauth")
			return nil
		}
		decl["oauth"] = o
		return nil
	})
}

// oauthSecrets are the secrets of a saved authorization.
func oauthSecrets(v any) ([]string, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be an object (written by Toolport when the server is authorized)")
	}
	var out []string
	for _, k := range []string{"access_token", "refresh_token", "client_secret"} {
		if s, ok := o[k].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
