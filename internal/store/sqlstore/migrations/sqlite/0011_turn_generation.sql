-- Fencing for turns across replicas: a turn's generation is 1 when it is
-- claimed and goes up by one at every take-over of its lapsed lease. Every
-- write a turn makes (its events, its answer, its end) checks, in its own
-- transaction, that the turn still runs under the generation its writer
-- holds, so a replica that stalled past its lease cannot write after the
-- turn was taken over and closed.
ALTER TABLE turns ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;
