package sqlstore

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

func TestPlaylists(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		conv, err := db.CreateConversation(ctx, store.Conversation{Title: "mix"})
		if err != nil {
			t.Fatal(err)
		}
		in := store.Playlist{
			Title: "Rainy day", Description: "3 tracks", ConversationID: conv.ID, MessageID: "m1", ToolCallID: "tc1",
			Items: []store.PlaylistItem{
				{TidalID: "3", ISRC: "USRC17607839", Title: "B", Artist: "Y", Duration: 200, Reasoning: "calm"},
				{TidalID: "1", Title: "A", Artist: "X", Album: "Al", ArtworkURL: "https://x/a.jpg", Duration: 100},
			},
			Unresolved: []store.PlaylistEntry{{ISRC: "GBAYE0000001", Title: "Gone", Reason: "not on TIDAL"}},
		}
		got, err := db.CreatePlaylist(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == "" || got.CreatedAt.IsZero() {
			t.Fatalf("created %+v", got)
		}
		back, err := db.GetPlaylist(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if back.Title != "Rainy day" || back.ConversationID != conv.ID || back.MessageID != "m1" || back.ToolCallID != "tc1" {
			t.Errorf("got %+v", back)
		}
		if len(back.Items) != 2 || back.Items[0].TidalID != "3" || back.Items[1].TidalID != "1" || back.Items[0].Reasoning != "calm" {
			t.Errorf("items not kept in order: %+v", back.Items)
		}
		if back.DurationSeconds() != 300 {
			t.Errorf("duration %v", back.DurationSeconds())
		}
		if len(back.Unresolved) != 1 || back.Unresolved[0].Reason != "not on TIDAL" {
			t.Errorf("unresolved %+v", back.Unresolved)
		}
		if !back.CreatedAt.Equal(got.CreatedAt) {
			t.Errorf("created at %v, stored %v", got.CreatedAt, back.CreatedAt)
		}

		if _, err := db.CreatePlaylist(ctx, store.Playlist{ID: got.ID, Title: "again"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same id: %v, want ErrConflict", err)
		}
		// A conversation id that names nothing is kept as none.
		other, err := db.CreatePlaylist(ctx, store.Playlist{Title: "Other", ConversationID: "nope"})
		if err != nil {
			t.Fatal(err)
		}
		if other.ConversationID != "" {
			t.Errorf("unknown conversation kept: %q", other.ConversationID)
		}

		page, err := db.ListPlaylists(ctx, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 2 || len(page.Playlists) != 2 || page.Playlists[0].ID != other.ID || len(page.Playlists[1].Items) != 2 {
			t.Errorf("list: %+v", page)
		}
		page, err = db.ListPlaylists(ctx, store.ListOptions{Query: "RAINY"})
		if err != nil || page.Total != 1 || page.Playlists[0].ID != got.ID {
			t.Errorf("query: %+v %v", page, err)
		}

		if err := db.SetPlaylistTidalID(ctx, got.ID, "550e8400-e29b-41d4-a716-446655440000"); err != nil {
			t.Fatal(err)
		}
		if err := db.SetPlaylistTidalID(ctx, "missing", "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing: %v", err)
		}
		if _, err := db.GetPlaylist(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get missing: %v", err)
		}

		// Deleting the conversation keeps the playlist and clears the link.
		if err := db.DeleteConversation(ctx, conv.ID); err != nil {
			t.Fatal(err)
		}
		back, err = db.GetPlaylist(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if back.ConversationID != "" || back.TidalPlaylistID != "550e8400-e29b-41d4-a716-446655440000" || len(back.Items) != 2 {
			t.Errorf("after deleting the conversation: %+v", back)
		}
	})
}

func TestCreatePlaylistRefuses(t *testing.T) {
	many := make([]store.PlaylistItem, store.MaxPlaylistItems+1)
	for i := range many {
		many[i] = store.PlaylistItem{TidalID: "1"}
	}
	cases := map[string]store.Playlist{
		"no title":         {},
		"long title":       {Title: strings.Repeat("x", store.MaxPlaylistTitleBytes+1)},
		"too many items":   {Title: "t", Items: many},
		"item without id":  {Title: "t", Items: []store.PlaylistItem{{Title: "a"}}},
		"NUL in reasoning": {Title: "t", Items: []store.PlaylistItem{{TidalID: "1", Reasoning: "a\x00b"}}},
		"bad UTF-8":        {Title: "t\xff"},
		"NaN duration":     {Title: "t", Items: []store.PlaylistItem{{TidalID: "1", Duration: math.NaN()}}},
	}
	eachBackend(t, func(t *testing.T, db *DB) {
		for name, p := range cases {
			if _, err := db.CreatePlaylist(context.Background(), p); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}
