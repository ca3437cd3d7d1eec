package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

// StreamConversation gives what GetConversation gives, one message at a
// time, and the usage summed as the server sums it.
func TestStreamConversation(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		id := newConversation(t, db)
		if err := db.SetConversationModel(ctx, id, "anthropic:x"); err != nil {
			t.Fatal(err)
		}
		var want []store.Message
		for i := range 5 {
			m := store.Message{ConversationID: id, Role: store.RoleUser,
				Content: json.RawMessage(fmt.Sprintf(`[{"type":"text","text":"m%d"}]`, i))}
			if i%2 == 1 {
				m.Role, m.Usage = store.RoleAssistant, &store.Usage{InputTokens: 10 * i, OutputTokens: i, ContextTokens: 3}
			}
			if i == 4 {
				m.Incomplete, m.Error = true, &store.MessageError{Code: "MODEL_ERROR", Message: "failed"}
			}
			if _, err := db.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		full, err := db.GetConversation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want = full.Messages
		var gotHead store.Conversation
		var gotUsage *store.Usage
		var got []store.Message
		err = db.StreamConversation(ctx, id, func(c store.Conversation, u *store.Usage) error {
			gotHead, gotUsage = c, u
			// A message appended once the head is read is not streamed:
			// the usage sum would not include it.
			_, err := db.AppendMessage(ctx, store.Message{ConversationID: id, Role: store.RoleUser,
				Content: json.RawMessage(`[{"type":"text","text":"late"}]`), Usage: &store.Usage{InputTokens: 1000}})
			return err
		}, func(m store.Message) error {
			got = append(got, m)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		full.Messages = nil
		if !reflect.DeepEqual(gotHead, full) {
			t.Errorf("head %+v, want %+v", gotHead, full)
		}
		if gotUsage == nil || *gotUsage != (store.Usage{InputTokens: 40, OutputTokens: 4}) {
			t.Errorf("usage %+v, want 40 in, 4 out", gotUsage)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("messages\n%+v\nwant\n%+v", got, want)
		}

		// No messages: no usage and no call of each.
		empty := newConversation(t, db)
		calls := 0
		err = db.StreamConversation(ctx, empty, func(c store.Conversation, u *store.Usage) error {
			if c.ID != empty || u != nil {
				t.Errorf("empty conversation head %+v %+v", c, u)
			}
			calls++
			return nil
		}, func(store.Message) error { calls += 100; return nil })
		if err != nil || calls != 1 {
			t.Errorf("empty conversation: %v, %d calls", err, calls)
		}

		// An unknown id fails before head; a callback's error ends the read.
		err = db.StreamConversation(ctx, "nope", func(store.Conversation, *store.Usage) error {
			t.Error("head called for an unknown id")
			return nil
		}, nil)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown id: %v", err)
		}
		stop := errors.New("client went away")
		n := 0
		err = db.StreamConversation(ctx, id, func(store.Conversation, *store.Usage) error { return nil },
			func(store.Message) error { n++; return stop })
		if err != stop || n != 1 {
			t.Errorf("each's error: %v after %d messages", err, n)
		}
	})
}
