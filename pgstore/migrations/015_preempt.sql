-- Layout 15: why a running job's grant was taken back. A preemption by a
-- higher tier marks the row as a Cancel does and also sets
-- preempt_requested, so that the executor ends the attempt's context
-- with the preemption as its cause.

ALTER TABLE fairsched_jobs ADD COLUMN preempt_requested boolean NOT NULL DEFAULT false;
