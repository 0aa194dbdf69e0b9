-- Layout 11: RunSync and Submit calls in cluster mode may share an id, as
-- they do in one process (two callers fetching one repository). Their
-- rows carry the instance that made them ("owner" in the record); the
-- rule of one unfinished job per (type, id) is for durable jobs only.

DROP INDEX fairsched_jobs_unfinished;
CREATE UNIQUE INDEX fairsched_jobs_unfinished ON fairsched_jobs (type, id) WHERE state = 0 AND NOT record ? 'owner';
