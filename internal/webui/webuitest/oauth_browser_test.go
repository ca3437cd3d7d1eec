package webuitest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/mcphost/oauthtest"
	"github.com/toolport/toolport/internal/server/servertest"
)

// TestOAuthFromThePage (issue 32): a person attaches an HTTP MCP server
// that needs OAuth (oauthtest's, CONSTRUCTED from the RFCs) from Settings
// of the real `toolport serve`. The row says it needs authorization and
// offers an Authorize link; clicking it opens the authorization server in
// another tab, which approves and sends that tab to serve's
// /oauth/callback. Back on the page, without reopening Settings, the row
// shows the server connected with its tools, and the next chat turn calls
// one of them, with its card. axe-core finds nothing in the
// needs-authorization state (light).
func TestOAuthFromThePage(t *testing.T) {
	axe := axeSource(t)
	as := oauthtest.NewAS(t)
	notes, _ := oauthtest.ProtectedServer(t, as)
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "who am I", Events: []servertest.Event{servertest.Text("Asking the notes server."),
			servertest.Call("w1", "notes__whoami", `{}`)}},
		servertest.Turn{Match: "who am I", Step: 1, Events: []servertest.Event{servertest.Text("The server says you are the test user.")}})
	base := serveWithModel(t, ms, "--packs", "web")

	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	dir := artifacts(t, "oauth")
	to := 60 * time.Second
	row := `#setup-mcp li[data-server="notes"]`
	authorize := row + ` a.setup-authorize`
	b.Do(t, to, attachFromSettings("notes", "url", notes.URL+"/mcp"),
		WaitFor(`!!document.querySelector(`+jsString(authorize)+`)`),
		chromedp.ScrollIntoView(css(row)), Screenshot(t, dir, "desktop-light-settings-needs-authorization"),
		chromedp.Evaluate[chromedp.Void](axe))
	if badge := Eval[string](t, b, to, `document.querySelector(`+jsString(row+` .setup-badge`)+`).textContent`); badge != "needs authorization" {
		t.Errorf("the badge = %q; want needs authorization", badge)
	}
	if href := Eval[string](t, b, to, `document.querySelector(`+jsString(authorize)+`).href`); !strings.HasPrefix(href, as.Srv.URL+"/authorize?") {
		t.Fatalf("the Authorize link = %q; want the authorization server's endpoint", href)
	}
	reportAxe(t, b, to, "settings, needs authorization")

	// The click opens another tab; the authorization server approves and
	// sends it to serve's callback.
	opened := chromedp.WaitNewTarget(b.Ctx, func(i *target.Info) bool { return strings.Contains(i.URL, "/oauth/callback") })
	b.Do(t, to, chromedp.Click(css(authorize)))
	var id target.ID
	select {
	case v, ok := <-opened:
		if !ok {
			t.Fatal("no tab was opened")
		}
		id = v
	case <-time.After(to): // a hang guard, not a timing
		t.Fatal("the Authorize link did not end at serve's /oauth/callback in a new tab")
	}
	tabCtx, closeTab := chromedp.NewContext(b.Ctx, chromedp.WithTargetID(id))
	defer closeTab()
	callback := &Browser{Ctx: tabCtx}
	// The page the tab ends at: serve's callback, saying so. (Checked in
	// the tab's own wait: the harness's Eval does not answer in a tab it
	// did not open.)
	callback.Do(t, to, WaitFor(`document.readyState === 'complete' && location.href.startsWith(`+jsString(base+"/oauth/callback?")+`) && `+
		`document.body.textContent.includes('MCP server notes is authorized')`),
		Screenshot(t, dir, "desktop-light-callback"))
	closeTab()

	// Back on the page: Settings, still open, shows the server connected.
	b.Do(t, to, WaitFor(`document.querySelector(`+jsString(row)+`)?.dataset.connected === 'true'`),
		chromedp.ScrollIntoView(css(row)), Screenshot(t, dir, "desktop-light-settings-authorized"))
	if badge := Eval[string](t, b, to, `document.querySelector(`+jsString(row+` .setup-badge`)+`).textContent`); !strings.HasPrefix(badge, "connected, ") {
		t.Errorf("the badge after authorizing = %q", badge)
	}
	if n := Eval[int](t, b, to, `document.querySelectorAll(`+jsString(authorize)+`).length`); n != 0 {
		t.Error("the Authorize link is still shown")
	}
	if status := Eval[string](t, b, to, `document.getElementById('setup-status').textContent`); !strings.Contains(status, "notes is connected") {
		t.Errorf("the status line = %q; want it to say the server is connected", status)
	}

	// The next turn calls the server's tool, with the new tokens; its card
	// shows the server's answer.
	text, offered := toolTurn(t, b, to, ms, dir, "notes__whoami", "Please ask: who am I?", "The server says you are the test user.", "desktop-light-oauth-tool-card")
	if !strings.Contains(text, "you are the test user") {
		t.Errorf("the card shows %q, want the server's answer", text)
	}
	if !offered {
		t.Error("the model's first request of the turn after authorizing does not offer notes__whoami")
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("authorizations = %d; want 1", n)
	}
}
