// Package index is the semantic track index's search engine: an in-memory
// vector index ([VectorIndex]: cosine similarity over one-bit codes with a
// per-vector error bound, then 8-bit codes with a strict one, and exact
// rescoring), a BM25F text index ([BM25])
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
// project's own held-out queries); what a query's negated words do ("piano
// without vocals": not searched for, and tracks that have them demoted,
// [NegationParams]) by 5-fold cross-validation over the project's 79 judged
// queries of every kind (TestJudgedCrossValidated). [ReadQuery] tells a
// caller which words of a query the offline English index cannot read
// (another script); speed figures are in BenchmarkVectorSearch.
//
// # Embedded or in Weaviate
//
// By default each process keeps the track index in memory (`internal/index`: BM25F plus vectors,
// fused) and loads it from the store. Other processes' writes reach it by notification on
// PostgreSQL (a statement trigger on `track_index` NOTIFYs `toolport_index`; `sqlstore.DB.WatchIndex`
// listens on one pooled connection and the music service reloads only what changed), and by polling
// `IndexVersion` on SQLite, where polling also remains a once-a-minute fallback on PostgreSQL.
// With `TOOLPORT_VECTOR_URL` set, the index lives in Weaviate instead (`internal/index/weaviate`,
// over the official Go client): no process holds it, so every replica's next search sees every
// write. Toolport still embeds and analyses text: each object carries its vector and its fields'
// analysed terms (Toolport's stopwords and stemming), so Weaviate's hybrid query, BM25F with the
// same field boosts fused by relative score at alpha 0.2, ranks as the embedded engine does
// (nDCG in BENCHMARKS.md). The SQL store remains the record of truth; ingestion writes Weaviate
// first, then the store, and `Load` (at `serve` start) and `index add` push whatever Weaviate lacks.
// Readiness with several Weaviate nodes listed counts the nodes that answer against the consistency
// level rather than asking Weaviate's own readiness, which is false while a dead peer is still being
// probed (one dead node would otherwise take every replica out of the load balancer). With several
// nodes listed a call goes to the node that answered last and fails over to the next on a network
// error; a search that answers empty is asked of the next node too before it is believed, because
// Weaviate 1.28 can answer a replicated search with no hits and no error while it still routes part
// of it to a dead replica (`searchNodes`).
//
// The embedded engine's vector side keeps a one-bit code per vector after a fixed random rotation,
// with a per-vector error bound (RaBitQ): only the vectors whose estimate could still reach the top
// k go on, so recall does not depend on the data's shape or the index's size; those are bounded
// again from an 8-bit code per vector, strictly (Cauchy–Schwarz), and rescored exactly only when
// that bound still reaches the k-th best (`vector_refine.go`); below 20,000 vectors it scans exactly. The ranking's parameters are chosen by cross-validation
// (`rank.go`); query words the index lacks are expanded through the word vectors (`expand.go`);
// mood and energy words nudge tracks with audio features by at most ±0.05 (`rank_mood.go`). A
// process that loads the index saves its built state as a snapshot in the store
// (`index_snapshots`), keyed by the index version and a tag derived from the analyser's output, the
// layout, the embedder and how expansion picks its candidates (the snapshot lists the few thousand
// vocabulary words they come from); a cold `toolport call semanticSearch` loads it instead of
// rebuilding, and a stale or damaged snapshot is rebuilt from the records. A BM25 index, built
// or loaded, lays out each document's term list (what removal, replacement and relevance feedback
// walk) on first need: a bulk load and a search read only the postings. Terms are copied out of the
// documents' text, so the index never holds the text itself; a load that knows its size reserves
// the flat arrays once ([Engine.Reserve]). A snapshot is written through a 64 KiB buffer
// ([Engine.WriteSnapshot]) or into one allocation of exactly its size ([Engine.SnapshotSize]):
// a process that builds the engine from the records (the first search after a write, `serve`,
// `toolport index add --snapshot`) holds it and one snapshot's bytes, not copies of either;
// `toolport index add` itself builds no engine (SECURITY.md, BENCHMARKS.md "index add: peak
// memory"). The offline embedder
// reads its word vectors where the binary holds them (an uncompressed asset with its own hash table
// of the words), so making it costs nothing.
package index
