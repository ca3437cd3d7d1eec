package webuitest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
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
	scripted, _ := scriptedAgent(t,
		servertest.Turn{Match: "air", Events: []servertest.Event{servertest.Call("a1", "answer_brave", `{"query":"is haifa's air good?"}`)}},
		servertest.Turn{Match: "air", Step: 1, Events: []servertest.Event{servertest.Text("Mostly good.")}})
	base := startServer(t, server.Config{Store: newStore(t), Registry: reg}, server.Wiring{Agent: scripted})

	b := openPage(t, base, Options{}, SetView(desktop(), "light"))
	to := 60 * time.Second
	card := `document.querySelector('.tool-card[data-tool="answer_brave"]')`
	b.Do(t, to, send("is the air good?"),
		WaitFor(card+`?.dataset.status === 'executing' && `+card+`.querySelector('.tool-summary')?.textContent === "Haifa's air is mostly"`))
	finish()
	b.Do(t, to, waitIdle(), WaitFor(card+`?.dataset.status === 'completed'`),
		chromedp.Evaluate[chromedp.Void](card+`.querySelector('.tool-head').click()`))
	if got := Eval[string](t, b, to, card+`.querySelector('.answer-text').textContent`); got != "Haifa's air is mostly good [1]." {
		t.Errorf("the finished card shows %q", got)
	}
}
