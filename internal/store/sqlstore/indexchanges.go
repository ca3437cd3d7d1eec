package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolport/toolport/internal/store"
)

// Following the track index from another process.
//
// A long-running process (toolport serve) keeps the index in memory while
// another one (toolport index add) writes to the store. To catch up cheaply
// it polls [DB.IndexVersion] and, when that changed, reads only the records
// written since the last version it saw with [DB.EachIndexRecordSince].
//
// That is exact only if a record committed after a reader saw version V
// carries an UpdatedAt later than V.Updated. Timestamps taken from a clock
// before commit do not give that by themselves: two writers may commit in
// the other order than they read the clock, and clocks may step back. So
// every write to the track index stamps its rows under the index's write
// lock (SQLite's single writer; on PostgreSQL a transaction-scoped advisory
// lock) with a time strictly after every UpdatedAt already stored. Stamps
// then increase in commit order, one per transaction.

// IndexVersion returns the index's current version: one statement over the
// updated_at index (a count and a max), far cheaper than reading records.
func (db *DB) IndexVersion(ctx context.Context) (store.IndexVersion, error) {
	var v store.IndexVersion
	var at dbTime
	// Two subqueries rather than one SELECT count(*), max(…): SQLite
	// answers a lone max() from the index's end, not by a scan.
	err := db.r.QueryRowContext(ctx,
		`SELECT (SELECT count(*) FROM track_index), (SELECT max(updated_at) FROM track_index)`).Scan(&v.Count, &at)
	if err != nil {
		return store.IndexVersion{}, fmt.Errorf("store: index version: %w", err)
	}
	v.Updated = at.t
	return v, nil
}

// indexStamp serialises writers of the track index and returns the
// updated_at for the rows tx writes: now, or just after the latest stored
// stamp if the clock is behind it. On SQLite the write transaction already
// holds the database's only write lock; on PostgreSQL an advisory lock held
// until tx ends makes index writers take turns.
func (db *DB) indexStamp(ctx context.Context, tx *sql.Tx) (any, error) {
	if db.d.name == store.EnginePostgres {
		if _, err := tx.ExecContext(ctx,
			`SELECT pg_advisory_xact_lock(hashtext('toolport.track_index:' || current_schema()))`); err != nil {
			return nil, err
		}
	}
	var last dbTime
	if err := tx.QueryRowContext(ctx, `SELECT max(updated_at) FROM track_index`).Scan(&last); err != nil {
		return nil, err
	}
	at := now()
	if !last.t.IsZero() && !at.After(last.t) {
		at = last.t.Add(time.Microsecond)
	}
	return db.d.time(at), nil
}

// EachIndexRecordSince calls fn for every index record written after since
// (every record when since is zero), embeddings included, in UpdatedAt
// order, streaming: the delta to apply to an in-memory copy that reflects
// IndexVersion.Updated == since. Records written while the scan runs may
// be included; a caller that wants exactly the state of one version skips
// records with UpdatedAt after it, and reads them on its next catch-up.
// Deleted records do not show up: detect deletions from
// IndexVersion.Count. An error from fn stops the scan and is returned as
// is. The in-memory SQLite caveat of [DB.EachEmbedding] applies.
func (db *DB) EachIndexRecordSince(ctx context.Context, since time.Time, fn func(store.IndexRecord) error) error {
	rows, err := db.r.QueryContext(ctx,
		`SELECT `+indexColumns+` FROM track_index WHERE updated_at > $1 ORDER BY updated_at, isrc`, db.d.time(since))
	if err != nil {
		return fmt.Errorf("store: scan index changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanIndexRecord(rows)
		if err != nil {
			return fmt.Errorf("store: scan index changes: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: scan index changes: %w", err)
	}
	return nil
}

// EachEmbeddingSince is [DB.EachEmbedding] restricted to records written
// after since, in UpdatedAt order: for a vector-only copy of the index to
// catch up. fn also gets the record's UpdatedAt, so that the caller knows
// how far it got. A record whose embedding was dropped since (its content
// changed and it awaits embedding) does not show up either.
func (db *DB) EachEmbeddingSince(ctx context.Context, embedder string, since time.Time,
	fn func(isrc string, vec []float32, updated time.Time) error) error {
	q := `SELECT isrc, embedding, dims, updated_at FROM track_index WHERE embedding IS NOT NULL AND updated_at > $1`
	args := []any{db.d.time(since)}
	if embedder != "" {
		q += ` AND embedder = $2`
		args = append(args, embedder)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY updated_at, isrc`, args...)
	if err != nil {
		return fmt.Errorf("store: scan embedding changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var isrc string
		var raw sql.RawBytes // decoded at once, so the driver's buffer is not kept
		var dims int
		var at dbTime
		if err := rows.Scan(&isrc, &raw, &dims, &at); err != nil {
			return fmt.Errorf("store: scan embedding changes: %w", err)
		}
		vec, err := decodeVector(raw, dims)
		if err != nil {
			return fmt.Errorf("store: scan embedding changes: %s: %w", isrc, err)
		}
		if err := fn(isrc, vec, at.t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: scan embedding changes: %w", err)
	}
	return nil
}
