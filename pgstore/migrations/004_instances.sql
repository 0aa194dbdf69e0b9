-- Layout 4: the instances of a cluster. Each instance beats its row; one
-- silent past the domain's deadline is declared lost by the leader.

CREATE TABLE fairsched_instances (
    domain       text NOT NULL,
    instance     text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    slots        int NOT NULL,         -- how many jobs it runs at once
    types        text[] NOT NULL,      -- the job types it has handlers for
    PRIMARY KEY (domain, instance)
);
