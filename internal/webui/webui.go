// Package webui serves the Discover Chat web page: a single HTML document
// with its stylesheet and ES modules, embedded in the binary so that
// `toolport serve` needs no build step and no files on disk.
//
// The page talks to the chat server only through the HTTP API described in
// docs/api.md (GET /api/info, the /api/conversations resources and the SSE
// stream of POST /api/conversations/{id}/messages). Everything the page shows
// that comes from a model or a tool is treated as untrusted text: the scripts
// build DOM nodes with textContent and never assign HTML strings, and the
// Content-Security-Policy forbids inline scripts, inline styles and eval, so a
// mistake in the scripts still cannot run injected code.
//
// A tool call that waits for the person's approval (the stream's
// approval_required event, or GET /api/conversations/{id}/approvals when a
// conversation is opened) is shown in its tool card with what it will do,
// its arguments and three decisions; once every waiting call of the answer
// has one, they are posted together and the resumed turn streams into the
// same answer through the same reader as a message's. A tool the page has no
// renderer for (an attached MCP server's, named "<server>__<tool>") gets the
// generic card: its text blocks and, where its structured content holds a
// list of flat objects, a bounded table.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// ContentSecurityPolicy is the policy sent with the page. Scripts, styles and
// connections are limited to the page's own origin; images may also come from
// https: (album artwork) and data: URLs. No inline code, no eval, no framing,
// no <base> and no form submissions.
const ContentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self' https: data:; " +
	"connect-src 'self'; " +
	"object-src 'none'; " +
	"frame-ancestors 'none'; " +
	"base-uri 'none'; " +
	"form-action 'none'"

// ReferrerPolicy keeps conversation URLs from leaking to the sites that the
// page links to or loads artwork from.
const ReferrerPolicy = "no-referrer"

// AssetPrefix is the URL path under which the page's stylesheet, scripts and
// icons are served.
const AssetPrefix = "/assets/"

//go:embed static
var staticFS embed.FS

// SecurityHeaders wraps next so that every response carries the page's
// security headers: the Content-Security-Policy, X-Content-Type-Options
// nosniff, the Referrer-Policy and X-Frame-Options DENY (for browsers that do
// not know frame-ancestors). The chat server can wrap its whole mux with it;
// the policy is harmless on JSON and event-stream responses.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", ReferrerPolicy)
	h.Set("X-Frame-Options", "DENY")
}

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// handler serves the page at "/" and the assets under AssetPrefix.
type handler struct {
	assets map[string]asset // keyed by URL path
}

// Handler returns the handler for the web page. It serves the HTML document
// at "/" (any query string, no other path) and the files under AssetPrefix,
// answers 404 for every other path and 405 for methods other than GET and
// HEAD. Mount it at "/" after the more specific /api/ routes.
//
// Every response is sent with Cache-Control: no-cache and a strong ETag (a
// hash of the content), so browsers revalidate cheaply (304) and never run a
// stale script against a newer server after an upgrade.
func Handler() http.Handler {
	h := &handler{assets: make(map[string]asset)}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return fmt.Errorf("webui: read embedded %s: %w", p, err)
		}
		sum := sha256.Sum256(body)
		a := asset{
			body:        body,
			contentType: contentType(p),
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
		}
		rel := strings.TrimPrefix(p, "static/")
		if rel == "index.html" {
			h.assets["/"] = a
		} else {
			h.assets[AssetPrefix+rel] = a
		}
		return nil
	})
	if err != nil {
		// The files are compiled into the binary: failing to read them is a
		// build defect, not a runtime condition.
		panic(err)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := h.assets[r.URL.Path]
	if !ok {
		setSecurityHeaders(w.Header())
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		setSecurityHeaders(w.Header())
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	setSecurityHeaders(hd)
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	// ServeContent answers If-None-Match with 304 and handles HEAD and Range;
	// the zero time keeps it from sending Last-Modified (the ETag is the
	// validator).
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// contentType maps the extensions the page uses to their media types. The
// list is explicit so that the answer does not depend on the host's MIME
// tables, and unknown extensions are sent as opaque bytes.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	case ".webmanifest":
		return "application/manifest+json"
	default:
		return "application/octet-stream"
	}
}
