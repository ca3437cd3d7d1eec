package cli

import (
	"context"
	"net/url"
	"sync"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/store/sqlstore"
)

// databaseURL is the one place the store's DSN is resolved, for every
// command: TOOLPORT_DATABASE_URL, else database.url in the credentials file,
// else SQLite at store.DefaultPath of the configuration's XDG_DATA_HOME and
// HOME ("" when neither is set: sqlstore then refuses to guess).
func databaseURL(c *config.Config) string {
	dsn := c.Lookup("TOOLPORT_DATABASE_URL", "database.url")
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		// A URL with credentials is a secret: read it as one, so that it is
		// scrubbed from tool results, logs and spans.
		dsn = c.Secret("TOOLPORT_DATABASE_URL", "database.url")
	}
	if dsn == "" {
		if home := c.Env("HOME"); home != "" || c.Env("XDG_DATA_HOME") != "" {
			dsn = store.DefaultPath(c.Env, home)
		}
	}
	return dsn
}

// sharedStore is the one store of a command: opened on first use (so that
// `toolport list` works with no database), then handed to every part that
// asks. A failed open is retried by the next caller.
type sharedStore struct {
	dsn string

	mu sync.Mutex
	db *sqlstore.DB
}

func newSharedStore(c *config.Config) *sharedStore { return &sharedStore{dsn: databaseURL(c)} }

// Open returns the store, opening it on first use.
func (s *sharedStore) Open(ctx context.Context) (*sqlstore.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		return s.db, nil
	}
	db, err := sqlstore.Open(ctx, s.dsn)
	if err != nil {
		return nil, err
	}
	s.db = db
	return db, nil
}

// music opens the store for the music pack.
func (s *sharedStore) music(ctx context.Context) (music.Store, error) {
	db, err := s.Open(ctx)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return db, nil
}

// Close closes the store if it was opened.
func (s *sharedStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}
