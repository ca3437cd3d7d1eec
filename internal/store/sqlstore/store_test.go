package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/store"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn        string
		wantKind   string
		wantTarget string
		wantErr    bool
	}{
		{dsn: "", wantKind: store.EngineSQLite, wantTarget: ""},
		{dsn: "  ", wantKind: store.EngineSQLite, wantTarget: ""},
		{dsn: "/var/lib/toolport.db", wantKind: store.EngineSQLite, wantTarget: "/var/lib/toolport.db"},
		{dsn: "data/toolport.db", wantKind: store.EngineSQLite, wantTarget: "data/toolport.db"},
		{dsn: "sqlite:///abs/path.db", wantKind: store.EngineSQLite, wantTarget: "/abs/path.db"},
		{dsn: "sqlite:relative.db", wantKind: store.EngineSQLite, wantTarget: "relative.db"},
		{dsn: "SQLITE:relative.db", wantKind: store.EngineSQLite, wantTarget: "relative.db"},
		{dsn: "sqlite:///with%20space.db", wantKind: store.EngineSQLite, wantTarget: "/with space.db"},
		{dsn: "sqlite::memory:", wantKind: store.EngineSQLite, wantTarget: memoryTarget},
		{dsn: ":memory:", wantKind: store.EngineSQLite, wantTarget: memoryTarget},
		{dsn: "postgres://u:p@db:5432/x?sslmode=disable", wantKind: store.EnginePostgres, wantTarget: "postgres://u:p@db:5432/x?sslmode=disable"},
		{dsn: "postgresql://db/x", wantKind: store.EnginePostgres, wantTarget: "postgresql://db/x"},
		{dsn: "sqlite:", wantErr: true},
		{dsn: "sqlite:///x.db?mode=ro", wantErr: true},
		{dsn: "mysql://db/x", wantErr: true},
	}
	for _, tt := range tests {
		kind, target, err := parseDSN(tt.dsn)
		if tt.wantErr {
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("parseDSN(%q) error = %v, want ErrInvalid", tt.dsn, err)
			}
			continue
		}
		if err != nil || kind != tt.wantKind || target != tt.wantTarget {
			t.Errorf("parseDSN(%q) = %q, %q, %v; want %q, %q", tt.dsn, kind, target, err, tt.wantKind, tt.wantTarget)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		xdg, home, want string
	}{
		{xdg: "/data", home: "/home/u", want: "/data/toolport/toolport.db"},
		{xdg: "", home: "/home/u", want: "/home/u/.local/share/toolport/toolport.db"},
		{xdg: "relative/dir", home: "/home/u", want: "/home/u/.local/share/toolport/toolport.db"},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == "XDG_DATA_HOME" {
				return tt.xdg
			}
			return ""
		}
		if got := store.DefaultPath(getenv, tt.home); got != tt.want {
			t.Errorf("DefaultPath(XDG_DATA_HOME=%q, home=%q) = %q, want %q", tt.xdg, tt.home, got, tt.want)
		}
	}
}

func TestOpenSQLiteCreatesPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "toolport.db")
	db := openDB(t, "sqlite://"+path)
	if db.Engine() != store.EngineSQLite {
		t.Errorf("Engine() = %q", db.Engine())
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", p, got, want)
		}
	}
	var mode string
	if err := db.w.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := db.r.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys on the read pool = %d, %v; want 1", fk, err)
	}
}

// TestOpenRefusesNoDatabase: with no DSN the store does not guess a path
// from the environment (it reads none); the caller resolves the default.
func TestOpenRefusesNoDatabase(t *testing.T) {
	for _, dsn := range []string{"", "  "} {
		db, err := Open(context.Background(), dsn)
		if err == nil {
			db.Close()
			t.Errorf("Open(%q) opened a database", dsn)
		} else if !strings.Contains(err.Error(), "no database given") {
			t.Errorf("Open(%q) = %v, want it to say no database was given", dsn, err)
		}
	}
}

func TestOpenMemory(t *testing.T) {
	db := openDB(t, "sqlite::memory:")
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, store.Conversation{Title: "in memory"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetConversation(ctx, c.ID); err != nil {
		t.Fatalf("read back from the in-memory database: %v", err)
	}
}

func TestMigrationsMatchAcrossEngines(t *testing.T) {
	lite, err := migrations(store.EngineSQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrations(store.EnginePostgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) == 0 || len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].version != pg[i].version || lite[i].name != pg[i].name {
			t.Errorf("migration %d: SQLite %s, PostgreSQL %s", i, lite[i].name, pg[i].name)
		}
	}
}

func TestOpenIsIdempotent(t *testing.T) {
	want, err := migrations(store.EngineSQLite)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			ctx := context.Background()
			first := openDB(t, dsn)
			if _, err := first.CreateConversation(ctx, store.Conversation{ID: "kept", Title: "kept"}); err != nil {
				t.Fatal(err)
			}
			first.Close()
			second := openDB(t, dsn)
			v, err := second.SchemaVersion(ctx)
			if err != nil || v != want[len(want)-1].version {
				t.Errorf("SchemaVersion = %d, %v; want %d", v, err, want[len(want)-1].version)
			}
			var n int
			if err := second.r.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(want) {
				t.Errorf("schema_migrations has %d rows (%v), want %d", n, err, len(want))
			}
			if _, err := second.GetConversation(ctx, "kept"); err != nil {
				t.Errorf("data written before reopening: %v", err)
			}
		})
	}
}

// TestConcurrentOpen starts several openers on one fresh database at once,
// as when two processes start together: each must see a migrated schema.
func TestConcurrentOpen(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.newDSN(t)
			const openers = 6
			var wg sync.WaitGroup
			errs := make(chan error, openers)
			for range openers {
				wg.Go(func() {
					db, err := Open(context.Background(), dsn)
					if err != nil {
						errs <- err
						return
					}
					defer db.Close()
					_, err = db.ListConversations(context.Background(), store.ListOptions{})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestOpenPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Port 1 on loopback: nothing listens, and the context is already done.
	_, err := Open(ctx, "postgres://nobody:secret-password@127.0.0.1:1/x?sslmode=disable&connect_timeout=1")
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if msg := err.Error(); strings.Contains(msg, "secret-password") {
		t.Errorf("error leaks the password: %s", msg)
	}
}

// A file that is not a database, or a place where none can be made, is
// named with what to do: the default path is one the user never chose.
func TestOpenUnusableFileSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       []string
	}{
		{"not a database", garbage, []string{garbage + " is not a SQLite database (file is not a database)",
			"move it aside or set TOOLPORT_DATABASE_URL"}},
		// A file where the directory should be: fails even for root,
		// unlike a directory without write permission.
		{"no directory can be made", filepath.Join(garbage, "toolport.db"), []string{garbage + " cannot be created",
			"set TOOLPORT_DATABASE_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(context.Background(), tt.path)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("error %T %v is not a *FileError", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
