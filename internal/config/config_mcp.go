package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// MCP servers and tool approval come from the credentials file only, never
// from the environment: a stdio server is a command Toolport runs with the
// user's rights, so it is declared where the user keeps their keys.
//
//	{"mcp": {"servers": {
//	   "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
//	   "fs":         {"command": "mcp-server-filesystem", "args": ["/home/me/notes"], "env": {"K": "v"}},
//	   "remote":     {"url": "https://example.org/mcp", "token": "…", "timeout_seconds": 30},
//	   "oauthed":    {"url": "https://example.com/mcp", "oauth": {…tokens Toolport saved…}}}},
//	 "approval": {"tools": {"savePlaylistToTidal": "ask", "fs__write_file": "never"}}}

// Bounds of an MCP server's declaration.
const (
	maxMCPServers    = 32
	maxMCPArgs       = 64
	maxMCPEnv        = 64
	maxMCPTimeoutSec = 600
)

// mcpServerName is the rule of a server's name, which prefixes its tools'.
var mcpServerName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,32}$`)

// MCPServer is an MCP server declared in the credentials file: Command (stdio)
// or URL (streamable HTTP).
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Token   string        // a secret: registered with Secrets
	Timeout time.Duration // each call's bound; 0 means the host's default
	// OAuthSecrets are the tokens of its saved OAuth authorization
	// (mcp.servers.<name>.oauth, see [MCPTokens]), registered with Secrets.
	OAuthSecrets []string
}

// MCPServers reads mcp.servers, sorted by name. Each server's token and env
// values are registered as secrets. An invalid declaration is an error
// naming the server and the field, never quoting a value.
func (c *Config) MCPServers() ([]MCPServer, error) {
	mcp, ok := c.creds["mcp"]
	if !ok {
		return nil, nil
	}
	mcpObj, ok := mcp.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("credentials file: mcp must be an object")
	}
	raw, ok := mcpObj["servers"]
	if !ok {
		return nil, nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("credentials file: mcp.servers must be an object of servers by name")
	}
	if len(servers) > maxMCPServers {
		return nil, fmt.Errorf("credentials file: mcp.servers: %d servers, at most %d", len(servers), maxMCPServers)
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]MCPServer, 0, len(names))
	for _, name := range names {
		s, err := parseMCPServer(name, servers[name])
		if err != nil {
			return nil, err
		}
		c.AddSecret(s.Token)
		c.AddSecret(s.OAuthSecrets...)
		for _, v := range s.Env {
			c.AddSecret(v)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseMCPServer(name string, raw any) (MCPServer, error) {
	where := "credentials file: mcp.servers"
	if !mcpServerName.MatchString(name) {
		return MCPServer{}, fmt.Errorf("%s: a server's name must match %s (it prefixes its tools' names)", where, mcpServerName)
	}
	where += "." + name
	obj, ok := raw.(map[string]any)
	if !ok {
		return MCPServer{}, fmt.Errorf("%s must be an object", where)
	}
	s := MCPServer{Name: name}
	for key, v := range obj {
		var err error
		switch key {
		case "command":
			s.Command, err = str(v)
		case "url":
			s.URL, err = str(v)
		case "token":
			s.Token, err = str(v)
		case "args":
			s.Args, err = strList(v, maxMCPArgs)
		case "env":
			s.Env, err = strMap(v, maxMCPEnv)
		case "oauth":
			s.OAuthSecrets, err = oauthSecrets(v)
		case "timeout_seconds":
			n, isNum := v.(float64)
			if !isNum || n < 1 || n > maxMCPTimeoutSec || n != float64(int(n)) {
				err = fmt.Errorf("must be a whole number of seconds from 1 to %d", maxMCPTimeoutSec)
			}
			s.Timeout = time.Duration(n) * time.Second
		default:
			err = fmt.Errorf("unknown field (known: command, args, env, url, token, timeout_seconds, oauth)")
		}
		if err != nil {
			return MCPServer{}, fmt.Errorf("%s.%s: %w", where, key, err)
		}
	}
	switch {
	case s.Command == "" && s.URL == "":
		return MCPServer{}, fmt.Errorf("%s: needs a command (stdio) or a url (streamable HTTP)", where)
	case s.Command != "" && s.URL != "":
		return MCPServer{}, fmt.Errorf("%s: has both a command and a url; give one", where)
	case s.Token != "" && s.URL == "":
		return MCPServer{}, fmt.Errorf("%s: token is for url servers", where)
	case s.OAuthSecrets != nil && s.URL == "":
		return MCPServer{}, fmt.Errorf("%s: oauth is for url servers", where)
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return MCPServer{}, fmt.Errorf("%s.url: must be an http or https URL", where)
		}
		if u.User != nil {
			return MCPServer{}, fmt.Errorf("%s.url: must not hold credentials; put the token in token", where)
		}
	}
	return s, nil
}

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be a string")
	}
	return s, nil
}

func strList(v any, limit int) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of strings")
	}
	if len(items) > limit {
		return nil, fmt.Errorf("%d items, at most %d", len(items), limit)
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("item %d must be a string", i)
		}
		out[i] = s
	}
	return out, nil
}

func strMap(v any, limit int) (map[string]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object of strings")
	}
	if len(obj) > limit {
		return nil, fmt.Errorf("%d entries, at most %d", len(obj), limit)
	}
	out := make(map[string]string, len(obj))
	for k, it := range obj {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("%s must be a string", k)
		}
		out[k] = s
	}
	return out, nil
}

// Approval modes of [Config.ApprovalPolicy].
const (
	ApprovalAsk   = "ask"   // always ask before the tool runs
	ApprovalNever = "never" // never ask
)

// ApprovalPolicy reads approval.tools: for each tool named, whether a call
// must be approved by the person first (true, "ask") or never (false,
// "never"). Tools not named follow the default: ask for those that act on
// the user's behalf outside Toolport (tool.Annotations.UserAccount and not
// read-only).
func (c *Config) ApprovalPolicy() (map[string]bool, error) {
	raw, ok := c.creds["approval"]
	if !ok {
		return nil, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("credentials file: approval must be an object")
	}
	for key := range obj {
		if key != "tools" {
			return nil, fmt.Errorf("credentials file: approval.%s: unknown field (known: tools)", key)
		}
	}
	tools, ok := obj["tools"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("credentials file: approval.tools must be an object of tool names to %q or %q", ApprovalAsk, ApprovalNever)
	}
	out := make(map[string]bool, len(tools))
	for name, v := range tools {
		switch v {
		case ApprovalAsk:
			out[name] = true
		case ApprovalNever:
			out[name] = false
		default:
			return nil, fmt.Errorf("credentials file: approval.tools.%s: must be %q or %q", name, ApprovalAsk, ApprovalNever)
		}
	}
	return out, nil
}

// ParseMCPServer checks one server's declaration as mcp.servers holds it
// (the page's attach form is written there in this form), naming the
// field at fault, never a value.
func ParseMCPServer(name string, decl map[string]any) (MCPServer, error) {
	return parseMCPServer(name, decl)
}
