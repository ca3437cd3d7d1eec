-- Full-text search of conversations: titles and the text a person wrote or
-- read (the "text" blocks of a message's content). tool_use inputs and
-- tool_result contents are left out: they are machine JSON and fetched pages,
-- which would match nearly any word. Each message's text is cut at 65536
-- characters: a tsvector is limited to 1 MB, and one huge message must not
-- make its append fail (SQLite cuts alike).
--
-- The 'simple' configuration lowercases and neither stems nor drops stop
-- words. The language configurations stem one language each; 'simple' treats
-- every script alike, Hebrew included, and agrees with SQLite's unicode61
-- tokenizer, so both engines find the same conversations. Matching is by word
-- prefix (see sqlstore's SearchConversations).
--
-- Expression indexes rather than stored columns: they follow every insert,
-- update and delete (cascades included) with no trigger to keep in step.
CREATE FUNCTION toolport_message_text(content jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
        SELECT left(coalesce(string_agg(b ->> 'text', E'\n'), ''), 65536)
        FROM jsonb_array_elements(content) AS b
        WHERE jsonb_typeof(b) = 'object' AND b ->> 'type' = 'text'
    $$;
CREATE INDEX messages_fts ON messages USING gin (to_tsvector('simple', toolport_message_text(content)));
CREATE INDEX conversations_title_fts ON conversations USING gin (to_tsvector('simple', title));
