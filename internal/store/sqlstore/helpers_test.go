package sqlstore

import (
	"context"
	"testing"

	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/storetest"
)

// backend makes fresh, isolated databases of one engine.
type backend struct {
	name string
	// newDSN returns a DSN for an empty database of its own, removed when
	// the test ends. Two Opens of the same DSN share the database.
	newDSN func(t testing.TB) string
}

var testBackends = []backend{
	{name: store.EngineSQLite, newDSN: func(t testing.TB) string { return storetest.DSN(t, storetest.SQLite) }},
	{name: store.EnginePostgres, newDSN: func(t testing.TB) string { return storetest.DSN(t, storetest.Postgres) }},
}

// openDB opens dsn and closes it when the test ends.
func openDB(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// eachBackend runs fn as a subtest on a fresh database of every engine.
func eachBackend(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Helper()
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, openDB(t, b.newDSN(t)))
		})
	}
}

// messageCommits counts the commits that carried message appends: the
// appender's transactions on SQLite, the message group's statements on
// PostgreSQL.
func messageCommits(db *DB) int64 {
	if db.messages != nil {
		return db.messages.commits.Load()
	}
	return db.appends.commits.Load()
}

// newConversation creates an empty conversation and returns its id.
func newConversation(t testing.TB, db *DB) string {
	t.Helper()
	c, err := db.CreateConversation(context.Background(), store.Conversation{})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}
