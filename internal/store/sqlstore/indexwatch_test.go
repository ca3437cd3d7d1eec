package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

func TestWatchIndexOnSQLiteIsUnsupported(t *testing.T) {
	db := openDB(t, storetest.DSN(t, storetest.SQLite))
	if err := db.WatchIndex(context.Background(), func() {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("WatchIndex on SQLite: %v, want ErrUnsupported", err)
	}
}

// TestWatchIndexIsToldOfOtherProcessesWrites: a write committed through
// another connection to the same schema is announced; one to another schema
// in the same database is not; Close ends the watch.
func TestWatchIndexIsToldOfOtherProcessesWrites(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	watcher, writer := openDB(t, dsn), openDB(t, dsn)
	elsewhere := openDB(t, storetest.DSN(t, storetest.Postgres))
	ctx := context.Background()

	calls := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- watcher.WatchIndex(ctx, func() { calls <- struct{}{} }) }()
	wait := func(what string) {
		t.Helper()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification %s", what)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-calls:
			t.Fatalf("notified %s", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	wait("when listening starts")

	if err := elsewhere.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "QZELS0000001", Title: "t", Artist: "a"}}); err != nil {
		t.Fatal(err)
	}
	quiet("of a write to another schema")

	if err := writer.UpsertIndex(ctx, []store.IndexRecord{{ISRC: "QZWAT0000001", Title: "t", Artist: "a"},
		{ISRC: "QZWAT0000002", Title: "t", Artist: "a"}}); err != nil {
		t.Fatal(err)
	}
	wait("of an upsert")
	quiet("twice for one transaction")
	if _, err := writer.DeleteIndex(ctx, []string{"QZWAT0000002"}); err != nil {
		t.Fatal(err)
	}
	wait("of a delete")
	if _, err := writer.SetEmbeddings(ctx, []store.Embedding{{ISRC: "QZWAT0000001", Vector: []float32{1, 0}, Embedder: "e"}}); err != nil {
		t.Fatal(err)
	}
	wait("of new embeddings")

	closed := make(chan struct{})
	go func() { watcher.Close(); close(closed) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WatchIndex after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WatchIndex still running after Close")
	}
	<-closed
}
