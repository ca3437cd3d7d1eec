package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
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
	qTouchConversation, qInsertMessage, qUpdateMessage,
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
