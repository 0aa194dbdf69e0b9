package queue

// What only the tests ask of the queue.

// Parked reports whether the job waits on a conflict key.
func (j *Job) Parked() bool { return j.where == placeParked }

// GroupCount returns the number of group records the queue holds.
func (q *Queue) GroupCount() int { return len(q.groups) }
