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

-- The lease check of every fenced write as one statement that fails when
-- epoch is not domain's current, unexpired lease, holding the lease row
-- (FOR SHARE) against a take-over until the write commits: a fenced write
-- is then one pipeline — this check, its statements, one commit — and a
-- failed check aborts the statements after it.
CREATE FUNCTION fairsched_fence(d text, e bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM fairsched_leader WHERE domain = d AND epoch = e AND expires_at > now() FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'fairsched: fenced: epoch % is not the lease of %', e, d USING ERRCODE = 'FSF01';
    END IF;
END $$;
