package policy

import (
	"errors"
	"fmt"
)

// Errors of worker registration. Returned errors wrap them with the worker
// at fault.
var (
	// ErrDuplicateWorker: a worker with this ID is registered already.
	ErrDuplicateWorker = errors.New("fairsched: worker already registered")
	// ErrUnknownWorker: no worker with this ID is registered.
	ErrUnknownWorker = errors.New("fairsched: unknown worker")
)

// Registry is what a scheduler's calls are checked against: the job types
// registered. A value is never changed once made (With returns a new one),
// so an owner can publish it to other goroutines through an atomic
// pointer. The nil *Registry is the empty one.
type Registry struct {
	types map[JobType]JobTypeConfig
}

// Type returns t's configuration.
func (r *Registry) Type(t JobType) (JobTypeConfig, bool) {
	if r == nil {
		return JobTypeConfig{}, false
	}
	cfg, ok := r.types[t]
	return cfg, ok
}

// With returns the registry with t registered as cfg.
func (r *Registry) With(t JobType, cfg JobTypeConfig) *Registry {
	n := &Registry{types: make(map[JobType]JobTypeConfig, r.len()+1)}
	if r != nil {
		for k, v := range r.types {
			n.types[k] = v
		}
	}
	n.types[t] = cfg
	return n
}

func (r *Registry) len() int {
	if r == nil {
		return 0
	}
	return len(r.types)
}

// CheckNewType checks that t is not registered yet (cfg itself is checked
// by JobTypeConfig.ValidateFor, against the scheduler's limits).
func (r *Registry) CheckNewType(t JobType) error {
	if _, dup := r.Type(t); dup {
		return fmt.Errorf("%w: %q", ErrDuplicateType, t)
	}
	return nil
}

// CheckJob checks a job's type, id and function (ValidateJob) and that its
// type is registered.
func (r *Registry) CheckJob(t JobType, id string, hasFn bool) error {
	if err := ValidateJob(t, id, hasFn); err != nil {
		return err
	}
	if _, ok := r.Type(t); !ok {
		return fmt.Errorf("%w: %q", ErrUnknownJobType, t)
	}
	return nil
}

// CheckHandler checks that a handler's type t is a name and is registered.
func (r *Registry) CheckHandler(t JobType) error {
	if err := InvalidName(ErrInvalidJob, "job type", string(t)); err != nil {
		return err
	}
	if _, ok := r.Type(t); !ok {
		return fmt.Errorf("%w: %q: RegisterType first", ErrUnknownJobType, t)
	}
	return nil
}

// CheckWorker checks a worker's registration: every type its slots take
// is registered as a worker type (CheckWorkerTypes), then its ID and slots
// (CheckWorkerSpec; registered says whether an ID is taken).
func (r *Registry) CheckWorker(id string, slots [][]JobType, registered func(string) bool) error {
	if err := CheckWorkerTypes(id, slots, r.Type); err != nil {
		return err
	}
	return CheckWorkerSpec(id, slots, registered)
}

// CheckWorkerTypes checks that every type worker id's slots take is
// registered (typeOf finds it) with RequiresWorker.
func CheckWorkerTypes(id string, slots [][]JobType, typeOf func(JobType) (JobTypeConfig, bool)) error {
	for i, types := range slots {
		for _, t := range types {
			cfg, ok := typeOf(t)
			if !ok {
				return fmt.Errorf("%w: %q (worker %q, slot %d)", ErrUnknownJobType, t, id, i)
			}
			if !cfg.RequiresWorker {
				return InvalidConfig(fmt.Sprintf("WorkerSpec{ID: %q}.Slots[%d].Types", id, i), t,
					"is not a worker type: register it with JobTypeConfig.RequiresWorker")
			}
		}
	}
	return nil
}

// CheckWorkerSpec checks a worker's ID and slots: the ID is a name, not
// empty and not registered yet; there is a slot, and each slot names at
// least one type, none twice.
func CheckWorkerSpec(id string, slots [][]JobType, registered func(string) bool) error {
	if err := InvalidName(ErrInvalidConfig, "WorkerSpec.ID", id); err != nil {
		return err
	}
	switch {
	case id == "":
		return InvalidConfig("WorkerSpec.ID", `""`, "must not be empty")
	case len(slots) == 0:
		return InvalidConfig(fmt.Sprintf("WorkerSpec{ID: %q}.Slots", id), "[]", "must hold at least one slot")
	case registered(id):
		return fmt.Errorf("%w: %q", ErrDuplicateWorker, id)
	}
	for i, types := range slots {
		if len(types) == 0 {
			return InvalidConfig(fmt.Sprintf("WorkerSpec{ID: %q}.Slots[%d].Types", id, i), "[]", "must name at least one job type")
		}
		for k, t := range types {
			for _, u := range types[:k] {
				if t == u {
					return InvalidConfig(fmt.Sprintf("WorkerSpec{ID: %q}.Slots[%d].Types", id, i), t, "is listed twice")
				}
			}
		}
	}
	return nil
}
