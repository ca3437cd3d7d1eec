-- Nothing changes on PostgreSQL: its title index is an index on an
-- expression of the conversation, kept by PostgreSQL itself. SQLite's
-- migration of this version keys each conversation's full-text title entry
-- so that a rename or delete finds it without a scan.
SELECT 1;
