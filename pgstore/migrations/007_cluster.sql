-- Layout 7: cluster mode's runtime. An executor's report of an attempt's
-- end stays on the row — by whom, which attempt, how it ended and its
-- error — until the leader has read it and decided what follows (a retry,
-- the end). The row's xid is from now on the transaction that inserted it:
-- the leader's own rewrites of a record no longer move it, so the change
-- feed carries each new job once.

ALTER TABLE fairsched_jobs ADD COLUMN end_instance text;
ALTER TABLE fairsched_jobs ADD COLUMN end_attempt int;
ALTER TABLE fairsched_jobs ADD COLUMN end_kind smallint;
ALTER TABLE fairsched_jobs ADD COLUMN end_error text;
CREATE INDEX fairsched_jobs_owner ON fairsched_jobs ((record->>'owner')) WHERE record ? 'owner';
