-- Playlists the agent suggested (suggestPlaylist), tied to the conversation,
-- assistant message and tool call that made them when they came from a chat.
-- message_id and tool_call_id are not foreign keys: the tool runs before its
-- message is saved. Deleting a conversation keeps its playlists (they may
-- have been exported or saved to TIDAL) and clears the link.
CREATE TABLE playlists (
    id                TEXT PRIMARY KEY,
    title             TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    conversation_id   TEXT REFERENCES conversations (id) ON DELETE SET NULL,
    message_id        TEXT NOT NULL DEFAULT '',
    tool_call_id      TEXT NOT NULL DEFAULT '',
    tidal_playlist_id TEXT NOT NULL DEFAULT '',
    unresolved        TEXT NOT NULL DEFAULT '[]',
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX playlists_recent ON playlists (created_at, id);
CREATE INDEX playlists_conversation ON playlists (conversation_id);

CREATE TABLE playlist_items (
    playlist_id TEXT NOT NULL REFERENCES playlists (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    tidal_id    TEXT NOT NULL,
    isrc        TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL DEFAULT '',
    artist      TEXT NOT NULL DEFAULT '',
    album       TEXT NOT NULL DEFAULT '',
    artwork_url TEXT NOT NULL DEFAULT '',
    duration    REAL NOT NULL DEFAULT 0,
    reasoning   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (playlist_id, position)
);
