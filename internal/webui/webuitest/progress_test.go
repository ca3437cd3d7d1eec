package webuitest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/webui"
	"github.com/toolport/toolport/tool"
)

// TestAnswerCardShowsTheAnswerAsItStreams: while answer_brave runs, its
// card shows the answer so far (the tool's progress reports, carried as
// tool_progress events); once it ends, the card shows the whole answer.
func TestAnswerCardShowsTheAnswerAsItStreams(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	finish := func() { once.Do(func() { close(release) }) }
	t.Cleanup(finish) // a failed wait must not leave the tool running
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	err := reg.Register(tool.Must(tool.New(tool.Spec{Name: "answer_brave", Description: "Answers with citations.", Pack: "web"},
		func(ctx context.Context, in cardQuery) (answerOut, error) {
			tool.ReportProgress(ctx, tool.Progress{Done: 20, Message: "Haifa's air is mostly"})
			select {
			case <-release:
			case <-ctx.Done():
				return answerOut{}, ctx.Err()
			}
			return answerOut{Answer: "Haifa's air is mostly good [1].", Citations: []answerCitation{
				{Number: 1, URL: "https://www.example.org/air/1"}}}, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "toolport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms := servertest.NewModelServer(t,
		servertest.Turn{Match: "air", Events: []servertest.Event{servertest.Call("a1", "answer_brave", `{"query":"is haifa's air good?"}`)}},
		servertest.Turn{Match: "air", Step: 1, Events: []servertest.Event{servertest.Text("Mostly good.")}})
	model, err := llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.AnthropicBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Store: db, Registry: reg, Version: "test", Web: webui.Handler()}
	parts, err := server.Wire(cfg, server.Wiring{Agent: agent.Config{Provider: model, ModelName: "anthropic:" + servertest.ModelName}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	b := NewBrowser(t, Options{})
	defer b.CheckNoProblems(t)
	to := 60 * time.Second
	card := `document.querySelector('.tool-card[data-tool="answer_brave"]')`
	b.Do(t, to, SetView(desktop(), "light"), chromedp.Navigate(hs.URL+"/"), waitReady(), send("is the air good?"),
		WaitFor(card+`?.dataset.status === 'executing' && `+card+`.querySelector('.tool-summary')?.textContent === "Haifa's air is mostly"`))
	finish()
	b.Do(t, to, waitIdle(), WaitFor(card+`?.dataset.status === 'completed'`),
		chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`))
	if got := Eval[string](t, b, to, card+`.querySelector('.answer-text').textContent`); got != "Haifa's air is mostly good [1]." {
		t.Errorf("the finished card shows %q", got)
	}
}
