package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store"
)

// userTexts lists the text of each user message of a model request, in order.
func userTexts(t *testing.T, req servertest.Request) []string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil { // OpenAI's plain-string content
			out = append(out, text)
			continue
		}
		bs, err := llm.DecodeBlocks(m.Content)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.Type == llm.BlockText {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// storedTexts lists each stored message as role: text.
func storedTexts(t *testing.T, msgs []store.Message, blocks [][]llm.Block) []string {
	var out []string
	for i, m := range msgs {
		s := string(m.Role) + ":"
		for _, b := range blocks[i] {
			if b.Type == llm.BlockText {
				s += b.Text
			}
		}
		out = append(out, s)
	}
	return out
}

func TestRegenerateReplacesTheLastAnswer(t *testing.T) {
	for _, engine := range backends {
		t.Run(engine, func(t *testing.T) {
			ms := servertest.NewModelServer(t,
				servertest.Turn{Events: []servertest.Event{servertest.Text("first answer")}},
				servertest.Turn{Events: []servertest.Event{servertest.Text("second answer")}, InputTokens: 40, OutputTokens: 6},
			)
			db := openStore(t, engine)
			a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, "anthropic", ms)})
			ctx := context.Background()
			conv := newConversation(t, db)
			var first recorder
			if err := a.Turn(ctx, store.Fence{}, conv, "hello", first.emit); err != nil {
				t.Fatal(err)
			}
			msgs, _ := storedBlocks(t, db, conv)
			userID := msgs[0].ID

			var again recorder
			if err := a.Regenerate(ctx, store.Fence{}, conv, again.emit); err != nil {
				t.Fatal(err)
			}
			if got := again.types(); !reflect.DeepEqual(got, []string{"message_start", "text_delta", "message_end"}) {
				t.Errorf("events = %q, want a normal turn's", got)
			}
			if start := again.first("message_start"); start["userMessageId"] != userID || start["model"] != servertest.ModelName {
				t.Errorf("message_start = %v, want userMessageId %s and the model", start, userID)
			}
			if u := again.first("message_end")["usage"].(map[string]any); u["inputTokens"] != 40.0 || u["outputTokens"] != 6.0 || u["contextTokens"] != 46.0 {
				t.Errorf("message_end usage = %v, want 40 in, 6 out, context 46", u)
			}
			msgs, blocks := storedBlocks(t, db, conv)
			if got := storedTexts(t, msgs, blocks); !reflect.DeepEqual(got, []string{"user:hello", "assistant:second answer"}) {
				t.Errorf("stored = %q, want the user message once and only the new answer (the old one is not kept)", got)
			}
			if msgs[0].ID != userID {
				t.Errorf("the user message was replaced (%s, was %s); it should be kept", msgs[0].ID, userID)
			}
			if u := msgs[1].Usage; u == nil || u.ContextTokens != 46 {
				t.Errorf("stored usage = %+v, want context tokens 46", u)
			}
			reqs := ms.Requests()
			if got := userTexts(t, reqs[len(reqs)-1]); !reflect.DeepEqual(got, []string{"hello"}) {
				t.Errorf("the model was sent user texts %q, want only [hello]: no repeated message, no old answer", got)
			}
		})
	}
}

func TestEditReplacesLaterTurns(t *testing.T) {
	ms := servertest.NewModelServer(t,
		servertest.Turn{Events: []servertest.Event{servertest.Text("A1")}},
		servertest.Turn{Events: []servertest.Event{servertest.Text("A2")}},
		servertest.Turn{Events: []servertest.Event{servertest.Text("A3")}},
	)
	db := openStore(t, "sqlite")
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, "openai", ms)})
	ctx := context.Background()
	conv := newConversation(t, db)
	for _, text := range []string{"one", "two"} {
		if err := a.Turn(ctx, store.Fence{}, conv, text, (&recorder{}).emit); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := storedBlocks(t, db, conv)
	var rec recorder
	if err := a.Edit(ctx, store.Fence{}, conv, msgs[2].ID, "deux", rec.emit); err != nil {
		t.Fatal(err)
	}
	msgs, blocks := storedBlocks(t, db, conv)
	if got := storedTexts(t, msgs, blocks); !reflect.DeepEqual(got, []string{"user:one", "assistant:A1", "user:deux", "assistant:A3"}) {
		t.Errorf("stored = %q, want the first exchange, then the edit and its answer", got)
	}
	if rec.first("message_start")["userMessageId"] != msgs[2].ID {
		t.Errorf("message_start names user message %v, want the edit's new id %s", rec.first("message_start")["userMessageId"], msgs[2].ID)
	}
	reqs := ms.Requests()
	if got := userTexts(t, reqs[len(reqs)-1]); !reflect.DeepEqual(got, []string{"one", "deux"}) {
		t.Errorf("the model was sent user texts %q, want [one deux]", got)
	}
	c, _ := db.GetConversation(ctx, conv)
	if c.Title != "one" {
		t.Errorf("title = %q, want the first message's, unchanged", c.Title)
	}
}

func TestRegenerateAndEditRefusals(t *testing.T) {
	ms := servertest.NewModelServer(t, servertest.Turn{Events: []servertest.Event{servertest.Text("A1")}})
	db := openStore(t, "sqlite")
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, "anthropic", ms)})
	ctx := context.Background()
	empty := newConversation(t, db)
	conv := newConversation(t, db)
	if err := a.Turn(ctx, store.Fence{}, conv, "one", (&recorder{}).emit); err != nil {
		t.Fatal(err)
	}
	msgs, _ := storedBlocks(t, db, conv)
	for _, tc := range []struct {
		name string
		run  func(emit func(agent.Event)) error
		want error
	}{
		{"regenerate without a message", func(e func(agent.Event)) error { return a.Regenerate(ctx, store.Fence{}, empty, e) }, agent.ErrNothingToRegenerate},
		{"regenerate an unknown conversation", func(e func(agent.Event)) error { return a.Regenerate(ctx, store.Fence{}, "nope", e) }, store.ErrNotFound},
		{"edit the answer", func(e func(agent.Event)) error { return a.Edit(ctx, store.Fence{}, conv, msgs[1].ID, "x", e) }, agent.ErrNotUserMessage},
		{"edit an unknown message", func(e func(agent.Event)) error { return a.Edit(ctx, store.Fence{}, conv, "nope", "x", e) }, store.ErrNotFound},
		{"edit to nothing", func(e func(agent.Event)) error { return a.Edit(ctx, store.Fence{}, conv, msgs[0].ID, "  ", e) }, agent.ErrEmptyMessage},
	} {
		var rec recorder
		if err := tc.run(rec.emit); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if len(rec.types()) != 0 {
			t.Errorf("%s: events %q were emitted for a turn that did not start", tc.name, rec.types())
		}
	}
	if after, _ := storedBlocks(t, db, conv); len(after) != 2 {
		t.Errorf("refusals changed the conversation: %d messages, want 2", len(after))
	}
}

func TestConversationModelChoosesTheProvider(t *testing.T) {
	ms := servertest.NewModelServer(t, servertest.Turn{Match: "hi", Events: []servertest.Event{servertest.Text("hello")}})
	other, err := llm.NewOpenAI("other-model", llm.Options{APIKey: servertest.APIKey, BaseURL: ms.OpenAIBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	db := openStore(t, "sqlite")
	a := newAgent(t, agent.Config{Store: db, Registry: newTools(t).reg, Provider: provider(t, "anthropic", ms),
		ModelName: "anthropic:scripted-model", ContextWindow: 1000,
		Models: []agent.Model{{Name: "openai:other-model", Provider: other}, {Name: "anthropic:scripted-model", Provider: other}}})
	var names []string
	for _, m := range a.Models() {
		names = append(names, m.Name)
	}
	if !reflect.DeepEqual(names, []string{"anthropic:scripted-model", "openai:other-model"}) || a.Models()[0].ContextWindow != 1000 {
		t.Errorf("models = %q, want the default first with its window, each name once", names)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		chosen, wantName, wantModel string
	}{
		{"", "anthropic:scripted-model", servertest.ModelName},
		{"openai:other-model", "openai:other-model", "other-model"},
		{"openai:removed-since", "anthropic:scripted-model", servertest.ModelName},
	} {
		conv := newConversation(t, db)
		if err := db.SetConversationModel(ctx, conv, tc.chosen); err != nil {
			t.Fatal(err)
		}
		var rec recorder
		if err := a.Turn(ctx, store.Fence{}, conv, "hi", rec.emit); err != nil {
			t.Fatal(err)
		}
		reqs := ms.Requests()
		if got := reqs[len(reqs)-1].JSON()["model"]; got != tc.wantModel || rec.first("message_start")["model"] != tc.wantName {
			t.Errorf("chosen %q: request model %v, message_start model %v; want %s, %s", tc.chosen, got, rec.first("message_start")["model"], tc.wantModel, tc.wantName)
		}
	}
}
