package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
)

// Settings changes the server's configuration while it runs (the page's
// Settings view): model connections, search keys, the CKAN portal, the
// TIDAL client id and attached MCP servers. internal/cli implements it over
// the credentials file; the server only speaks HTTP over it. Every method
// returns an error wrapping [ErrSettingsInvalid] for input it refuses (its
// message is shown as it is, so it never quotes a value), [ErrSettingsNotFound]
// for a name that is not there, and [ErrSettingsUpstream] when a server it
// asked (a model listing) failed.
type Settings interface {
	// View is what the page shows: every key masked, never its value.
	View(ctx context.Context) (any, error)
	// SetKeys sets the named keys ("" clears one); keys not named stay.
	SetKeys(ctx context.Context, keys map[string]string) error
	// SaveModel adds or replaces a model connection; an empty APIKey keeps
	// the stored key of a connection of that name.
	SaveModel(ctx context.Context, m ModelConnection) error
	DeleteModel(ctx context.Context, name string) error
	// ListModels asks a connection's server for its models.
	ListModels(ctx context.Context, m ModelConnection) ([]string, error)
	// AttachMCP attaches an MCP server now and keeps it in the file.
	AttachMCP(ctx context.Context, s MCPServerSetting) error
	DetachMCP(ctx context.Context, name string) error
}

// Errors of [Settings].
var (
	ErrSettingsInvalid  = errors.New("invalid setting")
	ErrSettingsNotFound = errors.New("no such setting")
	ErrSettingsUpstream = errors.New("the server asked failed")
)

// ModelConnection is a model connection as the page sends it.
type ModelConnection struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl"`
	APIKey   string `json:"apiKey"`
	Model    string `json:"model"`
	// Default makes it the model of conversations that chose none.
	Default bool `json:"default"`
}

// MCPServerSetting is an MCP server to attach: Command (with Args) or URL
// (with an optional bearer Token).
type MCPServerSetting struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
	Token   string   `json:"token"`
}

// settingName is the rule of the names in the routes' paths.
var settingName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,32}$`)

// settingsRoutes registers /api/settings. They change what the server
// runs and where its keys go, so besides the rules of every route (Host,
// cross-origin, JSON bodies, the token when one is set) they answer only
// to the token or, on a server without one, to a client on loopback: a
// reverse proxy that forwards others without a token is refused too.
func (s *Server) settingsRoutes(api func(string, http.HandlerFunc)) {
	if s.cfg.Settings == nil {
		return
	}
	route := func(pattern string, h http.HandlerFunc) { api(pattern, s.settingsAuth(h)) }
	route("GET /api/settings", s.settingsView)
	route("PUT /api/settings/keys", s.settingsKeys)
	route("POST /api/settings/models", s.settingsSaveModel)
	route("POST /api/settings/models/list", s.settingsListModels)
	route("DELETE /api/settings/models/{name}", s.settingsDeleteModel)
	route("POST /api/settings/mcp", s.settingsAttach)
	route("DELETE /api/settings/mcp/{name}", s.settingsDetach)
}

// settingsAuth admits a request that carried the token (auth ran before
// it) or, without a token configured, one from a loopback address.
func (s *Server) settingsAuth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token == "" && !remoteLoopback(r) {
			refuse(w, r, http.StatusForbidden, "FORBIDDEN",
				"settings can be changed only from this machine (loopback) or with the server's token (TOOLPORT_API_TOKEN)")
			return
		}
		h(w, r)
	}
}

// remoteLoopback reports whether the request came from a loopback address.
func remoteLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) settingsView(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Settings.View(r.Context())
	if err != nil {
		s.settingsError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// Bounds of the settings bodies: a few keys and URLs.
const (
	maxSettingKeys  = 16
	maxSettingValue = 4096
	maxMCPArgs      = 64
)

func (s *Server) settingsKeys(w http.ResponseWriter, r *http.Request) {
	var in map[string]*string
	if !s.decodeBody(w, r, &in, false) {
		return
	}
	if len(in) == 0 || len(in) > maxSettingKeys {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "send an object of 1 to 16 keys to set")
		return
	}
	keys := make(map[string]string, len(in))
	for k, v := range in {
		if v == nil {
			continue // unchanged
		}
		if len(*v) > maxSettingValue {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", "the value of "+clipName(k)+" is longer than 4096 characters")
			return
		}
		keys[k] = *v
	}
	if err := s.cfg.Settings.SetKeys(r.Context(), keys); err != nil {
		s.settingsError(w, r, err)
		return
	}
	s.settingsView(w, r)
}

func (s *Server) settingsSaveModel(w http.ResponseWriter, r *http.Request) {
	var in ModelConnection
	if !s.decodeBody(w, r, &in, false) {
		return
	}
	if err := s.cfg.Settings.SaveModel(r.Context(), in); err != nil {
		s.settingsError(w, r, err)
		return
	}
	s.settingsView(w, r)
}

func (s *Server) settingsListModels(w http.ResponseWriter, r *http.Request) {
	var in ModelConnection
	if !s.decodeBody(w, r, &in, false) {
		return
	}
	models, err := s.cfg.Settings.ListModels(r.Context(), in)
	if err != nil {
		s.settingsError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) settingsDeleteModel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !settingName.MatchString(name) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "a connection's name is 1 to 32 letters, digits or dashes")
		return
	}
	if err := s.cfg.Settings.DeleteModel(r.Context(), name); err != nil {
		s.settingsError(w, r, err)
		return
	}
	s.settingsView(w, r)
}

func (s *Server) settingsAttach(w http.ResponseWriter, r *http.Request) {
	var in MCPServerSetting
	if !s.decodeBody(w, r, &in, false) {
		return
	}
	if len(in.Args) > maxMCPArgs {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "at most 64 arguments")
		return
	}
	if err := s.cfg.Settings.AttachMCP(r.Context(), in); err != nil {
		s.settingsError(w, r, err)
		return
	}
	s.settingsView(w, r)
}

func (s *Server) settingsDetach(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !settingName.MatchString(name) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "a server's name is 1 to 32 letters, digits or dashes")
		return
	}
	if err := s.cfg.Settings.DetachMCP(r.Context(), name); err != nil {
		s.settingsError(w, r, err)
		return
	}
	s.settingsView(w, r)
}

// settingsError answers a Settings failure. Messages of refused input and
// of failed upstreams are the implementation's, which quote no value;
// anything else is logged (its message names files, never values) and
// answered as INTERNAL.
func (s *Server) settingsError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrSettingsInvalid):
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
	case errors.Is(err, ErrSettingsNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", err.Error())
	case errors.Is(err, ErrSettingsUpstream):
		writeError(w, http.StatusBadGateway, "UPSTREAM", err.Error())
	case errors.Is(err, context.Canceled):
	default:
		s.logger.ErrorContext(r.Context(), "settings failed", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "the settings could not be changed; see the server's log")
	}
}

// clipName bounds a key name echoed in an error.
func clipName(k string) string {
	if len(k) > 40 {
		return k[:40] + "…"
	}
	return k
}
