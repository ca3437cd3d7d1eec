package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolport/toolport/internal/store"
)

var _ store.IndexSnapshots = (*DB)(nil)

// SaveIndexSnapshot implements [store.IndexSnapshots].
func (db *DB) SaveIndexSnapshot(ctx context.Context, s store.IndexSnapshot) error {
	if err := validSnapshotID(s.Name, s.Key); err != nil {
		return err
	}
	if len(s.Data) > store.MaxSnapshotBytes {
		return fmt.Errorf("%w: snapshot %s: %d bytes, at most %d", store.ErrInvalid, s.Name, len(s.Data), store.MaxSnapshotBytes)
	}
	if s.Data == nil {
		s.Data = []byte{} // the drivers send nil as NULL
	}
	_, err := db.w.ExecContext(ctx,
		`INSERT INTO index_snapshots (name, key, data, created_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (name) DO UPDATE SET key = excluded.key, data = excluded.data, created_at = excluded.created_at`,
		s.Name, s.Key, s.Data, now().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("store: save index snapshot %s: %w", s.Name, err)
	}
	return nil
}

// IndexSnapshot implements [store.IndexSnapshots]. The key is compared in
// the query, so a stale snapshot's data is never read.
func (db *DB) IndexSnapshot(ctx context.Context, name, key string) (store.IndexSnapshot, bool, error) {
	if err := validSnapshotID(name, key); err != nil {
		return store.IndexSnapshot{}, false, err
	}
	s := store.IndexSnapshot{Name: name, Key: key}
	err := db.r.QueryRowContext(ctx,
		`SELECT data FROM index_snapshots WHERE name = $1 AND key = $2`, name, key).Scan(&s.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.IndexSnapshot{}, false, nil
	}
	if err != nil {
		return store.IndexSnapshot{}, false, fmt.Errorf("store: index snapshot %s: %w", name, err)
	}
	return s, true, nil
}

func validSnapshotID(name, key string) error {
	if name == "" || len(name) > store.MaxSnapshotNameLen || len(key) > store.MaxSnapshotKeyLen {
		return fmt.Errorf("%w: snapshot name %q or key of %d bytes", store.ErrInvalid, name, len(key))
	}
	return validText("snapshot", name, key)
}
