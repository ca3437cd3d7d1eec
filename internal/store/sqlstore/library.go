package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/toolport/toolport/internal/store"
)

// likePattern builds a LIKE pattern matching s anywhere, with LIKE's
// wildcards in s taken literally (ESCAPE '\').
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + strings.ToLower(r.Replace(s)) + "%"
}

func trackKey(t store.Track) string {
	if t.TidalID != "" {
		return t.TidalID
	}
	return "isrc:" + t.ISRC
}

// AddTracks adds tracks to the library in one transaction (all or none) and
// reports how many were new. A track already present (same Tidal id, or same
// ISRC for a track without one) has its metadata updated and keeps its
// AddedAt. Adding a track with a Tidal id replaces an ISRC-only entry for the
// same ISRC; adding an ISRC-only track whose ISRC is already in the library
// changes nothing.
func (db *DB) AddTracks(ctx context.Context, tracks []store.Track) (added int, err error) {
	for i, t := range tracks {
		if t.TidalID == "" && t.ISRC == "" {
			return 0, fmt.Errorf("%w: track %d (%q) has neither tidalId nor isrc", store.ErrInvalid, i, t.Title)
		}
		if err := validText(fmt.Sprintf("track %d", i), t.TidalID, t.ISRC, t.Title, t.Artist, t.Album, t.AlbumID, t.ArtworkURL); err != nil {
			return 0, err
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: add tracks: %w", err)
	}
	defer rollback(tx)
	ins, err := tx.PrepareContext(ctx, `INSERT INTO library_tracks
        (key, tidal_id, isrc, title, artist, album, album_id, duration, artwork_url, added_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
        ON CONFLICT (key) DO UPDATE SET
            isrc = excluded.isrc, title = excluded.title, artist = excluded.artist,
            album = excluded.album, album_id = excluded.album_id, duration = excluded.duration,
            artwork_url = excluded.artwork_url`)
	if err != nil {
		return 0, fmt.Errorf("store: add tracks: %w", err)
	}
	defer ins.Close()
	for _, t := range tracks {
		key := trackKey(t)
		addedAt := t.AddedAt
		var exists int
		replaced := false
		if t.TidalID == "" {
			err = tx.QueryRowContext(ctx, `SELECT count(*) FROM library_tracks WHERE isrc = $1`, t.ISRC).Scan(&exists)
			if err != nil {
				return 0, fmt.Errorf("store: add tracks: %w", err)
			}
			if exists > 0 {
				continue
			}
		} else {
			if t.ISRC != "" {
				// Replace an ISRC-only placeholder, keeping when it was added.
				var at dbTime
				err := tx.QueryRowContext(ctx, `DELETE FROM library_tracks WHERE key = $1 RETURNING added_at`,
					"isrc:"+t.ISRC).Scan(&at)
				switch {
				case err == nil:
					replaced = true
					if addedAt.IsZero() {
						addedAt = at.t
					}
				case err != sql.ErrNoRows:
					return 0, fmt.Errorf("store: add tracks: %w", err)
				}
			}
			err = tx.QueryRowContext(ctx, `SELECT count(*) FROM library_tracks WHERE key = $1`, key).Scan(&exists)
			if err != nil {
				return 0, fmt.Errorf("store: add tracks: %w", err)
			}
		}
		if _, err := ins.ExecContext(ctx, key, t.TidalID, t.ISRC, t.Title, t.Artist, t.Album, t.AlbumID,
			t.Duration, t.ArtworkURL, db.d.time(normTime(addedAt))); err != nil {
			return 0, fmt.Errorf("store: add track %q: %w", key, err)
		}
		if replaced {
			continue // not a new track, only a better-identified one
		}
		if exists == 0 {
			added++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: add tracks: %w", err)
	}
	return added, nil
}

// RemoveTracks removes the tracks whose Tidal id or ISRC is among ids and
// reports how many library entries went.
func (db *DB) RemoveTracks(ctx context.Context, ids []string) (removed int, err error) {
	return db.removeIn(ctx, "remove tracks", ids,
		func(in string) string {
			return `DELETE FROM library_tracks WHERE tidal_id IN (` + in + `) OR isrc IN (` + in + `)`
		})
}

// RemoveAlbums removes the albums with the given Tidal ids and reports how
// many went. Their tracks stay: they were added on their own.
func (db *DB) RemoveAlbums(ctx context.Context, tidalIDs []string) (removed int, err error) {
	return db.removeIn(ctx, "remove albums", tidalIDs,
		func(in string) string { return `DELETE FROM library_albums WHERE tidal_id IN (` + in + `)` })
}

func (db *DB) removeIn(ctx context.Context, op string, keys []string, query func(in string) string) (int, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	defer rollback(tx)
	total := 0
	for _, c := range chunks(keys, lookupChunk) {
		res, err := tx.ExecContext(ctx, query(placeholders(1, len(c))), c...)
		if err != nil {
			return 0, fmt.Errorf("store: %s: %w", op, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("store: %s: %w", op, err)
		}
		total += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: %s: %w", op, err)
	}
	return total, nil
}

const trackColumns = `tidal_id, isrc, title, artist, album, album_id, duration, artwork_url, added_at`

func scanTrack(sc interface{ Scan(...any) error }) (store.Track, error) {
	var t store.Track
	var at dbTime
	err := sc.Scan(&t.TidalID, &t.ISRC, &t.Title, &t.Artist, &t.Album, &t.AlbumID, &t.Duration, &t.ArtworkURL, &at)
	t.AddedAt = at.t
	return t, err
}

// ListTracks lists library tracks, most recently added first.
func (db *DB) ListTracks(ctx context.Context, opt store.ListOptions) (store.TrackPage, error) {
	limit, offset := opt.Bounds()
	where, args := "", []any{}
	if opt.Query != "" {
		where = ` WHERE lower(title) LIKE $1 ESCAPE '\' OR lower(artist) LIKE $1 ESCAPE '\' OR lower(album) LIKE $1 ESCAPE '\'`
		args = append(args, likePattern(opt.Query))
	}
	page := store.TrackPage{Tracks: []store.Track{}}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM library_tracks`+where, args...).Scan(&page.Total); err != nil {
		return store.TrackPage{}, fmt.Errorf("store: list tracks: %w", err)
	}
	q := fmt.Sprintf(`SELECT %s FROM library_tracks%s ORDER BY added_at DESC, key DESC LIMIT $%d OFFSET $%d`,
		trackColumns, where, len(args)+1, len(args)+2)
	rows, err := db.r.QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return store.TrackPage{}, fmt.Errorf("store: list tracks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTrack(rows)
		if err != nil {
			return store.TrackPage{}, fmt.Errorf("store: list tracks: %w", err)
		}
		page.Tracks = append(page.Tracks, t)
	}
	if err := rows.Err(); err != nil {
		return store.TrackPage{}, fmt.Errorf("store: list tracks: %w", err)
	}
	return page, nil
}

// LibraryStatus looks up many tracks at once, for the inLibrary flag of search
// results.
func (db *DB) LibraryStatus(ctx context.Context, isrcs, tidalIDs []string) (store.InLibrary, error) {
	in := store.InLibrary{ISRCs: map[string]bool{}, TidalIDs: map[string]bool{}}
	for _, c := range chunks(isrcs, lookupChunk) {
		if err := db.collect(ctx, in.ISRCs,
			`SELECT DISTINCT isrc FROM library_tracks WHERE isrc IN (`+placeholders(1, len(c))+`)`, c); err != nil {
			return store.InLibrary{}, fmt.Errorf("store: library status: %w", err)
		}
	}
	for _, c := range chunks(tidalIDs, lookupChunk) {
		if err := db.collect(ctx, in.TidalIDs,
			`SELECT tidal_id FROM library_tracks WHERE tidal_id IN (`+placeholders(1, len(c))+`)`, c); err != nil {
			return store.InLibrary{}, fmt.Errorf("store: library status: %w", err)
		}
	}
	return in, nil
}

// AlbumsInLibrary reports which of the given Tidal album ids are in the
// library.
func (db *DB) AlbumsInLibrary(ctx context.Context, tidalIDs []string) (map[string]bool, error) {
	found := map[string]bool{}
	for _, c := range chunks(tidalIDs, lookupChunk) {
		if err := db.collect(ctx, found,
			`SELECT tidal_id FROM library_albums WHERE tidal_id IN (`+placeholders(1, len(c))+`)`, c); err != nil {
			return nil, fmt.Errorf("store: albums in library: %w", err)
		}
	}
	return found, nil
}

// collect runs a one-column query and sets each value in set.
func (db *DB) collect(ctx context.Context, set map[string]bool, query string, args []any) error {
	rows, err := db.queryRead(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		set[s] = true
	}
	return rows.Err()
}

// GetTrack returns the library track with the given Tidal id, or
// [store.ErrNotFound].
func (db *DB) GetTrack(ctx context.Context, tidalID string) (store.Track, error) {
	t, err := scanTrack(db.r.QueryRowContext(ctx,
		`SELECT `+trackColumns+` FROM library_tracks WHERE tidal_id = $1`, tidalID))
	if err == sql.ErrNoRows {
		return store.Track{}, fmt.Errorf("store: track %q: %w", tidalID, store.ErrNotFound)
	}
	if err != nil {
		return store.Track{}, fmt.Errorf("store: get track: %w", err)
	}
	return t, nil
}

// AddAlbums adds albums to the library in one transaction and reports how
// many were new. An album already present has its metadata updated and keeps
// its AddedAt.
func (db *DB) AddAlbums(ctx context.Context, albums []store.Album) (added int, err error) {
	for i, a := range albums {
		if a.TidalID == "" {
			return 0, fmt.Errorf("%w: album %d (%q) has no tidalId", store.ErrInvalid, i, a.Title)
		}
		if err := validText(fmt.Sprintf("album %d", i), a.TidalID, a.Title, a.Artist, a.ReleaseDate, a.ArtworkURL); err != nil {
			return 0, err
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: add albums: %w", err)
	}
	defer rollback(tx)
	ins, err := tx.PrepareContext(ctx, `INSERT INTO library_albums
        (tidal_id, title, artist, release_date, artwork_url, track_count, added_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (tidal_id) DO UPDATE SET
            title = excluded.title, artist = excluded.artist, release_date = excluded.release_date,
            artwork_url = excluded.artwork_url, track_count = excluded.track_count`)
	if err != nil {
		return 0, fmt.Errorf("store: add albums: %w", err)
	}
	defer ins.Close()
	for _, a := range albums {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM library_albums WHERE tidal_id = $1`, a.TidalID).Scan(&exists); err != nil {
			return 0, fmt.Errorf("store: add albums: %w", err)
		}
		if _, err := ins.ExecContext(ctx, a.TidalID, a.Title, a.Artist, a.ReleaseDate, a.ArtworkURL,
			a.TrackCount, db.d.time(normTime(a.AddedAt))); err != nil {
			return 0, fmt.Errorf("store: add album %q: %w", a.TidalID, err)
		}
		if exists == 0 {
			added++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: add albums: %w", err)
	}
	return added, nil
}

// ListAlbums lists library albums, most recently added first. Query matches
// title and artist.
func (db *DB) ListAlbums(ctx context.Context, opt store.ListOptions) (store.AlbumPage, error) {
	limit, offset := opt.Bounds()
	where, args := "", []any{}
	if opt.Query != "" {
		where = ` WHERE lower(title) LIKE $1 ESCAPE '\' OR lower(artist) LIKE $1 ESCAPE '\'`
		args = append(args, likePattern(opt.Query))
	}
	page := store.AlbumPage{Albums: []store.Album{}}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM library_albums`+where, args...).Scan(&page.Total); err != nil {
		return store.AlbumPage{}, fmt.Errorf("store: list albums: %w", err)
	}
	q := fmt.Sprintf(`SELECT tidal_id, title, artist, release_date, artwork_url, track_count, added_at
        FROM library_albums%s ORDER BY added_at DESC, tidal_id DESC LIMIT $%d OFFSET $%d`,
		where, len(args)+1, len(args)+2)
	rows, err := db.r.QueryContext(ctx, q, append(args, limit, offset)...)
	if err != nil {
		return store.AlbumPage{}, fmt.Errorf("store: list albums: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a store.Album
		var at dbTime
		if err := rows.Scan(&a.TidalID, &a.Title, &a.Artist, &a.ReleaseDate, &a.ArtworkURL, &a.TrackCount, &at); err != nil {
			return store.AlbumPage{}, fmt.Errorf("store: list albums: %w", err)
		}
		a.AddedAt = at.t
		page.Albums = append(page.Albums, a)
	}
	if err := rows.Err(); err != nil {
		return store.AlbumPage{}, fmt.Errorf("store: list albums: %w", err)
	}
	return page, nil
}
