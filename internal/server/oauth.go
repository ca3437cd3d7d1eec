package server

import (
	"errors"
	"net/http"

	"github.com/toolport/toolport/internal/mcphost"
)

// oauthCallback is the redirect URI of attached MCP servers' OAuth flows
// (mcphost.OAuth). The authorization server's redirect is a top-level
// navigation from another site that carries no bearer token, so the route
// is not behind the token: it answers only a client on loopback (the
// redirect URI is a loopback URL, so the user's browser is on this
// machine), only GET (the guard's cross-origin rule lets a navigation
// through), and acts only when the state matches a pending flow, once:
// a forged or replayed callback changes nothing.
func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request) {
	if !remoteLoopback(r) {
		refuse(w, r, http.StatusForbidden, "FORBIDDEN", "the OAuth callback answers only this machine's browser")
		return
	}
	server, err := s.cfg.OAuth.Callback(r.Context(), r.URL.Query())
	page := struct{ Title, Message string }{"Authorized", "MCP server " + server + " is authorized; its tools are ready. You can close this tab."}
	status := http.StatusOK
	switch {
	case errors.Is(err, mcphost.ErrUnknownState):
		status, page.Title, page.Message = http.StatusBadRequest, "Not authorized", err.Error()
	case err != nil:
		s.logger.WarnContext(r.Context(), "an MCP server's authorization failed", "server", server, "error", err)
		status, page.Title, page.Message = http.StatusBadRequest, "Not authorized", err.Error()
	}
	mcphost.WriteCallbackPage(w, status, page.Title, page.Message, "/")
}
