package music

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/index"
	"github.com/toolport/toolport/internal/index/weaviate"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/tool"
)

// The track index in Weaviate.
//
// When TOOLPORT_VECTOR_URL is set the service keeps no engine in memory:
// every search is a hybrid query to Weaviate, which every replica shares,
// so a change made anywhere is visible to the next search everywhere. The
// SQL store stays the record of truth (metadata, vectors, content hashes);
// Weaviate holds what searching needs and is written first. A failure
// between the two writes leaves at most Weaviate objects the store does not
// know, which searches skip (they read metadata from the store), and the
// store without the batch, so running the same ingestion again writes both.

// WithWeaviate makes the service search and write the track index in
// Weaviate as cfg says instead of an in-memory engine (cfg.URL empty: no
// change). For [New]; [Open] reads it from the environment.
func WithWeaviate(cfg weaviate.Config) Option {
	return func(s *Service) { s.vecCfg = cfg }
}

// vectors returns the Weaviate backend, nil when Weaviate is not
// configured. It is made, and the collection created, on first use; a
// failure is returned and retried by the next call.
func (s *Service) vectors(ctx context.Context) (*weaviate.Backend, error) {
	if s.vecCfgErr != nil {
		return nil, s.vecCfgErr
	}
	if !s.vecCfg.Enabled() {
		return nil, nil
	}
	s.vecMu.Lock()
	defer s.vecMu.Unlock()
	if s.vecReady {
		return s.vec, nil
	}
	if s.vec == nil {
		b, err := weaviate.Open(s.vecCfg)
		if err != nil {
			return nil, &tool.Error{Code: tool.CodeConfig, Message: "the Weaviate vector index is misconfigured: " + err.Error(), Err: err}
		}
		s.vec = b
	}
	if err := s.vec.EnsureCollection(ctx); err != nil {
		return nil, vectorError("preparing the collection", err)
	}
	s.vecReady = true
	return s.vec, nil
}

// usesWeaviate reports whether the track index lives in Weaviate.
func (s *Service) usesWeaviate() bool { return s.vecCfgErr != nil || s.vecCfg.Enabled() }

// PingVectors checks the vector index for a readiness probe: nil when the
// index is embedded (nothing to reach) or Weaviate answers and is ready.
func (s *Service) PingVectors(ctx context.Context) error {
	if !s.usesWeaviate() {
		return nil
	}
	b, err := s.vectors(ctx)
	if err != nil {
		return err
	}
	return b.Ping(ctx)
}

// vectorError turns a Weaviate failure into a tool error: unavailable is a
// retryable NETWORK_ERROR with a short message; the details (addresses,
// Weaviate's own text) stay in the wrapped error for logs and spans.
func vectorError(what string, err error) error {
	var te *tool.Error
	if errors.As(err, &te) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, weaviate.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return &tool.Error{Code: tool.CodeNetwork, Retryable: true,
			Message: "the vector index (Weaviate) is unavailable: " + what + " failed; try again shortly", Err: err}
	}
	return &tool.Error{Code: tool.CodeInternal, Message: "the vector index (Weaviate): " + what + " failed", Err: err}
}

// weaviateTrack is what Weaviate stores of a record embedded by emb.
func weaviateTrack(r store.IndexRecord, embedder string) weaviate.Track {
	t := weaviate.Track{ISRC: r.ISRC, Fields: fields(r), Vector: r.Embedding, Embedder: embedder}
	if f := r.AudioFeatures; f != nil {
		t.Features = map[string]float64{}
		for name, p := range map[string]*float64{"energy": f.Energy, "valence": f.Valence, "danceability": f.Danceability,
			"acousticness": f.Acousticness, "instrumentalness": f.Instrumentalness, "speechiness": f.Speechiness, "tempo": f.Tempo} {
			if p != nil {
				t.Features[name] = *p
			}
		}
	}
	return t
}

// searchWeaviate is semanticSearch's ranking when the index is in Weaviate.
// It also reports whether the index is empty (asked only when nothing was
// found).
func (s *Service) searchWeaviate(ctx context.Context, q string, k int, bounds []bound) ([]index.Hit, bool, error) {
	b, err := s.vectors(ctx)
	if err != nil {
		return nil, false, err
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return nil, false, err
	}
	q = index.ClipQuery(q)
	// The negated words are neither searched for nor embedded ("piano
	// without vocals" would find vocal tracks): Weaviate demotes the tracks
	// that hold them, as the embedded engine does.
	q, negated := index.DropNegation(q)
	vs, err := emb.Embed(ctx, []string{q})
	if err != nil {
		return nil, false, fmt.Errorf("semantic search: embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, false, fmt.Errorf("semantic search: embedder returned %d vectors for 1 text", len(vs))
	}
	query := weaviate.Query{Text: q, Negated: negated, Vector: vs[0], Embedder: emb.Name(), K: k}
	for _, bd := range bounds {
		query.Bounds = append(query.Bounds, weaviate.Bound{Feature: featureNames[bd.feature], Min: bd.min, Max: bd.max})
	}
	hits, err := b.Search(ctx, query)
	if err != nil {
		return nil, false, vectorError("searching", err)
	}
	empty := false
	if len(hits) == 0 {
		n, err := b.Count(ctx, emb.Name())
		empty = err == nil && n == 0
	}
	return hits, empty, nil
}

// featureNames names the featureVec slots as Weaviate's properties.
var featureNames = [numFeatures]string{
	fAcousticness: "acousticness", fDanceability: "danceability", fEnergy: "energy",
	fInstrumentalness: "instrumentalness", fSpeechiness: "speechiness", fValence: "valence", fTempo: "tempo",
}

// SyncVectors brings Weaviate up to date with the store: records stored
// with another embedder's vector (or none) are embedded now and written
// back to the store, and those plus, when the number of Weaviate objects
// made by the current embedder differs from the store's record count
// (Weaviate newly configured, the embedder changed, a write lost), every
// record are written to Weaviate. It reports how many records it embedded and how
// many it wrote to Weaviate. Without Weaviate it does nothing.
func (s *Service) SyncVectors(ctx context.Context) (embedded, written int, err error) {
	b, err := s.vectors(ctx)
	if err != nil || b == nil {
		return 0, 0, err
	}
	db, err := s.Store(ctx)
	if err != nil {
		return 0, 0, err
	}
	emb, err := s.Embedder(ctx)
	if err != nil {
		return 0, 0, err
	}
	v, err := db.IndexVersion(ctx)
	if err != nil {
		return 0, 0, storeError("reading the index version", err)
	}
	n, err := b.Count(ctx, emb.Name())
	if err != nil {
		return 0, 0, vectorError("counting", err)
	}
	all := n != v.Count
	var pending []store.IndexRecord
	var fresh []store.Embedding
	var flushErr error
	// flush embeds what needs it and writes the batch to Weaviate. New
	// embeddings are written to the store after the scan, which may hold
	// the store's only connection (SQLite in memory).
	flush := func() error {
		var texts []string
		var at []int
		for i, r := range pending {
			if !embeddedBy(r, emb) {
				texts = append(texts, index.EmbeddingText(fields(r)))
				at = append(at, i)
			}
		}
		if len(texts) > 0 {
			vecs, err := emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("music: embedding the index: %w", err)
			}
			if len(vecs) != len(texts) {
				return fmt.Errorf("music: embedder returned %d vectors for %d texts", len(vecs), len(texts))
			}
			for j, i := range at {
				pending[i].Embedding, pending[i].Embedder = vecs[j], emb.Name()
				fresh = append(fresh, store.Embedding{ISRC: pending[i].ISRC, Vector: vecs[j], Embedder: emb.Name()})
			}
			embedded += len(texts)
		}
		tracks := make([]weaviate.Track, len(pending))
		for i, r := range pending {
			tracks[i] = weaviateTrack(r, emb.Name())
		}
		if err := b.Upsert(ctx, tracks); err != nil {
			return vectorError("writing", err)
		}
		written += len(tracks)
		pending = pending[:0]
		return nil
	}
	err = db.EachIndexRecord(ctx, func(r store.IndexRecord) error {
		if !all && embeddedBy(r, emb) {
			return nil
		}
		pending = append(pending, r)
		if len(pending) == loadBatch {
			flushErr = flush()
			return flushErr
		}
		return nil
	})
	if err == nil && len(pending) > 0 {
		flushErr = flush()
		err = flushErr
	}
	if flushErr != nil {
		return embedded, written, flushErr
	}
	if err != nil {
		return embedded, written, storeError("reading the index", err)
	}
	for start := 0; start < len(fresh); start += loadBatch {
		if _, err := db.SetEmbeddings(ctx, fresh[start:min(start+loadBatch, len(fresh))]); err != nil {
			return embedded, written, storeError("writing embeddings", err)
		}
	}
	return embedded, written, nil
}

func embeddedBy(r store.IndexRecord, emb embedding.Embedder) bool {
	return r.Embedder == emb.Name() && len(r.Embedding) == emb.Dimensions() && len(r.Embedding) > 0
}

// writeVectors writes freshly embedded records to Weaviate, when it is
// configured: ingestion calls it before committing them to the store.
func (s *Service) writeVectors(ctx context.Context, recs []store.IndexRecord, embedder string) error {
	if !s.usesWeaviate() {
		return nil
	}
	b, err := s.vectors(ctx)
	if err != nil {
		return err
	}
	tracks := make([]weaviate.Track, len(recs))
	for i, r := range recs {
		tracks[i] = weaviateTrack(r, embedder)
	}
	if err := b.Upsert(ctx, tracks); err != nil {
		return vectorError("writing", err)
	}
	return nil
}
