// Package storetest gives tests fresh, isolated databases of either engine,
// so that one suite runs on SQLite and on PostgreSQL.
//
// SQLite databases are files in the test's temporary directory. PostgreSQL
// databases are schemas of their own on the server named by
// TOOLPORT_TEST_DATABASE_URL (the DSN's search_path points at the schema, which
// is dropped when the test ends), so tests and packages running in parallel
// never see each other's tables. Without that variable the PostgreSQL variant
// is skipped, naming it; with it set and the server unreachable, the test fails.
package storetest

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

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvDatabaseURL names the PostgreSQL server the tests use (CI always sets it).
const EnvDatabaseURL = "TOOLPORT_TEST_DATABASE_URL"

// The engines, as sqlstore.Open reports them.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Engines lists the engines a suite should run on.
func Engines() []string { return []string{SQLite, Postgres} }

// DSN returns the DSN of an empty database of the engine, of its own, removed
// when the test ends. Two Opens of the same DSN share the database.
func DSN(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case SQLite:
		return filepath.Join(t.TempDir(), "toolport.db")
	case Postgres:
		return postgresSchema(t)
	}
	t.Fatalf("storetest: unknown engine %q", engine)
	return ""
}

func postgresSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		t.Skipf("%s is not set; set it to run the PostgreSQL variant (CI always does)", EnvDatabaseURL)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvDatabaseURL, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", EnvDatabaseURL, err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("PostgreSQL at %s is not usable: %v", EnvDatabaseURL, err)
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

// Database creates a PostgreSQL database of its own on the server named by
// TOOLPORT_TEST_DATABASE_URL, dropped when the test ends, and returns its
// URL: for tests that start other processes (replicas, a server under load),
// which need a whole database rather than a schema on a search_path. The
// caller checks that the variable is set.
func Database(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvDatabaseURL)
	u, err := url.Parse(base)
	if err != nil || base == "" {
		tb.Fatalf("%s is not a URL: %q", EnvDatabaseURL, base)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("open %s: %v", EnvDatabaseURL, err)
	}
	tb.Cleanup(func() { admin.Close() })
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	name := "toolport_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("%s is set but PostgreSQL cannot create a database: %v", EnvDatabaseURL, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
