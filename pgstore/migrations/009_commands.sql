-- Layout 9: commands for the leader. An instance asks the leader's
-- scheduler for what only it can do — cancel a job, change a weight,
-- pause a group, list or requeue dead jobs — by inserting a command; the
-- leader runs the open commands in order and writes each reply (fenced),
-- which the asking instance reads and deletes. The settings the commands
-- change (weights, pauses) are kept apart, one row each, so that every new
-- leader applies them before it decides anything.

CREATE TABLE fairsched_commands (
    id         bigserial PRIMARY KEY,
    domain     text NOT NULL,
    kind       text NOT NULL,
    args       jsonb NOT NULL,
    reply      jsonb,             -- NULL until the leader has run it
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fairsched_commands_open ON fairsched_commands (domain, id) WHERE reply IS NULL;

CREATE TABLE fairsched_settings (
    domain text NOT NULL,
    name   text NOT NULL, -- "key_weight/<key>", "group_weight/<group>", "paused/<group>"
    value  jsonb NOT NULL,
    PRIMARY KEY (domain, name)
);
