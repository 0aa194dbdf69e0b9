-- Layout 2: the leader lease of cluster mode. One row per domain: the
-- instance that holds it, the epoch its lease began (raised at each new
-- holder, so that a deposed leader's writes are refused), and when it
-- expires by the database's clock (instances' clocks never compare).

CREATE TABLE fairsched_leader (
    domain     text PRIMARY KEY,
    holder     text NOT NULL,
    epoch      bigint NOT NULL,
    expires_at timestamptz NOT NULL
);
