// Package index is the semantic track index's search engine: an in-memory
// vector index ([VectorIndex]: cosine similarity over one-bit codes with a
// per-vector error bound and exact rescoring), a BM25F text index ([BM25])
// over title, artist, album, interpretation and lyrics, and an [Engine] that
// fuses the two for text queries using an [embedding.Embedder].
//
// The store keeps records and their vectors, and loads them into an Engine
// ([Engine.Add] accepts precomputed vectors, embedded from [EmbeddingText]).
// An engine's built state can be saved and loaded as a snapshot
// ([Engine.MarshalSnapshot], [LoadSnapshot]) so that a short-lived process
// skips the build; the caller decides when a snapshot is current.
//
// The ranking's parameters ([RankParams]: fusion weight, query expansion
// through word vectors) are chosen by cross-validation over the MusicCaps
// development queries (TestMusicCapsCrossValidated, which also scores the
// project's own held-out queries); speed figures are in BenchmarkVectorSearch.
package index
