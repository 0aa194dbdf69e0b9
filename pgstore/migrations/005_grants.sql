-- Layout 5: grants. In cluster mode the leader grants a job to an
-- instance for one attempt; the row says to whom, which attempt, and (for
-- a job that runs alone on its resource) its conflict key. The partial
-- unique index is the database's own safety net: two running grants of
-- one exclusive conflict key cannot both commit, whatever a leader does.

ALTER TABLE fairsched_jobs ADD COLUMN running boolean NOT NULL DEFAULT false;
ALTER TABLE fairsched_jobs ADD COLUMN instance text;
ALTER TABLE fairsched_jobs ADD COLUMN attempt int NOT NULL DEFAULT 0;
ALTER TABLE fairsched_jobs ADD COLUMN conflict_key text;
CREATE UNIQUE INDEX fairsched_jobs_running_exclusive ON fairsched_jobs (conflict_key) WHERE running AND conflict_key IS NOT NULL;
CREATE INDEX fairsched_jobs_granted ON fairsched_jobs (instance) WHERE running;
