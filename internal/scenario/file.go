package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/policy"
)

// Scenario files
//
// A scenario file is YAML. Unknown fields are errors, and every error names
// the file and the line of the offending node ("file:line: message").
// Durations of the scheduler and of types are Go duration strings ("10s");
// the arrival (at, start) and run time (duration) of jobs are whole seconds.
//
//	name: 20-specialist-slots     # default: the file's base name; NN- orders the demo
//	title: Each job takes the most specialised free slot   # one plain sentence:
//	                              # what the scenario shows (the demo's line)
//	scheduler:
//	  max_concurrency: 8              # 0 or absent: unlimited
//	  aging: {grace: 3s, interval: 1s, step: 2, max_priority: 8, urgent_threshold: 0}
//	  scoring: {}                     # present: scoring on; priority_weight, age_weight,
//	                                  # rarity_bonus, on_demand_bonus, on_demand_age_weight
//	  groups: {default_weight: 1, weights: {A: 3}, min_slots: {A: 1}, limits: {A: 6}}
//	  priority_mode: order_only       # or value_is_cap (the default): priorities only order,
//	                                  # from 0; tiers capped only where configured
//	  tiers: {8: {min_share: 0.5, burst_share: 1, lend_idle: true, max_running: 4}}
//	                                  # burst_share default 1, unless max_running alone
//	                                  # caps the tier (then no global cap is needed)
//	  tenants: {max_running: 2, max_pending: 10}
//	  key_limits: {gold: {max_running: 4}}
//	  key_weights: {gold: 2}
//	types:                            # at least one, in registration order
//	  - {name: pdf, priority: 5, default_cost: 10s, max_concurrency: 0,
//	     conflict_group: git, requires_worker: true, queue_timeout: 30s}
//	workers:
//	  - {id: w1, slots: [[pdf], [pdf, excel]]}  # a slot lists a type once
//	jobs:
//	  - {type: pdf, id: doc1, key: alice, at: 0, duration: 5, group: A,
//	     mode: queued, tag: "", refused: false}
//	generators:                       # appended after jobs, in order
//	  - type: pdf
//	    key: alice
//	    group: A
//	    mode: on-demand               # or queued; absent: by key (ModeAuto)
//	    count: 20                     # required
//	    start: 0                      # first arrival
//	    every: 2                      # seconds between arrivals; 0: all at start
//	    spread: 60                    # or: random arrivals in [start, start+spread)
//	    closed_loop: true             # or: each arrives as the previous ends (first at start)
//	    duration: {min: 1, max: 5}    # or a fixed number of seconds
//	    seed: 7                       # default 1
//	    id: doc-%d                    # default <key or type>-%d, numbered by arrival

// Load reads the scenario file at path (see Parse). The scenario's name
// defaults to the file's base name without its extension.
func Load(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, err
	}
	return Parse(path, data)
}

// FileError is an error in a scenario file, at a line.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxGenerated bounds the jobs of one generator, so that a typo cannot
// exhaust memory.
const maxGenerated = 100000

// Parse parses a scenario file's contents; file names it in errors and, its
// base name without extension, is the scenario's name unless the file sets
// one. A malformed file gives *FileError errors, joined (errors.Join) when
// there are several, in line order.
func Parse(file string, data []byte) (Scenario, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&root); err == nil {
		if e := yamlMergeKeyError(file, &root); e != nil {
			return Scenario{}, e
		}
	}
	var f fileLined[fileScenario]
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err != io.EOF {
		return Scenario{}, yamlErrors(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		line := extra.Line
		if extra.Kind == yaml.DocumentNode && len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return Scenario{}, &FileError{file, line, "a scenario file holds one YAML document"}
	} else if err != io.EOF {
		return Scenario{}, yamlErrors(file, err)
	}
	p := &fileParser{file: file, f: &f.V, rootLine: max(f.Line, 1), types: map[string]*fileType{}}
	sc := p.scenario()
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *FileError) int { return a.Line - b.Line })
		if len(p.errs) == 1 {
			return Scenario{}, p.errs[0]
		}
		errs := make([]error, len(p.errs))
		for i, e := range p.errs {
			errs[i] = e
		}
		return Scenario{}, errors.Join(errs...)
	}
	if sc.Name == "" {
		base := filepath.Base(file)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return sc, nil
}

// The file's structure. Strictness (KnownFields) holds at every level
// because no struct here has an UnmarshalYAML(*yaml.Node) method: a node's
// own Decode would forget it. fileLined records a struct's line through the
// older UnmarshalYAML(func(any) error) form, which decodes with the same,
// strict decoder; fileVal records a scalar's line.

type fileScenario struct {
	Name       string                           `yaml:"name"`
	Title      string                           `yaml:"title"`
	Scheduler  fileScheduler                    `yaml:"scheduler"`
	Types      fileLined[[]fileLined[fileType]] `yaml:"types"`
	Workers    []fileLined[fileWorker]          `yaml:"workers"`
	Jobs       fileLined[[]fileLined[fileJob]]  `yaml:"jobs"`
	Generators []fileLined[fileGenerator]       `yaml:"generators"`
	Expect     []fileLined[fileExpect]          `yaml:"expect"`
}

// fileExpect is a claim about the run (Expectation).
type fileExpect struct {
	Group   fileVal[string] `yaml:"group"`
	At      fileVal[int]    `yaml:"at"`
	Running fileVal[int]    `yaml:"running"`
	Job     fileVal[string] `yaml:"job"`
	Start   fileVal[int]    `yaml:"start"`
	StartBy fileVal[int]    `yaml:"start_by"`
	Slot    string          `yaml:"slot"`
}

type fileScheduler struct {
	MaxConcurrency fileVal[int]                      `yaml:"max_concurrency"`
	Aging          *fileLined[fileAging]             `yaml:"aging"`
	Scoring        *fileLined[fileScoring]           `yaml:"scoring"`
	Groups         *fileLined[fileGroups]            `yaml:"groups"`
	Tiers          fileMap[int, fileLined[fileTier]] `yaml:"tiers"`
	PriorityMode   fileVal[string]                   `yaml:"priority_mode"`
	Tenants        *fileLined[fileLimits]            `yaml:"tenants"`
	KeyLimits      map[string]fileLined[fileLimits]  `yaml:"key_limits"`
	KeyWeights     fileMap[string, fileVal[float64]] `yaml:"key_weights"`
}

type fileAging struct {
	Grace           fileVal[string] `yaml:"grace"`
	Interval        fileVal[string] `yaml:"interval"`
	Step            fileVal[int]    `yaml:"step"`
	MaxPriority     fileVal[int]    `yaml:"max_priority"`
	UrgentThreshold fileVal[int]    `yaml:"urgent_threshold"`
}

type fileScoring struct {
	PriorityWeight    fileVal[float64] `yaml:"priority_weight"`
	AgeWeight         fileVal[float64] `yaml:"age_weight"`
	RarityBonus       fileVal[float64] `yaml:"rarity_bonus"`
	OnDemandBonus     fileVal[float64] `yaml:"on_demand_bonus"`
	OnDemandAgeWeight fileVal[float64] `yaml:"on_demand_age_weight"`
}

type fileGroups struct {
	DefaultWeight fileVal[int]            `yaml:"default_weight"`
	Weights       map[string]fileVal[int] `yaml:"weights"`
	MinSlots      map[string]fileVal[int] `yaml:"min_slots"`
	Limits        map[string]fileVal[int] `yaml:"limits"`
}

type fileTier struct {
	MinShare   fileVal[float64] `yaml:"min_share"`
	BurstShare fileVal[float64] `yaml:"burst_share"`
	MaxRunning fileVal[int]     `yaml:"max_running"`
	LendIdle   bool             `yaml:"lend_idle"`
}

type fileLimits struct {
	MaxRunning fileVal[int] `yaml:"max_running"`
	MaxPending fileVal[int] `yaml:"max_pending"`
}

type fileType struct {
	Name           fileVal[string] `yaml:"name"`
	Priority       fileVal[int]    `yaml:"priority"`
	DefaultCost    fileVal[string] `yaml:"default_cost"`
	MaxConcurrency fileVal[int]    `yaml:"max_concurrency"`
	ConflictGroup  string          `yaml:"conflict_group"`
	ConflictMode   fileVal[string] `yaml:"conflict_mode"`
	RequiresWorker bool            `yaml:"requires_worker"`
	QueueTimeout   fileVal[string] `yaml:"queue_timeout"`
}

type fileWorker struct {
	ID    fileVal[string]                           `yaml:"id"`
	Slots fileLined[[]fileLined[[]fileVal[string]]] `yaml:"slots"`
}

type fileJob struct {
	Type     fileVal[string] `yaml:"type"`
	ID       fileVal[string] `yaml:"id"`
	Key      string          `yaml:"key"`
	At       fileVal[int]    `yaml:"at"`
	Duration fileVal[int]    `yaml:"duration"`
	Group    string          `yaml:"group"`
	Mode     fileVal[string] `yaml:"mode"`
	Tag      string          `yaml:"tag"`
	Refused  bool            `yaml:"refused"`
}

type fileGenerator struct {
	Type   fileVal[string] `yaml:"type"`
	Key    string          `yaml:"key"`
	Group  string          `yaml:"group"`
	Mode   fileVal[string] `yaml:"mode"`
	Count  fileVal[int]    `yaml:"count"`
	Start  fileVal[int]    `yaml:"start"`
	Every  fileVal[int]    `yaml:"every"`
	Spread fileVal[int]    `yaml:"spread"`
	// ClosedLoop: each job arrives when the generator's previous one ends
	// (the first at start), as a client that waits for each answer.
	ClosedLoop bool            `yaml:"closed_loop"`
	Duration   fileDuration    `yaml:"duration"`
	Seed       fileVal[uint64] `yaml:"seed"`
	ID         fileVal[string] `yaml:"id"`
}

// fileRange is a generator's random duration.
type fileRange struct {
	Min fileVal[int] `yaml:"min"`
	Max fileVal[int] `yaml:"max"`
}

// fileDuration is a generator's duration: a number of seconds or a range.
type fileDuration struct {
	Line  int
	Set   bool
	Fixed fileVal[int]
	Range *fileRange
}

func (d *fileDuration) UnmarshalYAML(unmarshal func(any) error) error {
	var n fileNode
	if err := unmarshal(&n); err != nil {
		return err
	}
	d.Line, d.Set = n.Line, true
	if n.Kind == yaml.MappingNode {
		d.Range = &fileRange{}
		return unmarshal(d.Range)
	}
	return unmarshal(&d.Fixed)
}

// fileNode records the node it is decoded from, its line and kind.
type fileNode struct {
	Line int
	Kind yaml.Kind
	Node *yaml.Node
}

func (n *fileNode) UnmarshalYAML(node *yaml.Node) error {
	n.Line, n.Kind, n.Node = node.Line, node.Kind, node
	return nil
}

// fileMap is a mapping and the line of each of its keys. A null value
// (tiers: {8: ~}) decodes as the zero value, whose line is 0: errors about
// it name its key's line instead (line).
type fileMap[K comparable, V any] struct {
	V    map[K]V
	Keys map[K]int // the line of each key of V
}

func (m *fileMap[K, V]) UnmarshalYAML(unmarshal func(any) error) error {
	var n fileNode
	if err := unmarshal(&n); err != nil {
		return err
	}
	if err := unmarshal(&m.V); err != nil {
		return err
	}
	m.Keys = map[K]int{}
	fileKeyLines(n.Node, m.Keys, nil)
	return nil
}

// line returns valueLine, the line of key's value, or the key's line when
// the value has none (a null).
func (m fileMap[K, V]) line(key K, valueLine int) int {
	if valueLine > 0 {
		return valueLine
	}
	return m.Keys[key]
}

// fileKeyLines records in lines the line of each key of mapping n, as
// yaml.v3 fills a map from it: a later key of n replaces an earlier one, a
// key of n wins over a merged one (<<), and a mapping merged first over
// those merged after it; merged holds the keys taken so far in a merge, as
// yaml.v3's decoder does (the keys of the mapping that merges are decoded
// as any). n decoded without error, so its keys are scalars.
func fileKeyLines[K comparable](n *yaml.Node, lines map[K]int, merged map[any]bool) {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	var merge *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := n.Content[i]
		if yamlIsMerge(kn) {
			merge = n.Content[i+1]
			continue
		}
		var k K
		if kn.Decode(&k) != nil {
			continue
		}
		if merged != nil {
			if merged[k] {
				continue
			}
			merged[k] = true
		}
		lines[k] = kn.Line
	}
	if merge == nil {
		return
	}
	if merged == nil {
		merged = map[any]bool{}
		for i := 0; i < len(n.Content); i += 2 {
			var k any
			if n.Content[i].Decode(&k) == nil && (k == nil || reflect.TypeOf(k).Comparable()) {
				merged[k] = true
			}
		}
	}
	if merge.Kind == yaml.SequenceNode {
		for _, m := range merge.Content {
			fileKeyLines(m, lines, merged)
		}
		return
	}
	fileKeyLines(merge, lines, merged)
}

// yamlIsMerge reports whether n is a merge key (<<), as yaml.v3 decides.
func yamlIsMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.ShortTag() == "!!merge")
}

// yamlMergeKeyError finds a mapping that merges (<<) and has a list or a
// mapping as a key, which no mapping of a scenario file takes: yaml.v3
// panics decoding it (it looks the keys up in a Go map to merge).
func yamlMergeKeyError(file string, n *yaml.Node) *FileError {
	if n.Kind == yaml.MappingNode && slices.ContainsFunc(n.Content, yamlIsMerge) {
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			switch k.Kind {
			case yaml.MappingNode:
				return &FileError{file, n.Content[i].Line, "want a string or a number as a key, got a mapping"}
			case yaml.SequenceNode:
				return &FileError{file, n.Content[i].Line, "want a string or a number as a key, got a list"}
			}
		}
	}
	if n.Kind == yaml.AliasNode {
		return nil // its anchor is checked where it is
	}
	for _, c := range n.Content {
		if e := yamlMergeKeyError(file, c); e != nil {
			return e
		}
	}
	return nil
}

// fileLined is a value and its line. It decodes V with the calling
// decoder, so that unknown fields stay errors.
type fileLined[T any] struct {
	Line int
	V    T
}

func (l *fileLined[T]) UnmarshalYAML(unmarshal func(any) error) error {
	var n fileNode
	if err := unmarshal(&n); err != nil {
		return err
	}
	l.Line = n.Line
	return unmarshal(&l.V)
}

// fileVal is a scalar, its line, and whether the file sets it (a null is
// unset).
type fileVal[T any] struct {
	V    T
	Line int
	Set  bool
}

func (v *fileVal[T]) UnmarshalYAML(n *yaml.Node) error {
	v.Line, v.Set = n.Line, true
	return n.Decode(&v.V)
}

// or returns the value, or def when it is unset.
func (v fileVal[T]) or(def T) T {
	if !v.Set {
		return def
	}
	return v.V
}

// at returns the value's line, or def when it is unset.
func (v fileVal[T]) at(def int) int {
	if !v.Set {
		return def
	}
	return v.Line
}

// yamlErrors turns a decoding error into *FileError errors.
func yamlErrors(file string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return &FileError{file, line, msg}
	}
	var errs []error
	for _, e := range te.Errors {
		m := yamlLineRE.FindStringSubmatch(e)
		if m == nil {
			errs = append(errs, &FileError{file, 1, e})
			continue
		}
		line, _ := strconv.Atoi(m[1])
		errs = append(errs, &FileError{file, line, yamlMessage(m[2])})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

var (
	yamlLineRE      = regexp.MustCompile(`^line (\d+): (?s)(.*)$`)
	yamlFieldRE     = regexp.MustCompile("^field (.*) not found in type (.*)$")
	yamlUnmarshalRE = regexp.MustCompile("^cannot unmarshal !!([a-z]+)(?: `(.*)`)? into (.*)$")
	yamlWrapperRE   = regexp.MustCompile(`scenario\.file(?:Lined|Val)\[([^\[\]]*)\]`)
	yamlPathRE      = regexp.MustCompile(`[\w.-]+/`) // in type arguments
)

// yamlStructs names the file's sections in messages.
var yamlStructs = map[string]string{
	"scenario.fileScenario":  "at top level",
	"scenario.fileScheduler": "in scheduler",
	"scenario.fileAging":     "in scheduler.aging",
	"scenario.fileScoring":   "in scheduler.scoring",
	"scenario.fileGroups":    "in scheduler.groups",
	"scenario.fileTier":      "in a tier",
	"scenario.fileLimits":    "in tenant limits",
	"scenario.fileType":      "in a type",
	"scenario.fileWorker":    "in a worker",
	"scenario.fileJob":       "in a job",
	"scenario.fileExpect":    "in an expectation",
	"scenario.fileGenerator": "in a generator",
	"scenario.fileRange":     "in a duration range",
}

// yamlMessage rewords a yaml.v3 decoding message in the file's terms.
func yamlMessage(msg string) string {
	if m := yamlFieldRE.FindStringSubmatch(msg); m != nil {
		where, ok := yamlStructs[m[2]]
		if !ok {
			where = "in " + m[2]
		}
		return fmt.Sprintf("unknown field %q %s", m[1], where)
	}
	m := yamlUnmarshalRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	got := map[string]string{"map": "a mapping", "seq": "a list", "str": strconv.Quote(m[2])}[m[1]]
	if got == "" {
		got = m[2] // a number, a boolean
	}
	typ := yamlPathRE.ReplaceAllString(m[3], "")
	for {
		t := yamlWrapperRE.ReplaceAllString(typ, "$1")
		if t == typ {
			break
		}
		typ = t
	}
	want := "a " + typ
	switch {
	case strings.HasPrefix(typ, "[]"):
		want = "a list"
	case strings.HasPrefix(typ, "map["):
		want = "a mapping"
	case typ == "int":
		want = "an integer"
	case typ == "uint64":
		want = "a non-negative integer"
	case typ == "float64":
		want = "a number"
	case typ == "string":
		want = "a string"
	case typ == "bool":
		want = "true or false"
	case yamlStructs[typ] != "":
		want = "a mapping"
	}
	return fmt.Sprintf("want %s, got %s", want, got)
}

// fileParser checks a decoded file and builds its scenario.
type fileParser struct {
	file     string
	f        *fileScenario
	rootLine int
	errs     []*FileError
	types    map[string]*fileType // declared types by name
	// zeroOK: a type's priority may be 0 (priority_mode: order_only, or
	// scoring), where it caps nothing.
	zeroOK bool
}

func (p *fileParser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, &FileError{p.file, line, fmt.Sprintf(format, args...)})
}

func (p *fileParser) scenario() Scenario {
	sc := Scenario{Name: p.f.Name, Title: p.f.Title}
	p.scheduler(&sc)
	p.typeList(&sc)
	p.workers(&sc)
	p.jobs(&sc)
	p.expectations(&sc)
	return sc
}

// expectations reads the claims of the file: each names a job of the
// scenario, by type(id) and tag, and claims something.
func (p *fileParser) expectations(sc *Scenario) {
	names := map[string]bool{}
	for _, j := range sc.Jobs {
		names[j.Name()] = true
	}
	for i, el := range p.f.Expect {
		e := el.V
		ctx := fmt.Sprintf("expect %d: ", i+1)
		if e.Group.Set || e.Running.Set || e.At.Set {
			if !e.Group.Set || !e.Running.Set || !e.At.Set || e.Job.Set {
				p.errorf(el.Line, "%sa count of running jobs takes group, at and running, and no job", ctx)
			}
			p.atLeast(ctx, "at", e.At, 0)
			p.atLeast(ctx, "running", e.Running, 0)
			sc.Expect = append(sc.Expect, Expectation{Group: e.Group.V, At: e.At.V, Running: e.Running.V, HasRunning: true, Line: el.Line})
			continue
		}
		if !names[e.Job.V] {
			p.errorf(e.Job.at(el.Line), "%sno job %q in the scenario (name jobs as type(id), with their tag)", ctx, e.Job.V)
		}
		p.atLeast(ctx, "start", e.Start, 0)
		p.atLeast(ctx, "start_by", e.StartBy, 0)
		if !e.Start.Set && !e.StartBy.Set && e.Slot == "" {
			p.errorf(el.Line, "%sclaims nothing: give start, start_by or slot", ctx)
		}
		sc.Expect = append(sc.Expect, Expectation{Job: e.Job.V, Start: e.Start.V, HasStart: e.Start.Set,
			StartBy: e.StartBy.V, HasBy: e.StartBy.Set, Slot: e.Slot, Line: el.Line})
	}
}

// duration parses a Go duration; ok is false, the error reported, when it
// does not parse or is below min.
func (p *fileParser) duration(ctx, field string, v fileVal[string], min time.Duration) (time.Duration, bool) {
	d, err := time.ParseDuration(v.V)
	if err != nil {
		p.errorf(v.Line, "%s%s %q is not a duration such as \"10s\"", ctx, field, v.V)
		return 0, false
	}
	if d < min {
		if min == 1 {
			p.errorf(v.Line, "%s%s must be positive, got %v", ctx, field, d)
		} else {
			p.errorf(v.Line, "%s%s must not be negative, got %v", ctx, field, d)
		}
		return 0, false
	}
	return d, true
}

// atLeast reports an int below min.
func (p *fileParser) atLeast(ctx, field string, v fileVal[int], min int) {
	if v.Set && v.V < min {
		switch min {
		case 0:
			p.errorf(v.Line, "%s%s must not be negative, got %d", ctx, field, v.V)
		default:
			p.errorf(v.Line, "%s%s must be at least %d, got %d", ctx, field, min, v.V)
		}
	}
}

func (p *fileParser) scheduler(sc *Scenario) {
	s := &p.f.Scheduler
	p.atLeast("scheduler.", "max_concurrency", s.MaxConcurrency, 0)
	maxConc := max(s.MaxConcurrency.V, 0)
	sc.MaxConcurrency = maxConc
	if a := s.Aging; a != nil {
		const ctx = "scheduler.aging."
		cfg := fairsched.AgingConfig{
			Step:                 fairsched.Priority(a.V.Step.V),
			MaxEffectivePriority: fairsched.Priority(a.V.MaxPriority.V),
			UrgentThreshold:      fairsched.Priority(a.V.UrgentThreshold.V),
		}
		if a.V.Grace.Set {
			cfg.GracePeriod, _ = p.duration(ctx, "grace", a.V.Grace, 0)
		}
		if !a.V.Interval.Set {
			p.errorf(a.Line, "%sinterval is required", ctx)
		} else {
			cfg.Interval, _ = p.duration(ctx, "interval", a.V.Interval, 1)
		}
		p.atLeast(ctx, "step", a.V.Step, 0)
		if !a.V.MaxPriority.Set {
			p.errorf(a.Line, "%smax_priority is required", ctx)
		} else {
			p.atLeast(ctx, "max_priority", a.V.MaxPriority, 1)
		}
		p.atLeast(ctx, "urgent_threshold", a.V.UrgentThreshold, 0)
		if u := a.V.UrgentThreshold; u.V > 0 && a.V.MaxPriority.V >= 1 && u.V > a.V.MaxPriority.V {
			p.errorf(u.Line, "%surgent_threshold must not exceed max_priority %d, got %d", ctx, a.V.MaxPriority.V, u.V)
		}
		sc.Aging = &cfg
	}
	if sco := s.Scoring; sco != nil {
		const ctx = "scheduler.scoring."
		cfg := fairsched.ScoreConfig{}
		for _, f := range []struct {
			name string
			v    fileVal[float64]
			to   *float64
		}{
			{"priority_weight", sco.V.PriorityWeight, &cfg.PriorityWeight},
			{"age_weight", sco.V.AgeWeight, &cfg.AgeWeight},
			{"rarity_bonus", sco.V.RarityBonus, &cfg.RarityBonus},
			{"on_demand_bonus", sco.V.OnDemandBonus, &cfg.OnDemandBonus},
			{"on_demand_age_weight", sco.V.OnDemandAgeWeight, &cfg.OnDemandAgeWeight},
		} {
			if f.v.V < 0 || math.IsNaN(f.v.V) || math.IsInf(f.v.V, 0) {
				p.errorf(f.v.Line, "%s%s must be a finite number, not negative (0 takes the default), got %v", ctx, f.name, f.v.V)
			}
			*f.to = f.v.V
		}
		if s.Aging != nil {
			p.errorf(sco.Line, "scheduler.scoring and scheduler.aging exclude each other: the score has its own aging term (age_weight)")
		}
		sc.Scoring = &cfg
	}
	if g := s.Groups; g != nil {
		p.groups(sc, g, maxConc)
	}
	if m := s.PriorityMode; m.Set {
		var mode fairsched.PriorityMode
		if err := mode.UnmarshalText([]byte(m.V)); err != nil {
			p.errorf(m.Line, "scheduler.priority_mode must be value_is_cap or order_only, got %q", m.V)
		}
		sc.Options = append(sc.Options, fairsched.WithPriorityMode(mode))
		p.zeroOK = mode == fairsched.PriorityOrderOnly
		sc.OrderOnly = p.zeroOK
	}
	p.zeroOK = p.zeroOK || s.Scoring != nil
	if len(s.Tiers.V) > 0 {
		errs := len(p.errs)
		shares := false // a tier takes shares of the global cap
		tiers := map[fairsched.Priority]fairsched.TierConfig{}
		var line int
		for _, prio := range sortedKeys(s.Tiers.V) {
			t := s.Tiers.V[prio]
			tLine := s.Tiers.line(prio, t.Line) // a null tier has no line of its own
			line = max(line, tLine)
			ctx := fmt.Sprintf("scheduler.tiers.%d", prio)
			if prio < 0 {
				p.errorf(tLine, "%s: a tier is a type priority, not negative", ctx)
			}
			p.atLeast(ctx+".", "max_running", t.V.MaxRunning, 0)
			burst := t.V.BurstShare.or(1)
			if !t.V.BurstShare.Set && !t.V.MinShare.Set && t.V.MaxRunning.V > 0 {
				burst = 0 // max_running alone: no share of the global cap
			}
			shares = shares || burst > 0
			if v := t.V.MinShare; !(v.V >= 0 && v.V <= 1) {
				p.errorf(v.Line, "%s.min_share must be in [0, 1], got %v", ctx, v.V)
			} else if v := t.V.BurstShare; burst != 0 && !(burst > 0 && burst <= 1) {
				p.errorf(v.Line, "%s.burst_share must be in (0, 1], got %v", ctx, v.V)
			} else if t.V.MinShare.V > burst {
				p.errorf(t.V.MinShare.Line, "%s.min_share must not exceed burst_share %v, got %v", ctx, burst, t.V.MinShare.V)
			}
			cfg := fairsched.TierConfig{MinShare: t.V.MinShare.V, BurstShare: burst, MaxRunning: t.V.MaxRunning.V, LendIdle: t.V.LendIdle}
			tiers[fairsched.Priority(prio)] = cfg
			sc.Tiers = tiers
			sc.Options = append(sc.Options, fairsched.WithTier(fairsched.Priority(prio), cfg))
		}
		if shares && maxConc < 1 {
			p.errorf(line, "scheduler.tiers need scheduler.max_concurrency: the capacity they share")
		} else if err := policy.ValidateTiers(tiers, maxConc); err != nil && len(p.errs) == errs {
			p.errorf(line, "scheduler.tiers: %s", libMessage(err))
		}
	}
	if t := s.Tenants; t != nil {
		sc.Options = append(sc.Options, fairsched.WithTenantLimits(p.limits("scheduler.tenants.", t.V)))
	}
	for _, key := range sortedKeys(s.KeyLimits) {
		l := p.limits(fmt.Sprintf("scheduler.key_limits.%s.", key), s.KeyLimits[key].V)
		sc.Options = append(sc.Options, fairsched.WithKeyLimits(key, l))
	}
	for _, key := range sortedKeys(s.KeyWeights.V) {
		w := s.KeyWeights.V[key]
		switch {
		case !w.Set:
			p.errorf(s.KeyWeights.line(key, w.Line), "scheduler.key_weights.%s must be a positive finite number, got null", key)
		case !(w.V > 0) || math.IsInf(w.V, 1):
			p.errorf(w.Line, "scheduler.key_weights.%s must be a positive finite number, got %v", key, w.V)
		}
		sc.Options = append(sc.Options, fairsched.WithKeyWeight(key, w.V))
		if sc.KeyWeights == nil {
			sc.KeyWeights = map[string]float64{}
		}
		sc.KeyWeights[key] = w.V
	}
}

func (p *fileParser) groups(sc *Scenario, g *fileLined[fileGroups], maxConc int) {
	const ctx = "scheduler.groups."
	errs := len(p.errs)
	if maxConc < 1 {
		p.errorf(g.Line, "scheduler.groups need scheduler.max_concurrency: the capacity they split")
	}
	if dw := g.V.DefaultWeight; dw.Set {
		p.atLeast(ctx, "default_weight", dw, 1)
		sc.Options = append(sc.Options, fairsched.WithDefaultGroupWeight(dw.V))
		sc.DefaultGroupWeight = dw.V
	}
	cfg := policy.GroupsConfig{DefaultWeight: g.V.DefaultWeight.or(1), Groups: map[string]policy.GroupConfig{}}
	group := func(name string) policy.GroupConfig {
		c, ok := cfg.Groups[name]
		if !ok {
			c.Weight = cfg.DefaultWeight
		}
		return c
	}
	for _, name := range sortedKeys(g.V.Weights) {
		w := g.V.Weights[name]
		p.atLeast(ctx, "weights."+name, w, 1)
		c := group(name)
		c.Weight = w.V
		cfg.Groups[name] = c
		sc.Options = append(sc.Options, fairsched.WithGroupWeight(name, w.V))
		if sc.GroupWeights == nil {
			sc.GroupWeights = map[string]int{}
		}
		sc.GroupWeights[name] = w.V
	}
	for _, name := range sortedKeys(g.V.MinSlots) {
		n := g.V.MinSlots[name]
		p.atLeast(ctx, "min_slots."+name, n, 0)
		c := group(name)
		c.MinSlots = n.V
		cfg.Groups[name] = c
		sc.Options = append(sc.Options, fairsched.WithGroupMinSlots(name, n.V))
	}
	for _, name := range sortedKeys(g.V.Limits) {
		n := g.V.Limits[name]
		p.atLeast(ctx, "limits."+name, n, 0)
		c := group(name)
		c.Limit = n.V
		cfg.Groups[name] = c
		sc.Options = append(sc.Options, fairsched.WithGroupLimit(name, n.V))
	}
	if len(p.errs) == errs {
		if err := cfg.Validate(maxConc); err != nil {
			p.errorf(g.Line, "scheduler.groups: %s", libMessage(err))
		}
	}
}

func (p *fileParser) limits(ctx string, l fileLimits) fairsched.TenantLimits {
	p.atLeast(ctx, "max_running", l.MaxRunning, 0)
	p.atLeast(ctx, "max_pending", l.MaxPending, 0)
	return fairsched.TenantLimits{MaxRunning: l.MaxRunning.V, MaxPending: l.MaxPending.V}
}

// libMessage is a library validation error without its sentinel prefix.
func libMessage(err error) string {
	return strings.TrimPrefix(err.Error(), policy.ErrInvalidConfig.Error()+": ")
}

func (p *fileParser) typeList(sc *Scenario) {
	list := p.f.Types
	if len(list.V) == 0 {
		p.errorf(max(list.Line, p.rootLine), "no job types: declare at least one under types")
	}
	for i := range list.V {
		t := &list.V[i]
		name := t.V.Name
		ctx := fmt.Sprintf("type %q: ", name.V)
		switch {
		case name.V == "":
			ctx = fmt.Sprintf("type %d: ", i+1)
			p.errorf(name.at(t.Line), "%sname is required", ctx)
		case p.types[name.V] != nil:
			p.errorf(name.Line, "%sdeclared twice, first at line %d", ctx, p.types[name.V].Name.Line)
		default:
			p.types[name.V] = &t.V
		}
		cfg := fairsched.JobTypeConfig{
			Priority:       fairsched.Priority(t.V.Priority.V),
			MaxConcurrency: t.V.MaxConcurrency.V,
			ConflictGroup:  fairsched.ConflictGroup(t.V.ConflictGroup),
			RequiresWorker: t.V.RequiresWorker,
		}
		if m := t.V.ConflictMode; m.Set {
			if err := cfg.ConflictMode.UnmarshalText([]byte(m.V)); err != nil {
				p.errorf(m.Line, "%sconflict_mode must be exclusive or shared, got %q", ctx, m.V)
			} else if t.V.ConflictGroup == "" {
				p.errorf(m.Line, "%sconflict_mode needs a conflict_group", ctx)
			}
		}
		if !t.V.Priority.Set {
			p.errorf(t.Line, "%spriority is required", ctx)
		}
		if p.zeroOK {
			p.atLeast(ctx, "priority", t.V.Priority, 0)
		} else if t.V.Priority.Set && t.V.Priority.V < 1 {
			p.errorf(t.V.Priority.Line, "%spriority must be at least 1, got %d: it is the tier's concurrency cap; "+
				"priorities from 0 need scheduler.priority_mode: order_only (or scoring)", ctx, t.V.Priority.V)
		}
		if !t.V.DefaultCost.Set {
			p.errorf(t.Line, "%sdefault_cost is required", ctx)
		} else {
			cfg.DefaultCost, _ = p.duration(ctx, "default_cost", t.V.DefaultCost, 1)
		}
		p.atLeast(ctx, "max_concurrency", t.V.MaxConcurrency, 0)
		if t.V.QueueTimeout.Set {
			cfg.QueueTimeout, _ = p.duration(ctx, "queue_timeout", t.V.QueueTimeout, 0)
		}
		sc.Types = append(sc.Types, Type{Name: fairsched.JobType(name.V), Config: cfg})
	}
}

// knownType reports a type that is not declared.
func (p *fileParser) knownType(ctx string, v fileVal[string], line int) bool {
	switch {
	case !v.Set || v.V == "":
		p.errorf(v.at(line), "%stype is required", ctx)
	case p.types[v.V] == nil:
		p.errorf(v.Line, "%stype %q is not declared under types", ctx, v.V)
	default:
		return true
	}
	return false
}

func (p *fileParser) workers(sc *Scenario) {
	seen := map[string]int{}
	for i, w := range p.f.Workers {
		id := w.V.ID
		ctx := fmt.Sprintf("worker %q: ", id.V)
		switch {
		case id.V == "":
			ctx = fmt.Sprintf("worker %d: ", i+1)
			p.errorf(id.at(w.Line), "%sid is required", ctx)
		case seen[id.V] != 0:
			p.errorf(id.Line, "%sdeclared twice, first at line %d", ctx, seen[id.V])
		default:
			seen[id.V] = id.Line
		}
		spec := fairsched.WorkerSpec{ID: id.V}
		if len(w.V.Slots.V) == 0 {
			p.errorf(max(w.V.Slots.Line, w.Line), "%sno slots", ctx)
		}
		for j, slot := range w.V.Slots.V {
			if len(slot.V) == 0 {
				p.errorf(slot.Line, "%sslot %d takes no type", ctx, j+1)
			}
			var types []fairsched.JobType
			first := map[string]int{} // line of each type of the slot
			for _, t := range slot.V {
				if p.knownType(ctx, t, slot.Line) && !p.types[t.V].RequiresWorker {
					p.errorf(t.Line, "%stype %q does not set requires_worker", ctx, t.V)
				}
				if l, dup := first[t.V]; dup && t.V != "" {
					p.errorf(t.Line, "%sslot %d lists type %q twice, first at line %d", ctx, j+1, t.V, l)
				} else if !dup {
					first[t.V] = t.Line
				}
				types = append(types, fairsched.JobType(t.V))
			}
			spec.Slots = append(spec.Slots, fairsched.SlotSpec{Types: types})
		}
		sc.Workers = append(sc.Workers, spec)
	}
}

// mode parses a job's mode.
func (p *fileParser) mode(ctx string, v fileVal[string]) Mode {
	switch v.V {
	case "on-demand":
		return ModeOnDemand
	case "queued":
		return ModeQueued
	case "":
		if !v.Set {
			return ModeAuto
		}
	}
	p.errorf(v.Line, "%smode %q is not on-demand or queued", ctx, v.V)
	return ModeAuto
}

func (p *fileParser) jobs(sc *Scenario) {
	lines := []int{} // of sc.Jobs
	for i, j := range p.f.Jobs.V {
		ctx := fmt.Sprintf("job %q: ", j.V.ID.V)
		if j.V.ID.V == "" {
			ctx = fmt.Sprintf("job %d: ", i+1)
			p.errorf(j.V.ID.at(j.Line), "%sid is required", ctx)
		}
		p.knownType(ctx, j.V.Type, j.Line)
		p.atLeast(ctx, "at", j.V.At, 0)
		if !j.V.Duration.Set {
			p.errorf(j.Line, "%sduration is required", ctx)
		}
		p.atLeast(ctx, "duration", j.V.Duration, 1)
		sc.Jobs = append(sc.Jobs, Job{
			Type: fairsched.JobType(j.V.Type.V), ID: j.V.ID.V, Key: j.V.Key,
			Arrival: j.V.At.V, Duration: j.V.Duration.V, Tag: j.V.Tag, Group: j.V.Group,
			Refused: j.V.Refused, Mode: p.mode(ctx, j.V.Mode),
		})
		lines = append(lines, j.Line)
	}
	for i, g := range p.f.Generators {
		jobs := p.generate(fmt.Sprintf("generator %d: ", i+1), g)
		sc.Jobs = append(sc.Jobs, jobs...)
		for range jobs {
			lines = append(lines, g.Line)
		}
	}
	if len(sc.Jobs) == 0 && len(p.f.Generators) == 0 {
		p.errorf(max(p.f.Jobs.Line, p.rootLine), "no jobs: give at least one under jobs or generators")
	}
	first := map[string]int{}
	for i, j := range sc.Jobs {
		if j.ID == "" {
			continue // reported
		}
		if l, dup := first[j.Name()]; dup {
			p.errorf(lines[i], "duplicate job %s, first at line %d", j.Name(), l)
			continue
		}
		first[j.Name()] = lines[i]
	}
}

// generate expands a generator; it returns no job when the generator is
// wrong.
func (p *fileParser) generate(ctx string, gl fileLined[fileGenerator]) []Job {
	g, errs := gl.V, len(p.errs)
	p.knownType(ctx, g.Type, gl.Line)
	mode := p.mode(ctx, g.Mode)
	switch {
	case !g.Count.Set:
		p.errorf(gl.Line, "%scount is required", ctx)
	case g.Count.V > maxGenerated:
		p.errorf(g.Count.Line, "%scount must be at most %d, got %d", ctx, maxGenerated, g.Count.V)
	}
	p.atLeast(ctx, "count", g.Count, 1)
	p.atLeast(ctx, "start", g.Start, 0)
	p.atLeast(ctx, "every", g.Every, 0)
	p.atLeast(ctx, "spread", g.Spread, 1)
	if g.Every.Set && g.Spread.Set {
		p.errorf(g.Spread.Line, "%severy and spread exclude each other", ctx)
	}
	if g.ClosedLoop && (g.Every.Set || g.Spread.Set) {
		p.errorf(gl.Line, "%sclosed_loop excludes every and spread", ctx)
	}
	// Every arrival must be an int: the last is start + (count-1)*every, or
	// below start + spread.
	switch start, n := g.Start.V, g.Count.V; {
	case start < 0 || n < 1 || n > maxGenerated || g.Every.V < 0 || g.Spread.V < 0:
		// reported
	case g.Spread.Set:
		if g.Spread.V > 0 && start > math.MaxInt-(g.Spread.V-1) {
			p.errorf(g.Spread.Line, "%sarrivals out of range: start + spread - 1 = %d + %d - 1 exceeds %d", ctx, start, g.Spread.V, math.MaxInt)
		}
	case g.Every.V > 0 && n-1 > (math.MaxInt-start)/g.Every.V:
		p.errorf(g.Every.Line, "%sarrivals out of range: start + (count-1)*every = %d + %d*%d exceeds %d", ctx, start, n-1, g.Every.V, math.MaxInt)
	}
	d := g.Duration
	switch {
	case !d.Set:
		p.errorf(gl.Line, "%sduration is required", ctx)
	case d.Range == nil:
		p.atLeast(ctx, "duration", d.Fixed, 1)
	default:
		r := d.Range
		if !r.Min.Set || !r.Max.Set {
			p.errorf(d.Line, "%sduration needs min and max", ctx)
		}
		p.atLeast(ctx, "duration.min", r.Min, 1)
		if r.Max.V < r.Min.V {
			p.errorf(r.Max.at(d.Line), "%sduration.max must be at least min %d, got %d", ctx, r.Min.V, r.Max.V)
		}
	}
	pattern := g.Key
	if pattern == "" {
		pattern = g.Type.V
	}
	pattern = g.ID.or(strings.ReplaceAll(pattern, "%", "%%") + "-%d")
	if id := fmt.Sprintf(pattern, 1); strings.Contains(id, "%!") || id == fmt.Sprintf(pattern, 2) {
		p.errorf(g.ID.Line, "%sid %q must number the jobs with one %%d", ctx, pattern)
	}
	if len(p.errs) > errs {
		return nil
	}
	seed := g.Seed.or(1)
	rng := rand.New(rand.NewPCG(seed, seed))
	jobs := make([]Job, g.Count.V)
	for i := range jobs {
		at := g.Start.V + i*g.Every.V
		if g.Spread.Set {
			at = g.Start.V + rng.IntN(g.Spread.V)
		}
		dur := d.Fixed.V
		if d.Range != nil {
			dur = d.Range.Min.V + rng.IntN(d.Range.Max.V-d.Range.Min.V+1)
		}
		jobs[i] = Job{Type: fairsched.JobType(g.Type.V), Key: g.Key, Group: g.Group, Mode: mode, Arrival: at, Duration: dur}
	}
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for i := range jobs {
		jobs[i].ID = fmt.Sprintf(pattern, i+1)
		if g.ClosedLoop && i > 0 {
			jobs[i].After = jobs[i-1].Name()
		}
	}
	return jobs
}

// sortedKeys returns a map's keys in order.
func sortedKeys[K interface{ ~int | ~string }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
