// Package policyfile reads a scheduling policy (fairsched.Policy) from a
// YAML file: tiers, tenant and key limits and weights, job types, groups,
// rate limits and label-matched workloads. Unknown fields are errors, and
// every error names the file, the line and column, and the field, and
// says what would be valid (an *Error wrapping fairsched.ErrInvalidConfig).
//
//	version: 2026-11-28.1            # names the policy in its event and metric
//	max_concurrency: 10              # 0 or absent: as the options say
//	tiers:                           # by priority
//	  10: {min_share: 0.4, burst_share: 0.7, max_running: 200, lend_idle: true}
//	  5:  {min_share: 0.2, burst_share: 0.3}
//	tenants: {max_running: 50, max_pending: 500}     # every fairness key
//	key_limits: {acme: {max_running: 80}}            # one key's own
//	key_weights: {acme: 2}
//	types:
//	  sync: {priority: 5, default_cost: 2s, max_concurrency: 4,
//	         conflict_group: repo, conflict_mode: shared, queue_timeout: 1m,
//	         retry: {max_attempts: 3, min_backoff: 1s, max_backoff: 30s, jitter: 0.2},
//	         coalesce: false, requires_worker: false}
//	groups: {default_weight: 1, weights: {batch: 3}, min_slots: {batch: 1}, limits: {batch: 6}}
//	rate_limits:
//	  - {scope: type, name: sync, per_second: 10, burst: 20}   # scope: type, group or key
//	workloads:                       # the first match applies
//	  - name: interactive
//	    match_labels: {class: interactive}
//	    match_expressions:
//	      - {key: env, operator: In, values: [prod, stage]}    # In, NotIn, Exists, DoesNotExist
//	    priority: 10                 # the priority the job competes at
//	    tokens: 2s
//	    queue_timeout: 30s
//	    fairness_label_key: tenant   # the label whose value is the job's key
//
// A file is checked on its own, as fairsched.New or Scheduler.ApplyPolicy
// will check it again with the scheduler's other settings: tier shares
// need a max_concurrency, here or in the options.
package policyfile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policy"
)

// Error is an error in a policy file: where, which field, and why. It
// wraps fairsched.ErrInvalidConfig.
type Error struct {
	File         string
	Line, Column int    // Column 0: the YAML parser gave a line only
	Field        string // the path of the field, as "tiers.8.min_share"
	Err          error
}

func (e *Error) Error() string {
	where := fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	if e.Column == 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %v", where, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", where, e.Field, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads the policy file at path (see Parse).
func Load(path string) (fairsched.Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return fairsched.Policy{}, err
	}
	return Parse(path, data)
}

// Option reads the policy file at path and returns the option that starts
// a scheduler with it (fairsched.WithPolicy).
func Option(path string) (fairsched.Option, error) {
	p, err := Load(path)
	if err != nil {
		return nil, err
	}
	return fairsched.WithPolicy(p), nil
}

// Parse parses a policy file's contents; name names it in errors. The
// errors of a malformed file are *Error values, joined (errors.Join) in
// line order when there are several.
func Parse(name string, data []byte) (fairsched.Policy, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return fairsched.Policy{}, syntaxError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if len(extra.Content) > 0 {
			extra = *extra.Content[0]
		}
		return fairsched.Policy{}, &Error{File: name, Line: extra.Line, Column: extra.Column,
			Err: fmt.Errorf("%w: a policy file holds one YAML document", policy.ErrInvalidConfig)}
	}
	w := &walker{file: name, nodes: map[string]*yaml.Node{}}
	var f file
	if len(root.Content) > 0 {
		w.walk(root.Content[0], reflect.TypeFor[file](), "")
		if len(w.errs) == 0 {
			if err := root.Content[0].Decode(&f); err != nil {
				return fairsched.Policy{}, syntaxError(name, err)
			}
		}
	}
	if len(w.errs) > 0 {
		return fairsched.Policy{}, joined(w.errs)
	}
	c := &checker{walker: w}
	p := c.policy(&f)
	if len(c.errs) > 0 {
		return fairsched.Policy{}, joined(c.errs)
	}
	return p, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// syntaxError is the parser's error at the line it names.
func syntaxError(name string, err error) error {
	line := 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return &Error{File: name, Line: line, Err: fmt.Errorf("%w: %s", policy.ErrInvalidConfig, policy.CleanText(err.Error()))}
}

func joined(errs []error) error {
	slices.SortStableFunc(errs, func(a, b error) int {
		x, y := a.(*Error), b.(*Error)
		return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Column, y.Column))
	})
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
