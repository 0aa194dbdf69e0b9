-- Layout 6: sequence numbers from the database, so that every instance of
-- a cluster can insert durable jobs without two taking one number. It
-- starts past the rows already there (written by a single instance).

CREATE SEQUENCE fairsched_jobs_seq;
SELECT setval('fairsched_jobs_seq', greatest((SELECT coalesce(max(seq), 0) FROM fairsched_jobs), 1), (SELECT count(*) > 0 FROM fairsched_jobs));
