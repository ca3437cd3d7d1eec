// Package music is the music-discovery tool pack: semanticSearch over the
// local track index, tidalSearch and albumTracks over the TIDAL catalogue, and
// batchMetadata for full index records by ISRC; suggestPlaylist, which
// resolves the agent's picks on TIDAL and stores the playlist, and
// savePlaylistToTidal, which saves one to the user's TIDAL account (see
// [Service.SyncLibrary] for the other use of the user's login).
//
// Every track a tool returns says whether it is in the user's library
// (inLibrary, by Tidal id or ISRC) and in the semantic index (isIndexed, by
// ISRC). Those flags are looked up in bulk: one library lookup and one index
// lookup per call whatever the number of results, never one query per track.
//
// A [Service] ties the pieces together: the store (SQLite by default,
// PostgreSQL to scale), the in-memory search engine loaded from it, the
// embedder, and the TIDAL client. It opens the store and loads the engine on
// first use, so that listing the tools costs nothing. [Service.Ingest] feeds
// the index from JSONL and keeps the engine in step.
//
// Another process may write to the same store (`toolport index add` next to
// a running `toolport serve`). semanticSearch therefore checks the store's
// index version at most every RefreshInterval (one cheap query) and loads
// only the records written since into the engine; when records were
// deleted, it rebuilds the engine from the store instead. Searches keep
// running on the current engine while that happens.
//
// A writer does not build the engine: after `toolport index add`,
// [Service.AfterWrite] only embeds again records another embedder made, so
// the command's memory is bounded by a batch. The saved snapshot of the
// engine (snapshot.go) is then stale, and whichever process next builds the
// engine from the records (the first search, `serve` at start) saves a new
// one for the processes after it.
package music
