package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/toolport/toolport/internal/store"
)

// migrationFS holds the schema, one directory per engine. Files are named
// NNNN_description.sql; NNNN is the version. Both directories hold the same
// versions (a test checks), each in its engine's SQL.
//
//go:embed migrations
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the migrations for an engine in version order.
func migrations(engine string) ([]migration, error) {
	dir := path.Join("migrations", engine)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration %s: name must start with a positive version and _", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("store: migrations %s and %s share a version", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// migrate applies pending migrations, each in its own transaction together
// with its row in schema_migrations. Concurrent openers are serialised: on
// SQLite by the write lock an IMMEDIATE transaction takes at BEGIN, on
// PostgreSQL by a transaction-scoped advisory lock keyed on the schema. Each
// transaction re-reads the applied versions after taking the lock, so a
// migration another process applied meanwhile is skipped.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations(db.d.name)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := db.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)`

func (db *DB) applyMigration(ctx context.Context, m migration) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer rollback(tx)
	if db.d.name == store.EnginePostgres {
		if _, err := tx.ExecContext(ctx,
			`SELECT pg_advisory_xact_lock(hashtext('toolport.migrate:' || current_schema()))`); err != nil {
			return fmt.Errorf("store: migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	var applied int
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&applied)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if applied > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.version, m.name, now().Format(sqliteTimeLayout)); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	return nil
}

// SchemaVersion reports the highest migration applied to the database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := db.r.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return int(v.Int64), nil
}
