-- Servers that keep the track index in memory LISTEN on toolport_index and
-- reload what changed when told, instead of polling: every statement that
-- writes the index notifies once, at commit, with the table's schema (so
-- that stores sharing a database in different schemas tell theirs apart).
CREATE FUNCTION toolport_notify_track_index() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('toolport_index', TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$;

CREATE TRIGGER track_index_notify
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON track_index
  FOR EACH STATEMENT EXECUTE FUNCTION toolport_notify_track_index();
