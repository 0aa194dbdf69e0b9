-- Layout 10: a Cancel of a running job keeps its grant until it ends.
-- The leader marks the running row instead of taking the grant back; the
-- executor that runs it cancels the attempt's context and reports its
-- end as usual, so the job holds its place under every cap until it has
-- really stopped, as it does in one process.

ALTER TABLE fairsched_jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
