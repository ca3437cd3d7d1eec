package webuitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The approval card and the generic card, against the fake API. Its
// approval endpoints follow docs/api.md: a turn that stops with
// approval_required, GET …/approvals listing the waiting calls, and POST
// …/approvals resuming the turn in the same assistant message. The events
// and results are CONSTRUCTED from docs/api.md and the shapes of
// internal/agent (ApprovalRequired, the USER_DENIED result) and
// internal/mcphost (Output).

const (
	// approvalPrompt's turn stops for approval of savePlaylistToTidal.
	approvalPrompt = "Save the playlist to TIDAL"
	// twoApprovalsPrompt's turn stops for approval of two calls.
	twoApprovalsPrompt = "Save both playlists to TIDAL"
	// genericPrompt's turn calls an attached MCP server's tool.
	genericPrompt = "List the files in /data"
)

// decision is one decision of a POST …/approvals body.
type decision struct {
	ToolUseID string `json:"toolUseId"`
	Decision  string `json:"decision"`
}

// approvalEvent is the approval_required event of approvalPrompt's call
// (CONSTRUCTED: the agent's wording for a TIDAL account tool).
func approvalEvent() step {
	return ev("type", "approval_required", "toolUseId", "toolu_ap1", "tool", "savePlaylistToTidal",
		"title", "Save playlist to TIDAL", "arguments", map[string]any{"playlistId": "pl-rainy-days", "note": "שירים לימי גשם"},
		"what", `The model asks to run "Save playlist to TIDAL" (savePlaylistToTidal) with the arguments shown. It acts on your behalf outside Toolport.`)
}

// genericResult is the envelope of an attached filesystem server's
// list_directory (CONSTRUCTED in mcphost.Output's shape): a text block and
// structured content holding an array of flat objects.
func genericResult() map[string]any {
	return map[string]any{
		"success": true, "summary": "3 entries in /data", "durationMs": 12, "server": "files",
		"content": []any{map[string]any{"type": "text", "text": "[FILE] notes.txt\n[FILE] שירים.csv\n[DIR] archive"}},
		"structuredContent": map[string]any{"entries": []any{
			map[string]any{"name": "notes.txt", "type": "file", "size": 120},
			map[string]any{"name": "שירים.csv", "type": "file", "size": 2048},
			map[string]any{"name": "archive", "type": "directory", "size": nil},
		}},
	}
}

func (f *fakeAPI) pendingApprovals(w http.ResponseWriter, r *http.Request) {
	c, ok := f.lockConv(w, r)
	if !ok {
		return
	}
	defer f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"approvals": append([]map[string]any{}, c.pending...)})
}

// approve resumes a turn stopped for approval: allowed calls run, a denied
// one gets the USER_DENIED error, then the model's text; all in the
// assistant message that made the calls.
func (f *fakeAPI) approve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Decisions []decision `json:"decisions"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil {
		apiError(w, 400, "BAD_REQUEST", "bad JSON")
		return
	}
	c, ok := f.lockConv(w, r)
	if !ok {
		return
	}
	if len(c.pending) == 0 {
		f.mu.Unlock()
		apiError(w, 409, "CONFLICT", "no tool call is waiting for approval in this conversation")
		return
	}
	decided := map[string]string{}
	for _, d := range body.Decisions {
		if !slices.Contains([]string{"allow_once", "allow_always", "deny"}, d.Decision) {
			f.mu.Unlock()
			apiError(w, 400, "BAD_REQUEST", "unknown decision")
			return
		}
		decided[d.ToolUseID] = d.Decision
	}
	for _, p := range c.pending {
		if decided[p["toolUseId"].(string)] == "" || len(decided) != len(c.pending) {
			f.mu.Unlock()
			apiError(w, 400, "BAD_REQUEST", "the decisions do not match the waiting calls")
			return
		}
	}
	f.decisions = append(f.decisions, body.Decisions)
	pending := c.pending
	c.pending = nil
	msg := c.Messages[len(c.Messages)-1]
	userID := c.Messages[len(c.Messages)-2].ID
	convID := c.ID
	f.mu.Unlock()

	var steps []step
	denied := false
	for _, p := range pending {
		id := p["toolUseId"].(string)
		steps = append(steps, ev("type", "tool_call_start", "toolCallId", id, "toolName", p["tool"], "input", p["arguments"]))
		if decided[id] == "deny" {
			denied = true
			steps = append(steps, ev("type", "tool_call_error", "toolCallId", id, "errorCode", "USER_DENIED", "retryable", false, "wasRetried", false,
				"error", fmt.Sprintf("The user denied the call of %s: it did not run and nothing was changed.", p["tool"])))
			continue
		}
		res := map[string]any{"success": true, "summary": "Saved “Rainy days” to TIDAL (2 tracks)", "durationMs": 640,
			"title": "Rainy days", "url": "https://tidal.com/browse/playlist/rainy", "added": 2, "_approval": decided[id]}
		steps = append(steps, ev("type", "tool_call_end", "toolCallId", id, "summary", res["summary"], "durationMs", 640, "result", res))
	}
	if denied {
		steps = append(steps, words("I did not save it, as you asked.", 20*time.Millisecond)...)
	} else {
		steps = append(steps, words("Done: the playlist is on your TIDAL account.", 20*time.Millisecond)...)
	}
	steps = append(steps, ev("type", "message_end", "usage", map[string]int{"inputTokens": 600, "outputTokens": 60}, "stopReason", "end_turn"))

	send := eventStream(w)
	send(map[string]any{"type": "message_start", "messageId": msg.ID, "conversationId": convID, "userMessageId": userID})
	for _, st := range steps {
		if st.pause > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(st.pause):
			}
			continue
		}
		f.store(msg, st.ev)
		send(st.ev)
	}
}

// approvalCard is the card of approvalPrompt's call in the last answer.
const approvalCard = `document.querySelector('#messages > li:last-child .tool-card[data-tool="savePlaylistToTidal"]')`

// awaitApproval sends the prompt whose call waits for approval and waits
// for its card.
//
// The card is awaited first, then the end of the stream: the card turns
// "awaiting" while the answer streams, and the page moves the keyboard to
// its first decision when the stream ends. Waiting for idle first could
// pass before the stream began (CI under load saw the focus not yet moved).
func awaitApproval() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(send(approvalPrompt), WaitFor(approvalCard+`?.dataset.status === 'awaiting'`), waitIdle())
}

// TestApprovalCard checks the card of a call waiting for approval: it
// appears on the approval_required event with the tool's title, what will
// happen and the arguments; a decision is posted as the API wants it and the
// resumed turn streams into the same answer; a reload shows a pending card
// again.
func TestApprovalCard(t *testing.T) {
	for _, tc := range []struct {
		name       string
		button     string // data-decision of the button pressed
		wantStatus string // the card's status after the resumed turn
		wantText   string // the resumed turn's text
	}{
		{"allow once", "allow_once", "completed", "Done: the playlist is on your TIDAL account."},
		{"always for this conversation", "allow_always", "completed", "Done: the playlist is on your TIDAL account."},
		{"deny", "deny", "failed", "I did not save it, as you asked."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI("", true, "")
			srv := api.server(t)
			b := openPage(t, srv.URL, Options{})
			to := 30 * time.Second
			b.Do(t, to, awaitApproval())
			card := Eval[struct {
				Head, What, Args, Badge string
				Buttons                 []string
				Labelled, Focused       bool
				Answers                 int
			}](t, b, to, `(() => { const c = `+approvalCard+`; const g = c.querySelector('.approval');
				return {Head: g.querySelector('.approval-head').textContent, What: g.querySelector('.approval-what').textContent,
					Args: g.querySelector('.approval-args').textContent, Badge: c.querySelector('.badge.status').textContent,
					Buttons: [...g.querySelectorAll('button')].map(b => b.dataset.decision + ':' + b.textContent),
					Labelled: g.getAttribute('role') === 'group' && document.getElementById(g.getAttribute('aria-labelledby')) === g.querySelector('.approval-head'),
					Focused: document.activeElement === g.querySelector('button'),
					Answers: document.querySelectorAll('#messages > li.msg-assistant').length}; })()`)
			if !strings.Contains(card.Head, "Save playlist to TIDAL") || !strings.Contains(card.What, "acts on your behalf") ||
				!strings.Contains(card.Args, "pl-rainy-days") || !strings.Contains(card.Args, "שירים לימי גשם") || card.Badge != "Needs your approval" {
				t.Errorf("approval card = %+v, want the title, what it does, the arguments and the status", card)
			}
			if want := []string{"allow_once:Allow once", "allow_always:Always for this conversation", "deny:Deny"}; !slices.Equal(card.Buttons, want) {
				t.Errorf("buttons = %q, want %q", card.Buttons, want)
			}
			if !card.Labelled || !card.Focused {
				t.Errorf("the card is a group labelled by its heading: %v; the keyboard is on its first decision: %v", card.Labelled, card.Focused)
			}

			// The decision is taken with the keyboard.
			b.Do(t, to, chromedp.Focus(css(`.approval-btn[data-decision="`+tc.button+`"]`)), chromedp.KeyEvent("\r"), waitIdle(),
				WaitFor(approvalCard+`?.dataset.status === '`+tc.wantStatus+`'`),
				WaitFor(lastAssistant(`?.textContent.includes('`+tc.wantText+`')`)))
			api.mu.Lock()
			got := slices.Clone(api.decisions)
			api.mu.Unlock()
			if want := [][]decision{{{"toolu_ap1", tc.button}}}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("posted decisions = %v, want %v", got, want)
			}
			after := Eval[struct {
				Answers, Approvals int
				History            string
			}](t, b, to, `({Answers: document.querySelectorAll('#messages > li.msg-assistant').length,
				Approvals: document.querySelectorAll('.approval').length, History: `+approvalCard+`.dataset.statusHistory})`)
			if after.Answers != card.Answers || after.Approvals != 0 || after.History != "awaiting executing "+tc.wantStatus {
				t.Errorf("after the decision: %+v, want the same %d answer(s), no approval left, status awaiting → executing → %s", after, card.Answers, tc.wantStatus)
			}
		})
	}
}

// TestApprovalSurvivesReload checks that a conversation opened while a
// call waits shows its card again (GET …/approvals), and that deciding
// there resumes the turn.
func TestApprovalSurvivesReload(t *testing.T) {
	api := newFakeAPI("", true, "")
	srv := api.server(t)
	b := openPage(t, srv.URL, Options{})
	to := 30 * time.Second
	b.Do(t, to, awaitApproval(),
		chromedp.Reload(), waitReady(), WaitFor(`document.querySelectorAll('#messages > li').length === 2`),
		WaitFor(approvalCard+`?.dataset.status === 'awaiting'`))
	if n := Eval[int](t, b, to, `document.querySelectorAll('.approval button:not([disabled])').length`); n != 3 {
		t.Errorf("the reloaded card has %d enabled decisions, want 3", n)
	}
	b.Do(t, to, chromedp.Click(css(`.approval-btn[data-decision="allow_once"]`)), waitIdle(),
		WaitFor(approvalCard+`?.dataset.status === 'completed'`),
		WaitFor(lastAssistant(`?.textContent.includes('Done: the playlist is on your TIDAL account.')`)))
	api.mu.Lock()
	defer api.mu.Unlock()
	if want := [][]decision{{{"toolu_ap1", "allow_once"}}}; fmt.Sprint(api.decisions) != fmt.Sprint(want) {
		t.Errorf("posted decisions = %v, want %v", api.decisions, want)
	}
}

// TestGenericCard checks the card of a tool the page has no renderer for
// (an attached MCP server's): its name and server, its arguments, the
// result's text, and the structured array of flat objects as a table.
func TestGenericCard(t *testing.T) {
	srv := newFakeAPI("", true, "").server(t)
	b := openPage(t, srv.URL, Options{})
	to := 30 * time.Second
	card := `document.querySelector('.tool-card[data-tool="files__list_directory"]')`
	b.Do(t, to, send(genericPrompt), waitIdle(),
		WaitFor(card+`?.dataset.status === 'completed'`), chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`))
	got := Eval[struct {
		Name, Input, Text, Caption string
		Head                       []string
		Rows                       [][]string
	}](t, b, to, `(() => { const c = `+card+`;
		return {Name: c.querySelector('.tool-name').textContent, Input: c.querySelector('.tool-input').textContent,
			Text: c.querySelector('.generic-text').textContent, Caption: c.querySelector('.generic-table caption').textContent,
			Head: [...c.querySelectorAll('.generic-table th')].map(th => th.textContent),
			Rows: [...c.querySelectorAll('.generic-table tbody tr')].map(tr => [...tr.children].map(td => td.textContent))}; })()`)
	if got.Name != "list_directory (files)" || !strings.Contains(got.Input, "/data") || !strings.Contains(got.Text, "[DIR] archive") || got.Caption != "entries" {
		t.Errorf("generic card = %+v", got)
	}
	// The columns are the objects' keys in their order (encoding/json sorts them).
	if want := []string{"name", "size", "type"}; !slices.Equal(got.Head, want) {
		t.Errorf("table head = %q, want %q", got.Head, want)
	}
	want := [][]string{{"notes.txt", "120", "file"}, {"שירים.csv", "2048", "file"}, {"archive", "", "directory"}}
	if fmt.Sprint(got.Rows) != fmt.Sprint(want) {
		t.Errorf("table rows = %q, want %q", got.Rows, want)
	}
}

// TestApprovalAccessibility runs axe-core (the WCAG 2.1 A and AA rules of
// TestAccessibility) on an answer with a card waiting for approval and an
// expanded generic card, in light and dark and in the Hebrew, right-to-left
// page, whose card shows the Hebrew labels.
func TestApprovalAccessibility(t *testing.T) {
	axe := axeSource(t)
	srv := newFakeAPI("", true, "").server(t)
	b := openPage(t, srv.URL, Options{}, SetView(desktop(), "light"))
	to := 60 * time.Second
	b.Do(t, to, send(genericPrompt), waitIdle(), chromedp.Evaluate[chromedp.Void](`document.querySelector('.tool-card .tool-head').click()`),
		awaitApproval(),
		chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "approval, light")
	b.Do(t, to, SetView(desktop(), "dark"))
	reportAxe(t, b, to, "approval, dark")
	b.Do(t, to, SetView(phone(), "dark"))
	reportAxe(t, b, to, "approval, phone dark")

	ua := Eval[string](t, b, to, `navigator.userAgent`)
	b.Do(t, to, SetView(desktop(), "light"),
		cdpCall(emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "he-IL,he"}),
		chromedp.Reload(), waitReady(), WaitFor(`document.documentElement.dir === 'rtl'`),
		WaitFor(approvalCard+`?.dataset.status === 'awaiting'`), chromedp.Evaluate[chromedp.Void](axe))
	reportAxe(t, b, to, "approval, Hebrew")
	if got := Eval[[]string](t, b, to, `[...document.querySelectorAll('.approval button')].map(b => b.textContent)`); !slices.Equal(got, []string{"אישור חד־פעמי", "תמיד בשיחה הזו", "דחייה"}) {
		t.Errorf("Hebrew decisions = %q", got)
	}
}

// TestApprovalOfTwoCalls checks that with two calls waiting, the first
// decision is only recorded (its card says so, its buttons are off) and
// both are posted together, in order, once the second is taken.
func TestApprovalOfTwoCalls(t *testing.T) {
	api := newFakeAPI("", true, "")
	srv := api.server(t)
	b := openPage(t, srv.URL, Options{})
	to := 30 * time.Second
	first := `document.querySelector('.tool-card[data-tool-call-id="toolu_ap1"]')`
	second := `document.querySelector('.tool-card[data-tool-call-id="toolu_ap2"]')`
	b.Do(t, to, send(twoApprovalsPrompt), waitIdle(),
		WaitFor(first+`?.dataset.status === 'awaiting' && `+second+`?.dataset.status === 'awaiting'`),
		chromedp.Evaluate[chromedp.Void](first+`.querySelector('[data-decision="allow_once"]').click()`),
		WaitFor(first+`.querySelector('.approval-note') != null`))
	state := Eval[struct {
		Note          string
		FirstEnabled  int
		SecondEnabled int
	}](t, b, to, `({Note: `+first+`.querySelector('.approval-note').textContent,
		FirstEnabled: `+first+`.querySelectorAll('.approval button:not([disabled])').length,
		SecondEnabled: `+second+`.querySelectorAll('.approval button:not([disabled])').length})`)
	api.mu.Lock()
	posted := len(api.decisions)
	api.mu.Unlock()
	if state.Note != "Your decision: Allow once." || state.FirstEnabled != 0 || state.SecondEnabled != 3 || posted != 0 {
		t.Errorf("after the first decision: %+v and %d posts, want it noted, its buttons off, the other's on, nothing posted", state, posted)
	}
	b.Do(t, to, chromedp.Evaluate[chromedp.Void](second+`.querySelector('[data-decision="deny"]').click()`), waitIdle(),
		WaitFor(first+`?.dataset.status === 'completed' && `+second+`?.dataset.status === 'failed'`))
	api.mu.Lock()
	defer api.mu.Unlock()
	if want := [][]decision{{{"toolu_ap1", "allow_once"}, {"toolu_ap2", "deny"}}}; fmt.Sprint(api.decisions) != fmt.Sprint(want) {
		t.Errorf("posted decisions = %v, want %v", api.decisions, want)
	}
}

// TestApprovalRefused checks a decision the server refuses (409: another
// tab decided first): the error shows in the answer, which is not marked
// cut short, and the card can be decided again.
func TestApprovalRefused(t *testing.T) {
	api := newFakeAPI("", true, "")
	srv := api.server(t)
	b := openPage(t, srv.URL, Options{})
	to := 30 * time.Second
	b.Do(t, to, awaitApproval())
	// Another tab's decision takes the waiting call.
	api.mu.Lock()
	var pending []map[string]any
	for _, c := range api.convs {
		pending, c.pending = c.pending, nil
	}
	api.mu.Unlock()
	b.Do(t, to, chromedp.Click(css(`.approval-btn[data-decision="allow_once"]`)), waitIdle(),
		WaitFor(lastAssistant(`?.querySelector('.inline-error') != null`)))
	got := Eval[struct {
		Code             string
		Incomplete       bool
		Status           string
		Enabled, Answers int
	}](t, b, to, `({Code: `+lastAssistant(`.querySelector('.inline-error code')?.textContent || ''`)+`,
		Incomplete: !!`+lastAssistant(`.querySelector('.incomplete-note')`)+`, Status: `+approvalCard+`.dataset.status,
		Enabled: document.querySelectorAll('.approval button:not([disabled])').length,
		Answers: document.querySelectorAll('#messages > li.msg-assistant').length})`)
	if got.Code != "CONFLICT" || got.Incomplete || got.Status != "awaiting" || got.Enabled != 3 || got.Answers != 1 {
		t.Errorf("after a refused decision: %+v, want the CONFLICT error, not cut short, the card waiting with its 3 decisions on", got)
	}
	// The call waits again (the other tab's turn was undone): deciding works.
	api.mu.Lock()
	for _, c := range api.convs {
		c.pending = pending
	}
	api.mu.Unlock()
	b.Do(t, to, chromedp.Click(css(`.approval-btn[data-decision="deny"]`)), waitIdle(),
		WaitFor(approvalCard+`?.dataset.status === 'failed'`))
	if n := Eval[int](t, b, to, `document.querySelectorAll('.inline-error').length`); n != 0 {
		t.Errorf("the refused decision's error is still shown (%d) after the turn went on", n)
	}
}
