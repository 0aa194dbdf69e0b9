-- fairsched on PostgreSQL, layout 1: the scheduler's state and its
-- durable jobs. Applied by pgstore.Open in one transaction (under an
-- advisory lock, so that instances starting together apply it once), or by
-- hand: then insert the version into fairsched_migrations yourself.

CREATE TABLE fairsched_state (
    id  int PRIMARY KEY CHECK (id = 1), -- one row: the state document
    doc jsonb NOT NULL
);

-- One row per durable job, under its sequence number; record is the
-- job's whole record (core.JobRecord as JSON). type, id and state repeat
-- what the record says, for indexes and for people reading the table.
CREATE TABLE fairsched_jobs (
    seq    bigint PRIMARY KEY,
    type   text NOT NULL,
    id     text NOT NULL,
    state  smallint NOT NULL, -- 0 pending, 1 dead, 2 succeeded (kept for retention)
    record jsonb NOT NULL
);

-- At most one unfinished durable job per (type, id).
CREATE UNIQUE INDEX fairsched_jobs_unfinished ON fairsched_jobs (type, id) WHERE state = 0;
CREATE INDEX fairsched_jobs_dead ON fairsched_jobs (seq) WHERE state = 1;
