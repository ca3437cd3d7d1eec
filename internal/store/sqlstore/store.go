// Package sqlstore implements [store.Store] on SQL databases: Toolport's
// persistence of the user's music library, the track index (metadata and
// embeddings for semantic search) and chat conversations. It is the only
// package that imports the database drivers.
//
// One API, two engines. [Open] picks the engine from the DSN: an embedded SQLite
// file (the default, so that `toolport serve` works with no configuration) or a
// PostgreSQL server (to scale out). Both run the same versioned migrations,
// kept per dialect where the SQL differs (JSONB and TIMESTAMPTZ on PostgreSQL,
// TEXT on SQLite), and both pass the same test suite.
//
// All methods are safe for concurrent use. On SQLite, writes go through a
// single connection (SQLite allows one writer at a time; queuing in the pool
// is cheaper than SQLITE_BUSY retries) while reads use a separate pool, which
// WAL mode lets run alongside the writer.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/store"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"modernc.org/sqlite"               // registers the "sqlite" database/sql driver
)

// busyTimeout is how long a SQLite connection waits for another process's
// write lock before giving up with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// DB implements every store interface; the consumers depend on those.
var _ store.Store = (*DB)(nil)

// DB is an open store. Create it with [Open] and release it with [DB.Close].
type DB struct {
	w *sql.DB // writes; on SQLite a single connection
	r *sql.DB // reads; may be w
	d dialect
	// appends group SQLite's writes of chat turns into one transaction
	// (see appender); nil on PostgreSQL.
	appends *appender
	// On PostgreSQL (nil on SQLite) claims, message appends and fenced
	// event appends of concurrent turns are each written in one statement
	// (see claimGroup, messageGroup, eventGroup).
	claims   *claimGroup
	messages *messageGroup
	events   *eventGroup
	// reads share concurrent GetConversation statements on PostgreSQL
	// (nil on SQLite, where a read is in-process).
	reads *conversationReads
	// watch holds the running WatchIndex listeners (indexwatch.go).
	watch watchers
	// turns carries turn notes between processes (see turns.go).
	turns *turnNotes
	// wstmts are the writer's prepared statements (SQLite; see writeStmts).
	wstmts stmts
	// rstmts are the reader's prepared statements (SQLite; see readStmts).
	rstmts readStmts
	// searchTimeout bounds SearchConversations (ns; 0 is the default).
	searchTimeout atomic.Int64
}

// Open connects to the store named by dsn and applies any pending migrations.
//
// The DSN selects the engine:
//
//   - "postgres://…" or "postgresql://…": PostgreSQL (any libpq-style URL that
//     pgx accepts; extra parameters such as search_path are sent to the server).
//   - "sqlite:///abs/path.db", "sqlite:relative.db" or a plain file path: SQLite.
//   - "sqlite::memory:" or ":memory:": a private in-memory SQLite database,
//     gone when the DB is closed (for tests and throwaway runs).
//   - "": refused. The caller resolves the default path ([store.DefaultPath]
//     of the user's XDG_DATA_HOME and home): sqlstore reads no environment.
//
// For SQLite the parent directory is created (mode 0700) and a new database
// file is created with mode 0600: it holds private conversations.
// Opening is safe when several processes start at once: migrations run one at
// a time under a lock.
func Open(ctx context.Context, dsn string) (*DB, error) {
	kind, target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if kind == store.EngineSQLite && target == "" {
		return nil, errors.New("store: no database given and no home directory (set TOOLPORT_DATABASE_URL, XDG_DATA_HOME or HOME)")
	}
	var db *DB
	switch kind {
	case store.EnginePostgres:
		db, err = openPostgres(ctx, target)
	default:
		db, err = openSQLite(ctx, target)
	}
	if err != nil {
		return nil, fileError(kind, target, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, fileError(kind, target, err)
	}
	if err := db.initTurns(ctx, target); err != nil {
		db.Close()
		return nil, err
	}
	if kind == store.EngineSQLite {
		if err := db.prepareWrites(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		db.rstmts.on = true
		if err := db.prepareReads(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
	}
	if kind == store.EnginePostgres {
		db.claims = newClaimGroup(db)
		db.messages = newMessageGroup(db)
		db.events = newEventGroup(db)
		db.reads = newConversationReads(db)
	} else {
		db.appends = newAppender(db)
	}
	return db, nil
}

// Engine reports which engine backs the store: [store.EngineSQLite] or
// [store.EnginePostgres].
func (db *DB) Engine() string { return db.d.name }

// Ping checks that the database answers, for health checks.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Close releases the database connections. Operations in flight fail.
func (db *DB) Close() error {
	db.watch.close()
	if db.appends != nil {
		db.appends.close()
	}
	if db.claims != nil {
		db.claims.close()
		db.messages.close()
		db.events.close()
		db.reads.close()
	}
	db.wstmts.close()
	db.rstmts.close()
	err := errors.Join(db.turns.close(), db.w.Close())
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// FileError is a SQLite database file that cannot be used: it names the
// file, what is wrong and what to do, since the file is usually the default
// one, which the user never chose.
type FileError struct {
	Path    string
	Problem string // e.g. "is not a SQLite database (file is not a database)"
	Advice  string
	Err     error
}

func (e *FileError) Error() string { return e.Path + " " + e.Problem + ": " + e.Advice }
func (e *FileError) Unwrap() error { return e.Err }

// SQLite primary result codes (sqlite3.h) that mean the file itself cannot
// be used.
const (
	sqlitePerm     = 3
	sqliteReadOnly = 8
	sqliteCorrupt  = 11
	sqliteCantOpen = 14
	sqliteNotADB   = 26
)

// fileError turns SQLite's complaints about the database file into a
// [FileError]; other errors pass through.
func fileError(kind, target string, err error) error {
	if kind != store.EngineSQLite || target == memoryTarget {
		return err
	}
	if abs, aerr := filepath.Abs(target); aerr == nil {
		target = abs
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqliteNotADB:
		return &FileError{Path: target, Problem: "is not a SQLite database (file is not a database)",
			Advice: "move it aside or set TOOLPORT_DATABASE_URL", Err: err}
	case sqliteCorrupt:
		return &FileError{Path: target, Problem: "is a corrupt SQLite database",
			Advice: "move it aside (and restore a backup) or set TOOLPORT_DATABASE_URL", Err: err}
	case sqliteReadOnly, sqlitePerm, sqliteCantOpen:
		return &FileError{Path: target, Problem: "cannot be opened for writing (" + sqliteReason(se) + ")",
			Advice: "check its permissions and those of its directory, or set TOOLPORT_DATABASE_URL", Err: err}
	}
	return err
}

// sqliteReason is SQLite's message without the driver's decorations.
func sqliteReason(e *sqlite.Error) string {
	msg := e.Error()
	if i := strings.LastIndex(msg, " ("); i > 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

const memoryTarget = ":memory:"

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// parseDSN splits a DSN into the engine and its target: a PostgreSQL URL, a
// SQLite file path, memoryTarget, or "" for the default path.
func parseDSN(dsn string) (kind, target string, err error) {
	dsn = strings.TrimSpace(dsn)
	lower := strings.ToLower(dsn)
	switch {
	case dsn == "":
		return store.EngineSQLite, "", nil
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return store.EnginePostgres, dsn, nil
	case strings.HasPrefix(lower, "sqlite:"):
		p := dsn[len("sqlite:"):]
		p = strings.TrimPrefix(p, "//") // sqlite:///abs/path → /abs/path; sqlite://rel.db → rel.db
		if strings.ContainsAny(p, "?#") {
			return "", "", fmt.Errorf("%w: sqlite URL parameters are not supported", store.ErrInvalid)
		}
		if p == "" {
			return "", "", fmt.Errorf("%w: sqlite URL without a path", store.ErrInvalid)
		}
		if q, err := url.PathUnescape(p); err == nil {
			p = q
		}
		if p == memoryTarget {
			return store.EngineSQLite, memoryTarget, nil
		}
		return store.EngineSQLite, p, nil
	case dsn == memoryTarget:
		return store.EngineSQLite, memoryTarget, nil
	case schemeRE.MatchString(dsn):
		scheme, _, _ := strings.Cut(dsn, ":")
		return "", "", fmt.Errorf("%w: unsupported database URL scheme %q (want postgres://, sqlite: or a file path)", store.ErrInvalid, scheme)
	default:
		return store.EngineSQLite, dsn, nil
	}
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	params := url.Values{}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	params.Add("_pragma", "foreign_keys(1)")
	var name string
	if path == memoryTarget {
		name = memoryTarget
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("store: database path: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, &FileError{Path: filepath.Dir(abs), Problem: "cannot be created (" + err.Error() + ")",
				Advice: "create it, or set TOOLPORT_DATABASE_URL to a writable place", Err: err}
		}
		// Create the file ourselves so that it is private from the start;
		// SQLite gives its -wal and -shm files the same mode.
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return nil, &FileError{Path: abs, Problem: "cannot be created (" + errors.Unwrap(err).Error() + ")",
				Advice: "check the permissions of its directory, or set TOOLPORT_DATABASE_URL", Err: err}
		}
		name = "file:" + (&url.URL{Path: abs}).EscapedPath()
		params.Add("_pragma", "journal_mode(WAL)")
		params.Add("_pragma", "synchronous(NORMAL)")
	}
	// IMMEDIATE transactions take the write lock at BEGIN, so a transaction
	// never has to upgrade a read lock, which SQLite cannot wait for.
	wparams := url.Values{"_txlock": {"immediate"}}
	for _, p := range params["_pragma"] {
		wparams.Add("_pragma", p)
	}
	w, err := sql.Open("sqlite", name+"?"+wparams.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{w: w, r: w, d: sqliteDialect}
	if path != memoryTarget {
		// An in-memory database exists only on its one connection, so it
		// is read through the writer; a file gets a pool of readers.
		params.Add("_pragma", "query_only(1)")
		r, err := sql.Open("sqlite", name+"?"+params.Encode())
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		db.r = r
	}
	if err := pingSQLite(ctx, db.w); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	return db, nil
}

// pingSQLite opens the writer's connection. Switching a new file to WAL
// needs a lock that SQLite does not wait for with the busy handler, so a
// process opening the file while another creates it can get SQLITE_BUSY at
// once: that is retried until busyTimeout.
func pingSQLite(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := w.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of a locked database.
const sqliteBusy = 5

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	p, err := sql.Open("pgx", dsn)
	if err != nil {
		// pgx's parse errors can quote the DSN, password included.
		return nil, fmt.Errorf("%w: malformed PostgreSQL URL", store.ErrInvalid)
	}
	p.SetMaxOpenConns(20)
	p.SetMaxIdleConns(20)
	p.SetConnMaxIdleTime(5 * time.Minute)
	if err := p.PingContext(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("store: connect to postgres: %w", err)
	}
	return &DB{w: p, r: p, d: postgresDialect}, nil
}

// dialect holds what differs between the engines outside the migrations.
type dialect struct {
	name string
	// time converts a timestamp to a query argument: RFC 3339 text with
	// fixed microsecond precision on SQLite (so text order is time order),
	// time.Time for PostgreSQL's TIMESTAMPTZ.
	time func(time.Time) any
	// upsertBatch is how many rows one bulk upsert statement writes.
	// SQLite runs in-process, so a prepared one-row statement is fastest
	// (measured: multi-row VALUES gets slower per row as it grows); on
	// PostgreSQL each statement is a round trip, so rows are sent in groups
	// (50 rows × 14 parameters, far under its 65,535 limit).
	upsertBatch int
}

const sqliteTimeLayout = "2006-01-02T15:04:05.000000Z"

var (
	sqliteDialect = dialect{
		name:        store.EngineSQLite,
		time:        func(t time.Time) any { return t.UTC().Format(sqliteTimeLayout) },
		upsertBatch: 1,
	}
	postgresDialect = dialect{
		name:        store.EnginePostgres,
		time:        func(t time.Time) any { return t.UTC() },
		upsertBatch: 50,
	}
)

// now is the current time at the precision both engines keep (microseconds),
// so that a value written and read back compares equal.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// normTime brings a caller's timestamp to the stored precision.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// dbTime scans a timestamp from either engine.
type dbTime struct{ t time.Time }

func (d *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		d.t = v.UTC()
		return nil
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	case nil:
		d.t = time.Time{}
		return nil
	default:
		return fmt.Errorf("store: cannot scan %T as a time", src)
	}
}

func (d *dbTime) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("store: bad stored time %q: %w", s, err)
	}
	d.t = t.UTC()
	return nil
}

// placeholders returns "$from, $from+1, …" for n parameters.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

// lookupChunk bounds the parameters of one IN (…) query; both engines accept
// far more, but huge statements cost more to plan than they save.
const lookupChunk = 500

// chunks splits keys into slices of at most n, dropping empty strings and
// duplicates.
func chunks(keys []string, n int) [][]any {
	seen := make(map[string]bool, len(keys))
	var out [][]any
	var cur []any
	for _, k := range keys {
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		cur = append(cur, k)
		if len(cur) == n {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// rollback ends a transaction that did not commit; its error is of no use
// once another error is being returned.
func rollback(tx *sql.Tx) { _ = tx.Rollback() }

// validText refuses text PostgreSQL cannot store (invalid UTF-8, NUL bytes),
// on both engines, so that they behave alike.
func validText(what string, fields ...string) error {
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return fmt.Errorf("%w: %s: invalid UTF-8", store.ErrInvalid, what)
		}
		if strings.IndexByte(f, 0) >= 0 {
			return fmt.Errorf("%w: %s: NUL character", store.ErrInvalid, what)
		}
	}
	return nil
}
