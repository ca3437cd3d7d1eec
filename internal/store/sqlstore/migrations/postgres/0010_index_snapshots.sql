-- Saved products of the track index (a search engine's built state) that a
-- process loads instead of building them from every record: one per name,
-- used only by a reader whose key (index version, format) is the same.
CREATE TABLE index_snapshots (
    name       TEXT PRIMARY KEY,
    key        TEXT NOT NULL,
    data       BYTEA NOT NULL,
    created_at TEXT NOT NULL
);
