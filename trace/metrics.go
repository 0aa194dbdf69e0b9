package trace

import "github.com/prometheus/client_golang/prometheus"

var (
	descWritten = prometheus.NewDesc("fairsched_trace_records_written_total",
		"Trace records the writer accepted (trace.Stats.Written).", nil, nil)
	descDropped = prometheus.NewDesc("fairsched_trace_records_dropped_total",
		"Trace records dropped: the writer slow or failing, or the run's admission unseen (trace.Stats.Dropped).", nil, nil)
	descErrors = prometheus.NewDesc("fairsched_trace_write_errors_total",
		"Calls to the trace writer that returned an error (trace.Stats.WriteErrors).", nil, nil)
)

// Describe and Collect make a Recorder a prometheus.Collector of its
// Stats: register it beside the scheduler's (package metrics).
func (r *Recorder) Describe(ch chan<- *prometheus.Desc) {
	ch <- descWritten
	ch <- descDropped
	ch <- descErrors
}

// Collect reports the recorder's Stats as counters.
func (r *Recorder) Collect(ch chan<- prometheus.Metric) {
	st := r.Stats()
	ch <- prometheus.MustNewConstMetric(descWritten, prometheus.CounterValue, float64(st.Written))
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(st.Dropped))
	ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(st.WriteErrors))
}
