package sqlstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"
)

// TestSearchSnippets pins what a search result shows of its match, alike on
// both engines: a piece of the first matching message around the word, on
// one line; nothing when only the title matched.
func TestSearchSnippets(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		conv := func(title string, texts ...string) string {
			t.Helper()
			c, err := db.CreateConversation(ctx, store.Conversation{Title: title})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range texts {
				if _, err := db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: textContent(s)}); err != nil {
					t.Fatal(err)
				}
			}
			return c.ID
		}
		long := strings.Repeat("We talked about many things that day. ", 10) + "Then the\nferries to Zanzibar left at noon, " + strings.Repeat("and the rest is history. ", 10)
		ferries := conv("Trip", "nothing here", long, "Zanzibar once more")
		hebrew := conv("מוזיקה", "אני מחפש שירים עצובים של אריק איינשטיין")
		titled := conv("Zanzibar notes", "a message without the word")
		snippets := func(q string) map[string]string {
			t.Helper()
			page, err := db.SearchConversations(ctx, q, store.ListOptions{Limit: 10})
			if err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			out := map[string]string{}
			for _, c := range page.Conversations {
				out[c.ID] = c.Snippet
			}
			return out
		}
		got := snippets("zanzib")
		s := got[ferries]
		if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") || !strings.Contains(s, "Then the ferries to Zanzibar left at noon") {
			t.Errorf("snippet of the long message = %q, want the words around Zanzibar, cut at both ends", s)
		}
		if n := utf8.RuneCountInString(s); n > snippetRunes+2 || strings.ContainsAny(s, "\n\r") {
			t.Errorf("snippet is %d characters or holds a line break: %q", n, s)
		}
		if s, ok := got[titled]; !ok || s != "" {
			t.Errorf("a conversation matched by its title only: snippet %q (listed %v), want listed with none", s, ok)
		}
		if s := snippets("עצוב")[hebrew]; s != "אני מחפש שירים עצובים של אריק איינשטיין" {
			t.Errorf("Hebrew snippet = %q, want the whole short message", s)
		}
	})
}

func TestSnippet(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		terms      []string
		want       string
	}{
		{"short text whole", "Hello  brave\nnew world", []string{"new"}, "Hello brave new world"},
		{"case folded", "Ελληνικά ΣΟΦΙΑ text", []string{"σοφ"}, "Ελληνικά ΣΟΦΙΑ text"},
		{"word start only", strings.Repeat("x ", 60) + "subway way", []string{"way"}, "…" + strings.Repeat("x ", 21) + "subway way"},
		{"no word matches: the start", strings.Repeat("a", 200), []string{"zzz"}, strings.Repeat("a", 160) + "…"},
		{"empty", "", []string{"a"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Snippet(tc.text, tc.terms); got != tc.want {
				t.Errorf("Snippet = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzSnippet: any text and term give valid UTF-8 on one line, bounded.
func FuzzSnippet(f *testing.F) {
	f.Add("Then the ferries to Zanzibar left", "zan")
	f.Add("שירים עצובים", "עצ")
	f.Add("\xff\xfe bad \x00 bytes", "b")
	f.Fuzz(func(t *testing.T, text, term string) {
		s := Snippet(text, []string{term})
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r") || utf8.RuneCountInString(s) > snippetRunes+2 {
			t.Fatalf("Snippet(%q, %q) = %q", text, term, s)
		}
	})
}

// TestReplaceTitle: the title a model writes replaces only the one the
// first message gave; a person's rename in the meantime stays.
func TestReplaceTitle(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c, err := db.CreateConversation(ctx, store.Conversation{Title: "find me sad songs"})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := db.ReplaceTitle(ctx, c.ID, "find me sad songs", "Sad songs"); !ok || err != nil {
			t.Fatalf("replacing the provisional title: %v, %v", ok, err)
		}
		if _, err := db.RenameConversation(ctx, c.ID, "Mine"); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.ReplaceTitle(ctx, c.ID, "Sad songs", "Another"); ok || err != nil {
			t.Fatalf("replacing a renamed title: %v, %v; want false, nil", ok, err)
		}
		if got, _ := db.GetConversation(ctx, c.ID); got.Title != "Mine" {
			t.Errorf("title = %q, want the rename Mine", got.Title)
		}
		if _, err := db.ReplaceTitle(ctx, "no-such-conversation", "a", "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown conversation: %v, want ErrNotFound", err)
		}
		if _, err := db.ReplaceTitle(ctx, c.ID, "Mine", "bad\x00title"); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("a title with a control character: %v, want ErrInvalid", err)
		}
	})
}
