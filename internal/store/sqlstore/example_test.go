package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/toolport/toolport/internal/store/sqlstore"

	"github.com/toolport/toolport/internal/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "toolport-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// A file path or sqlite: URL opens SQLite; postgres://… opens PostgreSQL.
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(dir, "toolport.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Chat: the user message is durable once AppendMessage returns.
	c, err := db.CreateConversation(ctx, store.Conversation{Title: "Sad songs"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = db.AppendMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser,
		Content: json.RawMessage(`[{"type":"text","text":"melancholic love songs"}]`)})
	if err != nil {
		log.Fatal(err)
	}

	// Index: upsert by ISRC, then load the vectors for the in-memory index.
	err = db.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "GBBKS1700108", Title: "Someone Like You",
		Artist: "Adele", Album: "21", Embedding: []float32{0.6, 0.8}, Embedder: "demo-2d"}})
	if err != nil {
		log.Fatal(err)
	}
	err = db.EachEmbedding(ctx, "demo-2d", func(isrc string, vec []float32) error {
		fmt.Println(isrc, vec)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// Library: the inLibrary flag for a page of results in one query.
	if _, err := db.AddTracks(ctx, []store.Track{{TidalID: "1001", ISRC: "GBBKS1700108", Title: "Someone Like You", Artist: "Adele"}}); err != nil {
		log.Fatal(err)
	}
	in, err := db.LibraryStatus(ctx, []string{"GBBKS1700108", "USUM71703861"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.Track("GBBKS1700108", ""), in.Track("USUM71703861", ""))

	got, err := db.GetConversation(ctx, c.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Title, len(got.Messages), got.Messages[0].Role)
	// Output:
	// GBBKS1700108 [0.6 0.8]
	// true false
	// Sad songs 1 user
}
