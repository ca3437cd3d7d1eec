package mcphost

import (
	"html"
	"net/http"
)

// WriteCallbackPage answers the browser an authorization server sent back
// to a redirect URI: the outcome in a small page, with a link to back when
// it is not empty. Both toolport serve's /oauth/callback and `toolport mcp
// auth` answer with it. The page is built with html.EscapeString rather
// than html/template, which would make every method of every type
// reachable to the linker (binary size, issue "lean").
func WriteCallbackPage(w http.ResponseWriter, status int, title, message, back string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the URL holds the code
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	link := ""
	if back != "" {
		link = `<p><a href="` + html.EscapeString(back) + `">Back to Toolport</a></p>`
	}
	_, _ = w.Write([]byte(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Toolport: authorization</title></head>
<body><main><h1>` + html.EscapeString(title) + `</h1><p>` + html.EscapeString(message) + `</p>` + link + `</main></body></html>
`))
}
