-- Chat turns across replicas. A running turn holds its conversation through a
-- lease (owner, lease_until) that its replica renews; the partial unique index
-- lets one running turn per conversation exist, so taking the claim is one
-- conditional INSERT. A turn's events are kept in order (seq per turn) so that
-- a client can resume its stream on any replica with Last-Event-ID; ended
-- turns and their events are deleted after a retention period.
CREATE TABLE turns (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    owner           TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('running', 'done', 'incomplete')),
    lease_until     TEXT NOT NULL,
    stop_requested  INTEGER NOT NULL DEFAULT 0,
    started_at      TEXT NOT NULL,
    ended_at        TEXT
);
CREATE UNIQUE INDEX turns_one_running ON turns (conversation_id) WHERE state = 'running';
CREATE INDEX turns_lease ON turns (lease_until) WHERE state = 'running';
CREATE INDEX turns_ended ON turns (ended_at) WHERE state <> 'running';

CREATE TABLE turn_events (
    turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    data    TEXT NOT NULL,
    PRIMARY KEY (turn_id, seq)
);
