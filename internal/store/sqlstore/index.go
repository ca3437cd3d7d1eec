package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/toolport/toolport/internal/store"
)

// encodeVector stores a vector as little-endian float32s: 4 bytes a
// dimension, exact, and readable by any language without a schema.
func encodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// vectorArg is the embedding column value: NULL for a nil vector (a
// zero-length []byte would be stored as an empty BLOB, not NULL).
func vectorArg(v []float32) any {
	if v == nil {
		return nil
	}
	return encodeVector(v)
}

// decodeVector reads a vector written by encodeVector; dims, when not
// negative, is the length the row says it has.
func decodeVector(b []byte, dims int) ([]float32, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%4 != 0 || (dims >= 0 && len(b) != 4*dims) {
		return nil, fmt.Errorf("store: corrupt embedding: %d bytes for %d dimensions", len(b), dims)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func validISRC(isrc string) error {
	if isrc == "" || len(isrc) > store.MaxISRCLen {
		return fmt.Errorf("%w: isrc must have 1 to %d characters", store.ErrInvalid, store.MaxISRCLen)
	}
	return nil
}

func validEmbedding(isrc string, v []float32, embedder string) error {
	if v == nil {
		return nil
	}
	if len(v) == 0 || len(v) > store.MaxEmbeddingDims {
		return fmt.Errorf("%w: %s: embedding must have 1 to %d dimensions, got %d", store.ErrInvalid, isrc, store.MaxEmbeddingDims, len(v))
	}
	if embedder == "" {
		return fmt.Errorf("%w: %s: an embedding needs its embedder's name", store.ErrInvalid, isrc)
	}
	return nil
}

// UpsertIndex inserts or replaces index records by ISRC, all in one
// transaction; running it twice with the same records leaves the same state
// (apart from UpdatedAt).
//
// A record with an Embedding stores it. A record without one keeps the stored
// embedding when its ContentHash is unchanged, and drops it otherwise (it was
// computed from content that no longer exists): re-ingesting a file does not
// throw away embeddings, and changed records show up as not embedded.
func (db *DB) UpsertIndex(ctx context.Context, recs []store.IndexRecord) error {
	// Build every row first, so that a bad record fails the batch before
	// the transaction starts. An ISRC given twice keeps its last record, as
	// two upserts in a row would, embedding carried over included.
	rows := make([][]any, 0, len(recs))
	pos := make(map[string]int, len(recs))
	for _, r := range recs {
		row, err := indexRow(r)
		if err != nil {
			return err
		}
		i, dup := pos[r.ISRC]
		if !dup {
			pos[r.ISRC] = len(rows)
			rows = append(rows, row)
			continue
		}
		if prev := rows[i]; row[9] == nil && prev[9] != nil && prev[12] == row[12] {
			row[9], row[10], row[11] = prev[9], prev[10], prev[11]
		}
		rows[i] = row
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: upsert index: %w", err)
	}
	defer rollback(tx)
	at, err := db.indexStamp(ctx, tx)
	if err != nil {
		return fmt.Errorf("store: upsert index: %w", err)
	}
	upsertBatch := db.d.upsertBatch
	var full *sql.Stmt
	for start := 0; start < len(rows); start += upsertBatch {
		batch := rows[start:min(start+upsertBatch, len(rows))]
		args := make([]any, 0, len(batch)*indexRowArgs)
		for _, row := range batch {
			args = append(append(args, row...), at)
		}
		if len(batch) == upsertBatch {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, upsertIndexSQL(upsertBatch)); err != nil {
					return fmt.Errorf("store: upsert index: %w", err)
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, upsertIndexSQL(len(batch)), args...)
		}
		if err != nil {
			return fmt.Errorf("store: upsert index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: upsert index: %w", err)
	}
	return nil
}

// indexRowArgs is the number of parameters of one row: the 13 of indexRow
// and updated_at.
const indexRowArgs = 14

// indexRow validates a record and returns its column values but updated_at:
// isrc, title, artist, album, artwork_url, duration, lyrics, interpretation,
// audio_features, embedding (9), embedder (10), dims (11), content_hash (12).
func indexRow(r store.IndexRecord) ([]any, error) {
	if err := validISRC(r.ISRC); err != nil {
		return nil, err
	}
	if err := validEmbedding(r.ISRC, r.Embedding, r.Embedder); err != nil {
		return nil, err
	}
	if err := validText(r.ISRC, r.ISRC, r.Title, r.Artist, r.Album, r.ArtworkURL, r.Lyrics,
		r.Interpretation, r.Embedder, r.ContentHash); err != nil {
		return nil, err
	}
	features, err := featuresArg(r.AudioFeatures)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.ISRC, err)
	}
	hash := r.ContentHash
	if hash == "" {
		hash = store.ContentHash(r)
	}
	embedder := r.Embedder
	if r.Embedding == nil {
		embedder = ""
	}
	return []any{r.ISRC, r.Title, r.Artist, r.Album, r.ArtworkURL, r.Duration, r.Lyrics,
		r.Interpretation, features, vectorArg(r.Embedding), embedder, len(r.Embedding), hash}, nil
}

// upsertIndexSQL is the upsert statement for n rows.
func upsertIndexSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO track_index
        (isrc, title, artist, album, artwork_url, duration, lyrics, interpretation, audio_features,
         embedding, embedder, dims, content_hash, updated_at) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + placeholders(1+i*indexRowArgs, indexRowArgs) + ")")
	}
	b.WriteString(`
        ON CONFLICT (isrc) DO UPDATE SET
            title = excluded.title, artist = excluded.artist, album = excluded.album,
            artwork_url = excluded.artwork_url, duration = excluded.duration, lyrics = excluded.lyrics,
            interpretation = excluded.interpretation, audio_features = excluded.audio_features,
            embedding = CASE WHEN excluded.embedding IS NOT NULL THEN excluded.embedding
                WHEN track_index.content_hash = excluded.content_hash THEN track_index.embedding END,
            embedder = CASE WHEN excluded.embedding IS NOT NULL THEN excluded.embedder
                WHEN track_index.content_hash = excluded.content_hash THEN track_index.embedder ELSE '' END,
            dims = CASE WHEN excluded.embedding IS NOT NULL THEN excluded.dims
                WHEN track_index.content_hash = excluded.content_hash THEN track_index.dims ELSE 0 END,
            content_hash = excluded.content_hash, updated_at = excluded.updated_at`)
	return b.String()
}

// featuresArg is the audio_features column value: JSON text, or NULL.
func featuresArg(f *store.AudioFeatures) (any, error) {
	if f == nil {
		return nil, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("%w: audio features: %v", store.ErrInvalid, err)
	}
	return string(b), nil
}

// SetEmbeddings stores vectors for records already in the index, in one
// transaction, and reports how many records it updated; ISRCs not in the
// index are skipped (a concurrent delete), not an error.
func (db *DB) SetEmbeddings(ctx context.Context, embs []store.Embedding) (int, error) {
	for _, e := range embs {
		if e.Vector == nil {
			return 0, fmt.Errorf("%w: %s: nil embedding", store.ErrInvalid, e.ISRC)
		}
		if err := validEmbedding(e.ISRC, e.Vector, e.Embedder); err != nil {
			return 0, err
		}
		if err := validText(e.ISRC, e.Embedder); err != nil {
			return 0, err
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: set embeddings: %w", err)
	}
	defer rollback(tx)
	stmt, err := tx.PrepareContext(ctx,
		`UPDATE track_index SET embedding = $2, embedder = $3, dims = $4, updated_at = $5 WHERE isrc = $1`)
	if err != nil {
		return 0, fmt.Errorf("store: set embeddings: %w", err)
	}
	defer stmt.Close()
	at, err := db.indexStamp(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("store: set embeddings: %w", err)
	}
	total := 0
	for _, e := range embs {
		res, err := stmt.ExecContext(ctx, e.ISRC, encodeVector(e.Vector), e.Embedder, len(e.Vector), at)
		if err != nil {
			return 0, fmt.Errorf("store: set embedding %s: %w", e.ISRC, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("store: set embeddings: %w", err)
		}
		total += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: set embeddings: %w", err)
	}
	return total, nil
}

const indexColumns = `isrc, title, artist, album, artwork_url, duration, lyrics, interpretation,
    audio_features, embedding, embedder, dims, content_hash, updated_at`

func scanIndexRecord(sc interface{ Scan(...any) error }) (store.IndexRecord, error) {
	var r store.IndexRecord
	var features, vec []byte
	var dims int
	var at dbTime
	if err := sc.Scan(&r.ISRC, &r.Title, &r.Artist, &r.Album, &r.ArtworkURL, &r.Duration, &r.Lyrics,
		&r.Interpretation, &features, &vec, &r.Embedder, &dims, &r.ContentHash, &at); err != nil {
		return store.IndexRecord{}, err
	}
	r.UpdatedAt = at.t
	if features != nil {
		f, err := decodeFeatures(r.ISRC, features)
		if err != nil {
			return store.IndexRecord{}, err
		}
		r.AudioFeatures = f
	}
	v, err := decodeVector(vec, dims)
	if err != nil {
		return store.IndexRecord{}, fmt.Errorf("%s: %w", r.ISRC, err)
	}
	r.Embedding = v
	return r, nil
}

// indexContentColumns are indexColumns without the embedding (read as NULL
// of no dimensions): what a search result shows.
const indexContentColumns = `isrc, title, artist, album, artwork_url, duration, lyrics, interpretation,
    audio_features, NULL, embedder, 0, content_hash, updated_at`

// decodeFeatures decodes a record's stored audio features.
func decodeFeatures(isrc string, raw []byte) (*store.AudioFeatures, error) {
	f := new(store.AudioFeatures)
	if err := json.Unmarshal(raw, f); err != nil {
		return nil, fmt.Errorf("store: %s: corrupt audio features: %w", isrc, err)
	}
	return f, nil
}

// GetIndex returns the index records for the given ISRCs, in the order asked
// (duplicates once), with their embeddings. ISRCs not in the index are left
// out: compare lengths or keys to find them.
func (db *DB) GetIndex(ctx context.Context, isrcs []string) ([]store.IndexRecord, error) {
	return db.getIndex(ctx, isrcs, indexColumns)
}

// GetIndexContent is GetIndex without the embeddings, which a search result
// does not show (1.5 KB a record at 384 dimensions, read and decoded for
// nothing).
func (db *DB) GetIndexContent(ctx context.Context, isrcs []string) ([]store.IndexRecord, error) {
	return db.getIndex(ctx, isrcs, indexContentColumns)
}

func (db *DB) getIndex(ctx context.Context, isrcs []string, columns string) ([]store.IndexRecord, error) {
	found := make(map[string]store.IndexRecord, len(isrcs))
	for _, c := range chunks(isrcs, lookupChunk) {
		rows, err := db.queryRead(ctx,
			`SELECT `+columns+` FROM track_index WHERE isrc IN (`+placeholders(1, len(c))+`)`, c...)
		if err != nil {
			return nil, fmt.Errorf("store: get index: %w", err)
		}
		for rows.Next() {
			r, err := scanIndexRecord(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: get index: %w", err)
			}
			found[r.ISRC] = r
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: get index: %w", err)
		}
	}
	out := make([]store.IndexRecord, 0, len(found))
	for _, isrc := range isrcs {
		if r, ok := found[isrc]; ok {
			out = append(out, r)
			delete(found, isrc)
		}
	}
	return out, nil
}

// IndexStates returns the state of the given ISRCs that are in the index,
// without loading their content: enough to set isIndexed on search results
// and to skip records whose content and embedder have not changed.
func (db *DB) IndexStates(ctx context.Context, isrcs []string) (map[string]store.IndexState, error) {
	states := make(map[string]store.IndexState)
	for _, c := range chunks(isrcs, lookupChunk) {
		rows, err := db.queryRead(ctx,
			`SELECT isrc, content_hash, embedder, dims FROM track_index WHERE isrc IN (`+placeholders(1, len(c))+`)`, c...)
		if err != nil {
			return nil, fmt.Errorf("store: index states: %w", err)
		}
		for rows.Next() {
			var isrc string
			var s store.IndexState
			if err := rows.Scan(&isrc, &s.ContentHash, &s.Embedder, &s.Dims); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: index states: %w", err)
			}
			states[isrc] = s
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: index states: %w", err)
		}
	}
	return states, nil
}

// IndexFeatures returns the audio features of those of isrcs that are in
// the index and have them: what reordering a pool of hits by mood needs,
// without reading the records' texts.
func (db *DB) IndexFeatures(ctx context.Context, isrcs []string) (map[string]*store.AudioFeatures, error) {
	out := make(map[string]*store.AudioFeatures)
	for _, c := range chunks(isrcs, lookupChunk) {
		rows, err := db.r.QueryContext(ctx,
			`SELECT isrc, audio_features FROM track_index WHERE audio_features IS NOT NULL AND isrc IN (`+placeholders(1, len(c))+`)`, c...)
		if err != nil {
			return nil, fmt.Errorf("store: index features: %w", err)
		}
		for rows.Next() {
			var isrc string
			var raw []byte
			if err := rows.Scan(&isrc, &raw); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: index features: %w", err)
			}
			f, err := decodeFeatures(isrc, raw)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[isrc] = f
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: index features: %w", err)
		}
	}
	return out, nil
}

// EachEmbedding calls fn for every stored embedding made by embedder (every
// embedding when embedder is ""), in ISRC order, streaming rows rather than
// loading them all: this is how the in-memory vector index is loaded. fn owns
// vec. An error from fn stops the scan and is returned as is.
//
// With an in-memory SQLite database fn must not write to the store: the scan
// holds its only connection.
func (db *DB) EachEmbedding(ctx context.Context, embedder string, fn func(isrc string, vec []float32) error) error {
	q := `SELECT isrc, embedding, dims FROM track_index WHERE embedding IS NOT NULL`
	var args []any
	if embedder != "" {
		q += ` AND embedder = $1`
		args = append(args, embedder)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY isrc`, args...)
	if err != nil {
		return fmt.Errorf("store: scan embeddings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var isrc string
		var raw sql.RawBytes // decoded at once, so the driver's buffer is not kept
		var dims int
		if err := rows.Scan(&isrc, &raw, &dims); err != nil {
			return fmt.Errorf("store: scan embeddings: %w", err)
		}
		vec, err := decodeVector(raw, dims)
		if err != nil {
			return fmt.Errorf("store: scan embeddings: %s: %w", isrc, err)
		}
		if err := fn(isrc, vec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: scan embeddings: %w", err)
	}
	return nil
}

// EachIndexRecord calls fn for every index record, embeddings included, in
// ISRC order, streaming: for building in-memory lexical and vector indexes
// in one pass. An error from fn stops the scan and is returned as is. The
// in-memory SQLite caveat of [DB.EachEmbedding] applies.
func (db *DB) EachIndexRecord(ctx context.Context, fn func(store.IndexRecord) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT `+indexColumns+` FROM track_index ORDER BY isrc`)
	if err != nil {
		return fmt.Errorf("store: scan index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanIndexRecord(rows)
		if err != nil {
			return fmt.Errorf("store: scan index: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: scan index: %w", err)
	}
	return nil
}

// IndexStatus counts records and embeddings.
func (db *DB) IndexStatus(ctx context.Context) (store.IndexStatus, error) {
	st := store.IndexStatus{Embedders: []store.EmbedderStats{}}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM track_index`).Scan(&st.Total); err != nil {
		return store.IndexStatus{}, fmt.Errorf("store: index status: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT embedder, dims, count(*) FROM track_index
        WHERE embedding IS NOT NULL GROUP BY embedder, dims ORDER BY count(*) DESC, embedder, dims`)
	if err != nil {
		return store.IndexStatus{}, fmt.Errorf("store: index status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e store.EmbedderStats
		if err := rows.Scan(&e.Name, &e.Dims, &e.Count); err != nil {
			return store.IndexStatus{}, fmt.Errorf("store: index status: %w", err)
		}
		st.Embedded += e.Count
		st.Embedders = append(st.Embedders, e)
	}
	if err := rows.Err(); err != nil {
		return store.IndexStatus{}, fmt.Errorf("store: index status: %w", err)
	}
	if len(st.Embedders) > 0 {
		st.Embedder, st.Dims = st.Embedders[0].Name, st.Embedders[0].Dims
	}
	return st, nil
}

// CountIndexPrefix counts the records whose ISRC starts with prefix (the
// demo set's registrant code: how much of the index is the demo).
func (db *DB) CountIndexPrefix(ctx context.Context, prefix string) (int, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM track_index WHERE substr(isrc, 1, $2) = $1`,
		prefix, len(prefix)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count index: %w", err)
	}
	return n, nil
}

// DeleteIndex removes the records with the given ISRCs and reports how many
// went.
func (db *DB) DeleteIndex(ctx context.Context, isrcs []string) (int, error) {
	return db.removeIn(ctx, "delete index", isrcs,
		func(in string) string { return `DELETE FROM track_index WHERE isrc IN (` + in + `)` })
}
