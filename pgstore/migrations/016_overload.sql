-- Layout 16: the leader's verdict on its load signal, beside its lease
-- (cluster mode, refusal on overload): whether new jobs are refused, when
-- the leader took the reading, and the epoch that wrote it — a verdict of
-- an earlier epoch is nobody's.

ALTER TABLE fairsched_leader ADD COLUMN overloaded boolean NOT NULL DEFAULT false;
ALTER TABLE fairsched_leader ADD COLUMN overload_at timestamptz;
ALTER TABLE fairsched_leader ADD COLUMN overload_epoch bigint;
