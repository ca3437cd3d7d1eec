package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// writeStmts is prepared on SQLite's writer connection when the store
// opens: every statement a chat turn writes with.
//
// The SQLite driver parses a statement's text on every call made without a
// prepared statement: under a burst of chat turns that parsing was 8 % of
// the server's CPU, on the one writer connection every write waits for.
// database/sql keeps a *sql.Stmt prepared per connection and reuses it in
// transactions (Tx.StmtContext). The statements are prepared up front, not on
// first use, because preparing takes a connection from the pool, and the
// writer's only connection may be held by the transaction asking. PostgreSQL
// needs none of this: pgx caches its prepared statements per connection.
var writeStmts = []string{
	qSavepointAppend, qRollbackAppend, qReleaseAppend,
	qTouchConversation, qInsertMessage, qFindMessage, qUpdateMessage, qIndexMessage, qUnindexMessage,
	qStartTurn, qEndTurn, qEndTurnFenced, qInsertTurnEvent, qCheckFence,
}

// stmts is a store's prepared statements, by text; read-only once the
// store is open.
type stmts map[string]*sql.Stmt

// prepareWrites prepares writeStmts on the writer.
func (db *DB) prepareWrites(ctx context.Context) error {
	db.wstmts = stmts{}
	for _, q := range writeStmts {
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("preparing %.40q: %w", q, err)
		}
		db.wstmts[q] = st
	}
	return nil
}

// close closes the statements.
func (s stmts) close() {
	for _, st := range s {
		st.Close()
	}
}

// execTx runs q in tx, through its prepared statement where there is one.
func (db *DB) execTx(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	if st := db.wstmts[q]; st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, q, args...)
}

// queryRowTx is QueryRowContext in tx, through the prepared statement where
// there is one.
func (db *DB) queryRowTx(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	if st := db.wstmts[q]; st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, q, args...)
}

// readStmtsMax bounds how many read statements a store keeps prepared: the
// texts differ by the length of their IN lists, which callers choose.
const readStmtsMax = 64

// readStmts is SQLite's read statements prepared on first use, by text, so
// that a search's lookups of its shown tracks and their library flags are
// not parsed again on every call (3 % of the server's CPU under a burst of
// chat turns). PostgreSQL leaves it off: pgx caches its own.
type readStmts struct {
	on bool
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// queryRead is db.r.QueryContext through a prepared statement where the
// cache has or can take one. It must not be called holding a reader
// connection (in a transaction): preparing may need one.
func (db *DB) queryRead(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st, _ := db.readStmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	// Unprepared: a preparing error, if any, comes back from the query.
	return db.r.QueryContext(ctx, q, args...)
}

// readStmt is q's statement on the reader, prepared now if the cache has
// room; nil when it is off or full, or with the error preparing it.
func (db *DB) readStmt(ctx context.Context, q string) (*sql.Stmt, error) {
	rs := &db.rstmts
	if !rs.on {
		return nil, nil
	}
	rs.mu.Lock()
	st, full := rs.m[q], len(rs.m) >= readStmtsMax
	rs.mu.Unlock()
	if st != nil || full {
		return st, nil
	}
	// Prepared without the lock: preparing waits for a free connection.
	st, err := db.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if had := rs.m[q]; had != nil || len(rs.m) >= readStmtsMax {
		st.Close()
		return had, nil
	}
	if rs.m == nil {
		rs.m = map[string]*sql.Stmt{}
	}
	rs.m[q] = st
	return st, nil
}

// openReadStmts are prepared when the store opens, so that they keep their
// place however many IN-list lengths fill the cache: a conversation's read
// starts every turn.
var openReadStmts = []string{qGetConversation}

// prepareReads prepares openReadStmts on the reader.
func (db *DB) prepareReads(ctx context.Context) error {
	for _, q := range openReadStmts {
		if _, err := db.readStmt(ctx, q); err != nil {
			return fmt.Errorf("preparing %.40q: %w", q, err)
		}
	}
	return nil
}

// close closes the statements.
func (rs *readStmts) close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, st := range rs.m {
		st.Close()
	}
	rs.m = nil
}
