package policy

import (
	"fmt"
	"maps"
	"slices"
)

// Labels describe a job to the workload rules (Workload): a tenant, an
// environment, a caller class. Keys and values are caller strings, bounded
// tighter than names: at most MaxLabels pairs, each key non-empty and at
// most MaxLabelLen bytes, each value at most MaxLabelLen bytes, both valid
// UTF-8 without NUL.
type Labels map[string]string

// Bounds of a job's labels.
const (
	MaxLabels   = 32
	MaxLabelLen = 256
)

// ValidateLabels checks a job's labels; the error wraps ErrInvalidJob and
// names the label at fault (its key shown cleaned and cut).
func ValidateLabels(l Labels) error {
	if len(l) == 0 {
		return nil // the common case: nothing to sort, nothing allocated
	}
	if len(l) > MaxLabels {
		return fmt.Errorf("%w: labels: %d pairs, over the limit of %d", ErrInvalidJob, len(l), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(l)) { // sorted: the same error on every run
		if err := checkLabel(ErrInvalidJob, "label key", k, true); err != nil {
			return err
		}
		if err := checkLabel(ErrInvalidJob, fmt.Sprintf("label %q value", CleanTextN(k, 64)), l[k], false); err != nil {
			return err
		}
	}
	return nil
}

// checkLabel checks one label key or value against the rule for caller
// strings and the label bound.
func checkLabel(sentinel error, field, s string, key bool) error {
	if err := InvalidName(sentinel, field, s); err != nil {
		return err
	}
	switch {
	case key && s == "":
		return fmt.Errorf("%w: %s: must not be empty", sentinel, field)
	case len(s) > MaxLabelLen:
		return fmt.Errorf("%w: %s %q is %d bytes long, over the limit of %d", sentinel, field, CleanTextN(s, 64), len(s), MaxLabelLen)
	}
	return nil
}
