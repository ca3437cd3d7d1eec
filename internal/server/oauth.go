package server

import (
	"errors"
	"html/template"
	"net/http"

	"github.com/toolport/toolport/internal/mcphost"
)

// oauthPage is what the browser shows when the authorization server sends
// it back: the outcome, and the way back to the page.
var oauthPage = template.Must(template.New("oauth").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Toolport: authorization</title></head>
<body><main><h1>{{.Title}}</h1><p>{{.Message}}</p><p><a href="/">Back to Toolport</a></p></main></body></html>
`))

// oauthCallback is the redirect URI of attached MCP servers' OAuth flows
// (mcphost.OAuth). The authorization server's redirect is a top-level
// navigation from another site that carries no bearer token, so the route
// is not behind the token: it answers only a client on loopback (the
// redirect URI is a loopback URL, so the user's browser is on this
// machine), only GET (the guard's cross-origin rule lets a navigation
// through), and acts only when the state matches a pending flow, once:
// a forged or replayed callback changes nothing.
func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the URL holds the code
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
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = oauthPage.Execute(w, page)
}
