package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/toolport/toolport/internal/store"
)

// Notifications of track index changes (PostgreSQL).
//
// Every statement that writes track_index fires a trigger (migration 0009)
// that notifies channel toolport_index with the table's schema, delivered
// when the transaction commits. [DB.WatchIndex] listens on one connection
// taken from the pool for as long as it runs; a reader then reloads only
// what changed ([DB.EachIndexRecordSince]) when told, rather than polling.

// indexChannel is the channel the trigger notifies.
const indexChannel = "toolport_index"

// Bounds on reconnecting after the listening connection is lost.
const (
	watchRetryMin = 250 * time.Millisecond
	watchRetryMax = 30 * time.Second
)

// watchers tracks the running WatchIndex calls, so that Close can end them
// before closing the pool (which waits for connections in use).
type watchers struct {
	mu      sync.Mutex
	closed  bool
	cancels map[int]context.CancelFunc
	next    int
	wg      sync.WaitGroup
}

func (w *watchers) add(cancel context.CancelFunc) (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, false
	}
	if w.cancels == nil {
		w.cancels = map[int]context.CancelFunc{}
	}
	w.next++
	w.cancels[w.next] = cancel
	w.wg.Add(1)
	return w.next, true
}

func (w *watchers) done(id int) {
	w.mu.Lock()
	delete(w.cancels, id)
	w.mu.Unlock()
	w.wg.Done()
}

// close ends every watcher and waits for them.
func (w *watchers) close() {
	w.mu.Lock()
	w.closed = true
	for _, c := range w.cancels {
		c()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// WatchIndex calls changed each time the track index may have changed:
// once the listening connection is set up (anything may have changed
// before), after each committed write by any process on this store's
// schema, and again after a lost connection is re-established. Calls are
// made one at a time from WatchIndex's goroutine; a slow changed delays the
// next notification, never loses it (the server queues them). It runs until
// ctx ends or the store is closed, returning nil then.
//
// Only PostgreSQL notifies; on SQLite it returns [errors.ErrUnsupported] at
// once, and readers keep polling [DB.IndexVersion].
func (db *DB) WatchIndex(ctx context.Context, changed func()) error {
	if db.d.name != store.EnginePostgres {
		return fmt.Errorf("store: index notifications need PostgreSQL: %w", errors.ErrUnsupported)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	id, ok := db.watch.add(cancel)
	if !ok {
		return nil // closed
	}
	defer db.watch.done(id)
	backoff := watchRetryMin
	for {
		start := time.Now()
		err := db.listenIndex(ctx, changed)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > watchRetryMax {
			backoff = watchRetryMin // it had been working: retry soon
		}
		_ = err // the connection was lost; reconnect after a pause
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchRetryMax)
	}
}

// listenIndex listens on one pooled connection until ctx ends or the
// connection fails. The connection is always discarded afterwards rather
// than returned to the pool still listening.
func (db *DB) listenIndex(ctx context.Context, changed func()) error {
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var listenErr error
	_ = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			listenErr = fmt.Errorf("store: unexpected PostgreSQL driver connection %T", dc)
			return driver.ErrBadConn
		}
		pc := sc.Conn()
		var schema string
		if err := pc.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			listenErr = err
			return driver.ErrBadConn
		}
		if _, err := pc.Exec(ctx, "LISTEN "+indexChannel); err != nil {
			listenErr = err
			return driver.ErrBadConn
		}
		changed()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				listenErr = err
				return driver.ErrBadConn
			}
			if n.Channel == indexChannel && n.Payload == schema {
				changed()
			}
		}
	})
	return listenErr
}
