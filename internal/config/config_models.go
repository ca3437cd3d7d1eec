package config

import (
	"fmt"
	"net/url"
)

// Model connections come from the credentials file, where the page's
// Settings writes them:
//
//	{"llm": {"connections": [
//	   {"name": "ollama", "provider": "openai", "base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5"},
//	   {"name": "claude", "provider": "anthropic", "api_key": "…", "model": "claude-sonnet-4-5"}],
//	 "default": "ollama"}}
//
// Each is one model a conversation may pick, named "<name>:<model>"; the
// default one answers conversations that chose none when TOOLPORT_MODEL is
// not set.

// MaxModelConnections bounds llm.connections.
const MaxModelConnections = 16

// ModelConnection is one model connection of llm.connections.
type ModelConnection struct {
	Name     string // matches the rule of MCP server names
	Provider string // "anthropic" or "openai" (any OpenAI-compatible server)
	BaseURL  string // "" for the provider's own
	APIKey   string // a secret; "" for servers that need none (a local Ollama)
	Model    string
}

// ModelConnections reads llm.connections and llm.default (the name of the
// default connection, "" for the first). Keys are registered as secrets.
func (c *Config) ModelConnections() (conns []ModelConnection, def string, err error) {
	if d, ok := c.Raw("llm.default").(string); ok {
		def = d
	}
	raw := c.Raw("llm.connections")
	if raw == nil {
		return nil, def, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, "", fmt.Errorf("credentials file: llm.connections must be an array")
	}
	if len(items) > MaxModelConnections {
		return nil, "", fmt.Errorf("credentials file: llm.connections: %d connections, at most %d", len(items), MaxModelConnections)
	}
	seen := map[string]bool{}
	for i, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("credentials file: llm.connections[%d] must be an object", i)
		}
		conn, err := ParseModelConnection(obj)
		if err != nil {
			return nil, "", fmt.Errorf("credentials file: llm.connections[%d]: %w", i, err)
		}
		if seen[conn.Name] {
			return nil, "", fmt.Errorf("credentials file: llm.connections[%d]: the name %q is used twice", i, conn.Name)
		}
		seen[conn.Name] = true
		c.AddSecret(conn.APIKey)
		conns = append(conns, conn)
	}
	return conns, def, nil
}

// ParseModelConnection checks one connection as llm.connections holds it,
// naming the field at fault, never a value.
func ParseModelConnection(obj map[string]any) (ModelConnection, error) {
	var m ModelConnection
	for key, v := range obj {
		s, ok := v.(string)
		if !ok {
			return m, fmt.Errorf("%s must be a string", key)
		}
		switch key {
		case "name":
			m.Name = s
		case "provider":
			m.Provider = s
		case "base_url":
			m.BaseURL = s
		case "api_key":
			m.APIKey = s
		case "model":
			m.Model = s
		default:
			return m, fmt.Errorf("%s: unknown field (known: name, provider, base_url, api_key, model)", key)
		}
	}
	switch {
	case !mcpServerName.MatchString(m.Name):
		return m, fmt.Errorf("name must be 1 to 32 letters, digits or dashes")
	case m.Provider != "anthropic" && m.Provider != "openai":
		return m, fmt.Errorf(`provider must be "anthropic" or "openai" (any OpenAI-compatible server)`)
	case m.Model == "" || len(m.Model) > 200:
		return m, fmt.Errorf("model must be 1 to 200 characters")
	case len(m.APIKey) > 4096:
		return m, fmt.Errorf("api_key is longer than 4096 characters")
	}
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(m.BaseURL) > 2048 {
			return m, fmt.Errorf("base_url must be an http or https URL")
		}
		if u.User != nil {
			return m, fmt.Errorf("base_url must not hold credentials; put the key in api_key")
		}
	}
	return m, nil
}

// Map is the connection as llm.connections holds it.
func (m ModelConnection) Map() map[string]any {
	out := map[string]any{"name": m.Name, "provider": m.Provider, "model": m.Model}
	if m.BaseURL != "" {
		out["base_url"] = m.BaseURL
	}
	if m.APIKey != "" {
		out["api_key"] = m.APIKey
	}
	return out
}
