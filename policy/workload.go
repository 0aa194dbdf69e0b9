package policy

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// SelectorOp is how a label requirement compares a job's label, as in a
// Kubernetes set-based label selector.
type SelectorOp string

// The selector operators.
const (
	// SelectorIn: the job has the label and its value is one of Values.
	SelectorIn SelectorOp = "In"
	// SelectorNotIn: the job lacks the label, or its value is none of
	// Values.
	SelectorNotIn SelectorOp = "NotIn"
	// SelectorExists: the job has the label, whatever its value.
	SelectorExists SelectorOp = "Exists"
	// SelectorDoesNotExist: the job lacks the label.
	SelectorDoesNotExist SelectorOp = "DoesNotExist"
)

// LabelRequirement is one condition of a workload's selector.
type LabelRequirement struct {
	Key    string
	Op     SelectorOp
	Values []string // In, NotIn: at least one; Exists, DoesNotExist: none
}

// Workload is a rule that matches jobs by their labels and sets what they
// did not set themselves. A job matches when every one of MatchLabels
// (equality) and MatchExpressions holds; a rule with neither matches every
// job. The first matching rule of a list applies, and a job no rule matches
// keeps its options. Options given at the call (WithTokens,
// WithQueueTimeout, WithFairnessKey or a RunSync key, InheritPriority)
// override what the rule sets; the rule overrides the job type's settings.
type Workload struct {
	// Name identifies the rule in errors and decision logs; unique in a
	// list, not empty.
	Name             string
	MatchLabels      map[string]string
	MatchExpressions []LabelRequirement
	// Priority, when set, is the job's tier: the priority it competes at
	// (higher or lower than its type's) and whose cap, share, preemption
	// and starvation window apply to it, as if its type had that
	// priority. Its type's own cap, conflicts and other settings still
	// apply. An inherited priority given at the call (InheritPriority)
	// overrides it.
	Priority *Priority
	// Tokens is the job's stated cost (as WithTokens); 0 sets none.
	Tokens time.Duration
	// QueueTimeout is how long the job may wait (as WithQueueTimeout); 0
	// sets none.
	QueueTimeout time.Duration
	// FairnessLabelKey names the label whose value is the job's fairness
	// key, for a job without a key of its own; a job without the label
	// keeps its key.
	FairnessLabelKey string
}

// Bounds of a workload list, so that matching stays cheap and bounded.
const (
	MaxWorkloads      = 1000
	MaxSelectorValues = 1000
)

// Workloads is a compiled list of workload rules. Matching a job costs at
// most one pass over the rules, each requirement one map lookup and, for a
// set, a binary search. The zero or nil value matches nothing.
type Workloads struct {
	rules []rule
}

type rule struct {
	reqs []req
	set  WorkloadEffect
}

type req struct {
	key    string
	op     SelectorOp
	values []string // sorted
}

// WorkloadEffect is what a matched rule sets on a job.
type WorkloadEffect struct {
	Name             string
	Priority         Priority
	HasPriority      bool
	Tokens           time.Duration
	QueueTimeout     time.Duration
	FairnessLabelKey string
}

// CompileWorkloads checks ws and compiles them for Match. The error wraps
// ErrInvalidConfig and names the rule (by index and name) and its field.
func CompileWorkloads(ws []Workload) (*Workloads, error) {
	if len(ws) > MaxWorkloads {
		return nil, InvalidConfig("Workloads", len(ws), fmt.Sprintf("at most %d rules", MaxWorkloads))
	}
	out := &Workloads{rules: make([]rule, 0, len(ws))}
	names := map[string]bool{}
	for i, w := range ws {
		r, err := compileAt(i, w)
		if err != nil {
			return nil, err
		}
		if names[w.Name] {
			return nil, InvalidConfig(fmt.Sprintf("Workloads[%d %q].Name", i, w.Name), w.Name, "names a rule already listed: each name once")
		}
		names[w.Name] = true
		out.rules = append(out.rules, r)
	}
	return out, nil
}

// ValidateWorkload checks rule w, the index-th of its list, on its own
// (not whether its name is unique in the list).
func ValidateWorkload(index int, w Workload) error {
	_, err := compileAt(index, w)
	return err
}

func compileAt(i int, w Workload) (rule, error) {
	if err := checkLabel(ErrInvalidConfig, fmt.Sprintf("Workloads[%d].Name", i), w.Name, true); err != nil {
		return rule{}, err
	}
	return compileRule(fmt.Sprintf("Workloads[%d %q]", i, w.Name), w)
}

func compileRule(field string, w Workload) (rule, error) {
	var r rule
	for _, k := range slices.Sorted(maps.Keys(w.MatchLabels)) {
		v := w.MatchLabels[k]
		if err := checkLabel(ErrInvalidConfig, field+".MatchLabels key", k, true); err != nil {
			return r, err
		}
		if err := checkLabel(ErrInvalidConfig, fmt.Sprintf("%s.MatchLabels[%q]", field, k), v, false); err != nil {
			return r, err
		}
		r.reqs = append(r.reqs, req{key: k, op: SelectorIn, values: []string{v}})
	}
	for i, e := range w.MatchExpressions {
		q, err := compileReq(fmt.Sprintf("%s.MatchExpressions[%d]", field, i), e)
		if err != nil {
			return r, err
		}
		r.reqs = append(r.reqs, q)
	}
	eff, err := effectOf(field, w)
	r.set = eff
	return r, err
}

func compileReq(field string, e LabelRequirement) (req, error) {
	if err := checkLabel(ErrInvalidConfig, field+".Key", e.Key, true); err != nil {
		return req{}, err
	}
	switch e.Op {
	case SelectorIn, SelectorNotIn:
		if len(e.Values) == 0 || len(e.Values) > MaxSelectorValues {
			return req{}, InvalidConfig(field+".Values", len(e.Values), fmt.Sprintf("%s needs from 1 to %d values", e.Op, MaxSelectorValues))
		}
	case SelectorExists, SelectorDoesNotExist:
		if len(e.Values) != 0 {
			return req{}, InvalidConfig(field+".Values", len(e.Values), fmt.Sprintf("%s takes no values", e.Op))
		}
	default:
		return req{}, InvalidConfig(field+".Op", CleanTextN(string(e.Op), 64), "must be In, NotIn, Exists or DoesNotExist")
	}
	for i, v := range e.Values {
		if err := checkLabel(ErrInvalidConfig, fmt.Sprintf("%s.Values[%d]", field, i), v, false); err != nil {
			return req{}, err
		}
	}
	vs := slices.Clone(e.Values)
	slices.Sort(vs)
	return req{key: e.Key, op: e.Op, values: slices.Compact(vs)}, nil
}

func effectOf(field string, w Workload) (WorkloadEffect, error) {
	eff := WorkloadEffect{Name: w.Name, Tokens: w.Tokens, QueueTimeout: w.QueueTimeout, FairnessLabelKey: w.FairnessLabelKey}
	if w.Priority != nil {
		if *w.Priority < 0 {
			return eff, InvalidConfig(field+".Priority", *w.Priority, "must not be negative")
		}
		eff.Priority, eff.HasPriority = *w.Priority, true
	}
	switch {
	case w.Tokens < 0 || w.Tokens > MaxTokens:
		return eff, InvalidConfig(field+".Tokens", w.Tokens, fmt.Sprintf("must be within [0, %v] (0 sets none)", MaxTokens))
	case w.QueueTimeout < 0:
		return eff, InvalidConfig(field+".QueueTimeout", w.QueueTimeout, "must not be negative (0 sets none)")
	case w.FairnessLabelKey != "":
		if err := checkLabel(ErrInvalidConfig, field+".FairnessLabelKey", w.FairnessLabelKey, true); err != nil {
			return eff, err
		}
	case w.Priority == nil && w.Tokens == 0 && w.QueueTimeout == 0:
		return eff, InvalidConfig(field, "a rule that sets nothing", "set a priority, tokens, a queue timeout or a fairness label key")
	}
	return eff, nil
}

// SetsPriority reports whether a rule sets a priority (puts jobs in a
// tier other than their type's).
func (w *Workloads) SetsPriority() bool {
	if w == nil {
		return false
	}
	for i := range w.rules {
		if w.rules[i].set.HasPriority {
			return true
		}
	}
	return false
}

// Len is the number of rules.
func (w *Workloads) Len() int {
	if w == nil {
		return 0
	}
	return len(w.rules)
}

// Match returns the effect of the first rule whose selector labels satisfy,
// or nil when none does.
func (w *Workloads) Match(labels Labels) *WorkloadEffect {
	if w == nil {
		return nil
	}
	for i := range w.rules {
		if w.rules[i].matches(labels) {
			return &w.rules[i].set
		}
	}
	return nil
}

func (r *rule) matches(labels Labels) bool {
	for i := range r.reqs {
		if !r.reqs[i].holds(labels) {
			return false
		}
	}
	return true
}

func (q *req) holds(labels Labels) bool {
	v, ok := labels[q.key]
	switch q.op {
	case SelectorExists:
		return ok
	case SelectorDoesNotExist:
		return !ok
	case SelectorIn:
		return ok && q.has(v)
	default: // SelectorNotIn
		return !ok || !q.has(v)
	}
}

func (q *req) has(v string) bool {
	if len(q.values) == 1 {
		return q.values[0] == v
	}
	_, found := slices.BinarySearch(q.values, v)
	return found
}
