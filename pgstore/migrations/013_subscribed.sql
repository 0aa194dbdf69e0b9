-- Layout 13: whether an instance has subscribers to the domain's events.
-- Its heartbeat says so; the leader publishes its events only while some
-- instance does, instead of encoding and notifying every event for nobody.

ALTER TABLE fairsched_instances ADD COLUMN subscribed boolean NOT NULL DEFAULT false;
