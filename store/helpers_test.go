package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pgEnv names the PostgreSQL server the tests use. Unset, the PostgreSQL
// subtests are skipped; set but unreachable, they fail.
const pgEnv = "TOOLPORT_TEST_DATABASE_URL"

// backend makes fresh, isolated databases of one engine.
type backend struct {
	name string
	// newDSN returns a DSN for an empty database of its own, removed when
	// the test ends. Two Opens of the same DSN share the database.
	newDSN func(t testing.TB) string
}

var testBackends = []backend{
	{name: EngineSQLite, newDSN: func(t testing.TB) string {
		return filepath.Join(t.TempDir(), "toolport.db")
	}},
	{name: EnginePostgres, newDSN: newPostgresSchema},
}

// newPostgresSchema creates a schema of its own on the test server and
// returns a DSN whose search_path points at it, so that tests and packages
// running in parallel never see each other's tables.
func newPostgresSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(pgEnv)
	if base == "" {
		t.Skipf("%s is not set; set it to run the PostgreSQL tests (CI always does)", pgEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", pgEnv, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", pgEnv, err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("PostgreSQL at %s is not usable: %v", pgEnv, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
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

func ptr[T any](v T) *T { return &v }
