package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/llm/llmtest"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// titleTurns scripts a first answer and the title the model writes for it.
func titleTurns(title llmtest.ScriptedTurn) *llmtest.Scripted {
	title.Match = "short title for this conversation"
	return llmtest.NewScripted(title,
		llmtest.ScriptedTurn{Match: "sad songs", Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Here are three sad songs.")}})
}

// gated holds the titling call until release is closed, after saying so on
// asked: what a person does meanwhile can be ordered against it.
type gated struct {
	llm.Provider
	asked, release chan struct{}
}

func (g gated) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	if req.MaxTokens == agent.TitleMaxTokens {
		close(g.asked)
		<-g.release
	}
	return g.Provider.Stream(ctx, req)
}

// TestTitleAfterFirstAnswer: after a conversation's first answer the model
// is asked, in a small call without tools, for a title that replaces the
// first message's words, before the answer's message_end; later answers
// ask nothing.
func TestTitleAfterFirstAnswer(t *testing.T) {
	for _, engine := range backends {
		t.Run(engine, func(t *testing.T) {
			db := openStore(t, engine)
			model := titleTurns(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Title: \"Sad songs for rainy days.\"\nmore")}})
			a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: model, Titles: true})
			conv := newConversation(t, db)
			r := &recorder{}
			r.on = func(w wire) {
				if w.typ() == "message_end" {
					if c, _ := db.GetConversation(context.Background(), conv); c.Title != "Sad songs for rainy days" {
						t.Errorf("at message_end the title is %q, want the model's", c.Title)
					}
				}
			}
			if err := a.Turn(context.Background(), store.Fence{}, conv, "find me sad songs", r.emit); err != nil {
				t.Fatal(err)
			}
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want the answer's and the title's", len(reqs))
			}
			title := reqs[1]
			if len(title.Tools) != 0 || title.MaxTokens != agent.TitleMaxTokens || len(title.Messages) != 1 ||
				!strings.Contains(title.Messages[0].Text(), "User: find me sad songs") || !strings.Contains(title.Messages[0].Text(), "Assistant: Here are three sad songs.") {
				t.Errorf("title request = %+v, want one message with the question and answer, no tools, %d tokens", title, agent.TitleMaxTokens)
			}
			if err := a.Turn(context.Background(), store.Fence{}, conv, "more sad songs", (&recorder{}).emit); err != nil {
				t.Fatal(err)
			}
			if n := len(model.Requests()); n != 3 {
				t.Errorf("%d model calls after a second answer, want 3 (no second title)", n)
			}
		})
	}
}

// TestTitleRenameWins: a person's rename made while the title is being
// written is kept.
func TestTitleRenameWins(t *testing.T) {
	db := openStore(t, storetest.SQLite)
	g := gated{Provider: titleTurns(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Melancholy")}}),
		asked: make(chan struct{}), release: make(chan struct{})}
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: g, Titles: true})
	conv := newConversation(t, db)
	done := make(chan error, 1)
	go func() {
		done <- a.Turn(context.Background(), store.Fence{}, conv, "find me sad songs", (&recorder{}).emit)
	}()
	<-g.asked
	if _, err := db.RenameConversation(context.Background(), conv, "My playlist ideas"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c, _ := db.GetConversation(context.Background(), conv); c.Title != "My playlist ideas" {
		t.Errorf("title = %q, want the rename", c.Title)
	}
}

// TestTitleKeepsFirstMessage: without Titles, without a model, or when the
// titling call fails, the first message's words stay the title.
func TestTitleKeepsFirstMessage(t *testing.T) {
	failed := titleTurns(llmtest.ScriptedTurn{Err: &llm.Error{Code: llm.CodeServer, Message: "overloaded"}})
	for _, tc := range []struct {
		name     string
		cfg      agent.Config
		model    *llmtest.Scripted
		wantReqs int
	}{
		{"titles off", agent.Config{}, titleTurns(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText("Unused")}}), 1},
		{"no model", agent.Config{Titles: true}, nil, 0},
		{"the call fails", agent.Config{Titles: true}, failed, 2},
		{"an empty title", agent.Config{Titles: true}, titleTurns(llmtest.ScriptedTurn{Events: []llmtest.ScriptedEvent{llmtest.ScriptText(" \"\" ")}}), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openStore(t, storetest.SQLite)
			cfg := tc.cfg
			cfg.Store, cfg.Registry = db, newTools(t).reg
			if tc.model != nil {
				cfg.Provider = tc.model
			}
			a := newAgent(t, cfg)
			conv := newConversation(t, db)
			if err := a.Turn(context.Background(), store.Fence{}, conv, "find me sad songs", (&recorder{}).emit); err != nil {
				t.Fatal(err)
			}
			if c, _ := db.GetConversation(context.Background(), conv); c.Title != "find me sad songs" {
				t.Errorf("title = %q, want the first message's words", c.Title)
			}
			if tc.model != nil {
				if n := len(tc.model.Requests()); n != tc.wantReqs {
					t.Errorf("%d model calls, want %d", n, tc.wantReqs)
				}
			}
		})
	}
}
