package debugpage

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
)

// view is what the template shows: the snapshot turned into rows of
// ready-made strings.
type view struct {
	Title      string
	Refresh    int // seconds; 0: no refresh
	Time       string
	Running    int
	Pending    int
	Cap        string
	Adaptive   string // "" without an adaptive limit
	Load       string // "" without a load signal
	Overloaded bool
	Expired    uint64
	EventsLost uint64
	Aging      string // "" without aging

	Reasons []reasonRow // a summary: the reasons jobs wait, most frequent first

	PendingRows []pendingRow
	PendingMore int
	Scored      bool
	// Counted is how many pending jobs the snapshot lists; Partial is set
	// when that is fewer than pending: the reasons' summary and the pending
	// counts of tiers, types and keys count the listed jobs only.
	Counted int
	Partial bool

	RunningRows []runningRow
	RunningMore int

	Groups  []groupRow
	Tiers   []tierRow
	Types   []typeRow
	Keys    []keyRow
	KeyMore int
	// Tenants of hierarchical fair share; TenantMore those not shown.
	Tenants    []tenantRow
	TenantMore int
	Slots      []slotRow

	Dead     []deadRow
	DeadMore bool // the list stops at the page's rows: there may be more

	// Cluster is the instance's view of its cluster, nil outside cluster
	// mode; the running jobs then have an Instance column.
	Cluster *clusterView
}

// clusterView is Snapshot.Cluster as the page shows it.
type clusterView struct {
	Domain, Instance string
	// Incarnation is this process's suffix to Instance (its identity in
	// the domain is Instance#Incarnation).
	Incarnation string
	// Leader is the lease's holder ("" when this instance does not know
	// one), Epoch its epoch; Leading says whether it is this instance.
	Leader  string
	Epoch   int64
	Leading bool
	// Instances, as the leader counts them (only the leader's snapshot
	// has them).
	Instances []instanceRow
}

type instanceRow struct {
	// ID is the configured name, Incarnation the suffix that tells its
	// processes apart (a restarted name shows twice for a while).
	ID, Incarnation string
	Slots, Running  int
	Types           string
	Leader, This    bool
}

type deadRow struct {
	Type, ID, Failed, Error string
	Attempts                int
}

// addDead lists dead jobs on the page.
func (v *view) addDead(dead []fairsched.DeadJob, c config) {
	for _, d := range dead {
		v.Dead = append(v.Dead, deadRow{Type: string(d.Type), ID: d.ID, Attempts: d.Attempt,
			Failed: d.FailedAt.UTC().Format(time.RFC3339), Error: d.LastError})
	}
	v.DeadMore = c.maxRows > 0 && len(dead) >= c.maxRows
}

// badge is one reason as a coloured label, its explanation as a tooltip.
type badge struct{ Label, Class, Why string }

type reasonRow struct {
	Label, Class, Why string
	Count             int
}

type pendingRow struct {
	N                    int
	Type, ID, Key, Group string
	// Label, Class and Why are the headline reason's; Also the other rules
	// that hold the job, broader ones, in the snapshot's order.
	Label, Class, Why        string
	Also                     []badge
	Priority, Score, Waited  string
	Submitted                string
	BackgroundKey, Ungrouped bool
	// HeldBy names what holds it under its headline rule, Starts when it
	// is expected to start, History what it has waited on.
	HeldBy, Starts, History string
}

type runningRow struct {
	Type, ID, Key, Group     string
	Priority, Started, For   string
	Cost, Slot               string
	BackgroundKey, Ungrouped bool
	// Instance runs the job, in cluster mode ("" while the leader has not
	// placed it yet).
	Instance string
}

type groupRow struct {
	Name                                string
	Ungrouped                           bool
	Weight, MinSlots, Limit, Allocation string
	Running, Pending                    int
	Paused                              bool
}

type tierRow struct {
	Priority                int
	Running, Pending        int
	Cap, Reserved, LendIdle string
	Types                   string
}

type typeRow struct {
	Type                string
	Priority            int
	Running, Pending    int
	Cap, Conflict, Cost string
	Worker              bool
}

// tenantRow is one tenant: Share its fair share of the service now, in
// percent.
type tenantRow struct {
	Name, Weight, Share    string
	Keys, Running, Pending int
}

type keyRow struct {
	Key        string
	Background bool
	Cost       string
	Weight     string
	Running    int
	Pending    int
}

type slotRow struct {
	Worker string
	First  bool // the worker's first slot: the row names the worker
	Slot   int
	Types  string
	// JobType and JobID name the job on the slot; both empty while it is
	// free.
	JobType, JobID string
	Busy           bool
}

func newView(s fairsched.Snapshot, c config) view {
	v := view{
		Title:      c.title,
		Time:       s.Time.Format("2006-01-02 15:04:05 MST"),
		Running:    len(s.Running),
		Pending:    max(s.PendingTotal, len(s.Pending)), // the snapshot lists the first of them
		Cap:        "unlimited",
		Expired:    s.Expired,
		EventsLost: s.EventsLost,
	}
	if c.refresh > 0 {
		v.Refresh = int(math.Ceil(c.refresh.Seconds()))
	}
	if s.MaxConcurrency > 0 {
		v.Cap = strconv.Itoa(s.MaxConcurrency)
	}
	if a := s.Adaptive; a != nil {
		v.Adaptive = fmt.Sprintf("%d now, between %d and %d", s.MaxConcurrency, a.Min, a.Max)
	}
	if l := s.Load; l != nil {
		v.Load = fmt.Sprintf("%.0f %% (overloaded at %.0f %%, %s)", 100*l.Value, 100*l.Threshold, l.Action)
		v.Overloaded = l.Overloaded
	}
	if a := s.Aging; a != nil {
		step := a.Step
		if step == 0 {
			step = 1 // AgingConfig's default
		}
		v.Aging = fmt.Sprintf("+%d every %s after %s, up to %d", step, short(a.Interval), short(a.GracePeriod), a.MaxEffectivePriority)
	}
	rows := func(n int) int {
		if c.maxRows > 0 {
			return min(n, c.maxRows)
		}
		return n
	}

	// Pending jobs, in the snapshot's (rank) order; counted by headline.
	counts := map[fairsched.Reason]int{}
	pendingByType := map[fairsched.JobType]int{}
	pendingByTier := map[fairsched.Priority]int{}
	pendingByKey := map[string]int{}
	for _, p := range s.Pending {
		counts[p.Reason]++
		pendingByType[p.Type]++
		pendingByTier[p.Priority]++
		pendingByKey[p.FairnessKey]++
		if p.Score != 0 {
			v.Scored = true
		}
	}
	for r, n := range counts {
		v.Reasons = append(v.Reasons, reasonRow{Label: reasonLabel(r), Class: reasonClass(r), Why: explain(r), Count: n})
	}
	slices.SortFunc(v.Reasons, func(a, b reasonRow) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Label, b.Label))
	})
	v.Counted, v.Partial = len(s.Pending), s.PendingTotal > len(s.Pending)
	n := rows(len(s.Pending))
	v.PendingMore = max(s.PendingTotal, len(s.Pending)) - n // beyond the page's rows and the snapshot's
	v.PendingRows = make([]pendingRow, 0, n)
	for i, p := range s.Pending[:n] {
		v.PendingRows = append(v.PendingRows, pendingRow{
			N: i + 1, Type: string(p.Type), ID: p.ID, Key: keyName(p.FairnessKey), Group: groupName(p.Group),
			BackgroundKey: p.FairnessKey == "", Ungrouped: p.Group == "",
			Label: reasonLabel(p.Reason), Class: reasonClass(p.Reason), Why: explain(p.Reason), Also: also(p),
			Priority:  priority(p.Priority, p.EffectivePriority, p.InheritedPriority),
			Score:     strconv.FormatFloat(p.Score, 'f', 1, 64),
			Waited:    short(s.Time.Sub(p.Submitted)),
			Submitted: p.Submitted.Format(time.RFC3339),
			HeldBy:    heldBy(p.Blockers), Starts: startsIn(p.Estimate, s.Time), History: history(p.History, s.Time),
		})
	}

	// Running jobs, in admission order.
	runningByKey := map[string]int{}
	for _, r := range s.Running {
		runningByKey[r.FairnessKey]++
	}
	n = rows(len(s.Running))
	v.RunningMore = len(s.Running) - n
	for _, r := range s.Running[:n] {
		row := runningRow{
			Type: string(r.Type), ID: r.ID, Key: keyName(r.FairnessKey), Group: groupName(r.Group),
			BackgroundKey: r.FairnessKey == "", Ungrouped: r.Group == "",
			Priority: priority(r.Priority, r.EffectivePriority, nil),
			Started:  clockTime(r.Started, s.Time),
			For:      short(s.Time.Sub(r.Started)),
			Cost:     short(r.EstimatedCost),
			Instance: r.Instance,
		}
		if r.Worker != "" {
			row.Slot = fmt.Sprintf("%s #%d", r.Worker, r.Slot)
		}
		v.RunningRows = append(v.RunningRows, row)
	}

	for _, g := range s.Groups {
		v.Groups = append(v.Groups, groupRow{
			Name: groupName(g.Name), Ungrouped: g.Name == "",
			Weight: orDash(g.Weight), MinSlots: orDash(g.MinSlots), Limit: orDash(g.Limit),
			Allocation: strconv.Itoa(g.Allocation),
			Running:    g.Running, Pending: g.Pending, Paused: g.Paused,
		})
	}

	// Tiers: every priority a type has, a tier share names or a job runs at.
	typesByTier := map[fairsched.Priority][]string{}
	for t, cfg := range s.Types {
		typesByTier[cfg.Priority] = append(typesByTier[cfg.Priority], string(t))
	}
	tiers := map[fairsched.Priority]bool{}
	for p := range typesByTier {
		tiers[p] = true
	}
	for p := range s.Tiers {
		tiers[p] = true
	}
	for p := range s.RunningByTier {
		tiers[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(tiers)) {
		row := tierRow{Priority: int(p), Running: s.RunningByTier[p], Pending: pendingByTier[p],
			Cap: "—", Reserved: "—", LendIdle: "—"}
		if s.PriorityMode == fairsched.PriorityValueIsCap && p > 0 {
			row.Cap = strconv.Itoa(int(p)) // the value is the cap
		}
		if t, ok := s.Tiers[p]; ok {
			reserved, burst := t.Slots(s.MaxConcurrency)
			switch shares := t.MinShare != 0 || t.BurstShare != 0; {
			case shares && t.MaxRunning > 0:
				row.Cap = fmt.Sprintf("%d (%s of %d, max running %d)", burst, percent(t.BurstShare), s.MaxConcurrency, t.MaxRunning)
			case shares:
				row.Cap = fmt.Sprintf("%d (%s of %d)", burst, percent(t.BurstShare), s.MaxConcurrency)
			default:
				row.Cap = fmt.Sprintf("%d (max running)", burst)
			}
			row.Reserved = fmt.Sprintf("%d (%s)", reserved, percent(t.MinShare))
			row.LendIdle = "no"
			if t.LendIdle {
				row.LendIdle = "yes"
			}
		}
		names := typesByTier[p]
		slices.Sort(names)
		row.Types = strings.Join(names, ", ")
		v.Tiers = append(v.Tiers, row)
	}
	slices.Reverse(v.Tiers) // the highest tier, dispatched first, on top

	for _, t := range slices.Sorted(maps.Keys(s.Types)) {
		cfg := s.Types[t]
		row := typeRow{Type: string(t), Priority: int(cfg.Priority), Running: s.RunningByType[t], Pending: pendingByType[t],
			Cap: "—", Conflict: "—", Cost: short(cfg.DefaultCost), Worker: cfg.RequiresWorker}
		if cfg.MaxConcurrency > 0 {
			row.Cap = strconv.Itoa(cfg.MaxConcurrency)
		}
		if cfg.ConflictGroup != "" {
			row.Conflict = string(cfg.ConflictGroup) + " (" + cfg.ConflictMode.String() + ")"
		}
		v.Types = append(v.Types, row)
	}

	// Fairness keys in the order they are served: least accumulated cost
	// first (then by name).
	keys := map[string]bool{}
	for k := range s.AccumulatedCost {
		keys[k] = true
	}
	for k := range s.KeyWeights {
		keys[k] = true
	}
	sortedKeys := slices.SortedFunc(maps.Keys(keys), func(a, b string) int {
		return cmp.Or(cmp.Compare(s.AccumulatedCost[a], s.AccumulatedCost[b]), cmp.Compare(a, b))
	})
	n = rows(len(sortedKeys))
	// Beyond the page's rows, and the keys a bounded snapshot leaves out (it
	// lists those of the listed and running jobs).
	v.KeyMore = len(sortedKeys) - n + max(s.KeysTotal-len(s.AccumulatedCost), 0)
	for _, k := range sortedKeys[:n] {
		w, ok := s.KeyWeights[k]
		if !ok {
			w = 1
		}
		v.Keys = append(v.Keys, keyRow{Key: keyName(k), Background: k == "", Cost: short(s.AccumulatedCost[k]),
			Weight: strconv.FormatFloat(w, 'g', -1, 64), Running: runningByKey[k], Pending: pendingByKey[k]})
	}

	v.addTenants(s, rows)

	if c := s.Cluster; c != nil {
		v.Cluster = &clusterView{Domain: c.Domain, Instance: c.Instance, Incarnation: suffix(c.Incarnation), Leader: c.Leader,
			Epoch: c.Epoch, Leading: c.Leading}
		for _, in := range c.Instances {
			// Two incarnations of one name may be listed: the incarnations
			// tell which leads and which is this one.
			leader, this := in.ID == c.Leader, in.ID == c.Instance
			if in.Incarnation != "" {
				leader, this = in.Incarnation == c.LeaderIncarnation, in.Incarnation == c.Incarnation
			}
			v.Cluster.Instances = append(v.Cluster.Instances, instanceRow{ID: in.ID, Incarnation: suffix(in.Incarnation),
				Slots: in.Slots, Running: in.Running, Types: strings.Join(in.Types, ", "), Leader: leader, This: this})
		}
	}

	for _, w := range s.Workers {
		for i, sl := range w.Slots {
			types := make([]string, len(sl.Types))
			for j, t := range sl.Types {
				types[j] = string(t)
			}
			row := slotRow{Worker: w.ID, First: i == 0, Slot: i, Types: strings.Join(types, ", ")}
			row.JobType, row.JobID, row.Busy = string(sl.Type), sl.ID, sl.ID != "" || sl.Type != ""
			v.Slots = append(v.Slots, row)
		}
	}
	return v
}

// keyName shows the background key "" by name.
func keyName(k string) string {
	if k == "" {
		return "(background)"
	}
	return k
}

// groupName shows the group "" by name.
func groupName(g string) string {
	if g == "" {
		return "(none)"
	}
	return g
}

// priority shows a base priority, the effective one when it differs, and an
// inherited floor.
func priority(base, eff fairsched.Priority, inherited *fairsched.Priority) string {
	s := strconv.Itoa(int(base))
	if eff != base {
		s += " → " + strconv.Itoa(int(eff))
	}
	if inherited != nil {
		s += fmt.Sprintf(" (inherits ≥ %d)", *inherited)
	}
	return s
}

// short formats a duration to the second (to the millisecond under one),
// without the trailing zero units of time.Duration.String.
func short(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Second && d > -time.Second:
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// clockTime shows t as a time of day when it falls on now's day, else with
// its date.
func clockTime(t, now time.Time) string {
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

func orDash(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}

func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'g', 4, 64) + "%"
}

// also returns the badges of the rules that hold p besides its headline.
func also(p fairsched.PendingJob) []badge {
	var out []badge
	for _, r := range p.Reasons {
		if r != p.Reason {
			out = append(out, badge{Label: reasonLabel(r), Class: reasonClass(r), Why: explain(r)})
		}
	}
	return out
}

// grouped writes n with its digits in groups of three, set apart by a
// narrow no-break space: 12 345.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(d)
	}
	return b.String()
}

// suffix is the part of an instance's incarnation after its name (after
// the last "#"), "" without one.
func suffix(incarnation string) string {
	if i := strings.LastIndexByte(incarnation, '#'); i >= 0 {
		return incarnation[i+1:]
	}
	return ""
}

// addTenants lists the snapshot's tenants, by name, up to the page's rows.
func (v *view) addTenants(s fairsched.Snapshot, rows func(int) int) {
	n := rows(len(s.Tenants))
	v.TenantMore = max(s.TenantsTotal, len(s.Tenants)) - n
	for _, t := range s.Tenants[:n] {
		v.Tenants = append(v.Tenants, tenantRow{Name: t.Name, Weight: strconv.FormatFloat(t.Weight, 'g', -1, 64),
			Share: strconv.FormatFloat(100*t.Share, 'f', 1, 64) + "%", Keys: t.Keys, Running: t.Running, Pending: t.Pending})
	}
}
