-- A turn that failed keeps its error (code and user-facing message) with its
-- assistant message, so a reloaded conversation shows what was shown live.
-- Columns of their own, not a content block: content is replayed to the model
-- and an error must never be. Both are NULL when the turn did not fail.
ALTER TABLE messages ADD COLUMN error_code TEXT;
ALTER TABLE messages ADD COLUMN error_message TEXT;
