-- Layout 8: worker slots across a cluster. Each instance's heartbeat
-- carries the workers registered on it (id → each slot's job types); the
-- leader's worker index spans them. A grant of a job of a worker type
-- names the worker and slot it runs on.

ALTER TABLE fairsched_instances ADD COLUMN workers jsonb NOT NULL DEFAULT '{}';
ALTER TABLE fairsched_jobs ADD COLUMN worker text;
ALTER TABLE fairsched_jobs ADD COLUMN slot int NOT NULL DEFAULT 0;
