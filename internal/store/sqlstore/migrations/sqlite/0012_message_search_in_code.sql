-- A message's full-text entry is written by the statements that insert or
-- update the message (appendInTx, updateInTx), not by triggers.
--
-- A trigger makes its INSERT or UPDATE a statement that writes two tables,
-- and SQLite opens a statement savepoint for every such statement. FTS5
-- flushes its pending terms to a new index segment at every savepoint, so
-- each message of a group-committed batch became a segment of its own, to
-- be merged later: 45 % of a message append's cost (measured with
-- BenchmarkBurstTurns). Written by their own single-row statements, a
-- batch's entries stay pending until its commit and make one segment.
--
-- Deletes keep their trigger: foreign-key cascades delete messages too,
-- and deletes are rare.
DROP TRIGGER message_fts_insert;
DROP TRIGGER message_fts_update;
