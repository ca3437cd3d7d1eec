package sqlstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// On PostgreSQL one group of message appends is one statement in which
// each message is answered on its own: a stale fence is refused, a missing
// conversation is not found, a taken id is a conflict, and the others go
// in, in order, touching only their conversations. When the statement
// fails as a whole (here a constraint refuses one message), each append is
// retried alone, so that only that one fails.
func TestMessageGroupAnswersEachAppend(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()
	conv := func() string { return newConversation(t, db) }
	held, stale, plain, taken := conv(), conv(), conv(), conv()
	for i, c := range []string{held, stale} {
		id := []string{"turn-held", "turn-stale"}[i]
		if _, err := db.StartTurn(ctx, store.Turn{ID: id, ConversationID: c, Owner: "r1", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AppendMessage(ctx, store.Message{ID: "m-taken", ConversationID: taken, Role: store.RoleUser, Content: textContent("first")}); err != nil {
		t.Fatal(err)
	}
	touched := func(id string) time.Time {
		t.Helper()
		c, err := db.GetConversation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.UpdatedAt
	}
	// The taken conversation was last touched a day ago, so that an append
	// wrongly touching it now shows, however close the clock's readings.
	if _, err := db.w.ExecContext(ctx, `UPDATE conversations SET updated_at = $2 WHERE id = $1`, taken, db.d.time(now().Add(-24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	takenAt := touched(taken)

	req := func(m store.Message, fence *store.Fence) *messageReq {
		m.CreatedAt = normTime(time.Now())
		return &messageReq{call: newCall(ctx), m: m, fence: fence}
	}
	usage := &store.Usage{InputTokens: 10, OutputTokens: 3, ContextTokens: 13}
	batch := []*messageReq{
		req(store.Message{ID: "m-held", ConversationID: held, Role: store.RoleAssistant, Content: textContent("answer"), Usage: usage},
			&store.Fence{TurnID: "turn-held", Generation: 1}),
		req(store.Message{ID: "m-stale", ConversationID: stale, Role: store.RoleAssistant, Content: textContent("late")},
			&store.Fence{TurnID: "turn-stale", Generation: 2}),
		req(store.Message{ID: "m-missing", ConversationID: "no-such-conversation", Role: store.RoleUser, Content: textContent("x")}, nil),
		req(store.Message{ID: "m-taken", ConversationID: taken, Role: store.RoleUser, Content: textContent("again")}, nil),
		req(store.Message{ID: "m-plain", ConversationID: plain, Role: store.RoleUser, Content: textContent("hi"),
			Error: &store.MessageError{Code: "MODEL_ERROR", Message: "failed"}}, nil),
	}
	before := db.messages.commits.Load()
	db.messages.commit(batch)
	if got := db.messages.commits.Load() - before; got != 1 {
		t.Errorf("the batch took %d statements, want 1", got)
	}
	want := []error{nil, store.ErrFenced, store.ErrNotFound, store.ErrConflict, nil}
	for i, r := range batch {
		err := <-r.err
		if (want[i] == nil) != (err == nil) || (want[i] != nil && !errors.Is(err, want[i])) {
			t.Errorf("%s: %v, want %v", r.m.ID, err, want[i])
		}
	}

	got, err := db.GetConversation(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].ID != "m-held" || got.Messages[0].Usage == nil || *got.Messages[0].Usage != *usage {
		t.Errorf("held conversation = %+v, want m-held with its usage", got.Messages)
	}
	if got, _ := db.GetConversation(ctx, stale); len(got.Messages) != 0 {
		t.Errorf("the stale fence's message was stored: %+v", got.Messages)
	}
	if got, _ := db.GetConversation(ctx, plain); len(got.Messages) != 1 || got.Messages[0].Error == nil || got.Messages[0].Error.Code != "MODEL_ERROR" {
		t.Errorf("plain conversation = %+v, want m-plain with its error", got.Messages)
	}
	if got, _ := db.GetConversation(ctx, taken); len(got.Messages) != 1 || !strings.Contains(string(got.Messages[0].Content), "first") {
		t.Errorf("the taken id's conversation = %+v, want the first message only", got.Messages)
	}
	if !touched(taken).Equal(takenAt) {
		t.Error("a refused append touched its conversation")
	}

	// A statement the database refuses whole is retried one append at a
	// time: the refused message fails, the others of its batch go in.
	if _, err := db.w.ExecContext(ctx, `ALTER TABLE messages ADD CONSTRAINT test_refuse CHECK (content::text NOT LIKE '%refused%')`); err != nil {
		t.Fatal(err)
	}
	a, b, c := conv(), conv(), conv()
	batch = []*messageReq{
		req(store.Message{ID: "r-1", ConversationID: a, Role: store.RoleUser, Content: textContent("fine")}, nil),
		req(store.Message{ID: "r-2", ConversationID: b, Role: store.RoleUser, Content: textContent("refused")}, nil),
		req(store.Message{ID: "r-3", ConversationID: c, Role: store.RoleUser, Content: textContent("fine too")}, nil),
	}
	db.messages.commit(batch)
	for i, r := range batch {
		err := <-r.err
		if (i == 1) != (err != nil) {
			t.Errorf("%s: %v", r.m.ID, err)
		}
	}
	var stored []string
	for _, id := range []string{a, b, c} {
		got, err := db.GetConversation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got.Messages {
			stored = append(stored, m.ID)
		}
	}
	if !slices.Equal(stored, []string{"r-1", "r-3"}) {
		t.Errorf("stored %v, want r-1 and r-3", stored)
	}
}

// A message group keeps one append per conversation and per message id: a
// second one waits for the next statement, so that a conversation's
// messages are numbered in the order they came and each answer is its own.
func TestMessageFits(t *testing.T) {
	m := func(id, conv string) *messageReq {
		return &messageReq{m: store.Message{ID: id, ConversationID: conv}}
	}
	batch := []*messageReq{m("1", "a"), m("2", "b")}
	for _, tc := range []struct {
		r    *messageReq
		fits bool
	}{
		{m("3", "c"), true},
		{m("3", "a"), false},
		{m("1", "c"), false},
	} {
		if got := messageFits(batch, tc.r); got != tc.fits {
			t.Errorf("message %s of %s fits = %v, want %v", tc.r.m.ID, tc.r.m.ConversationID, got, tc.fits)
		}
	}
	full := make([]*messageReq, maxMessageGroup)
	for i := range full {
		full[i] = m(string(rune('A'+i)), string(rune('A'+i)))
	}
	if messageFits(full, m("new", "new")) {
		t.Errorf("a message fits a batch of %d", maxMessageGroup)
	}
}
