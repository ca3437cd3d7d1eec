package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/tool"
)

// settingKey is a key the page's Settings may set: its name in the API,
// the environment variable that wins over it, and its place in the
// credentials file.
type settingKey struct {
	name, env, path string
	secret          bool
	url             bool // an http(s) base URL
	live            bool // takes effect at once; otherwise at the next start
}

// settingKeys are the keys the page sets, in the order it shows them.
var settingKeys = []settingKey{
	{name: "brave_api_key", env: "BRAVE_API_KEY", path: "web_search.brave.api_key", secret: true, live: true},
	{name: "google_api_key", env: "GOOGLE_SEARCH_API_KEY", path: "web_search.google.api_key", secret: true, live: true},
	{name: "google_engine_id", env: "GOOGLE_SEARCH_ENGINE_ID", path: "web_search.google.engine_id", live: true},
	{name: "searxng_url", env: "TOOLPORT_SEARXNG_URL", path: "web_search.searxng.url", url: true, live: true},
	{name: "ckan_base_url", env: "CKAN_BASE_URL", path: "ckan.base_url", url: true, live: true},
	// The music pack's service (and its index) is built once per process.
	{name: "tidal_client_id", env: "TIDAL_CLIENT_ID", path: "tidal.client_id", secret: true},
}

// serveSettingsManager implements server.Settings for `toolport serve`: it
// writes the credentials file, reads it again, and applies what changed to
// the running server: the agent's models, the search and CKAN tools
// declared again with the new keys, MCP servers attached or detached.
type serveSettingsManager struct {
	mu      sync.Mutex // one change at a time
	cfg     atomic.Pointer[config.Config]
	env     *Env
	start   serveModelChoice // the models of the environment
	agent   *agent.Agent
	reg     *tool.Registry
	sel     toolSelection // serve's --packs and --tools
	changed func()        // the offer and /mcp follow the registry
	engines *sharedEngines
	host    *mcphost.Host // attached at start; nil without any
	hopts   mcphost.Options
	hosts   map[string]*mcphost.Host // attached from the page
	client  *http.Client             // for model listings
	tokens  *config.MCPTokens        // writes the file, one change at a time with the OAuth tokens
	logger  *slog.Logger
}

func newServeSettings(env *Env, start serveModelChoice, parts server.Parts, reg *tool.Registry, sel toolSelection, engines *sharedEngines,
	hopts mcphost.Options, tokens *config.MCPTokens, logger *slog.Logger) (*serveSettingsManager, error) {
	m := &serveSettingsManager{env: env, start: start, agent: parts.Agent, reg: reg, sel: sel, changed: parts.ToolsChanged,
		engines: engines, host: parts.Host, hopts: hopts, hosts: map[string]*mcphost.Host{},
		client: &http.Client{Timeout: 15 * time.Second}, tokens: tokens, logger: logger}
	if m.tokens == nil {
		m.tokens = &config.MCPTokens{Path: env.Config.WritePath()}
	}
	if m.changed == nil {
		m.changed = func() {}
	}
	m.hopts.OnChange = func(string) { m.changed() }
	m.cfg.Store(env.Config)
	// The connections saved from the page join the picker at start too.
	if err := m.applyModels(env.Config); err != nil {
		return nil, err
	}
	return m, nil
}

// current is the configuration as last read, for the doctor.
func (m *serveSettingsManager) current() *Env {
	e := *m.env
	e.Config = m.cfg.Load()
	return &e
}

// Close detaches the servers attached from the page.
func (m *serveSettingsManager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, h := range m.hosts {
		if err := h.Close(); err != nil {
			m.logger.Warn("detaching an MCP server", "server", name, "error", err)
		}
	}
	m.hosts = map[string]*mcphost.Host{}
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{server.ErrSettingsInvalid}, a...)...)
}

// mask shows that a secret is set without showing it: its last four
// characters only when it is long enough that they give nothing away.
func mask(v string) string {
	switch {
	case v == "":
		return ""
	case len(v) >= 16:
		return "••••" + v[len(v)-4:]
	}
	return "••••"
}

func (m *serveSettingsManager) View(context.Context) (any, error) {
	cfg := m.cfg.Load()
	type keyView struct {
		Key    string `json:"key"`
		Env    string `json:"env"`
		Secret bool   `json:"secret"`
		Set    bool   `json:"set"`
		Value  string `json:"value,omitempty"`  // not secret only
		Masked string `json:"masked,omitempty"` // secret only
		// Source is where the value in use comes from: "env" (which wins,
		// so the page cannot change it), "file", or "" when unset.
		Source string `json:"source,omitempty"`
		Live   bool   `json:"live"`
	}
	keys := make([]keyView, 0, len(settingKeys))
	for _, k := range settingKeys {
		v := cfg.Lookup(k.env, k.path)
		kv := keyView{Key: k.name, Env: k.env, Secret: k.secret, Set: v != "", Live: k.live}
		switch {
		case cfg.FromEnv(k.env):
			kv.Source = "env"
		case v != "":
			kv.Source = "file"
		}
		if k.secret {
			kv.Masked = mask(v)
		} else {
			kv.Value = v
		}
		keys = append(keys, kv)
	}
	type connView struct {
		Name      string `json:"name"`
		Model     string `json:"model"` // as the picker names it
		Provider  string `json:"provider"`
		BaseURL   string `json:"baseUrl,omitempty"`
		ModelID   string `json:"modelId"`
		KeySet    bool   `json:"keySet"`
		KeyMasked string `json:"keyMasked,omitempty"`
		Default   bool   `json:"default"`
	}
	conns, _, err := cfg.ModelConnections()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	cv := make([]connView, 0, len(conns))
	defName := m.agent.ModelName()
	for _, c := range conns {
		cv = append(cv, connView{Name: c.Name, Model: connModelName(c), Provider: c.Provider, BaseURL: c.BaseURL, ModelID: c.Model,
			KeySet: c.APIKey != "", KeyMasked: mask(c.APIKey), Default: connModelName(c) == defName})
	}
	type mcpView struct {
		mcphost.Status
		Command string   `json:"command,omitempty"`
		Args    []string `json:"args,omitempty"`
		URL     string   `json:"url,omitempty"`
		// TokenSet says a bearer token is kept; the token is never shown.
		TokenSet bool `json:"tokenSet"`
		// Live: attached now. A server in the file that is not is attached
		// at the next start (or was detached there).
		Live bool `json:"live"`
	}
	declared, err := cfg.MCPServers()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	status := m.statuses()
	servers := make([]mcpView, 0, len(declared))
	for _, d := range declared {
		v := mcpView{Command: d.Command, Args: d.Args, URL: d.URL, TokenSet: d.Token != ""}
		v.Name, v.Transport = d.Name, "stdio"
		if d.URL != "" {
			v.Transport = "http"
		}
		if st, ok := status[d.Name]; ok {
			v.Status, v.Live = st, true
		}
		servers = append(servers, v)
	}
	models := make([]string, 0)
	for _, am := range m.agent.Models() {
		models = append(models, am.Name)
	}
	return map[string]any{
		"credentialsFile": cfg.WritePath(),
		"keys":            keys,
		"models": map[string]any{
			"connections": cv,
			// The picker's list, the default first, and the model the
			// environment sets (TOOLPORT_MODEL), which wins as the default.
			"available": models,
			"default":   defName,
			"fromEnv":   m.start.name,
		},
		"mcpServers": servers,
	}, nil
}

// statuses are the attached servers' states by name.
func (m *serveSettingsManager) statuses() map[string]mcphost.Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]mcphost.Status{}
	if m.host != nil {
		for _, st := range m.host.Status() {
			out[st.Name] = st
		}
	}
	for _, h := range m.hosts {
		for _, st := range h.Status() {
			out[st.Name] = st
		}
	}
	return out
}

// change writes the credentials file, reads it again and keeps the new
// configuration; the caller holds m.mu.
func (m *serveSettingsManager) change(edit func(root map[string]any) error) (*config.Config, error) {
	cfg := m.cfg.Load()
	if m.tokens.Path != cfg.WritePath() {
		m.tokens = &config.MCPTokens{Path: cfg.WritePath()}
	}
	if err := m.tokens.Update(edit); err != nil {
		return nil, err
	}
	next, err := cfg.Reload()
	if err != nil {
		return nil, err
	}
	if next.CredentialsErr != nil {
		return nil, next.CredentialsErr
	}
	m.cfg.Store(next)
	return next, nil
}

func (m *serveSettingsManager) SetKeys(_ context.Context, in map[string]string) error {
	for name, v := range in {
		i := slices.IndexFunc(settingKeys, func(k settingKey) bool { return k.name == name })
		if i < 0 {
			return invalid("unknown key %q (known: brave_api_key, google_api_key, google_engine_id, searxng_url, ckan_base_url, tidal_client_id)", clipKey(name))
		}
		v = strings.TrimSpace(v)
		in[name] = v
		if err := checkSettingValue(settingKeys[i], v); err != nil {
			return err
		}
	}
	// The new keys join the scrubber before any tool holding them is
	// declared, so that no result of theirs can pass one on unscrubbed.
	for name, v := range in {
		if i := slices.IndexFunc(settingKeys, func(k settingKey) bool { return k.name == name }); settingKeys[i].secret {
			m.reg.AddSecrets(v)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.cfg.Load()
	cfg, err := m.change(func(root map[string]any) error {
		for name, v := range in {
			i := slices.IndexFunc(settingKeys, func(k settingKey) bool { return k.name == name })
			if err := config.SetPath(root, settingKeys[i].path, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return m.applyPacks(old, cfg)
}

// checkSettingValue refuses a value that cannot be right, naming the key,
// never the value.
func checkSettingValue(k settingKey, v string) error {
	if v == "" {
		return nil
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return invalid("%s must not contain spaces or control characters", k.name)
	}
	if k.url {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("%s must be an http or https URL", k.name)
		}
		if u.User != nil {
			return invalid("%s must not hold credentials", k.name)
		}
	}
	return nil
}

func clipKey(k string) string {
	if len(k) > 40 {
		return k[:40]
	}
	return k
}

// applyPacks declares the search and CKAN tools again from cfg and swaps
// them into the registry: their clients hold the keys they were made with.
// A tool declared only when configured (web_search_searxng needs its URL)
// joins when it appears, if serve's selection takes it, and leaves when its
// setting is cleared.
func (m *serveSettingsManager) applyPacks(old, cfg *config.Config) error {
	before, err := m.declarePacks(old)
	if err != nil {
		return err
	}
	tools, err := m.declarePacks(cfg)
	if err != nil {
		return err
	}
	done, err := m.reg.Replace(tools...)
	if err != nil {
		return err
	}
	var add []*tool.Tool
	now := map[string]bool{}
	for _, t := range tools {
		now[t.Name()] = true
		if !slices.Contains(done, t.Name()) && m.sel.takes(t) {
			add = append(add, t)
		}
	}
	if err := m.reg.Register(add...); err != nil {
		return err
	}
	var gone []string
	for _, t := range before {
		if !now[t.Name()] {
			gone = append(gone, t.Name())
		}
	}
	m.reg.Unregister(gone...)
	m.changed()
	return nil
}

// declarePacks declares the search and CKAN tools as cfg configures them.
func (m *serveSettingsManager) declarePacks(cfg *config.Config) ([]*tool.Tool, error) {
	e := *m.env
	e.Config = cfg
	ps, err := loadPackSettings(&e)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	ps.search.BraveLimiter = m.engines.limiter("brave", ps.search.BraveAPIKey, m.engines.braveRate)
	return append(websearch.Tools(ps.search), opendata.Tools(ps.opendata)...), nil
}

// connModelName is how the picker names a connection's model.
func connModelName(c config.ModelConnection) string { return c.Name + ":" + c.Model }

// applyModels gives the agent the environment's models and cfg's
// connections. The environment's default (TOOLPORT_MODEL) stays the
// default; without one, the connection llm.default names, or the first.
func (m *serveSettingsManager) applyModels(cfg *config.Config) error {
	conns, defName, err := cfg.ModelConnections()
	if err != nil {
		return fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	var def *agent.Model
	if m.start.provider != nil {
		def = &agent.Model{Name: m.start.name, Provider: m.start.provider, ContextWindow: m.start.contextWindow}
	}
	more := slices.Clone(m.start.models)
	for _, c := range conns {
		p, err := llm.FromConnection(cfg, c, recordingClient(m.env, "model", nil))
		if err != nil {
			return fmt.Errorf("%w: connection %s: %w", server.ErrSettingsInvalid, c.Name, err)
		}
		am := agent.Model{Name: connModelName(c), Provider: p,
			ContextWindow: llm.ContextWindow(llm.ModelSpec{Provider: c.Provider, Model: c.Model})}
		if def == nil && (defName == "" || defName == c.Name) {
			def = &am
			continue
		}
		more = append(more, am)
	}
	return m.agent.SetModels(def, more)
}

// modelConnection checks what the page sent.
func modelConnection(in server.ModelConnection) (config.ModelConnection, error) {
	c, err := config.ParseModelConnection(map[string]any{"name": in.Name, "provider": in.Provider, "base_url": strings.TrimSpace(in.BaseURL),
		"api_key": strings.TrimSpace(in.APIKey), "model": strings.TrimSpace(in.Model)})
	if err != nil {
		return c, fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	return c, nil
}

// storedKey fills an empty key from the stored connection of that name:
// the page never has the key to send back.
func (m *serveSettingsManager) storedKey(c *config.ModelConnection) {
	if c.APIKey != "" {
		return
	}
	conns, _, _ := m.cfg.Load().ModelConnections()
	for _, old := range conns {
		if old.Name == c.Name && old.Provider == c.Provider {
			c.APIKey = old.APIKey
		}
	}
}

func (m *serveSettingsManager) SaveModel(_ context.Context, in server.ModelConnection) error {
	if strings.TrimSpace(in.Model) == "" {
		return invalid("model must be 1 to 200 characters")
	}
	c, err := modelConnection(in)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.storedKey(&c)
	// A model may quote its key back (an echoing proxy, a prompt
	// injection); the tools' results it then asks for are scrubbed of it.
	m.reg.AddSecrets(c.APIKey)
	cfg, err := m.change(func(root map[string]any) error {
		var list []any
		if old, ok := config.Lookup(root, "llm.connections").([]any); ok {
			list = old
		}
		list = slices.DeleteFunc(slices.Clone(list), func(it any) bool {
			o, _ := it.(map[string]any)
			return o != nil && o["name"] == c.Name
		})
		if len(list) >= config.MaxModelConnections {
			return invalid("at most %d model connections", config.MaxModelConnections)
		}
		if err := config.SetPath(root, "llm.connections", append(list, c.Map())); err != nil {
			return err
		}
		if in.Default {
			return config.SetPath(root, "llm.default", c.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return m.applyModels(cfg)
}

func (m *serveSettingsManager) DeleteModel(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg, err := m.change(func(root map[string]any) error {
		list, _ := config.Lookup(root, "llm.connections").([]any)
		kept := slices.DeleteFunc(slices.Clone(list), func(it any) bool {
			o, _ := it.(map[string]any)
			return o != nil && o["name"] == name
		})
		if len(kept) == len(list) {
			return fmt.Errorf("%w: no model connection named %s", server.ErrSettingsNotFound, name)
		}
		if config.Lookup(root, "llm.default") == name {
			_ = config.SetPath(root, "llm.default", nil)
		}
		if len(kept) == 0 {
			return config.SetPath(root, "llm.connections", nil)
		}
		return config.SetPath(root, "llm.connections", kept)
	})
	if err != nil {
		return err
	}
	return m.applyModels(cfg)
}

func (m *serveSettingsManager) ListModels(ctx context.Context, in server.ModelConnection) ([]string, error) {
	if strings.TrimSpace(in.Model) == "" {
		in.Model = "-" // not needed to list
	}
	c, err := modelConnection(in)
	if err != nil {
		return nil, err
	}
	m.storedKey(&c)
	ids, err := llm.ListModels(ctx, c, recordingClient(m.env, "model", m.client))
	switch {
	case errors.Is(err, llm.ErrNoModelList):
		return nil, fmt.Errorf("%w: %w; type the model's name", server.ErrSettingsUpstream, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %s", server.ErrSettingsUpstream, scrubKey(err.Error(), c.APIKey))
	}
	return ids, nil
}

// scrubKey keeps a key out of an error that might echo it.
func scrubKey(s, key string) string {
	if len(key) >= 4 {
		s = strings.ReplaceAll(s, key, "[REDACTED]")
	}
	return s
}

func (m *serveSettingsManager) AttachMCP(_ context.Context, in server.MCPServerSetting) error {
	decl := map[string]any{}
	if c := strings.TrimSpace(in.Command); c != "" {
		decl["command"] = c
		if len(in.Args) > 0 {
			args := make([]any, len(in.Args))
			for i, a := range in.Args {
				args[i] = a
			}
			decl["args"] = args
		}
	}
	if u := strings.TrimSpace(in.URL); u != "" {
		decl["url"] = u
	}
	if t := strings.TrimSpace(in.Token); t != "" {
		decl["token"] = t
	}
	d, err := config.ParseMCPServer(in.Name, decl)
	if err != nil {
		return fmt.Errorf("%w: %s", server.ErrSettingsInvalid, strings.TrimPrefix(err.Error(), "credentials file: "))
	}
	// Its token and env values are secrets like those read at start
	// (SECURITY.md): scrubbed from the first call of its tools on.
	m.reg.AddSecrets(d.Token)
	for _, v := range d.Env {
		m.reg.AddSecrets(v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.hosts[d.Name]; ok || m.attachedAtStart(d.Name) {
		return invalid("a server named %s is attached already; detach it first", d.Name)
	}
	if _, err := m.change(func(root map[string]any) error {
		return config.SetPath(root, "mcp.servers."+d.Name, decl)
	}); err != nil {
		return err
	}
	// Attached apart from the request, which ends before the server does.
	h, err := mcphost.Attach(context.Background(), m.reg, []mcphost.Server{{Name: d.Name, Command: d.Command, Args: d.Args,
		Env: d.Env, URL: d.URL, Token: d.Token, Timeout: d.Timeout}}, m.hopts)
	if err != nil {
		return fmt.Errorf("%w: %w", server.ErrSettingsInvalid, err)
	}
	m.hosts[d.Name] = h
	m.changed()
	return nil
}

func (m *serveSettingsManager) attachedAtStart(name string) bool {
	if m.host == nil {
		return false
	}
	return slices.ContainsFunc(m.host.Status(), func(s mcphost.Status) bool { return s.Name == name })
}

func (m *serveSettingsManager) DetachMCP(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.change(func(root map[string]any) error {
		if config.Lookup(root, "mcp.servers."+name) == nil {
			return fmt.Errorf("%w: no MCP server named %s", server.ErrSettingsNotFound, name)
		}
		return config.SetPath(root, "mcp.servers."+name, nil)
	}); err != nil {
		return err
	}
	if h, ok := m.hosts[name]; ok {
		delete(m.hosts, name)
		if err := h.Close(); err != nil { // unregisters its tools
			m.logger.Warn("detaching an MCP server", "server", name, "error", err)
		}
		m.changed()
	} else if m.attachedAtStart(name) {
		// One attached at start leaves its host; the others stay connected.
		if err := m.host.Detach(name); err != nil && !errors.Is(err, mcphost.ErrNotAttached) {
			m.logger.Warn("detaching an MCP server", "server", name, "error", err)
		}
		m.changed()
	}
	return nil
}
