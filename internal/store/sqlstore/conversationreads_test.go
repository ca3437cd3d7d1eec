package sqlstore

import (
	"context"
	"errors"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// On PostgreSQL concurrent conversation reads share one statement, and
// each call is answered on its own: its conversation with its messages in
// order (a copy of its own when two ask for the same one), not found for a
// missing id, its context's error when it went away.
func TestConversationReadsAnswerEachCall(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()
	full, err := db.CreateConversation(ctx, store.Conversation{Title: "full"})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := db.CreateConversation(ctx, store.Conversation{Title: "empty"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if _, err := db.AppendMessage(ctx, store.Message{ID: id, ConversationID: full.ID, Role: store.RoleUser, Content: textContent(id)}); err != nil {
			t.Fatal(err)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	req := func(ctx context.Context, id string) *readReq {
		return &readReq{ctx: ctx, id: id, done: make(chan struct{})}
	}
	batch := []*readReq{req(ctx, full.ID), req(ctx, "no-such"), req(ctx, empty.ID), req(gone, full.ID), req(ctx, full.ID)}
	db.reads.read(batch)
	for _, r := range batch {
		<-r.done
	}
	ids := func(c store.Conversation) []string {
		var out []string
		for _, m := range c.Messages {
			out = append(out, m.ID)
		}
		return out
	}
	for _, i := range []int{0, 4} {
		if r := batch[i]; r.err != nil || r.conv.Title != "full" || len(r.conv.Messages) != 3 || ids(r.conv)[0] != "m1" || ids(r.conv)[2] != "m3" {
			t.Errorf("read %d = %+v, %v; want full with m1, m2, m3", i, ids(r.conv), r.err)
		}
	}
	if !errors.Is(batch[1].err, store.ErrNotFound) {
		t.Errorf("missing conversation: %v, want ErrNotFound", batch[1].err)
	}
	if r := batch[2]; r.err != nil || r.conv.Title != "empty" || r.conv.Messages == nil || len(r.conv.Messages) != 0 {
		t.Errorf("empty conversation = %+v, %v", r.conv, r.err)
	}
	if !errors.Is(batch[3].err, context.Canceled) {
		t.Errorf("a caller gone: %v, want context.Canceled", batch[3].err)
	}
	batch[0].conv.Messages[0].ID = "changed"
	if batch[4].conv.Messages[0].ID != "m1" {
		t.Error("two callers of one conversation share its messages")
	}
}
