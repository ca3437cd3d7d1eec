package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/toolport/toolport/internal/store"
)

// checkPlaylist refuses a playlist over the bounds or with text PostgreSQL
// cannot store.
func checkPlaylist(p store.Playlist) error {
	if p.Title == "" {
		return fmt.Errorf("%w: playlist: title is empty", store.ErrInvalid)
	}
	if len(p.Title) > store.MaxPlaylistTitleBytes || len(p.Description) > store.MaxPlaylistTextBytes {
		return fmt.Errorf("%w: playlist: title or description too long", store.ErrInvalid)
	}
	if len(p.Items) > store.MaxPlaylistItems || len(p.Unresolved) > store.MaxPlaylistItems {
		return fmt.Errorf("%w: playlist: more than %d items", store.ErrInvalid, store.MaxPlaylistItems)
	}
	if err := validText("playlist", p.ID, p.Title, p.Description, p.ConversationID, p.MessageID, p.ToolCallID, p.TidalPlaylistID); err != nil {
		return err
	}
	for i, it := range p.Items {
		what := fmt.Sprintf("playlist item %d", i)
		if it.TidalID == "" {
			return fmt.Errorf("%w: %s: no Tidal id", store.ErrInvalid, what)
		}
		for _, f := range []string{it.TidalID, it.ISRC, it.Title, it.Artist, it.Album, it.ArtworkURL} {
			if len(f) > store.MaxPlaylistFieldBytes {
				return fmt.Errorf("%w: %s: a field is too long", store.ErrInvalid, what)
			}
		}
		if math.IsNaN(it.Duration) || math.IsInf(it.Duration, 0) || it.Duration < 0 {
			return fmt.Errorf("%w: %s: duration is not a number of seconds", store.ErrInvalid, what)
		}
		if len(it.Reasoning) > store.MaxPlaylistTextBytes {
			return fmt.Errorf("%w: %s: reasoning too long", store.ErrInvalid, what)
		}
		if err := validText(what, it.TidalID, it.ISRC, it.Title, it.Artist, it.Album, it.ArtworkURL, it.Reasoning); err != nil {
			return err
		}
	}
	for i, e := range p.Unresolved {
		if err := validText(fmt.Sprintf("unresolved entry %d", i), e.ISRC, e.Title, e.Artist, e.Reasoning, e.Reason); err != nil {
			return err
		}
	}
	return nil
}

// CreatePlaylist saves a playlist and its items in one transaction. An empty
// ID gets a random UUID; CreatedAt is set to now when zero. A conversation
// id that names no conversation is stored as none (the playlist outlives a
// deleted conversation too).
func (db *DB) CreatePlaylist(ctx context.Context, p store.Playlist) (store.Playlist, error) {
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	if err := checkPlaylist(p); err != nil {
		return store.Playlist{}, err
	}
	if p.Items == nil {
		p.Items = []store.PlaylistItem{}
	}
	unresolved, err := json.Marshal(p.Unresolved)
	if err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	}
	if p.Unresolved == nil {
		unresolved = []byte("[]")
	}
	p.CreatedAt = normTime(p.CreatedAt)
	p.UpdatedAt = p.CreatedAt
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	}
	defer rollback(tx)
	var conv sql.NullString
	if p.ConversationID != "" {
		err := tx.QueryRowContext(ctx, `SELECT id FROM conversations WHERE id = $1`, p.ConversationID).Scan(&conv)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
		}
	}
	p.ConversationID = conv.String
	res, err := tx.ExecContext(ctx, `INSERT INTO playlists
        (id, title, description, conversation_id, message_id, tool_call_id, tidal_playlist_id, unresolved, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
		p.ID, p.Title, p.Description, conv, p.MessageID, p.ToolCallID, p.TidalPlaylistID, string(unresolved),
		db.d.time(p.CreatedAt), db.d.time(p.UpdatedAt))
	if err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	} else if n == 0 {
		return store.Playlist{}, fmt.Errorf("store: playlist %q: %w", p.ID, store.ErrConflict)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO playlist_items
        (playlist_id, position, tidal_id, isrc, title, artist, album, artwork_url, duration, reasoning)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`)
	if err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	}
	defer ins.Close()
	for i, it := range p.Items {
		if _, err := ins.ExecContext(ctx, p.ID, i, it.TidalID, it.ISRC, it.Title, it.Artist, it.Album, it.ArtworkURL,
			it.Duration, it.Reasoning); err != nil {
			return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return store.Playlist{}, fmt.Errorf("store: create playlist: %w", err)
	}
	return p, nil
}

const playlistColumns = `id, title, description, coalesce(conversation_id, ''), message_id, tool_call_id, tidal_playlist_id, unresolved, created_at, updated_at`

func scanPlaylist(sc interface{ Scan(...any) error }) (store.Playlist, error) {
	var p store.Playlist
	var created, updated dbTime
	var unresolved string
	if err := sc.Scan(&p.ID, &p.Title, &p.Description, &p.ConversationID, &p.MessageID, &p.ToolCallID,
		&p.TidalPlaylistID, &unresolved, &created, &updated); err != nil {
		return store.Playlist{}, err
	}
	p.CreatedAt, p.UpdatedAt = created.t, updated.t
	if err := json.Unmarshal([]byte(unresolved), &p.Unresolved); err != nil {
		return store.Playlist{}, fmt.Errorf("store: playlist %q: bad unresolved entries: %w", p.ID, err)
	}
	return p, nil
}

// GetPlaylist returns a playlist with its items in order, or
// [store.ErrNotFound].
func (db *DB) GetPlaylist(ctx context.Context, id string) (store.Playlist, error) {
	p, err := scanPlaylist(db.r.QueryRowContext(ctx, `SELECT `+playlistColumns+` FROM playlists WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Playlist{}, fmt.Errorf("store: playlist %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Playlist{}, fmt.Errorf("store: get playlist: %w", err)
	}
	items, err := db.playlistItems(ctx, []string{id})
	if err != nil {
		return store.Playlist{}, err
	}
	p.Items = items[id]
	if p.Items == nil {
		p.Items = []store.PlaylistItem{}
	}
	return p, nil
}

// playlistItems reads the items of the playlists ids, by playlist, in order.
func (db *DB) playlistItems(ctx context.Context, ids []string) (map[string][]store.PlaylistItem, error) {
	out := make(map[string][]store.PlaylistItem, len(ids))
	for _, c := range chunks(ids, lookupChunk) {
		rows, err := db.r.QueryContext(ctx, `SELECT playlist_id, tidal_id, isrc, title, artist, album, artwork_url, duration, reasoning
            FROM playlist_items WHERE playlist_id IN (`+placeholders(1, len(c))+`) ORDER BY playlist_id, position`, c...)
		if err != nil {
			return nil, fmt.Errorf("store: playlist items: %w", err)
		}
		for rows.Next() {
			var pid string
			var it store.PlaylistItem
			if err := rows.Scan(&pid, &it.TidalID, &it.ISRC, &it.Title, &it.Artist, &it.Album, &it.ArtworkURL,
				&it.Duration, &it.Reasoning); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: playlist items: %w", err)
			}
			out[pid] = append(out[pid], it)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: playlist items: %w", err)
		}
	}
	return out, nil
}

// ListPlaylists lists playlists with their items, newest first; opt.Query
// keeps those whose title contains it.
func (db *DB) ListPlaylists(ctx context.Context, opt store.ListOptions) (store.PlaylistPage, error) {
	limit, offset := opt.Bounds()
	where, args := "", []any{}
	if opt.Query != "" {
		where = ` WHERE lower(title) LIKE $1 ESCAPE '\'`
		args = append(args, likePattern(opt.Query))
	}
	page := store.PlaylistPage{Playlists: []store.Playlist{}}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM playlists`+where, args...).Scan(&page.Total); err != nil {
		return store.PlaylistPage{}, fmt.Errorf("store: list playlists: %w", err)
	}
	q := fmt.Sprintf(`SELECT %s FROM playlists%s ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d`,
		playlistColumns, where, len(args)+1, len(args)+2)
	rows, err := db.r.QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return store.PlaylistPage{}, fmt.Errorf("store: list playlists: %w", err)
	}
	ids := []string{}
	for rows.Next() {
		p, err := scanPlaylist(rows)
		if err != nil {
			rows.Close()
			return store.PlaylistPage{}, fmt.Errorf("store: list playlists: %w", err)
		}
		page.Playlists = append(page.Playlists, p)
		ids = append(ids, p.ID)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return store.PlaylistPage{}, fmt.Errorf("store: list playlists: %w", err)
	}
	items, err := db.playlistItems(ctx, ids)
	if err != nil {
		return store.PlaylistPage{}, err
	}
	for i := range page.Playlists {
		page.Playlists[i].Items = items[page.Playlists[i].ID]
		if page.Playlists[i].Items == nil {
			page.Playlists[i].Items = []store.PlaylistItem{}
		}
	}
	return page, nil
}

// SetPlaylistTidalID records the TIDAL playlist id, or returns
// [store.ErrNotFound].
func (db *DB) SetPlaylistTidalID(ctx context.Context, id, tidalID string) error {
	if err := validText("tidal playlist id", tidalID); err != nil {
		return err
	}
	if len(tidalID) > store.MaxPlaylistFieldBytes {
		return fmt.Errorf("%w: tidal playlist id too long", store.ErrInvalid)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE playlists SET tidal_playlist_id = $2, updated_at = $3 WHERE id = $1`,
		id, tidalID, db.d.time(now()))
	if err != nil {
		return fmt.Errorf("store: set playlist tidal id: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: set playlist tidal id: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: playlist %q: %w", id, store.ErrNotFound)
	}
	return nil
}

var _ store.Playlists = (*DB)(nil)
