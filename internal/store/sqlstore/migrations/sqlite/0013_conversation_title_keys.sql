-- A conversation's title entry is found by an indexed key, not by a scan.
--
-- conversation_title_fts kept the conversation's id in an UNINDEXED column
-- (the implicit rowid of conversations is not stable across VACUUM), so
-- renaming or deleting a conversation deleted its old entry with a scan of
-- every title: 2.4 ms a rename at 10,000 conversations, 11.6 ms at 50,000,
-- on the one writer connection every chat write waits for (a new
-- conversation's first turn sets its title). Each conversation now has a
-- key of its own, assigned once and never reused (AUTOINCREMENT), and its
-- title entry's rowid is that key.
CREATE TABLE conversation_search_keys (
    key             INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL UNIQUE
);
INSERT INTO conversation_search_keys (conversation_id) SELECT id FROM conversations ORDER BY created_at, id;

DROP TRIGGER conversation_title_fts_insert;
DROP TRIGGER conversation_title_fts_update;
DROP TRIGGER conversation_title_fts_delete;
DELETE FROM conversation_title_fts;
INSERT INTO conversation_title_fts (rowid, body, conversation_id)
    SELECT k.key, c.title, c.id FROM conversations AS c JOIN conversation_search_keys AS k ON k.conversation_id = c.id;

CREATE TRIGGER conversation_title_fts_insert AFTER INSERT ON conversations BEGIN
    INSERT INTO conversation_search_keys (conversation_id) VALUES (new.id);
    INSERT INTO conversation_title_fts (rowid, body, conversation_id) VALUES (
        (SELECT key FROM conversation_search_keys WHERE conversation_id = new.id), new.title, new.id);
END;
CREATE TRIGGER conversation_title_fts_update AFTER UPDATE OF title ON conversations BEGIN
    DELETE FROM conversation_title_fts WHERE rowid = (SELECT key FROM conversation_search_keys WHERE conversation_id = old.id);
    INSERT INTO conversation_title_fts (rowid, body, conversation_id) VALUES (
        (SELECT key FROM conversation_search_keys WHERE conversation_id = new.id), new.title, new.id);
END;
CREATE TRIGGER conversation_title_fts_delete AFTER DELETE ON conversations BEGIN
    DELETE FROM conversation_title_fts WHERE rowid = (SELECT key FROM conversation_search_keys WHERE conversation_id = old.id);
    DELETE FROM conversation_search_keys WHERE conversation_id = old.id;
END;
