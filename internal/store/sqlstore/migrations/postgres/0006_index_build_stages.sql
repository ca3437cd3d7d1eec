-- What `toolport index build` has done for each track and stage (lyrics,
-- features, interpretation): the hash of the stage's inputs, its outcome and
-- its output, so that an interrupted build loses no finished stage and a
-- re-run redoes only the stages whose inputs changed or that failed.
CREATE TABLE index_build_stages (
    isrc       TEXT NOT NULL,
    stage      TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('done', 'none', 'failed')),
    output     TEXT NOT NULL DEFAULT '',
    detail     TEXT NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (isrc, stage)
);
