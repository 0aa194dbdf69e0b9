-- Layout 3: the change feed. Each job row remembers the transaction that
-- last wrote it (xid8), so that a reader takes the rows changed since its
-- cursor by transaction, never by "sequence greater than the last seen":
-- a row whose sequence was taken before another's may commit after it.

ALTER TABLE fairsched_jobs ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX fairsched_jobs_xid ON fairsched_jobs (xid);
