package webuitest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/tool"
)

// noteIn and noteOut are an attached server's write tool as the chat sees
// it (CONSTRUCTED in mcphost.Output's shape: text blocks and structured
// content).
type noteIn struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

type noteBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type noteOut struct {
	Server     string         `json:"server"`
	Content    []noteBlock    `json:"content"`
	Structured map[string]any `json:"structuredContent,omitempty"`
}

func (o noteOut) Summary() string { return "wrote the note" }

// TestApprovalAgainstServer runs approval through the real chat server and
// agent: a write tool of an attached server ("files__write_note", which acts
// on the user's account) waits for the person; reloading shows the card;
// Allow once runs the tool once and the model's next answer streams into
// the same message, where the generic card shows the tool's text and table.
func TestApprovalAgainstServer(t *testing.T) {
	var mu sync.Mutex
	var wrote []noteIn
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "files__write_note", Title: "Write a note", Description: "Writes a note file. It overwrites the file.",
		Pack: "files", Annotations: tool.Annotations{UserAccount: true, Destructive: true}},
		func(ctx context.Context, in noteIn) (noteOut, error) {
			mu.Lock()
			wrote = append(wrote, in)
			mu.Unlock()
			return noteOut{Server: "files", Content: []noteBlock{{"text", "Wrote " + in.Path}},
				Structured: map[string]any{"files": []any{map[string]any{"path": in.Path, "bytes": len(in.Text)}}}}, nil
		}))); err != nil {
		t.Fatal(err)
	}
	scripted, _ := scriptedAgent(t,
		servertest.Turn{Match: "note", Events: []servertest.Event{servertest.Text("I'll write it."),
			servertest.Call("w1", "files__write_note", `{"path":"/notes/today.md","text":"שלום"}`)}, InputTokens: 100, OutputTokens: 10},
		servertest.Turn{Match: "note", Step: 1, Events: []servertest.Event{servertest.Text("The note is written.")}, InputTokens: 200, OutputTokens: 10})
	base := startServer(t, server.Config{Store: newStore(t), Registry: reg}, server.Wiring{Agent: scripted})

	b := openPage(t, base, Options{})
	to := 30 * time.Second
	card := `document.querySelector('.tool-card[data-tool="files__write_note"]')`
	b.Do(t, to, send("Write a note for today"), waitIdle(),
		WaitFor(card+`?.dataset.status === 'awaiting'`))
	if what := Eval[string](t, b, to, card+`.querySelector('.approval').textContent`); !strings.Contains(what, "Write a note") ||
		!strings.Contains(what, "may delete or overwrite") || !strings.Contains(what, "שלום") {
		t.Errorf("approval card = %q, want the title, what it does and the arguments", what)
	}
	mu.Lock()
	if len(wrote) != 0 {
		t.Errorf("the tool ran before the decision: %v", wrote)
	}
	mu.Unlock()
	b.Do(t, to, chromedp.Reload(), waitReady(), WaitFor(card+`?.dataset.status === 'awaiting'`),
		chromedp.Click(css(`.approval-btn[data-decision="allow_once"]`)), waitIdle(),
		WaitFor(card+`?.dataset.status === 'completed'`),
		WaitFor(lastAssistant(`?.textContent.includes('The note is written.')`)),
		chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`))
	got := Eval[struct {
		Answers int
		Text    string
		Cells   []string
	}](t, b, to, `({Answers: document.querySelectorAll('#messages > li.msg-assistant').length,
		Text: `+card+`.querySelector('.generic-text')?.textContent || '',
		Cells: [...`+card+`.querySelectorAll('.generic-table td')].map(td => td.textContent)})`)
	if got.Answers != 1 || got.Text != "Wrote /notes/today.md" || strings.Join(got.Cells, " ") != "8 /notes/today.md" { // bytes: "שלום" is 8 in UTF-8
		t.Errorf("after Allow once: %+v, want one answer with the generic card's text and table", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(wrote) != 1 || wrote[0].Path != "/notes/today.md" {
		t.Errorf("the tool ran %d times (%v), want once", len(wrote), wrote)
	}
}
