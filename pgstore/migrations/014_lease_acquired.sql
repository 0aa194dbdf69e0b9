-- Layout 14: when each epoch of a lease began, by the database's clock,
-- beside when it expires: the record that a new holder took the lease only
-- once the last one's had run out (a restart under the same instance name
-- is a new holder and waits like any other). NULL for a lease taken before
-- this layout.

ALTER TABLE fairsched_leader ADD COLUMN acquired_at timestamptz;
