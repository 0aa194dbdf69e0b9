-- Layout 12: incremental reads for cluster mode's loops. A grant remembers
-- the transaction that wrote it (or asked its executor to stop it), an
-- end report the transaction that wrote it, so that an executor reads only
-- the grants written since its last read and the leader only the ends
-- reported since its last — by transaction, with the change feed's cursor
-- (the oldest transaction running at the last read), never by a number
-- that a later commit could slip under.

ALTER TABLE fairsched_jobs ADD COLUMN grant_xid xid8;
ALTER TABLE fairsched_jobs ADD COLUMN end_xid xid8;
DROP INDEX fairsched_jobs_granted;
CREATE INDEX fairsched_jobs_granted ON fairsched_jobs (instance, grant_xid) WHERE running;
CREATE INDEX fairsched_jobs_ended ON fairsched_jobs (end_xid) WHERE end_xid IS NOT NULL;
