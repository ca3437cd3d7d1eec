package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/toolport/toolport/extract"
	"github.com/toolport/toolport/internal/render"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// A page is rendered in the browser, unasked, when its extraction keeps
// under thinRunes characters and its HTML looks like an app shell (see
// looksLikeAppShell).
const thinRunes = 250

// Below shellTextRunes of visible text, a page with scripts is an app
// shell; below noscriptShellRunes, so is one whose <noscript> asks for
// JavaScript.
const (
	shellTextRunes     = 400
	noscriptShellRunes = 1000
)

// looksLikeAppShell reports whether an HTML document (UTF-8) shows almost
// no text of its own and has scripts to build it: a single-page app's
// shell, such as a root <div>, a bundle and "enable JavaScript".
func looksLikeAppShell(doc []byte) bool {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var scripts, visible int
	var skip []string // open script, style, noscript, template elements
	askJS := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return scripts > 0 && visible < shellTextRunes || askJS && visible < noscriptShellRunes
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script":
				scripts++
				skip = append(skip, "script")
			case "style", "noscript", "template":
				skip = append(skip, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if n := len(skip); n > 0 && skip[n-1] == string(name) {
				skip = skip[:n-1]
			}
		case html.TextToken:
			text := z.Text()
			switch {
			case len(skip) == 0:
				visible += utf8.RuneCount(bytes.Join(bytes.Fields(text), []byte(" ")))
			case skip[len(skip)-1] == "noscript" && bytes.Contains(bytes.ToLower(text), []byte("javascript")):
				askJS = true
			}
		}
	}
}

// Notices of a page that cannot be rendered here: an app shell, and a
// page the call asked to render.
const (
	needsJSNotice = "This page builds its content with JavaScript, and this web_fetch has no browser to run it " +
		"(the operator can set TOOLPORT_FETCH_BROWSER to a Chromium binary): the content is only what the HTML holds without it."
	noBrowserNotice = "render was asked for, but this web_fetch has no browser to run JavaScript " +
		"(the operator can set TOOLPORT_FETCH_BROWSER to a Chromium binary): the content is what the HTML holds without it."
)

// renderJS renders the page in the browser and extracts the result. With
// no browser it returns fallback (what the plain HTML gave) with a notice.
func (f *fetcher) renderJS(ctx context.Context, resp *safehttp.Response, info *pageInfo, fallback *extract.Document, shell bool) (title, markdown string, err error) {
	if f.browser == nil {
		info.notice = noBrowserNotice
		if shell {
			info.notice = needsJSNotice
		}
		if fallback == nil {
			return "", "", nil
		}
		info.canonical, info.lang, info.siteName = fallback.Canonical, fallback.Lang, fallback.SiteName
		return fallback.Title, fallback.Markdown, nil
	}
	tool.ReportProgress(ctx, tool.Progress{Done: 1, Total: 2, Message: "rendering in a browser"})
	res, err := f.browser.Render(ctx, renderPage(resp))
	if err != nil {
		return "", "", renderError(ctx, err, resp)
	}
	doc, err := extract.Extract(ctx, res.HTML, resp.URL, extract.Options{ContentLanguage: resp.Header.Get("Content-Language")})
	switch {
	case errors.Is(err, extract.ErrNoContent):
		return "", "", tool.Errorf(tool.CodeParse, "The page at %s has no readable content, even after running its scripts in a browser", hostPath(resp))
	case err != nil && ctx.Err() != nil:
		return "", "", ctx.Err()
	case err != nil:
		return "", "", tool.Errorf(tool.CodeParse, "Failed to parse the rendered page: %v", err)
	}
	info.canonical, info.lang, info.siteName, info.rendered = doc.Canonical, doc.Lang, doc.SiteName, true
	info.notice = coverageNotice(doc)
	return doc.Title, doc.Markdown, nil
}

// renderRaw renders the page and returns its DOM as HTML.
func (f *fetcher) renderRaw(ctx context.Context, resp *safehttp.Response, info *pageInfo) ([]byte, error) {
	tool.ReportProgress(ctx, tool.Progress{Done: 1, Total: 2, Message: "rendering in a browser"})
	res, err := f.browser.Render(ctx, renderPage(resp))
	if err != nil {
		return nil, renderError(ctx, err, resp)
	}
	info.rendered = true
	return bytes.ToValidUTF8(res.HTML, []byte("\uFFFD")), nil
}

// renderError maps the renderer's failures to the contract's codes.
func renderError(ctx context.Context, err error, resp *safehttp.Response) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, render.ErrBusy):
		return &tool.Error{Code: tool.CodeRateLimit, Retryable: true, Err: err,
			Message: "web_fetch's browser is busy rendering other pages; try again shortly"}
	case errors.Is(err, render.ErrTimeout):
		return &tool.Error{Code: tool.CodeTimeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("Rendering %s in a browser took too long", hostPath(resp))}
	case errors.Is(err, render.ErrTooLarge):
		return &tool.Error{Code: tool.CodeUnsupported, Err: err,
			Message: fmt.Sprintf("The rendered page at %s is too large", hostPath(resp))}
	}
	// The browser failed to start or to load the page: an operator's problem
	// more than the page's, and not worth a retry.
	return &tool.Error{Code: tool.CodeUnsupported, Err: err,
		Message: "Failed to render the page in a browser: " + strings.TrimPrefix(err.Error(), "render: ")}
}

// renderPage is the fetched document as the renderer takes it, with the site's
// Content-Security-Policy.
func renderPage(resp *safehttp.Response) render.Page {
	return render.Page{URL: resp.URL, ContentType: resp.ContentType, Body: resp.Body, CSP: resp.Header.Values("Content-Security-Policy")}
}
