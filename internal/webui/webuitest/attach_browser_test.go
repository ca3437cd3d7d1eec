package webuitest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/testexec"
)

// TestAttachFromThePage (issue 32): a person attaches the official
// server-everything over stdio from Settings, and the model uses its tools
// in the next turn, with cards: a read-only tool runs at once, a tool that
// is not read-only waits for the person's Allow in the page and then runs
// in the external server. Detached from the page, its tools leave. axe-core
// finds nothing in Settings with the server attached, light and dark.
// (TestApprovalAgainstServer covers the approval card itself on an
// in-process tool; here the tool is a real external server's.)
func TestAttachFromThePage(t *testing.T) {
	n := testexec.NPMTools(t)
	script := n.File(t, "@modelcontextprotocol/server-everything/dist/index.js")
	if strings.ContainsAny(n.Node+script, " \t") {
		t.Skipf("the page splits a command on spaces; %q or %q holds one", n.Node, script)
	}
	axe := axeSource(t)
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "echo", Events: []servertest.Event{servertest.Text("Asking the attached server."),
			servertest.Call("e1", "everything__echo", `{"message":"שלום from the page"}`)}},
		servertest.Turn{Match: "echo", Step: 1, Events: []servertest.Event{servertest.Text("It echoed the message.")}},
		servertest.Turn{Match: "logging", Events: []servertest.Event{servertest.Call("l1", "everything__toggle-simulated-logging", `{}`)}},
		servertest.Turn{Match: "logging", Step: 1, Events: []servertest.Event{servertest.Text("Simulated logging is on.")}})
	base := serveWithModel(t, ms, "--packs", "web")

	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	dir := artifacts(t, "attach")
	to := 60 * time.Second
	row := `#setup-mcp li[data-server="everything"]`
	b.Do(t, to, attachFromSettings("everything", "command", n.Node+" "+script+" stdio"),
		WaitFor(`document.querySelector(`+jsString(row)+`)?.dataset.connected === 'true'`),
		chromedp.ScrollIntoView(css(row)), Screenshot(t, dir, "desktop-light-settings-attached"),
		chromedp.Evaluate[chromedp.Void](axe))
	if badge := Eval[string](t, b, to, `document.querySelector(`+jsString(row+` .setup-badge`)+`).textContent`); !strings.HasPrefix(badge, "connected, ") {
		t.Errorf("the attached server's badge = %q", badge)
	}
	checkAxe(t, b, to, "settings, server attached")

	// The next turn: the model is offered the server's tools and calls one;
	// its card shows the server's answer.
	text, offered := toolTurn(t, b, to, ms, dir, "everything__echo", "Please echo a greeting", "It echoed the message.", "desktop-light-attached-echo")
	if !strings.Contains(text, "Echo: שלום from the page") {
		t.Errorf("the echo card shows %q, want the server's answer", text)
	}
	// (Opening Settings runs the doctor's model check first: the turn's
	// request is the first that carries the message.)
	if !offered {
		t.Error("the model's first request of the turn after attaching does not offer everything__echo")
	}

	// A tool that is not read-only waits for the person, then runs.
	logging := `document.querySelector('.tool-card[data-tool="everything__toggle-simulated-logging"]')`
	b.Do(t, to, send("Turn on simulated logging"), waitIdle(),
		WaitFor(logging+`?.dataset.status === 'awaiting'`), Screenshot(t, dir, "desktop-light-attached-approval"),
		chromedp.Evaluate[chromedp.Void](axe))
	checkAxe(t, b, to, "approval of an attached server's tool")
	b.Do(t, to, chromedp.Click(css(`.approval-btn[data-decision="allow_once"]`)), waitIdle(),
		WaitFor(logging+`?.dataset.status === 'completed'`),
		WaitFor(lastAssistant(`?.textContent.includes('Simulated logging is on.')`)),
		chromedp.Evaluate[chromedp.Void](logging+`.querySelector('.tool-head').click()`))
	if text := Eval[string](t, b, to, logging+`.querySelector('.tool-content').textContent`); !strings.Contains(text, "Started simulated") {
		t.Errorf("after Allow the card shows %q, want the server's answer", text)
	}

	// Detached from the page: the row and the tools go.
	b.Do(t, to, openSettings(), WaitFor(`!!document.querySelector(`+jsString(row)+`)`),
		chromedp.Click(css(row+` button`)),
		WaitFor(`!document.querySelector(`+jsString(row)+`)`),
		WaitForAsync(`(async () => !(await (await fetch('/api/tools')).text()).includes('everything__'))()`),
		closeSettings())
}

// toolTurn closes Settings, sends prompt, waits for the turn to call tool
// and for the answer to end with reply, opens the tool's card and takes a
// screenshot named shot. It returns the card's content and whether the
// model's first request of the turn (the first carrying prompt) offered
// tool.
func toolTurn(t *testing.T, b *Browser, to time.Duration, ms *servertest.ModelServer, dir, tool, prompt, reply, shot string) (text string, offered bool) {
	t.Helper()
	card := `document.querySelector('.tool-card[data-tool="` + tool + `"]')`
	b.Do(t, to, closeSettings(), send(prompt), waitIdle(),
		WaitFor(card+`?.dataset.status === 'completed'`),
		WaitFor(lastAssistant(`?.textContent.includes(`+jsString(reply)+`)`)),
		chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`),
		Screenshot(t, dir, shot))
	text = Eval[string](t, b, to, card+`.querySelector('.tool-content').textContent`)
	turn := slices.IndexFunc(ms.Requests(), func(r servertest.Request) bool { return strings.Contains(string(r.Body), prompt) })
	return text, turn >= 0 && strings.Contains(string(ms.Requests()[turn].Body), `"`+tool+`"`)
}
