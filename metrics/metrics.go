package metrics

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fairsched/fairsched"
)

// Collector is a prometheus.Collector for one *fairsched.Scheduler. It is
// safe for concurrent use: its event metrics live in Prometheus vectors,
// updated by its own goroutine, and the snapshot metrics are read at
// scrape time. Register it with a prometheus.Registerer; call Close when
// done.
type Collector struct {
	s       *fairsched.Scheduler
	timeout time.Duration // bounds the snapshot of a scrape
	cancel  func()        // ends the subscription, closing the event channel
	done    chan struct{} // closed when the goroutine has returned
	onEvent func(fairsched.Event)

	// Event metrics, updated by the goroutine.
	queueWait    *prometheus.HistogramVec
	duration     *prometheus.HistogramVec
	effective    *prometheus.GaugeVec
	queued       *prometheus.CounterVec
	cancelled    *prometheus.CounterVec
	admitted     *prometheus.CounterVec
	completed    *prometheus.CounterVec
	failed       *prometheus.CounterVec
	refused      *prometheus.CounterVec
	shed         *prometheus.CounterVec
	expired      *prometheus.CounterVec
	denied       *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	superseded   *prometheus.CounterVec
	policies     *prometheus.CounterVec
	preempted    *prometheus.CounterVec
	allocChanges *prometheus.CounterVec
	excess       prometheus.Counter

	// Snapshot metrics, built at each scrape.
	running, pending         *prometheus.Desc
	groupSlots, groupRunning *prometheus.Desc
	maxConcurrency           *prometheus.Desc
	adaptiveLimit            *prometheus.Desc
	load, overloaded         *prometheus.Desc // from Snapshot.Load
	loadSkipped              *prometheus.Desc
	aged                     *prometheus.Desc // a counter, from Snapshot.AgingRises
	eventsLost               *prometheus.Desc
	snapshotErrors           prometheus.Counter
}

// New returns a collector for s. It subscribes to s's events (with
// WithEventBuffer's buffer) before it returns, so it sees every event from
// then on that its buffer can hold, and aggregates them in its own
// goroutine; Close stops it. The scheduler never waits for the collector.
// New fails with an error matching fairsched.ErrInvalidConfig for a nil
// scheduler or an invalid option. A collector of a closed scheduler keeps
// no goroutine and reports only what it saw.
func New(s *fairsched.Scheduler, opts ...Option) (*Collector, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if s == nil {
		return nil, fmt.Errorf("%w: metrics.New: nil scheduler", fairsched.ErrInvalidConfig)
	}
	c := newCollector(s, cfg)
	events, cancel := s.Subscribe(cfg.buffer)
	c.cancel = cancel
	go c.run(events)
	return c, nil
}

// kind is a metric's type, as the exposition format names it.
type kind string

const (
	counter   kind = "counter"
	gauge     kind = "gauge"
	histogram kind = "histogram"
)

// spec describes one metric: its name under the namespace, type, labels
// and help. The package documentation's table lists the same.
type spec struct {
	name   string
	kind   kind
	labels []string
	help   string
}

// The metrics. The collector's goroutine updates the first group from
// events; Collect reads the second from a snapshot.
var (
	specQueueWait = spec{"queue_wait_seconds", histogram, []string{"type", "tier", "group"},
		"Time from submission to admission of admitted jobs (JobAdmitted.Waited), by type, tier (base priority) and group."}
	specDuration = spec{"job_duration_seconds", histogram, []string{"type"},
		"Wall time of finished job runs, completed or failed (Elapsed), by type."}
	specEffective = spec{"admitted_effective_priority", gauge, []string{"type"},
		"Effective priority at which the last admitted job of the type was dispatched."}
	specQueued = spec{"queued_total", counter, []string{"type"},
		"Jobs that entered the queue (JobQueued: each retry's wait counts again), by type."}
	specCancelled = spec{"cancelled_total", counter, []string{"type"},
		"Pending jobs that left unrun because they were cancelled (JobCancelled: Cancel, a RunSync caller that left), by type."}
	specAdmitted = spec{"admitted_total", counter, []string{"type"},
		"Jobs admitted (each attempt of a retried job counts), by type."}
	specCompleted = spec{"completed_total", counter, []string{"type"},
		"Job runs whose function returned nil, by type."}
	specFailed = spec{"failed_total", counter, []string{"type"},
		"Job runs whose function returned an error or panicked (each failed attempt counts), by type."}
	specRefused = spec{"refused_total", counter, []string{"type", "reason"},
		"Submissions refused before being queued (a pending bound, the load signal, deadline-aware admission) and pending jobs shed, by type and reason."}
	specShed = spec{"shed_total", counter, []string{"type"},
		"Pending jobs shed for a newcomer of a key under its fair share (WithShedding), by type."}
	specExpired = spec{"expired_total", counter, []string{"type"},
		"Jobs removed unrun because their queue timeout ran out while pending, by type."}
	specDenied = spec{"denied_total", counter, []string{"type"},
		"Jobs denied by the admission policy, by type."}
	specDropped = spec{"dropped_total", counter, []string{"type"},
		"Jobs dropped unrun because the scheduler closed, by type."}
	specPreempted = spec{"preempted_total", counter, []string{"type", "tier", "by"},
		"Running jobs a higher tier preempted (JobPreempted), by type, tier and the preempting tier."}
	specSuperseded = spec{"superseded_total", counter, []string{"type"},
		"Pending background jobs replaced by a newer submission with Supersede, by type."}
	specPolicies = spec{"policies_applied_total", counter, []string{"version"},
		"Scheduling policies applied (PolicyApplied events), by the policy's version."}
	specAged = spec{"aging_promotions_total", counter, []string{"type"},
		"Rises of waiting jobs' effective priority by aging, every step of every job (Snapshot.AgingRises), by type."}
	specAllocChanges = spec{"group_allocation_changes_total", counter, []string{"group", "reason"},
		"Changes of a group's slot allocation (GroupAllocationChanged events), by group and reason."}
	specExcess = spec{"excess_slots_redistributed_total", counter, nil,
		"Slots given back by groups that ran out of work (PreviousSlots-NewSlots of group_drained allocation changes), for the groups still with work."}

	specRunning = spec{"running_jobs", gauge, []string{"type", "tier", "group"},
		"Jobs running at scrape time, by type, tier (base priority) and group."}
	specPending = spec{"pending_jobs", gauge, []string{"type", "tier", "group", "reason"},
		"Jobs pending at scrape time, by type, tier (base priority), group and the reason they wait."}
	specGroupSlots = spec{"group_slots", gauge, []string{"group"},
		"Slots allocated to the group by weight at scrape time."}
	specGroupRunning = spec{"group_running", gauge, []string{"group"},
		"Jobs of the group running at scrape time."}
	specMaxConcurrency = spec{"max_concurrency", gauge, nil,
		"The global concurrency limit at scrape time; 0 means unlimited."}
	specAdaptiveLimit = spec{"adaptive_limit", gauge, nil,
		"The adaptive global limit at scrape time; only with WithAdaptiveLimit."}
	specLoad = spec{"load_signal", gauge, nil,
		"The load signal's last good reading, in [0, 1]; only with WithLoadSignal."}
	specOverloaded = spec{"overloaded", gauge, nil,
		"1 while the load signal's last reading is at or above its threshold, else 0; only with WithLoadSignal."}
	specLoadSkipped = spec{"load_readings_skipped_total", counter, nil,
		"Readings of the load signal skipped (an error, a NaN, a panic); only with WithLoadSignal."}
	specEventsLost = spec{"events_lost_total", counter, nil,
		"Events the scheduler dropped for subscribers whose channel was full, over all its subscribers (Snapshot.EventsLost)."}
	specSnapshotErrors = spec{"snapshot_errors_total", counter, nil,
		"Scrapes that got no snapshot (timeout or closed scheduler) and so lack the snapshot metrics."}
)

// specs lists every metric, in the order of the documentation.
var specs = []spec{
	specQueueWait, specDuration, specEffective, specQueued, specCancelled, specAdmitted, specCompleted, specFailed,
	specRefused, specShed, specExpired, specDenied, specDropped, specSuperseded, specPreempted, specPolicies, specAged, specAllocChanges, specExcess,
	specRunning, specPending, specGroupSlots, specGroupRunning, specMaxConcurrency,
	specAdaptiveLimit, specLoad, specOverloaded, specLoadSkipped, specEventsLost, specSnapshotErrors,
}

func newCollector(s *fairsched.Scheduler, cfg config) *Collector {
	ns := cfg.namespace
	counterVec := func(m spec) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: m.name, Help: m.help}, m.labels)
	}
	histogramVec := func(m spec) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: m.name, Help: m.help,
			Buckets: cfg.buckets}, m.labels)
	}
	plainCounter := func(m spec) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: m.name, Help: m.help})
	}
	desc := func(m spec) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", m.name), m.help, m.labels, nil)
	}
	return &Collector{
		s:       s,
		timeout: cfg.timeout,
		done:    make(chan struct{}),
		onEvent: cfg.onEvent,

		queueWait: histogramVec(specQueueWait),
		duration:  histogramVec(specDuration),
		effective: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: specEffective.name,
			Help: specEffective.help}, specEffective.labels),
		queued:       counterVec(specQueued),
		cancelled:    counterVec(specCancelled),
		admitted:     counterVec(specAdmitted),
		completed:    counterVec(specCompleted),
		failed:       counterVec(specFailed),
		refused:      counterVec(specRefused),
		shed:         counterVec(specShed),
		expired:      counterVec(specExpired),
		denied:       counterVec(specDenied),
		dropped:      counterVec(specDropped),
		superseded:   counterVec(specSuperseded),
		policies:     counterVec(specPolicies),
		preempted:    counterVec(specPreempted),
		allocChanges: counterVec(specAllocChanges),
		excess:       plainCounter(specExcess),

		running:        desc(specRunning),
		pending:        desc(specPending),
		groupSlots:     desc(specGroupSlots),
		groupRunning:   desc(specGroupRunning),
		maxConcurrency: desc(specMaxConcurrency),
		adaptiveLimit:  desc(specAdaptiveLimit),
		load:           desc(specLoad),
		overloaded:     desc(specOverloaded),
		loadSkipped:    desc(specLoadSkipped),
		aged:           desc(specAged),
		eventsLost:     desc(specEventsLost),
		snapshotErrors: plainCounter(specSnapshotErrors),
	}
}

// vectors returns the collectors of the event metrics.
func (c *Collector) vectors() []prometheus.Collector {
	return []prometheus.Collector{
		c.queueWait, c.duration, c.effective, c.queued, c.cancelled, c.admitted, c.completed, c.failed, c.refused, c.shed,
		c.expired, c.denied, c.dropped, c.superseded, c.preempted, c.allocChanges, c.excess,
		c.policies,
	}
}

// run records events until the subscription ends.
func (c *Collector) run(events <-chan fairsched.Event) {
	defer close(c.done)
	for e := range events {
		if c.onEvent != nil {
			c.onEvent(e)
		}
		c.record(e)
	}
}

// record updates the metrics of one event.
func (c *Collector) record(e fairsched.Event) {
	switch e := e.(type) {
	case fairsched.JobQueued:
		c.queued.WithLabelValues(string(e.Type)).Inc()
	case fairsched.JobCancelled:
		c.cancelled.WithLabelValues(string(e.Type)).Inc()
	case fairsched.JobAdmitted:
		t := string(e.Type)
		c.admitted.WithLabelValues(t).Inc()
		c.queueWait.WithLabelValues(t, tier(e.BasePriority), e.Group).Observe(e.Waited.Seconds())
		c.effective.WithLabelValues(t).Set(float64(e.EffectivePriority))
	case fairsched.JobCompleted:
		c.completed.WithLabelValues(string(e.Type)).Inc()
		c.duration.WithLabelValues(string(e.Type)).Observe(e.Elapsed.Seconds())
	case fairsched.JobFailed:
		c.failed.WithLabelValues(string(e.Type)).Inc()
		c.duration.WithLabelValues(string(e.Type)).Observe(e.Elapsed.Seconds())
	case fairsched.GroupAllocationChanged:
		c.allocChanges.WithLabelValues(e.Group, string(e.Reason)).Inc()
		if e.Reason == fairsched.AllocationGroupDrained && e.PreviousSlots > e.NewSlots {
			c.excess.Add(float64(e.PreviousSlots - e.NewSlots))
		}
	case fairsched.JobRefused:
		c.refused.WithLabelValues(string(e.Type), string(e.Reason)).Inc()
		if e.Reason == fairsched.ReasonShed {
			c.shed.WithLabelValues(string(e.Type)).Inc()
		}
	case fairsched.JobExpired:
		c.expired.WithLabelValues(string(e.Type)).Inc()
	case fairsched.JobDenied:
		c.denied.WithLabelValues(string(e.Type)).Inc()
	case fairsched.JobDropped:
		c.dropped.WithLabelValues(string(e.Type)).Inc()
	case fairsched.JobSuperseded:
		c.superseded.WithLabelValues(string(e.Type)).Inc()
	case fairsched.PolicyApplied:
		c.policies.WithLabelValues(e.Version).Inc()
	case fairsched.JobPreempted:
		c.preempted.WithLabelValues(string(e.Type), tier(e.Tier), tier(e.By)).Inc()
	}
}

// Describe sends the descriptors of every metric the collector may report.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.vectors() {
		v.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{c.running, c.pending, c.groupSlots, c.groupRunning,
		c.maxConcurrency, c.adaptiveLimit, c.load, c.overloaded, c.loadSkipped, c.eventsLost, c.aged} {
		ch <- d
	}
	c.snapshotErrors.Describe(ch)
}

// Collect sends the event metrics as aggregated so far, then takes a
// snapshot of the scheduler — a message to its owner goroutine, which
// copies its state in O(n log n) of pending jobs, waiting at most
// WithSnapshotTimeout — and sends the metrics read from it. Without a
// snapshot those are left out and snapshot_errors_total counts the scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.vectors() {
		v.Collect(ch)
	}
	c.collectSnapshot(ch)
	c.snapshotErrors.Collect(ch)
}

type jobKey struct{ typ, tier, group, reason string }

func (c *Collector) collectSnapshot(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	snap, err := c.s.Snapshot(ctx)
	if err != nil {
		c.snapshotErrors.Inc()
		return
	}
	emit := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}

	running := map[jobKey]int{}
	for _, j := range snap.Running {
		running[jobKey{string(j.Type), tier(j.Priority), j.Group, ""}]++
	}
	for k, n := range running {
		emit(c.running, float64(n), k.typ, k.tier, k.group)
	}
	pending := map[jobKey]int{}
	for _, j := range snap.Pending {
		pending[jobKey{string(j.Type), tier(j.Priority), j.Group, string(j.Reason)}]++
	}
	// The snapshot is bounded (a scrape must not stall the scheduler): the
	// pending jobs it does not list count under reason "unlisted".
	if rest := snap.PendingTotal - len(snap.Pending); rest > 0 {
		pending[jobKey{reason: "unlisted"}] += rest
	}
	for k, n := range pending {
		emit(c.pending, float64(n), k.typ, k.tier, k.group, k.reason)
	}
	for _, g := range snap.Groups {
		emit(c.groupSlots, float64(g.Allocation), g.Name)
		emit(c.groupRunning, float64(g.Running), g.Name)
	}
	emit(c.maxConcurrency, float64(snap.MaxConcurrency))
	if snap.Adaptive != nil {
		emit(c.adaptiveLimit, float64(snap.MaxConcurrency))
	}
	if l := snap.Load; l != nil {
		emit(c.load, l.Value)
		overloaded := 0.0
		if l.Overloaded {
			overloaded = 1
		}
		emit(c.overloaded, overloaded)
		ch <- prometheus.MustNewConstMetric(c.loadSkipped, prometheus.CounterValue, float64(l.Skipped))
	}
	ch <- prometheus.MustNewConstMetric(c.eventsLost, prometheus.CounterValue, float64(snap.EventsLost))
	for t, n := range snap.AgingRises {
		ch <- prometheus.MustNewConstMetric(c.aged, prometheus.CounterValue, float64(n), string(t))
	}
}

// Close ends the subscription and waits for the collector's goroutine to
// return; events still buffered are recorded first. The collector can still
// be collected afterwards: the event metrics keep their last values, the
// snapshot metrics stay current. Calling Close again is safe.
func (c *Collector) Close() {
	c.cancel()
	<-c.done
}

// tier is the label value of a priority.
func tier(p fairsched.Priority) string { return strconv.Itoa(int(p)) }

var _ prometheus.Collector = (*Collector)(nil)
