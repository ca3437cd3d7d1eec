-- Nothing changes on PostgreSQL: its search index is an index on an
-- expression of the message, kept by PostgreSQL itself.
-- SQLite's migration of this version moves the writes of its full-text
-- entries from triggers into the statements that write messages.
SELECT 1;
