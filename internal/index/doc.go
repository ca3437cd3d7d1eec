// Package index is the semantic track index's search engine: an in-memory
// vector index ([VectorIndex]: cosine similarity over one-bit codes with
// exact rescoring), a BM25F text index ([BM25]) over title, artist, album,
// interpretation and lyrics, and an [Engine] that fuses the two for text
// queries using an [embedding.Embedder].
//
// Nothing here persists: the store keeps records and their vectors, and
// loads them into an Engine at start-up ([Engine.Add] accepts precomputed
// vectors, embedded from [EmbeddingText]).
//
// Quality on the MusicCaps development set and speed figures are in the
// tests (TestMusicCapsDev, BenchmarkSearch100k384).
package index
