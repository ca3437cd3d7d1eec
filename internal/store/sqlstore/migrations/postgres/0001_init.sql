-- Library: tracks and albums the user saved. A track is keyed by its Tidal id,
-- or by 'isrc:' || isrc when it was imported without one.
CREATE TABLE library_tracks (
    key         TEXT PRIMARY KEY,
    tidal_id    TEXT NOT NULL DEFAULT '',
    isrc        TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL DEFAULT '',
    artist      TEXT NOT NULL DEFAULT '',
    album       TEXT NOT NULL DEFAULT '',
    album_id    TEXT NOT NULL DEFAULT '',
    duration    DOUBLE PRECISION NOT NULL DEFAULT 0,
    artwork_url TEXT NOT NULL DEFAULT '',
    added_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX library_tracks_isrc ON library_tracks (isrc);
CREATE INDEX library_tracks_tidal_id ON library_tracks (tidal_id);
CREATE INDEX library_tracks_added ON library_tracks (added_at, key);

CREATE TABLE library_albums (
    tidal_id     TEXT PRIMARY KEY,
    title        TEXT NOT NULL DEFAULT '',
    artist       TEXT NOT NULL DEFAULT '',
    release_date TEXT NOT NULL DEFAULT '',
    artwork_url  TEXT NOT NULL DEFAULT '',
    track_count  INTEGER NOT NULL DEFAULT 0,
    added_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX library_albums_added ON library_albums (added_at, tidal_id);

-- Track index: one record per ISRC, with its embedding as little-endian
-- float32s.
CREATE TABLE track_index (
    isrc           TEXT PRIMARY KEY,
    title          TEXT NOT NULL DEFAULT '',
    artist         TEXT NOT NULL DEFAULT '',
    album          TEXT NOT NULL DEFAULT '',
    artwork_url    TEXT NOT NULL DEFAULT '',
    duration       DOUBLE PRECISION NOT NULL DEFAULT 0,
    lyrics         TEXT NOT NULL DEFAULT '',
    interpretation TEXT NOT NULL DEFAULT '',
    audio_features JSONB,
    embedding      BYTEA,
    embedder       TEXT NOT NULL DEFAULT '',
    dims           INTEGER NOT NULL DEFAULT 0,
    content_hash   TEXT NOT NULL DEFAULT '',
    updated_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX track_index_embedder ON track_index (embedder, dims);

-- Chat.
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    title      TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX conversations_recent ON conversations (updated_at, id);

CREATE TABLE messages (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content         JSONB NOT NULL CHECK (jsonb_typeof(content) = 'array'),
    incomplete      BOOLEAN NOT NULL DEFAULT FALSE,
    input_tokens    INTEGER,
    output_tokens   INTEGER,
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX messages_conversation ON messages (conversation_id, seq);
