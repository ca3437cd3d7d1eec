-- Readers that keep an in-memory copy of the track index (a running server)
-- poll max(updated_at) and load only the records written since: both need
-- updated_at indexed.
CREATE INDEX track_index_updated ON track_index (updated_at);
