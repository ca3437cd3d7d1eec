-- Full-text search of conversations: titles and the text a person wrote or
-- read (the "text" blocks of a message's content). tool_use inputs and
-- tool_result contents are left out: they are machine JSON and fetched pages,
-- which would match nearly any word. Each message's text is cut at 65536
-- characters so that one huge message cannot bloat the index (PostgreSQL's
-- tsvector has a 1 MB limit; both engines cut alike).
--
-- unicode61 folds case and splits on anything but letters, digits and
-- private-use characters, so Hebrew words are tokens as English ones are.
-- remove_diacritics 0: PostgreSQL's 'simple' configuration keeps diacritics
-- too, and the engines should find the same conversations.
--
-- The indexes are kept in step with the tables by triggers, so every writer
-- (including foreign-key cascades) keeps them right.
CREATE VIRTUAL TABLE message_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0');
-- Titles are keyed by conversation id (an UNINDEXED column): the implicit
-- rowid of conversations is not stable across VACUUM.
CREATE VIRTUAL TABLE conversation_title_fts USING fts5(body, conversation_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 0');

CREATE TRIGGER message_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO message_fts (rowid, body) VALUES (new.seq, (
        SELECT substr(coalesce(group_concat(json_extract(b.value, '$.text'), char(10)), ''), 1, 65536)
        FROM json_each(new.content) AS b
        WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'text'));
END;
CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON messages BEGIN
    DELETE FROM message_fts WHERE rowid = old.seq;
    INSERT INTO message_fts (rowid, body) VALUES (new.seq, (
        SELECT substr(coalesce(group_concat(json_extract(b.value, '$.text'), char(10)), ''), 1, 65536)
        FROM json_each(new.content) AS b
        WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'text'));
END;
CREATE TRIGGER message_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER conversation_title_fts_insert AFTER INSERT ON conversations BEGIN
    INSERT INTO conversation_title_fts (body, conversation_id) VALUES (new.title, new.id);
END;
CREATE TRIGGER conversation_title_fts_update AFTER UPDATE OF title ON conversations BEGIN
    DELETE FROM conversation_title_fts WHERE conversation_id = old.id;
    INSERT INTO conversation_title_fts (body, conversation_id) VALUES (new.title, new.id);
END;
CREATE TRIGGER conversation_title_fts_delete AFTER DELETE ON conversations BEGIN
    DELETE FROM conversation_title_fts WHERE conversation_id = old.id;
END;

-- What was stored before this migration.
INSERT INTO message_fts (rowid, body)
    SELECT m.seq, (
        SELECT substr(coalesce(group_concat(json_extract(b.value, '$.text'), char(10)), ''), 1, 65536)
        FROM json_each(m.content) AS b
        WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'text')
    FROM messages AS m;
INSERT INTO conversation_title_fts (body, conversation_id) SELECT title, id FROM conversations;
