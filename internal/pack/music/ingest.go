package music

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/store"
)

// Bounds on ingestion input.
const (
	// MaxLineBytes bounds one JSONL line (longer lines are skipped) and
	// one record of a library import CSV (a longer one ends the import:
	// where it ends cannot be known without reading it).
	MaxLineBytes = 1 << 20
	// DefaultIngestBatch is how many records go into one embedder call and
	// one store transaction.
	DefaultIngestBatch = 256

	maxShortText = 1000     // title, artist, album
	maxURL       = 2048     // artworkUrl
	maxLongText  = 200_000  // lyrics, interpretation
	maxDuration  = 86_400.0 // seconds
)

// IngestOptions tune [Service.Ingest].
type IngestOptions struct {
	// BatchSize is the number of records per embedder call and per store
	// transaction (DefaultIngestBatch when ≤ 0). A crash loses at most the
	// batch in flight.
	BatchSize int
	// Progress, when set, is called after each committed batch.
	Progress func(IngestProgress)
	// LineError, when set, is called for each skipped line.
	LineError func(line int, err error)
}

// IngestStats counts what an ingestion did with each record.
type IngestStats struct {
	Lines     int `json:"lines"`     // non-empty lines read
	Added     int `json:"added"`     // new ISRCs
	Updated   int `json:"updated"`   // known ISRCs whose content (or embedder) changed: re-embedded
	Unchanged int `json:"unchanged"` // known ISRCs with the same content and embedder: not written
	Skipped   int `json:"skipped"`   // bad lines
}

// IngestProgress is reported after each batch.
type IngestProgress struct {
	IngestStats
	BytesRead int64
}

// Ingest reads tracks in the IndexedTrackResult shape, one JSON object per
// line, and upserts them into the index by ISRC. Each line is validated on
// its own: a bad one is reported through opts.LineError and skipped. Valid
// records are embedded and written in batches, one transaction each, so a
// crash leaves every committed batch whole (records with their embeddings)
// and nothing of the next; running the same file again completes the work.
// A record whose content and embedder are unchanged is neither re-embedded
// nor written. The engine, if loaded, is updated with each batch.
//
// It returns the counts so far with any error that stopped it: a store or
// embedder failure, or ctx's end.
func (s *Service) Ingest(ctx context.Context, r io.Reader, opts IngestOptions) (IngestStats, error) {
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	var st IngestStats
	db, err := s.Store(ctx)
	if err != nil {
		return st, err
	}
	if _, err := s.Embedder(ctx); err != nil {
		return st, err
	}
	size := opts.BatchSize
	if size <= 0 {
		size = DefaultIngestBatch
	}
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	batch := make([]store.IndexRecord, 0, size)
	inBatch := map[string]bool{}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.ingestBatch(ctx, db, batch, &st); err != nil {
			return err
		}
		batch = batch[:0]
		clear(inBatch)
		if opts.Progress != nil {
			opts.Progress(IngestProgress{IngestStats: st, BytesRead: cr.n - int64(br.Buffered())})
		}
		return nil
	}
	for lineNo := 1; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		line, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			return st, fmt.Errorf("music: reading line %d: %w", lineNo, err)
		}
		eof := errors.Is(err, io.EOF)
		if tooLong {
			st.Lines++
			st.Skipped++
			if opts.LineError != nil {
				opts.LineError(lineNo, fmt.Errorf("line longer than %d bytes", MaxLineBytes))
			}
		} else if len(bytes.TrimSpace(line)) > 0 {
			st.Lines++
			rec, perr := ParseIndexLine(line)
			if perr != nil {
				st.Skipped++
				if opts.LineError != nil {
					opts.LineError(lineNo, perr)
				}
			} else {
				if inBatch[rec.ISRC] {
					// A repeated ISRC: write what came before, so that the
					// later line wins exactly as a later run would.
					if err := flush(); err != nil {
						return st, err
					}
				}
				inBatch[rec.ISRC] = true
				batch = append(batch, rec)
				if len(batch) == size {
					if err := flush(); err != nil {
						return st, err
					}
				}
			}
		}
		if eof {
			break
		}
	}
	return st, flush()
}

// ingestBatch embeds and writes the records of one batch that changed, in
// one transaction, then counts them and updates the engine.
func (s *Service) ingestBatch(ctx context.Context, db Store, batch []store.IndexRecord, st *IngestStats) error {
	emb, err := s.Embedder(ctx)
	if err != nil {
		return err
	}
	isrcs := make([]string, len(batch))
	for i, r := range batch {
		isrcs[i] = r.ISRC
	}
	states, err := db.IndexStates(ctx, isrcs)
	if err != nil {
		return err
	}
	var changed []store.IndexRecord
	var texts []string
	added, updated, unchanged := 0, 0, 0
	for _, r := range batch {
		prev, known := states[r.ISRC]
		if known && prev.ContentHash == r.ContentHash && prev.Embedder == emb.Name() && prev.Dims == emb.Dimensions() {
			unchanged++
			continue
		}
		if known {
			updated++
		} else {
			added++
		}
		changed = append(changed, r)
		texts = append(texts, index.EmbeddingText(fields(r)))
	}
	if len(changed) > 0 {
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("music: embedding: %w", err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("music: embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		for i := range changed {
			changed[i].Embedding, changed[i].Embedder = vecs[i], emb.Name()
		}
		// Weaviate first: a failure after it leaves the store without the
		// batch, so the same ingestion run again writes both.
		if err := s.writeVectors(ctx, changed, emb.Name()); err != nil {
			return err
		}
		if err := db.UpsertIndex(ctx, changed); err != nil {
			return err
		}
	}
	st.Added += added
	st.Updated += updated
	st.Unchanged += unchanged
	if len(changed) == 0 || s.usesWeaviate() {
		return nil
	}
	// Under loadMu: a load in progress may have scanned past these records,
	// so wait for it and add them to the engine it put in place.
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if eng := s.loadedEngine(); eng != nil {
		docs := make([]index.Document, len(changed))
		for i, r := range changed {
			docs[i] = index.Document{ID: r.ISRC, Fields: fields(r), Vector: r.Embedding}
			s.setFeatures(r.ISRC, r.AudioFeatures)
		}
		if err := eng.Add(ctx, docs); err != nil {
			return fmt.Errorf("music: updating the engine: %w", err)
		}
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readLine reads one line without its end. A line over limit bytes is
// consumed to its end and reported as tooLong, so that one bad line does not
// stop the file. At the end of input it returns io.EOF with the last line.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > limit+1 { // +1: the newline
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return bytes.TrimRight(buf, "\r\n"), tooLong, err
		default:
			return bytes.TrimRight(buf, "\r\n"), tooLong, nil
		}
	}
}

// indexLine is one ingestion line: an IndexedTrackResult. The per-query
// fields (inLibrary, isIndexed, score) and tidalId are accepted, so that a
// tool's output can be fed back, and ignored; any other field is an error,
// which catches misspelt keys.
type indexLine struct {
	ISRC           *string        `json:"isrc"`
	Title          *string        `json:"title"`
	Artist         *string        `json:"artist"`
	Album          *string        `json:"album"`
	ArtworkURL     string         `json:"artworkUrl"`
	Duration       *float64       `json:"duration"`
	Lyrics         string         `json:"lyrics"`
	Interpretation string         `json:"interpretation"`
	AudioFeatures  *AudioFeatures `json:"audioFeatures"`

	TidalID   string   `json:"tidalId"`
	InLibrary *bool    `json:"inLibrary"`
	IsIndexed *bool    `json:"isIndexed"`
	Score     *float64 `json:"score"`
}

// ParseIndexLine parses and validates one ingestion line into an index
// record (without embedding), with its ISRC normalised and its ContentHash
// set to [RecordHash].
func ParseIndexLine(line []byte) (store.IndexRecord, error) {
	var in indexLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return store.IndexRecord{}, fmt.Errorf("not a valid JSON object: %s", jsonError(err))
	}
	if dec.More() {
		return store.IndexRecord{}, errors.New("not a valid JSON object: data after the object")
	}
	if in.ISRC == nil {
		return store.IndexRecord{}, errors.New("isrc: required")
	}
	isrc, err := NormalizeISRC(*in.ISRC)
	if err != nil {
		return store.IndexRecord{}, fmt.Errorf("isrc: %v", err)
	}
	r := store.IndexRecord{ISRC: isrc, ArtworkURL: strings.TrimSpace(in.ArtworkURL),
		Lyrics: in.Lyrics, Interpretation: in.Interpretation, AudioFeatures: in.AudioFeatures}
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
		req  bool
	}{{"title", in.Title, &r.Title, true}, {"artist", in.Artist, &r.Artist, true}, {"album", in.Album, &r.Album, false}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			if f.req {
				return store.IndexRecord{}, fmt.Errorf("%s: required", f.name)
			}
			continue
		}
		*f.dst = strings.TrimSpace(*f.v)
	}
	for _, t := range []struct {
		name string
		v    string
		max  int
	}{{"title", r.Title, maxShortText}, {"artist", r.Artist, maxShortText}, {"album", r.Album, maxShortText},
		{"artworkUrl", r.ArtworkURL, maxURL}, {"lyrics", r.Lyrics, maxLongText}, {"interpretation", r.Interpretation, maxLongText}} {
		if len(t.v) > t.max {
			return store.IndexRecord{}, fmt.Errorf("%s: longer than %d bytes", t.name, t.max)
		}
		if !utf8.ValidString(t.v) || strings.IndexByte(t.v, 0) >= 0 {
			return store.IndexRecord{}, fmt.Errorf("%s: invalid text (NUL or bad UTF-8)", t.name)
		}
	}
	if r.ArtworkURL != "" && !strings.HasPrefix(r.ArtworkURL, "https://") && !strings.HasPrefix(r.ArtworkURL, "http://") {
		return store.IndexRecord{}, errors.New("artworkUrl: must be an http(s) URL")
	}
	if in.Duration != nil {
		if d := *in.Duration; d < 0 || d > maxDuration {
			return store.IndexRecord{}, fmt.Errorf("duration: must be 0 to %.0f seconds, got %g", maxDuration, d)
		}
		r.Duration = *in.Duration
	}
	if err := checkFeatures(r.AudioFeatures); err != nil {
		return store.IndexRecord{}, fmt.Errorf("audioFeatures.%v", err)
	}
	r.ContentHash = RecordHash(r)
	return r, nil
}

func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: must be a %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	if errors.Is(err, io.EOF) {
		return "empty"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// checkFeatures checks each feature's range: the 0–1 ones, key −1…11
// (−1 is no key detected), mode 0 or 1, loudness −100…10 dB, tempo 0…400 BPM.
func checkFeatures(f *AudioFeatures) error {
	if f == nil {
		return nil
	}
	for _, c := range []struct {
		name     string
		v        *float64
		min, max float64
		integer  bool
	}{
		{"acousticness", f.Acousticness, 0, 1, false}, {"danceability", f.Danceability, 0, 1, false},
		{"energy", f.Energy, 0, 1, false}, {"instrumentalness", f.Instrumentalness, 0, 1, false},
		{"liveness", f.Liveness, 0, 1, false}, {"speechiness", f.Speechiness, 0, 1, false},
		{"valence", f.Valence, 0, 1, false}, {"key", f.Key, -1, 11, true}, {"mode", f.Mode, 0, 1, true},
		{"loudness", f.Loudness, -100, 10, false}, {"tempo", f.Tempo, 0, 400, false},
	} {
		if c.v == nil {
			continue
		}
		v := *c.v
		if v < c.min || v > c.max || (c.integer && v != math.Trunc(v)) {
			kind := "a number"
			if c.integer {
				kind = "an integer"
			}
			return fmt.Errorf("%s: must be %s from %g to %g, got %g", c.name, kind, c.min, c.max, v)
		}
	}
	return nil
}

// RecordHash identifies everything stored about a record but its embedding:
// a re-run of the same line hashes the same and is skipped, and any change,
// even to artworkUrl or duration, is written.
func RecordHash(r store.IndexRecord) string {
	b, _ := json.Marshal([]any{r.ISRC, r.Title, r.Artist, r.Album, r.ArtworkURL, r.Duration, r.Lyrics, r.Interpretation, r.AudioFeatures})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "float64", "int", "int64":
		return "number"
	case "bool":
		return "boolean"
	case "ptr", "pointer", "struct":
		return "object or value"
	}
	return k
}
